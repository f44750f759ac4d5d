import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { readFileSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import request from 'supertest';
import { logOriginFor } from '../../../src/services/log-origin.js';
import { SigningKeyService } from '../../../src/services/signing-keys.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import {
  buildExplorerScript,
  collectErrors,
  launchBrowser,
  listen,
  screenshot,
  seriousViolations,
} from '../../support/browser.js';
import { buildTestApp, ManualClock, newServerKey } from '../../support/harness.js';
import { newKey, signupReviewer } from '../../support/api.js';
import { ed25519Witness, logVkey } from '../../support/tlog-witnesses.js';
import { deploymentClaim, mergeAction, validClaim } from '../../support/claims.js';
import {
  APP_ID,
  appWithGithub,
  closedNetwork,
  deliver,
  fakeGitHub,
  newRepoState,
  pullRequestEvent,
  type AppUnderTest,
} from '../github/fake-github.js';

// The explorer in Debian's chromium, against the service listening on 127.0.0.1: every page
// loads under the service's CSP without an error and without a serious accessibility
// violation, the list filters, a check run's details link opens its receipt, and the receipt
// verifies in the browser — and a tampered copy fails.

const SHA = 'c0ffee'.repeat(6) + 'abcd';

// A browser on a shared two-core machine: pages, axe runs and screenshots take seconds.
jest.setTimeout(180_000);

