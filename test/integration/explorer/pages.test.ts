import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import { newKey, signupReviewer } from '../../support/api.js';
import { deploymentClaim, mergeAction, validClaim } from '../../support/claims.js';

// The explorer's pages as the server renders them: what a reader without JavaScript gets.

/** The page's text as a reader sees it: tags dropped, whitespace collapsed. */
const textOf = (page: string) =>
  page
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

const HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>';

/** The typical merge claim, of `agent` on pull request `pr` of `repository`. */
const mergeClaim = (repository: string, agent: string, pr: number, text: string, extra = {}) =>
  validClaim({
    entity: repository,
    claim: text,
    action: { ...mergeAction, repository, pull_request: pr, commit: `c0ffee${pr}`, agent },
    ...extra,
  });

describe('explorer pages (public reads)', () => {
  let t: TestApp;
  const ids: string[] = [];

  beforeAll(async () => {
    t = buildTestApp();
    const key = await newKey(t);
    const claims = [
      mergeClaim('acme/web', 'coder-bot', 7, 'Merge the login fix'),
      mergeClaim('acme/web', 'coder-bot', 7, 'Merge the login fix, second push'),
      mergeClaim('acme/api', 'other-agent', 3, `Deploy ${HOSTILE}`, {
        sources: [
          {
            id: `src-${HOSTILE}`,
            type: 'ci',
            uri: 'javascript:alert(document.cookie)',
            confidence: 0.9,
            content: HOSTILE,
            provenance: { captured_at: '2026-01-15T09:00:00.000Z', collector: 'ci-bot' },
          },
        ],
      }),
    ];
    for (const claim of claims) {
      const res = await request(t.app).post('/v1/evaluate').set('X-API-Key', key).send(claim);
      expect(res.status).toBe(200);
      ids.push(res.body.receipt.receipt_id as string);
    }
  });
  afterAll(() => t.close());

  it('GET / leads to the overview, which counts receipts, agents and repositories', async () => {
    const root = await request(t.app).get('/');
    expect(root.status).toBe(302);
    expect(root.headers.location).toBe('/explorer');
    const res = await request(t.app).get('/explorer');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('<h1 id="page-title">Ledger overview</h1>');
    const text = textOf(res.text);
    expect(text).toContain('Receipts 3 Acceptance rate');
    expect(text).toContain('Agents 2 Repositories 2');
    expect(res.text).toMatch(/<svg\s+role="img"/);
    expect(res.text).toContain('Latest checkpoint');
    expect(text).toContain('Tree size 3 receipts');
  });

  it('the pages carry the service CSP and load only their own script and stylesheet', async () => {
    const res = await request(t.app).get('/explorer');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.text).not.toMatch(/<script>|<script [^>]*>[^<]/);
    expect(res.text).toContain(
      '<script type="module" src="/explorer/assets/explorer.js"></script>',
    );
    const css = await request(t.app).get('/explorer/assets/explorer.css');
    expect(css.status).toBe(200);
    expect(css.headers['content-type']).toMatch(/^text\/css/);
  });

  it('the list filters by agent, repository, verdict and words, with the API cursors', async () => {
    const all = await request(t.app).get('/explorer/receipts');
    expect(all.status).toBe(200);
    for (const id of ids) expect(all.text).toContain(`/explorer/receipts/${id}`);
    // Each row says what was claimed.
    const rows = all.text.split('<tr>').slice(2);
    expect(rows.find((r) => r.includes(ids[1]!))).toContain('Merge the login fix, second push');
    expect(rows.find((r) => r.includes(ids[0]!))).toContain('Merge the login fix<');

    const byAgent = await request(t.app).get('/explorer/receipts?agent=other-agent&repo=&verdict=');
    expect(byAgent.text).toContain(ids[2]);
    expect(byAgent.text).not.toContain(ids[0]);
    expect(byAgent.text).toContain('value="other-agent"');

    const byWords = await request(t.app).get('/explorer/receipts?q=second');
    expect(byWords.text).toContain(ids[1]);
    expect(byWords.text).not.toContain(ids[0]);

    const none = await request(t.app).get('/explorer/receipts?verdict=ESCALATED');
    expect(none.text).toContain('No receipt matches.');

    // The API's cursors: a page after the newest receipt's sequence holds the older ones.
    const older = await request(t.app).get('/explorer/receipts?repo=acme%2Fweb&after=2');
    expect(older.text).toContain(ids[0]);
    expect(older.text).not.toContain(ids[1]);
  });

  it('a bad filter is a 400 page with the error, its code and the request id', async () => {
    const res = await request(t.app).get('/explorer/receipts?verdict=MAYBE');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('verdict');
    expect(res.text).toContain('<code>validation_failed</code>');
    expect(res.text).toContain(`<code>${res.headers['x-request-id']}</code>`);
    const unknown = await request(t.app).get('/explorer/receipts/dr-nothing');
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain('<code>not_found</code>');
  });

  it('the receipt page shows verdict, rules, sources, submitter, policy and the chain', async () => {
    const res = await request(t.app).get(`/explorer/receipts/${ids[1]}`);
    expect(res.status).toBe(200);
    const stored = (await request(t.app).get(`/v1/receipts/${ids[1]}`)).body;
    for (const part of [
      `Receipt ${ids[1]}`,
      stored.receipt.policy.verdict,
      stored.receipt.admissibility.status,
      'min_sources',
      stored.receipt.policy.config_hash,
      stored.receipt.submitter.key_id,
      stored.receipt.chain.receipt_hash,
      `href="/explorer/receipts/${ids[0]}"`,
      `href="/explorer/receipts/${ids[2]}"`,
      'id="disposition"',
      'id="verify-form"',
      'href="/explorer/pulls?repository=acme%2Fweb&amp;pr=7"',
    ])
      expect(res.text).toContain(part);
    for (const rule of stored.policy.rules) expect(res.text).toContain(rule.reason);
    // Nothing on a plain receipt's page reads like an escalation.
    expect(res.text).not.toContain('id="decision-summary"');
    expect(res.text).not.toContain('sensitive action');
  });

  it('the receipt page offers the receipt, its tlog-proof and its attestation for download', async () => {
    const page = (await request(t.app).get(`/explorer/receipts/${ids[1]}`)).text;
    const links = [
      [`/v1/receipts/${ids[1]}`, `${ids[1]}.response.json`],
      [`/v1/receipts/${ids[1]}/proof?format=tlog-proof`, `${ids[1]}.tlog-proof`],
      [`/v1/receipts/${ids[1]}/attestation`, `${ids[1]}.dsse.json`],
    ];
    for (const [href, name] of links) {
      expect(page).toContain(`href="${href}" download="${name}"`);
      const res = await request(t.app).get(href!);
      expect(res.status).toBe(200);
    }
    const proof = await request(t.app).get(links[1]![0]!);
    expect(proof.text.split('\n')[0]).toBe('c2sp.org/tlog-proof@v1');
  });

  it('says why a receipt has no previous or next one as a reviewer reads it', async () => {
    const first = textOf((await request(t.app).get(`/explorer/receipts/${ids[0]}`)).text);
    expect(first).toContain('Previous: none, this is the first receipt of the ledger');
    expect(first).not.toContain('none readable');
    const last = textOf((await request(t.app).get(`/explorer/receipts/${ids[2]}`)).text);
    expect(last).toContain('Next: none yet, this is the newest receipt');
  });

  it('shows the root hash in base64, as the checkpoint has it, and in hex, as svc-verify ledger prints it', async () => {
    const note = (await request(t.app).get('/v1/log/checkpoint')).text;
    const base64 = note.split('\n')[2]!;
    const hex = Buffer.from(base64, 'base64').toString('hex');
    expect(hex).toMatch(/^[0-9a-f]{64}$/);
    for (const path of ['/explorer', '/explorer/keys']) {
      const text = textOf((await request(t.app).get(path)).text);
      expect(text).toContain(`Root hash (base64, as in the signed note) ${base64}`);
      expect(text).toContain(`Root hash (hex, as svc-verify ledger prints it) ${hex}`);
    }
  });

  it('an escalation shows its human decision, and the decision links back to it', async () => {
    const agentKey = await newKey(t);
    const reviewerKey = (await signupReviewer(t)).apiKey;
    const escalated = await request(t.app)
      .post('/v1/evaluate')
      .set('X-API-Key', agentKey)
      .send(
        validClaim({
          action: { action_type: 'access_change', target_system: 'github', agent: 'coder-bot' },
        }),
      );
    expect(escalated.body.decision.verdict).toBe('ESCALATED');
    const parentId = escalated.body.receipt.receipt_id as string;
    const pending = await request(t.app).get(`/explorer/receipts/${parentId}`);
    expect(textOf(pending.text)).toContain(
      'No human decision is recorded for this escalation yet.',
    );
    // Every rule passed: the escalation's cause is a row of its own, with its reason.
    expect(escalated.body.policy.rules.every((r: { passed: boolean }) => r.passed)).toBe(true);
    const rules = pending.text.slice(
      pending.text.indexOf('id="rules-heading"'),
      pending.text.indexOf('id="sources-heading"'),
    );
    expect(textOf(rules)).toContain(
      'sensitive action ESCALATED access_change requires a human_approval source: a human decides',
    );
    // At the top, before the outcome: that it waits for a human.
    const waiting = pending.text.indexOf('id="decision-summary"');
    expect(waiting).toBeGreaterThan(-1);
    expect(waiting).toBeLessThan(pending.text.indexOf('id="outcome-heading"'));
    expect(textOf(pending.text)).toContain('Waiting for a human decision.');

    const decided = await request(t.app)
      .post(`/v1/receipts/${parentId}/disposition`)
      .set('X-API-Key', reviewerKey)
      .send({
        decision: 'approve',
        reviewer: { id: 'lead@acme.example', name: `Lead ${HOSTILE}` },
        reason: 'Checked against ticket SEC-12',
      });
    expect(decided.status).toBe(201);
    const dispositionId = decided.body.receipt.receipt_id as string;

    const parentPage = await request(t.app).get(`/explorer/receipts/${parentId}`);
    const parentText = textOf(parentPage.text);
    for (const part of ['Approved', 'lead@acme.example', 'Checked against ticket SEC-12'])
      expect(parentText).toContain(part);
    // The decision at the top: who, approve or reject, when; before the verdict it overrides.
    const top = parentPage.text.slice(0, parentPage.text.indexOf('id="outcome-heading"'));
    const decidedAt = decided.body.receipt.issued_at as string;
    expect(textOf(top)).toContain('APPROVED Approved by lead@acme.example');
    expect(top).toContain(`datetime="${decidedAt}"`);
    expect(top).toContain(`href="/explorer/receipts/${decided.body.receipt.receipt_id as string}"`);
    // The list says it too.
    const listed = await request(t.app).get('/explorer/receipts');
    const row = listed.text
      .split('<tr>')
      .find((r) => r.includes(`href="/explorer/receipts/${parentId}"`))!;
    expect(textOf(row)).toContain('approved by lead@acme.example');
    expect(parentPage.text).toContain(`href="/explorer/receipts/${dispositionId}"`);
    // The reviewer's name is the recording key's to choose: escaped like any claim string.
    expect(parentPage.text).not.toContain('<script>alert');

    const decisionPage = await request(t.app).get(`/explorer/receipts/${dispositionId}`);
    expect(textOf(decisionPage.text)).toContain(
      'This receipt records a human decision on an escalated receipt.',
    );
    const decisionTop = decisionPage.text.slice(
      0,
      decisionPage.text.indexOf('id="outcome-heading"'),
    );
    expect(textOf(decisionTop)).toContain('APPROVED Approved by lead@acme.example');
    expect(decisionTop).toContain(`href="/explorer/receipts/${parentId}"`);
    expect(decisionPage.text).toContain(`href="/explorer/receipts/${parentId}"`);
    expect(decisionPage.text).toContain(escalated.body.receipt.chain.receipt_hash);

    const plain = await request(t.app).get(`/explorer/receipts/${ids[0]}`);
    expect(textOf(plain.text)).toContain('Only an ESCALATED receipt takes a human decision');
  });

  it('escapes every string a claim chose and links no javascript: URI', async () => {
    const res = await request(t.app).get(`/explorer/receipts/${ids[2]}`);
    expect(res.status).toBe(200);
    expect(res.text).not.toContain(HOSTILE);
    expect(res.text).not.toContain('<img src=x');
    expect(res.text).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(res.text).not.toMatch(/href="javascript:/i);
    expect(res.text).toContain('captured <time');
    const list = await request(t.app).get('/explorer/receipts');
    expect(list.text).not.toContain(HOSTILE);
  });

  it('the pull-request page lists its receipts push after push, and what changed', async () => {
    const res = await request(t.app).get('/explorer/pulls?repository=acme%2Fweb&pr=7');
    expect(res.status).toBe(200);
    expect(res.text).toContain('Pull request #7 of acme/web');
    expect(res.text.indexOf(ids[0]!)).toBeLessThan(res.text.indexOf(ids[1]!));
    expect(res.text).toContain('Changes since the previous receipt');
    const missing = await request(t.app).get('/explorer/pulls?repository=acme%2Fweb');
    expect(missing.status).toBe(400);
  });

  it('the keys page shows the origin, the latest checkpoint and the witnesses', async () => {
    const res = await request(t.app).get('/explorer/keys');
    expect(res.status).toBe(200);
    expect(res.text).toContain('Signing keys');
    expect(res.text).toContain('Latest checkpoint');
    expect(res.text).toContain('No witness is configured');
  });
});

describe('explorer deployment pages (public reads)', () => {
  let t: TestApp;
  let key: string;
  const HOSTILE_ENV = '<img src=x onerror=alert(1)>/"eu"';
  const sha = (n: number) => `${String(n).repeat(40)}`.slice(0, 40);
  let mergeId: string;
  let blockedMergeId: string;
  const deployed: Record<string, { id: string; body: Record<string, unknown> }> = {};

  const evaluate = async (claim: unknown) => {
    const res = await request(t.app)
      .post('/v1/evaluate')
      .set('X-API-Key', key)
      .send(claim as object);
    expect(res.status).toBe(200);
    return { id: res.body.receipt.receipt_id as string, body: res.body as Record<string, unknown> };
  };
  const verdictOf = (r: { body: Record<string, unknown> }) =>
    (r.body.decision as { verdict: string }).verdict;

  beforeAll(async () => {
    t = buildTestApp();
    key = await newKey(t);
    mergeId = (await evaluate(mergeClaim('acme/web', 'coder-bot', 11, 'Merge the cache fix'))).id;
    blockedMergeId = (
      await evaluate(
        mergeClaim('acme/web', 'coder-bot', 12, 'Merge the risky change', {
          policyConfig: { minSources: 3 },
        }),
      )
    ).id;
    const merges = [
      { pr: 11, receiptId: mergeId, admissible: true },
      { pr: 12, receiptId: blockedMergeId, admissible: false },
      { pr: 13, receiptId: null, admissible: false },
    ];
    const env = (environment: string, n: number, repository = 'acme/web') =>
      deploymentClaim({ repository, environment, sha: sha(n), run: 500 + n, merges });
    deployed.staging = await evaluate(env('staging', 1));
    deployed.first = await evaluate(env('production', 2));
    deployed.decided = await evaluate(env('production', 3));
    deployed.other = await evaluate(env('production', 4, 'acme/api'));
    deployed.hostile = await evaluate(env(HOSTILE_ENV, 5));
    deployed.waiting = await evaluate(env('production', 6));
    const reviewer = (await signupReviewer(t)).apiKey;
    const decided = await request(t.app)
      .post(`/v1/receipts/${deployed.decided!.id}/disposition`)
      .set('X-API-Key', reviewer)
      .send({ decision: 'reject', reviewer: { id: 'lead@acme.example' }, reason: 'not today' });
    expect(decided.status).toBe(201);
  });
  afterAll(() => t.close());

  it('the environment page lists its decisions newest first and the escalations still waiting', async () => {
    expect(verdictOf(deployed.staging!)).toBe('ALLOWED');
    expect(verdictOf(deployed.waiting!)).toBe('ESCALATED');
    const res = await request(t.app).get('/explorer/deployments/acme/web/production');
    expect(res.status).toBe(200);
    expect(res.text).toContain('<h1 id="page-title">Deployments of acme/web to production</h1>');
    const [pending, decisions] = res.text.split('id="decisions-heading"') as [string, string];
    // Newest first; another environment's and another repository's deployments are not here.
    const order = ['waiting', 'decided', 'first'].map((k) => decisions.indexOf(deployed[k]!.id));
    expect(order.every((i) => i > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    for (const k of ['staging', 'other', 'hostile'])
      expect(res.text).not.toContain(deployed[k]!.id);
    const row = decisions.split('<tr').find((r) => r.includes(deployed.first!.id))!;
    const rowText = textOf(`<tr${row}`);
    for (const part of ['ESCALATED', sha(2), 'main', '502', 'a person'])
      expect(rowText).toContain(part);
    expect(row).toContain(`href="/explorer/receipts/${deployed.first!.id}"`);
    // The rejected one shows its decision, and waits no more.
    const decidedRow = decisions.split('<tr').find((r) => r.includes(deployed.decided!.id))!;
    expect(textOf(`<tr${decidedRow}`)).toContain('ESCALATED REJECTED decided by lead@acme.example');
    // The disposition is shown on its parent's row, not as a deployment of its own.
    expect(decisions.split('<tr data-receipt-id=').length - 1).toBe(3);
    expect(pending).not.toContain(deployed.decided!.id);
    for (const k of ['waiting', 'first']) {
      const item = pending.split('<li class="pending"').find((p) => p.includes(deployed[k]!.id))!;
      // The buttons are the script's (hidden without it); the API call is there for everyone.
      expect(item).toMatch(/<form class="decide-form key-form" data-receipt-id="[^"]+" hidden>/);
      expect(item).toContain('>Approve</button>');
      expect(item).toContain('>Reject</button>');
      expect(item).toContain(
        `curl -sS -X POST &quot;$SVC_URL/v1/receipts/${deployed[k]!.id}/disposition&quot;`,
      );
    }
  });

  it('pages with the API cursor, and refuses a bad one with a 400 page', async () => {
    const seq = (deployed.decided!.body.receipt as { chain: { sequence: number } }).chain.sequence;
    const older = await request(t.app).get(
      `/explorer/deployments/acme/web/production?after=${seq}`,
    );
    expect(older.status).toBe(200);
    expect(older.text).toContain(deployed.first!.id);
    expect(older.text).not.toContain(deployed.waiting!.id);
    const bad = await request(t.app).get('/explorer/deployments/acme/web/production?after=x');
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('<code>validation_failed</code>');
    // The API the page reads with: an environment is searched within one repository.
    const api = await request(t.app).get('/v1/receipts/search?environment=production');
    expect(api.status).toBe(400);
    expect(api.body).toMatchObject({ code: 'validation_failed', request_id: expect.any(String) });
    expect(api.body.error).toContain('environment');
  });

  it('escapes a hostile environment name and encodes it in every link', async () => {
    const index = await request(t.app).get('/explorer/deployments');
    expect(index.status).toBe(200);
    const href = `/explorer/deployments/acme/web/${encodeURIComponent(HOSTILE_ENV)}`;
    expect(index.text).toContain(`href="${href}"`);
    expect(index.text).not.toContain('<img src=x');
    const page = await request(t.app).get(href);
    expect(page.status).toBe(200);
    expect(page.text).toContain(deployed.hostile!.id);
    expect(page.text).not.toContain('<img src=x');
    expect(page.text).toContain('&lt;img src=x onerror=alert(1)&gt;/&quot;eu&quot;');
    for (const k of ['first', 'staging']) expect(page.text).not.toContain(deployed[k]!.id);
  });

  it('the index lists each repository’s environments with their latest decision, linked from the overview', async () => {
    const overview = await request(t.app).get('/explorer');
    expect(overview.text).toContain('href="/explorer/deployments"');
    const index = await request(t.app).get('/explorer/deployments');
    const text = textOf(index.text);
    expect(text).toContain('acme/api production ESCALATED');
    expect(text).toContain('acme/web staging ALLOWED');
    // The latest deployment, not the disposition recorded since on an earlier one.
    expect(text).toContain('acme/web production ESCALATED');
    for (const path of ['acme/api/production', 'acme/web/staging', 'acme/web/production'])
      expect(index.text).toContain(`href="/explorer/deployments/${path}"`);
    // Merges are no deployments.
    expect(index.text).not.toContain('Merge the cache fix');
  });

  it('a deployment receipt shows the merge receipts it relied on and links its environment', async () => {
    const res = await request(t.app).get(`/explorer/receipts/${deployed.first!.id}`);
    expect(res.status).toBe(200);
    const section = res.text.slice(res.text.indexOf('id="deployment"'));
    expect(section).toContain('href="/explorer/deployments/acme/web/production"');
    const rows = section.split('<tr data-source=').slice(1);
    expect(rows).toHaveLength(3);
    expect(rows[0]).toContain(`href="/explorer/receipts/${mergeId}"`);
    expect(textOf(`<tr ${rows[0]!}`)).toContain('#11');
    expect(textOf(`<tr ${rows[0]!}`)).toContain('ALLOWED ACCEPTED ADMISSIBLE');
    expect(rows[1]).toContain(`href="/explorer/receipts/${blockedMergeId}"`);
    expect(textOf(`<tr ${rows[1]!}`)).toContain('BLOCKED REJECTED INADMISSIBLE');
    expect(textOf(`<tr ${rows[2]!}`)).toContain('#13 none not evaluated by svc INADMISSIBLE');
    const merge = await request(t.app).get(`/explorer/receipts/${mergeId}`);
    expect(merge.text).not.toContain('id="deployment"');
  });
});

describe('explorer pages (private reads)', () => {
  let t: TestApp;
  let id: string;

  beforeAll(async () => {
    t = buildTestApp({ config: { publicReads: false } });
    const key = await newKey(t);
    const res = await request(t.app)
      .post('/v1/evaluate')
      .set('X-API-Key', key)
      .send(mergeClaim('secret/repo', 'hidden-agent', 1, 'A private claim'));
    id = res.body.receipt.receipt_id as string;
  });
  afterAll(() => t.close());

  it('renders shells that ask for a key and show no ledger data', async () => {
    for (const path of [
      '/explorer',
      '/explorer/receipts',
      `/explorer/receipts/${id}`,
      '/explorer/pulls?repository=secret%2Frepo&pr=1',
      '/explorer/deployments',
      '/explorer/deployments/secret/repo/production',
    ]) {
      const res = await request(t.app).get(path);
      expect(res.status).toBe(200);
      expect(res.text).toContain('id="key-form"');
      expect(res.text).toContain('data-reads="private"');
      for (const secret of ['secret/repo', 'hidden-agent', 'A private claim'])
        expect(res.text).not.toContain(secret);
    }
    // What the key shell reads with is still the API, which refuses a reader without a key.
    expect((await request(t.app).get(`/v1/receipts/${id}`)).status).toBe(401);
  });
});