describe('the ledger explorer in a browser', () => {
  let t: AppUnderTest;
  let stop: () => Promise<void>;
  let base: string;
  let browser: { context: BrowserContext; close(): Promise<void> };
  let keyId: string;
  let serverPem: string;
  let detailsUrl: string;
  const ids: string[] = [];

  closedNetwork();
  beforeAll(async () => {
    const explorerScript = buildExplorerScript();
    const listening = await listen();
    base = listening.url;
    stop = listening.close;
    const serverKey = newServerKey();
    keyId = serverKey.keyId;
    serverPem = serverKey.publicKeyPem;
    const store = openSqliteStore(':memory:');
    // A published key history, as a started service has one.
    await new SigningKeyService({
      store: store.signingKeys,
      clock: new ManualClock(),
      origin: logOriginFor(undefined, serverKey.keyId),
    }).register(serverKey);
    t = appWithGithub({ store, serverKey, baseUrl: base, explorerScript });
    listening.server.on('request', t.app);

    const key = await newKey({ ...t, serverKey } as never);
    for (const [agent, repository, pr] of [
      ['coder-bot', 'acme/api', 5],
      ['review-bot', 'acme/docs', 9],
    ] as const) {
      const res = await request(t.app)
        .post('/v1/evaluate')
        .set('X-API-Key', key)
        .send(
          validClaim({
            entity: repository,
            claim: `Merge pull request ${pr} of ${repository}`,
            action: { ...mergeAction, repository, pull_request: pr, commit: `abc${pr}`, agent },
          }),
        );
      expect(res.status).toBe(200);
      ids.push(res.body.receipt.receipt_id as string);
    }

    // A pull request evaluated by the GitHub App: its check run links to the receipt's page.
    const state = newRepoState();
    const github = fakeGitHub(state);
    const pr = { number: 12, author: 'coder-bot[bot]', authorType: 'Bot' as const, headSha: SHA };
    state.pulls.set(12, pr);
    state.checkRuns.set(SHA, [
      { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
    ]);
    expect((await deliver(t, 'pull_request', pullRequestEvent('opened', pr))).status).toBe(202);
    expect(await t.jobs.runDue()).toBe(1);
    const done = github.writes.find((w) => w.method === 'PATCH')!;
    detailsUrl = done.body.details_url as string;
    ids.push(done.body.external_id as string);
    expect(APP_ID).toBeGreaterThan(0);

    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await stop?.();
    await t?.close();
  });

  async function open(path: string): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.context.newPage();
    const errors = collectErrors(page);
    const res = await page.goto(path.startsWith('http') ? path : `${base}${path}`);
    expect(res?.status()).toBe(200);
    return { page, errors };
  }

  it('every page loads without an error or a serious accessibility violation', async () => {
    const pages = [
      ['overview', '/'],
      ['receipts', '/explorer/receipts'],
      ['receipt', `/explorer/receipts/${ids[0]}`],
      ['pull-request', `/explorer/pulls?repository=acme%2Fweb&pr=12`],
      ['keys', '/explorer/keys'],
    ];
    for (const [name, path] of pages) {
      const { page, errors } = await open(path!);
      expect(await page.locator('h1').count()).toBe(1);
      expect(await page.locator('main').count()).toBe(1);
      expect(await seriousViolations(page)).toEqual([]);
      await screenshot(page, name!);
      expect(errors).toEqual([]);
      await page.close();
    }
  });

  it('the keyboard reaches the skip link first, and it moves to the content', async () => {
    const { page } = await open(`/explorer/receipts/${ids[0]}`);
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Skip to the content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate('document.activeElement.id')).toBe('main');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.tagName')).toBe('A');
    await page.close();
  });

  it('the list filters by agent, and the filter keeps in the link', async () => {
    const { page, errors } = await open('/explorer/receipts');
    await page.getByLabel('Agent').fill('review-bot');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/agent=review-bot/);
    const rows = page.locator('table.receipts tbody tr');
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain(ids[1]);
    await screenshot(page, 'receipts-filtered');
    expect(errors).toEqual([]);
    await page.close();
  });

  it("the check run's details link opens the receipt's page", async () => {
    expect(detailsUrl).toBe(`${base}/explorer/receipts/${ids[2]}`);
    const { page, errors } = await open(detailsUrl);
    expect(await page.locator('h1').textContent()).toContain(ids[2]);
    expect(await page.locator('#disposition h2').textContent()).toBe('Disposition');
    expect(errors).toEqual([]);
    await page.close();
  });

  async function verify(page: Page): Promise<Record<string, string>> {
    await page.getByRole('button', { name: 'Verify in this browser' }).click();
    const outcome = page.locator('#verify-outcome');
    await outcome.waitFor();
    const statuses: Record<string, string> = { valid: (await outcome.getAttribute('data-valid'))! };
    for (const row of await page.locator('#verify-outcome tr[data-check]').all())
      statuses[(await row.getAttribute('data-check'))!] = (
        await row.locator('td').nth(1).innerText()
      ).trim();
    return statuses;
  }

  it('verifies a receipt in the browser against a pinned key, and fails a tampered copy', async () => {
    const { page, errors } = await open(`/explorer/receipts/${ids[1]}`);
    await page.getByLabel('Key fingerprint (sha256:…)').fill(keyId);
    const good = await verify(page);
    expect(good).toMatchObject({
      valid: 'true',
      signature_valid: 'PASS',
      hash_integrity: 'PASS',
      chain_linkage: 'PASS',
      inclusion: 'PASS',
    });
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'receipt-verified');

    const textarea = page.getByLabel('Receipt (JSON)');
    const receipt = JSON.parse(await textarea.inputValue());
    receipt.policy.verdict = receipt.policy.verdict === 'ALLOWED' ? 'BLOCKED' : 'ALLOWED';
    await textarea.fill(JSON.stringify(receipt, null, 2));
    const bad = await verify(page);
    expect(bad).toMatchObject({ valid: 'false', signature_valid: 'FAIL', hash_integrity: 'FAIL' });
    expect(await page.locator('#verify-outcome').textContent()).toContain('Not valid');
    await screenshot(page, 'receipt-tampered');

    // A key that is not the ledger's is refused outright.
    await textarea.fill(JSON.stringify({ ...receipt, policy: { ...receipt.policy } }));
    await page.getByLabel('Key fingerprint (sha256:…)').fill(`sha256:${'0'.repeat(64)}`);
    await page.getByRole('button', { name: 'Verify in this browser' }).click();
    await page.locator('#verify-outcome', { hasText: 'not in the history' }).waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  it('judges the witnesses of the proof against a C2SP tlog-policy the reader gives', async () => {
    const { page, errors } = await open(`/explorer/receipts/${ids[1]}`);
    await page.getByLabel('Key fingerprint (sha256:…)').fill(keyId);
    const policy = page.getByLabel('A C2SP tlog-policy (optional)');
    const origin = (await request(t.app).get('/v1/log/checkpoint')).text.split('\n')[0]!;
    const log = `log ${logVkey(origin, serverPem)}`;
    await policy.fill(`${log}\nquorum none\n`);
    expect(await verify(page)).toMatchObject({ valid: 'true', inclusion: 'PASS' });
    expect(await page.locator('#verify-quorum').getAttribute('data-met')).toBe('true');
    // A witness this log has none of: the quorum is not met, so the receipt is not valid here.
    const stranger = ed25519Witness('stranger.example/witness', 21);
    await policy.fill(`${log}\nwitness S ${stranger.vkey}\nquorum S\n`);
    expect(await verify(page)).toMatchObject({ valid: 'false', inclusion: 'PASS' });
    expect(await page.locator('#verify-quorum').textContent()).toContain(
      'quorum S NOT met: cosigned by no witness of the policy',
    );
    await policy.fill('quorum none\nwitnesses all\n');
    await page.getByRole('button', { name: 'Verify in this browser' }).click();
    await page
      .locator('#verify-outcome', { hasText: 'tlog-policy line 2: unknown line "witnesses"' })
      .waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  it("checks a disposition's link to the escalated receipt it decides", async () => {
    const agentKey = await newKey(t as never);
    const reviewerKey = (await signupReviewer(t as never)).apiKey;
    const escalated = await request(t.app)
      .post('/v1/evaluate')
      .set('X-API-Key', agentKey)
      .send(validClaim({ action: { action_type: 'access_change', target_system: 'github' } }));
    expect(escalated.body.decision.verdict).toBe('ESCALATED');
    const decided = await request(t.app)
      .post(`/v1/receipts/${escalated.body.receipt.receipt_id as string}/disposition`)
      .set('X-API-Key', reviewerKey)
      .send({ decision: 'approve', reviewer: { id: 'lead@acme.example' }, reason: 'Reviewed' });
    expect(decided.status).toBe(201);

    const { page, errors } = await open(
      `/explorer/receipts/${decided.body.receipt.receipt_id as string}`,
    );
    await page.getByLabel(/The key history this service publishes/).check();
    expect(await verify(page)).toMatchObject({ valid: 'true', parent_link: 'PASS' });

    // Pointed at another receipt's hash, the link fails (and so does the signature).
    const textarea = page.getByLabel('Receipt (JSON)');
    const receipt = JSON.parse(await textarea.inputValue());
    receipt.disposition.parent_receipt_hash = `sha256:${'0'.repeat(64)}`;
    await textarea.fill(JSON.stringify(receipt, null, 2));
    expect(await verify(page)).toMatchObject({ valid: 'false', parent_link: 'FAIL' });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('decides a waiting deployment: a key that may not decide is refused, a reviewer’s approval is recorded', async () => {
    const agentKey = await newKey(t as never);
    const reviewerKey = (await signupReviewer(t as never)).apiKey;
    const plainKey = await newKey(t as never);
    const waiting: string[] = [];
    for (const run of [71, 72]) {
      const res = await request(t.app)
        .post('/v1/evaluate')
        .set('X-API-Key', agentKey)
        .send(
          deploymentClaim({
            repository: 'acme/shop',
            environment: 'production',
            sha: `${run}`.repeat(20),
            run,
          }),
        );
      expect(res.body.decision.verdict).toBe('ESCALATED');
      waiting.push(res.body.receipt.receipt_id as string);
    }
    const [older, newer] = waiting as [string, string];
    const head = async () => (await request(t.app).get('/v1/ledger/stats')).body.head;
    const before = await head();

    const { page, errors } = await open('/explorer/deployments/acme/shop/production');
    const item = (id: string) =>
      page.locator('li.pending', { has: page.locator(`a[href$="${id}"]`) });
    // Nothing kept in this tab: the form asks for the key.
    const refused = item(newer);
    await refused.getByLabel('Reviewer API key').fill(plainKey);
    await refused.getByLabel('Your reviewer id').fill('lead@acme.example');
    await refused.getByLabel('Reason').fill('Looks fine');
    await refused.getByRole('button', { name: 'Reject' }).click();
    await refused.locator('.decide-status', { hasText: 'reviewer capability' }).waitFor();
    expect(await refused.locator('.decide-status').innerText()).toContain('(forbidden)');
    // Refused: nothing written, and the key can be replaced.
    expect(await head()).toEqual(before);
    expect((await request(t.app).get(`/v1/receipts/${newer}/disposition`)).status).toBe(404);
    expect(await refused.getByLabel('Reviewer API key').isVisible()).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'deployment-refused');

    const approving = item(older);
    await approving.getByLabel('Reviewer API key').fill(reviewerKey);
    await approving.getByLabel('Your reviewer id').fill('lead@acme.example');
    await approving.getByLabel('Reason').fill('Release window confirmed');
    await approving.getByRole('button', { name: 'Approve' }).click();
    await approving.locator('.decide-status', { hasText: 'Approved' }).waitFor();
    const decision = await request(t.app).get(`/v1/receipts/${older}/disposition`);
    expect(decision.status).toBe(200);
    expect(decision.body.receipt.disposition).toMatchObject({
      parent_receipt_id: older,
      decision: 'approve',
      reviewer: { id: 'lead@acme.example' },
      reason: 'Release window confirmed',
    });
    expect(decision.body.decision.verdict).toBe('ALLOWED');
    expect(await approving.locator('.decide-status').innerText()).toContain(
      decision.body.receipt.receipt_id as string,
    );
    expect((await head()).sequence).toBe(before.sequence + 1);
    expect((await request(t.app).get(`/v1/receipts/${newer}/disposition`)).status).toBe(404);
    // The key is kept in this tab for the next decision; the page read again shows the decision.
    expect(await page.evaluate("sessionStorage.getItem('svc.explorer.apiKey')")).toBe(reviewerKey);
    await page.reload();
    expect(await page.locator('#pending li.pending').count()).toBe(1);
    expect(await item(newer).getByLabel('Reviewer API key').isVisible()).toBe(false);
    const row = page.locator(`tr[data-receipt-id="${older}"]`);
    expect(await row.innerText()).toContain('APPROVED');
    expect(errors.filter((e) => !/status of 403/.test(e))).toEqual([]);
    await page.close();
  });

  it("a reviewer approves an escalated tool call on its receipt page, and the agent's next try of it runs", async () => {
    const agentKey = await newKey(t as never);
    const reviewerKey = (await signupReviewer(t as never)).apiKey;
    const call = {
      ...(JSON.parse(
        readFileSync(
          new URL('../../fixtures/hooks/claude-code/pre-tool-use.bash.json', import.meta.url),
          'utf8',
        ),
      ) as Record<string, unknown>),
      session_id: 'sess-approve',
      tool_input: { command: 'npm publish --access public' },
    };
    const ask = (toolUseId: string) =>
      request(t.app)
        .post('/v1/hooks/claude-code?ask=false')
        .set('X-API-Key', agentKey)
        .send({ ...call, tool_use_id: toolUseId });
    const denied = await ask('toolu_first');
    expect(denied.body.hookSpecificOutput).toMatchObject({ permissionDecision: 'deny' });
    const records = (await request(t.app).get('/v1/sessions/sess-approve')).body.records as {
      receipt_id: string;
      verdict: string;
    }[];
    expect(records.map((r) => r.verdict)).toEqual(['ESCALATED']);
    const escalated = records[0]!.receipt_id;
    expect(denied.body.hookSpecificOutput.permissionDecisionReason).toContain(
      `/explorer/receipts/${escalated}`,
    );

    await browser.context.clearCookies();
    const { page, errors } = await open(`/explorer/receipts/${escalated}`);
    await page.evaluate('sessionStorage.clear()');
    await page.reload();
    expect(await page.locator('#tool-call-heading + dl').innerText()).toContain(
      'npm publish --access public',
    );
    const form = page.locator('#disposition form.decide-form');
    expect(await page.locator('#disposition').innerText()).toContain('run once');
    await form.getByLabel('Reviewer API key').fill(reviewerKey);
    await form.getByLabel('Your reviewer id').fill('lead@acme.example');
    await form.getByLabel('Reason').fill('Release 1.2.0');
    expect(await seriousViolations(page)).toEqual([]);
    await form.getByRole('button', { name: 'Approve' }).click();
    await form.locator('.decide-status', { hasText: 'Approved' }).waitFor();
    const decision = await request(t.app).get(`/v1/receipts/${escalated}/disposition`);
    expect(decision.status).toBe(200);
    expect(decision.body.receipt.disposition).toMatchObject({
      parent_receipt_id: escalated,
      decision: 'approve',
      reviewer: { id: 'lead@acme.example' },
    });
    const approval = decision.body.receipt.receipt_id as string;
    expect(await form.locator('.decide-status').innerText()).toContain(approval);
    await screenshot(page, 'tool-call-approved');

    // The agent asks again: exactly this call runs once, naming the approval.
    const again = await ask('toolu_second');
    expect(again.body.hookSpecificOutput).toMatchObject({
      permissionDecision: 'allow',
      permissionDecisionReason: expect.stringContaining(`allowed by approval ${approval}`),
    });
    const once = await ask('toolu_third');
    expect(once.body.hookSpecificOutput).toMatchObject({ permissionDecision: 'deny' });
    // The page read again shows the decision, and no form.
    await page.reload();
    const decided = await page.locator('#disposition').innerText();
    expect(decided).toContain('Approved');
    expect(decided).toContain(approval);
    expect(await page.locator('#disposition form.decide-form').count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();

    // The session's page: the escalation, who decided it and why, the run it allowed.
    const session = await open('/explorer/sessions/sess-approve');
    await session.page.locator('h1', { hasText: 'Session sess-approve' }).waitFor();
    const rows = session.page.locator('table.session-records tbody tr');
    const texts = await rows.allInnerTexts();
    expect(texts).toHaveLength(4);
    expect(texts[0]).toMatch(
      /ESCALATED\s+approved by lead@acme\.example: Release 1\.2\.0 \(#\d+\)/,
    );
    expect(texts[1]).toMatch(
      /Reviewer[\s\S]*ALLOWED\s+approved by lead@acme\.example: Release 1\.2\.0/,
    );
    expect(texts[1]).toContain(escalated);
    expect(texts[2]).toContain('ALLOWED');
    expect(texts[3]).toMatch(/ESCALATED[\s\S]*waiting for a reviewer/);
    expect(await seriousViolations(session.page)).toEqual([]);
    await screenshot(session.page, 'session-decided');
    expect(session.errors).toEqual([]);
    await session.page.close();
  });

  it('no page is wider than a 375 px phone screen, hashes and the verify panel included', async () => {
    // An escalation, decided, and one still waiting: the pages a reviewer opens from a check run.
    const agentKey = await newKey(t as never);
    const reviewerKey = (await signupReviewer(t as never)).apiKey;
    const escalate = async () => {
      const res = await request(t.app)
        .post('/v1/evaluate')
        .set('X-API-Key', agentKey)
        .send(
          validClaim({
            claim: `Grant the deploy-bot write access to acme/infra ${'and every one of its environments '.repeat(6)}`,
            action: { action_type: 'access_change', target_system: 'github', agent: 'coder-bot' },
          }),
        );
      expect(res.body.decision.verdict).toBe('ESCALATED');
      return res.body.receipt.receipt_id as string;
    };
    const waiting = await escalate();
    const decidedId = await escalate();
    const decided = await request(t.app)
      .post(`/v1/receipts/${decidedId}/disposition`)
      .set('X-API-Key', reviewerKey)
      .send({ decision: 'reject', reviewer: { id: 'lead@acme.example' }, reason: 'Too broad' });
    expect(decided.status).toBe(201);
    const pages = [
      '/explorer',
      '/explorer/receipts',
      '/explorer/receipts?agent=coder-bot',
      `/explorer/receipts/${ids[0]}`,
      `/explorer/receipts/${waiting}`,
      `/explorer/receipts/${decidedId}`,
      `/explorer/receipts/${decided.body.receipt.receipt_id as string}`,
      `/explorer/receipts/${ids[2]}`,
      '/explorer/pulls?repository=acme%2Fapi&pr=5',
      '/explorer/keys',
      // Deployments: one waiting, one approved (the decide test's, just above).
      '/explorer/deployments',
      '/explorer/deployments/acme/shop/production',
    ];
    const page = await browser.context.newPage();
    const errors = collectErrors(page);
    await page.setViewportSize({ width: 375, height: 812 });
    /** The page's width beyond the screen's, and the elements that stick out. */
    // Evaluated in the page (a string: the tests are type-checked without the DOM's types).
    const overflow = () =>
      page.evaluate<{ scrollWidth: number; width: number; wide: string[] }>(`(() => {
        const width = document.documentElement.clientWidth;
        const wide = [...document.querySelectorAll('body *')]
          .filter((e) => e.getBoundingClientRect().right > width + 0.5)
          .map((e) => e.tagName.toLowerCase() + '.' + e.className)
          .slice(0, 5);
        return { scrollWidth: document.documentElement.scrollWidth, width, wide };
      })()`);
    for (const path of pages) {
      expect((await page.goto(`${base}${path}`))?.status()).toBe(200);
      const measured = await overflow();
      expect({ path, ...measured }).toEqual({ path, scrollWidth: 375, width: 375, wide: [] });
      await screenshot(page, `narrow${path.replace(/[^a-z0-9]+/gi, '-')}`.slice(0, 80));
    }
    // The verify panel with its result, whose details hold whole hashes.
    await page.goto(`${base}/explorer/receipts/${ids[1]}`);
    await page.getByLabel(/The key history this service publishes/).check();
    expect(await verify(page)).toMatchObject({ valid: 'true' });
    expect(await overflow()).toEqual({ scrollWidth: 375, width: 375, wide: [] });
    await screenshot(page, 'narrow-verified');
    // An error page, too.
    expect((await page.goto(`${base}/explorer/receipts/dr-none`))?.status()).toBe(404);
    expect(await overflow()).toEqual({ scrollWidth: 375, width: 375, wide: [] });
    expect(errors.filter((e) => !/status of 404/.test(e))).toEqual([]);
    await page.close();
  });

  it('verifies with the published key history', async () => {
    const { page } = await open(`/explorer/receipts/${ids[2]}`);
    await page.getByLabel(/The key history this service publishes/).check();
    expect(await verify(page)).toMatchObject({ valid: 'true', inclusion: 'PASS' });
    await page.close();
  });
});

describe('the ledger explorer without JavaScript', () => {
  it('the list and the receipt page are complete, and the list filters', async () => {
    const t = appWithGithub({ explorerScript: buildExplorerScript() });
    const listening = await listen();
    listening.server.on('request', t.app);
    const key = await newKey(t as never);
    const res = await request(t.app).post('/v1/evaluate').set('X-API-Key', key).send(validClaim());
    const id = res.body.receipt.receipt_id as string;
    let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined;
    try {
      browser = await launchBrowser({ javaScriptEnabled: false });
      const page = await browser.context.newPage();
      await page.goto(`${listening.url}/explorer/receipts`);
      await page.getByLabel('Agent').fill('coder-bot');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/agent=coder-bot/);
      await page.getByRole('link', { name: id }).click();
      await page.waitForURL(new RegExp(`/explorer/receipts/${id}$`));
      expect(await page.locator('h1').textContent()).toContain(id);
      expect(await page.getByRole('heading', { name: 'Rules' }).isVisible()).toBe(true);
      expect(await page.getByRole('heading', { name: 'Sources' }).isVisible()).toBe(true);
      expect(await page.locator('#verify-form').isVisible()).toBe(false);
      expect(await page.locator('#verify noscript').count()).toBe(1);
      // axe needs script: these pages are checked with it in the tests above.
      await screenshot(page, 'receipt-no-javascript');
    } finally {
      await browser?.close();
      await listening.close();
      await t.close();
    }
  });
});

describe('the ledger explorer with private reads', () => {
  it('asks for a key, keeps it in the tab, sends it as a header and shows only its receipts', async () => {
    const t = buildTestApp({
      config: { publicReads: false },
      explorerScript: buildExplorerScript(),
    });
    const listening = await listen();
    listening.server.on('request', t.app);
    const alice = await newKey(t);
    const bob = await newKey(t);
    const idOf = async (key: string, agent: string) => {
      const claim = validClaim();
      const res = await request(t.app)
        .post('/v1/evaluate')
        .set('X-API-Key', key)
        .send({ ...claim, action: { ...(claim.action as object), agent } });
      expect(res.status).toBe(200);
      return res.body.receipt.receipt_id as string;
    };
    const aliceId = await idOf(alice, 'alice-agent');
    const bobId = await idOf(bob, 'bob-agent');
    const deployTo = async (key: string, run: number) => {
      const claim = deploymentClaim({
        repository: 'acme/web',
        environment: 'production',
        sha: `${run}`.repeat(20),
        run,
      });
      const res = await request(t.app).post('/v1/evaluate').set('X-API-Key', key).send(claim);
      expect(res.body.decision.verdict).toBe('ESCALATED');
      return res.body.receipt.receipt_id as string;
    };
    const aliceDeploy = await deployTo(alice, 81);
    const bobDeploy = await deployTo(bob, 82);
    let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined;
    try {
      browser = await launchBrowser();
      const page = await browser.context.newPage();
      const errors = collectErrors(page);
      const sent: { url: string; key: string | undefined }[] = [];
      page.on('request', (r) => sent.push({ url: r.url(), key: r.headers()['x-api-key'] }));
      await page.goto(`${listening.url}/explorer/receipts`);
      expect(await page.locator('#api-key').isVisible()).toBe(true);
      expect(await page.content()).not.toContain('alice-agent');
      expect(await seriousViolations(page)).toEqual([]);
      await screenshot(page, 'private-key-prompt');

      await page.locator('#api-key').fill('sk_svc_not-a-key');
      await page.getByRole('button', { name: 'Show the ledger' }).click();
      await page.locator('#key-status', { hasText: 'Invalid API key' }).waitFor();
      expect(await page.evaluate("sessionStorage.getItem('svc.explorer.apiKey')")).toBeNull();
      sent.length = 0;

      await page.locator('#api-key').fill(alice);
      await page.getByRole('button', { name: 'Show the ledger' }).click();
      await page.locator('table.receipts').waitFor();
      const listed = await page.locator('table.receipts tbody').innerText();
      expect(listed).toContain(aliceId);
      expect(listed).not.toContain(bobId);
      expect(await page.evaluate("sessionStorage.getItem('svc.explorer.apiKey')")).toBe(alice);
      const reads = sent.filter((r) => r.url.includes('/v1/'));
      expect(reads.length).toBeGreaterThan(0);
      for (const r of reads) expect(r.key).toBe(alice);
      for (const r of sent) expect(r.url).not.toContain(alice);
      expect(await seriousViolations(page)).toEqual([]);
      await screenshot(page, 'private-receipts');
      // Drawn in the browser, the list carries the claim texts and fits a phone's screen.
      expect(listed).toContain('Merge PR #42 after CI passed');
      await page.setViewportSize({ width: 375, height: 812 });
      expect(
        await page.evaluate(
          'document.documentElement.scrollWidth <= document.documentElement.clientWidth',
        ),
      ).toBe(true);
      await page.setViewportSize({ width: 1280, height: 900 });

      // The next page reads with the kept key at once, and verifies with it.
      await page.getByRole('link', { name: aliceId }).click();
      await page.locator('h1', { hasText: aliceId }).waitFor();
      await page.getByLabel(/The key history this service publishes/).check();
      await page.getByRole('button', { name: 'Verify in this browser' }).click();
      await page.locator('#verify-outcome[data-valid="true"]').waitFor();

      // An environment's page, drawn with the kept key: only this account's deployments, and
      // the form decides with that key without asking for one.
      await page.goto(`${listening.url}/explorer/deployments/acme/web/production`);
      await page.locator('li.pending').first().waitFor();
      expect(await page.locator('#pending').innerText()).toContain(aliceDeploy);
      expect(await page.content()).not.toContain(bobDeploy);
      expect(await page.locator('li.pending .decide-key').isVisible()).toBe(false);
      expect(await page.getByRole('button', { name: 'Approve' }).isVisible()).toBe(true);

      // Another account's receipt reads as one that does not exist.
      await page.goto(`${listening.url}/explorer/receipts/${bobId}`);
      await page.locator('#key-status', { hasText: 'No receipt' }).waitFor();
      expect(await page.content()).not.toContain('bob-agent');
      expect(errors.filter((e) => !/status of (401|404)/.test(e))).toEqual([]);
    } finally {
      await browser?.close();
      await listening.close();
      await t.close();
    }
  });
  it('draws an agent session in the browser with the reader’s key, and another account sees none', async () => {
    const t = buildTestApp({
      config: { publicReads: false },
      explorerScript: buildExplorerScript(),
    });
    const listening = await listen();
    listening.server.on('request', t.app);
    const alice = await newKey(t);
    const bob = await newKey(t);
    const event = (name: string, extra: Record<string, unknown>) => ({
      session_id: 'sess-browser',
      transcript_path: '/tmp/transcript.jsonl',
      cwd: '/work/web',
      permission_mode: 'default',
      hook_event_name: name,
      tool_name: 'Bash',
      tool_input: { command: 'npm test' },
      tool_use_id: 'toolu_browser',
      ...extra,
    });
    for (const body of [
      event('PreToolUse', {}),
      event('PostToolUse', { tool_response: { exit_code: 0 } }),
    ]) {
      const res = await request(t.app)
        .post('/v1/hooks/claude-code')
        .set('X-API-Key', alice)
        .send(body);
      expect(res.status).toBe(200);
    }
    let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined;
    try {
      browser = await launchBrowser();
      const page = await browser.context.newPage();
      await page.goto(`${listening.url}/explorer/sessions/sess-browser`);
      await page.locator('#api-key').fill(alice);
      await page.getByRole('button', { name: 'Show the ledger' }).click();
      await page.locator('h1', { hasText: 'Session sess-browser' }).waitFor();
      const table = await page.locator('table.session-records').innerText();
      expect(table).toContain('npm test');
      expect(table).toContain('Decision');
      expect(table).toContain('Outcome');
      expect(await seriousViolations(page)).toEqual([]);
      await screenshot(page, 'private-session');
      await page.evaluate('sessionStorage.clear()');
      await page.reload();
      await page.locator('#api-key').fill(bob);
      await page.getByRole('button', { name: 'Show the ledger' }).click();
      await page.locator('#key-status', { hasText: 'No session' }).waitFor();
      expect(await page.content()).not.toContain('npm test');
    } finally {
      await browser?.close();
      await listening.close();
      await t.close();
    }
  });
});
