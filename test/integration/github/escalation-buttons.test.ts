import { createPublicKey } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import * as ed from '@noble/ed25519';
import { pino } from 'pino';
import request from 'supertest';
import { signupReviewer } from '../../support/api.js';
import { signedMessage } from '../../support/receipts.js';
import {
  APP_ID,
  appWithGithub,
  BASE_URL,
  checkRunActionEvent,
  checkSuiteEvent,
  closedNetwork,
  deliver,
  fakeGitHub,
  INSTALLATION,
  newRepoState,
  pullRequestEvent,
  type AppUnderTest,
  type PullRequestState,
  type RepoState,
} from './fake-github.js';

type Json = Record<string, unknown>;
const SHA = 'e5ca1a7e'.repeat(5);
const NEW_SHA = 'f00d'.repeat(10);
const page = (id: string) => `${BASE_URL}/explorer/receipts/${id}`;

// An agent's pull request, set to work by octocat; carol committed to it.
const agentPr: PullRequestState = {
  number: 12,
  author: 'copilot-swe-agent[bot]',
  authorType: 'Bot',
  headSha: SHA,
  assignees: ['octocat'],
};

interface Line {
  level: number;
  msg: string;
  [key: string]: unknown;
}

describe('GitHub App: Approve and Reject on an escalated check run', () => {
  let t: AppUnderTest;
  let state: RepoState;
  let github: ReturnType<typeof fakeGitHub>;
  let lines: Line[];

  closedNetwork();
  beforeEach(() => {
    state = newRepoState();
    github = fakeGitHub(state);
    lines = [];
    const logger = pino(
      { level: 'info' },
      { write: (line: string) => lines.push(JSON.parse(line) as Line) },
    );
    t = appWithGithub({ logger });
    // The strict policy escalates a pull request with green CI and no approval.
    state.config.set('main', 'policy: strict\ngate_humans: true\n');
    state.checkRuns.set(SHA, [
      { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
    ]);
    state.checkRuns.set(NEW_SHA, [
      { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
    ]);
    state.commits.set(12, [{ author: 'copilot-swe-agent[bot]', committer: 'carol' }]);
    state.permissions.set('maintainer', 'maintain');
    state.permissions.set('carol', 'write');
    state.permissions.set('octocat', 'admin');
    state.permissions.set('alice', 'admin');
    state.permissions.set('reader', 'read');
    state.permissions.set('helper', 'admin');
  });
  afterEach(() => t.close());

  /** Opens the pull request; answers its escalated check run and receipt. */
  const escalate = async (pr: PullRequestState = agentPr) => {
    state.pulls.set(pr.number, pr);
    expect((await deliver(t, 'pull_request', pullRequestEvent('opened', pr))).status).toBe(202);
    expect(await t.jobs.runDue()).toBe(1);
    const done = github.writes.filter((w) => w.method === 'PATCH').at(-1)!;
    expect(done.body.conclusion).toBe('action_required');
    return {
      id: done.id,
      headSha: pr.headSha,
      externalId: done.body.external_id as string,
      numbers: [pr.number],
    };
  };

  const press = async (
    run: Awaited<ReturnType<typeof escalate>> & { conclusion?: string },
    identifier: string,
    login: string,
    type: 'User' | 'Bot' = 'User',
  ) => {
    const res = await deliver(
      t,
      'check_run',
      checkRunActionEvent(run, identifier, { login, type }),
    );
    expect(res.status).toBe(202);
    expect(await t.jobs.runDue()).toBe(1);
  };

  const refusals = () => lines.filter((l) => l.msg === 'escalation decision refused');

  /** Nothing written, nothing changed on GitHub, and the refusal logged with who and why. */
  const expectNothing = async (
    run: Awaited<ReturnType<typeof escalate>>,
    before: { writes: number; sequence: number },
    who: string,
    why: RegExp,
  ) => {
    expect(github.writes.length).toBe(before.writes);
    expect((await t.store.ledger.head()).sequence).toBe(before.sequence);
    expect(await t.store.ledger.dispositionsOf([run.externalId])).toEqual([]);
    expect((await request(t.app).get(`/v1/receipts/${run.externalId}/disposition`)).status).toBe(
      404,
    );
    const [refused] = refusals();
    expect(refused).toMatchObject({ level: 30, sender: who, check_run_id: run.id });
    expect(refused!.reason).toMatch(why);
  };

  const snapshot = async () => ({
    writes: github.writes.length,
    sequence: (await t.store.ledger.head()).sequence,
  });

  it('an escalated check run offers Re-evaluate, Approve and Reject', async () => {
    await escalate();
    const done = github.writes.at(-1)!;
    const actions = done.body.actions as {
      label: string;
      description: string;
      identifier: string;
    }[];
    expect(actions.map((a) => a.identifier)).toEqual(['re-evaluate', 'approve', 'reject']);
    expect(actions.map((a) => a.label)).toEqual(['Re-evaluate', 'Approve', 'Reject']);
    for (const a of actions) {
      expect(a.label.length).toBeLessThanOrEqual(20);
      expect(a.description.length).toBeLessThanOrEqual(40);
      expect(a.identifier.length).toBeLessThanOrEqual(20);
    }
  });

  it('a maintainer approves: a disposition receipt linked to the escalated one, and the check succeeds naming them', async () => {
    const run = await escalate();
    const before = await snapshot();
    await press(run, 'approve', 'maintainer');

    const res = await request(t.app).get(`/v1/receipts/${run.externalId}/disposition`);
    expect(res.status).toBe(200);
    const receipt = res.body.receipt as Json;
    const parent = (await request(t.app).get(`/v1/receipts/${run.externalId}`)).body
      .receipt as Json;
    expect(receipt.disposition).toEqual({
      parent_receipt_id: run.externalId,
      parent_receipt_hash: (parent.chain as Json).receipt_hash,
      decision: 'approve',
      reviewer: { kind: 'github_user', id: 'maintainer' },
      reason: 'approved on GitHub by @maintainer',
    });
    expect(receipt.submitter).toEqual({
      kind: 'github_app',
      app_id: APP_ID,
      installation_id: INSTALLATION,
    });
    expect(receipt.policy).toMatchObject({ verdict: 'ALLOWED' });
    expect((await t.store.ledger.head()).sequence).toBe(before.sequence + 1);

    // The verifier checks the link to the parent in the ledger, and the signature.
    const verified = await request(t.app).post('/v1/verify').send(receipt);
    expect(verified.body.valid).toBe(true);
    expect(verified.body.checks).toContainEqual(
      expect.objectContaining({ name: 'parent_link', status: 'PASS' }),
    );
    const pem = (await request(t.app).get('/v1/keys/server')).text;
    const raw = Buffer.from(createPublicKey(pem).export({ format: 'jwk' }).x!, 'base64url');
    const signature = Buffer.from(
      (receipt.attestations as { signature: string }[])[0]!.signature,
      'base64',
    );
    expect(
      await ed.verifyAsync(signature, signedMessage(receipt), new Uint8Array(raw), {
        zip215: false,
      }),
    ).toBe(true);

    // The same check run, completed with the decision; no buttons left but a fresh evaluation.
    expect(github.writes.length).toBe(before.writes + 1);
    const update = github.writes.at(-1)!;
    expect(update).toMatchObject({
      method: 'PATCH',
      id: run.id,
      body: {
        status: 'completed',
        conclusion: 'success',
        details_url: page(receipt.receipt_id as string),
      },
    });
    const output = update.body.output as { title: string; summary: string };
    expect(output.title).toContain('@maintainer');
    expect(output.summary).toContain('@maintainer');
    expect(output.summary).toContain(`(${page(run.externalId)})`);
    expect(output.summary).toContain(`(${page(receipt.receipt_id as string)})`);
    expect(refusals()).toEqual([]);
    expect(lines.find((l) => l.msg === 'escalation decided on GitHub')).toMatchObject({
      sender: 'maintainer',
      decision: 'approve',
      disposition_receipt_id: receipt.receipt_id,
    });
  });

  it('a maintainer rejects: a BLOCKED disposition and a failed check', async () => {
    const run = await escalate();
    await press(run, 'reject', 'maintainer');
    const res = await request(t.app).get(`/v1/receipts/${run.externalId}/disposition`);
    expect(res.status).toBe(200);
    expect(res.body.receipt.policy).toMatchObject({ verdict: 'BLOCKED' });
    expect(res.body.receipt.disposition).toMatchObject({
      decision: 'reject',
      reviewer: { kind: 'github_user', id: 'maintainer' },
      reason: 'rejected on GitHub by @maintainer',
    });
    const update = github.writes.at(-1)!;
    expect(update).toMatchObject({ method: 'PATCH', id: run.id, body: { conclusion: 'failure' } });
    expect((update.body.output as { summary: string }).summary).toContain('@maintainer');
  });

  it("a committer's press changes nothing", async () => {
    const run = await escalate();
    const before = await snapshot();
    await press(run, 'approve', 'carol');
    await expectNothing(run, before, 'carol', /committed/);
  });

  it("the operator's press changes nothing", async () => {
    const run = await escalate();
    const before = await snapshot();
    await press(run, 'approve', 'octocat');
    await expectNothing(run, before, 'octocat', /operator/);
  });

  it("a read-only user's press changes nothing", async () => {
    const run = await escalate();
    const before = await snapshot();
    await press(run, 'approve', 'reader');
    await expectNothing(run, before, 'reader', /read permission/);
  });

  it("a Bot's press changes nothing, whatever its permission", async () => {
    const run = await escalate();
    const before = await snapshot();
    await press(run, 'approve', 'helper', 'Bot');
    await expectNothing(run, before, 'helper', /Bot, not a person/);
    expect(state.permissionLookups ?? []).not.toContain('helper');
  });

  it("the pull request author's press changes nothing", async () => {
    const human: PullRequestState = { number: 14, author: 'alice', headSha: SHA };
    const run = await escalate(human);
    const before = await snapshot();
    await press(run, 'approve', 'alice');
    await expectNothing(run, before, 'alice', /opened the pull request/);
  });

  it("after a push, a press on the old commit's check run changes nothing; the new head is evaluated afresh", async () => {
    const old = await escalate();
    const pushed = { ...agentPr, headSha: NEW_SHA };
    state.pulls.set(12, pushed);
    await deliver(t, 'pull_request', pullRequestEvent('synchronize', pushed));
    expect(await t.jobs.runDue()).toBe(1);
    const fresh = github.writes.filter((w) => w.method === 'POST').at(-1)!;
    expect(fresh.body.head_sha).toBe(NEW_SHA);
    const before = await snapshot();
    await press(old, 'approve', 'maintainer');
    await expectNothing(old, before, 'maintainer', /not the head/);
  });

  it('a second press after a disposition records nothing new', async () => {
    const run = await escalate();
    await press(run, 'approve', 'maintainer');
    const [first] = await t.store.ledger.dispositionsOf([run.externalId]);
    const before = await snapshot();
    state.permissions.set('lead', 'admin');
    // Pressed before the check showed the decision, and again on the decided check.
    await press(run, 'reject', 'lead');
    await press({ ...run, conclusion: 'success' }, 'approve', 'maintainer');
    expect(github.writes.length).toBe(before.writes);
    expect((await t.store.ledger.head()).sequence).toBe(before.sequence);
    expect(await t.store.ledger.dispositionsOf([run.externalId])).toEqual([first]);
    expect(refusals().map((l) => l.sender)).toEqual(['lead', 'maintainer']);
    expect(refusals()[0]!.reason).toMatch(/already has a disposition/);
  });

  it('evaluated again with the same evidence, a decided escalation shows its decision, without buttons', async () => {
    const run = await escalate();
    await press(run, 'approve', 'maintainer');
    const [decision] = await t.store.ledger.dispositionsOf([run.externalId]);
    // The check's Re-evaluate button: the same evidence answers the same escalated receipt.
    await press(run, 're-evaluate', 'maintainer');
    const again = github.writes.at(-1)!;
    expect(again.id).not.toBe(run.id);
    expect(again.body).toMatchObject({
      conclusion: 'success',
      external_id: run.externalId,
      actions: [expect.objectContaining({ identifier: 're-evaluate' })],
    });
    expect((again.body.actions as unknown[]).length).toBe(1);
    const summary = (again.body.output as { summary: string }).summary;
    expect(summary).toContain('@maintainer');
    expect(summary).toContain(`(${page(decision!.receipt.receipt_id)})`);
  });

  describe('a decision recorded through the API', () => {
    /** A reviewer key approves through POST /v1/receipts/:id/disposition, naming a maintainer. */
    const approveThroughApi = async (run: Awaited<ReturnType<typeof escalate>>) => {
      const reviewer = await signupReviewer(t);
      const res = await request(t.app)
        .post(`/v1/receipts/${run.externalId}/disposition`)
        .set('X-API-Key', reviewer.apiKey)
        .send({ decision: 'approve', reviewer: { id: 'maintainer' }, reason: 'looks fine' });
      expect(res.status).toBe(201);
      return { reviewer, disposition: res.body.receipt as Json };
    };
    /** CI's suite completes: the pull request is evaluated again, with the same evidence. */
    const ciCompletes = async () => {
      const res = await deliver(t, 'check_suite', checkSuiteEvent(SHA, { numbers: [12] }));
      expect(res.status).toBe(202);
      expect(await t.jobs.runDue()).toBe(1);
      return github.writes.filter((w) => w.method === 'PATCH').at(-1)!;
    };

    it('by a key the repository does not name leaves the check run as it was', async () => {
      const run = await escalate();
      const { disposition } = await approveThroughApi(run);
      const again = await ciCompletes();
      // The same escalated receipt, still waiting for a decision on GitHub, with its buttons.
      expect(again.body).toMatchObject({
        conclusion: 'action_required',
        external_id: run.externalId,
      });
      expect((again.body.actions as { identifier: string }[]).map((a) => a.identifier)).toEqual([
        're-evaluate',
        'approve',
        'reject',
      ]);
      const output = again.body.output as { title: string; summary: string };
      expect(output.title).not.toMatch(/approved/i);
      expect(output.summary).not.toContain('maintainer');
      expect(lines).toContainEqual(
        expect.objectContaining({
          msg: 'disposition not shown: recorded by a key the repository does not name as a reviewer',
          disposition_receipt_id: disposition.receipt_id,
        }),
      );
    });

    it('by a key named in the config’s reviewers decides the check run', async () => {
      const reviewer = await signupReviewer(t);
      state.config.set(
        'main',
        `policy: strict\ngate_humans: true\nreviewers: [${reviewer.keyId}]\n`,
      );
      const run = await escalate();
      const res = await request(t.app)
        .post(`/v1/receipts/${run.externalId}/disposition`)
        .set('X-API-Key', reviewer.apiKey)
        .send({ decision: 'approve', reviewer: { id: 'lead@acme.example' }, reason: 'CAB-7' });
      expect(res.status).toBe(201);
      const again = await ciCompletes();
      expect(again.body).toMatchObject({ conclusion: 'success', external_id: run.externalId });
      expect((again.body.output as { title: string }).title).toBe(
        'ALLOWED: approved by lead@acme.example',
      );
    });

    it('a reviewers entry that is not a key id is a config error', async () => {
      state.config.set('main', 'policy: strict\ngate_humans: true\nreviewers: [maintainer]\n');
      state.pulls.set(agentPr.number, agentPr);
      await deliver(t, 'pull_request', pullRequestEvent('opened', agentPr));
      expect(await t.jobs.runDue()).toBe(1);
      const done = github.writes.filter((w) => w.method === 'PATCH').at(-1)!;
      expect(done.body.conclusion).toBe('failure');
      expect((done.body.output as { summary: string }).summary).toMatch(/reviewers.*key id/);
    });
  });

  it('a press on a check run whose escalation a later evaluation of the same commit superseded changes nothing', async () => {
    const first = await escalate();
    // Another CI run is new evidence: a new receipt, a new check run on the same commit.
    state.checkRuns.get(SHA)!.push({
      name: 'lint',
      status: 'completed',
      conclusion: 'success',
      app_id: 1,
    });
    await deliver(t, 'pull_request', pullRequestEvent('synchronize', agentPr));
    expect(await t.jobs.runDue()).toBe(1);
    const second = github.writes.at(-1)!;
    expect(second.body.external_id).not.toBe(first.externalId);
    const before = await snapshot();
    await press(first, 'approve', 'maintainer');
    await expectNothing(first, before, 'maintainer', /superseded/);
  });

  it('an account GitHub does not know as a collaborator is refused, and the delivery is done', async () => {
    const run = await escalate();
    const before = await snapshot();
    state.permissions.set('stranger', 'not_found');
    await press(run, 'approve', 'stranger');
    await expectNothing(run, before, 'stranger', /none permission/);
  });

  it('a decision taken on GitHub counts in the receipts metric', async () => {
    const run = await escalate();
    const issued = async (verdict: string) => {
      const res = await request(t.app).get('/v1/metrics');
      expect(res.status).toBe(200);
      const line = res.text
        .split('\n')
        .find(
          (l) => l.startsWith('svc_receipts_issued_total{') && l.includes(`verdict="${verdict}"`),
        );
      return line ? Number(line.split(' ').at(-1)) : 0;
    };
    expect(await issued('ALLOWED')).toBe(0);
    await press(run, 'approve', 'maintainer');
    expect(await issued('ALLOWED')).toBe(1);
  });

  it('a check update GitHub failed is finished by the next run of the delivery, with the one receipt', async () => {
    const run = await escalate();
    const before = await snapshot();
    state.failPatches = 1;
    await press(run, 'approve', 'maintainer');
    const [decision] = await t.store.ledger.dispositionsOf([run.externalId]);
    expect(decision).toBeDefined();
    expect(github.writes.length).toBe(before.writes);
    t.clock.advance(10 * 60 * 1000);
    expect(await t.jobs.runDue()).toBe(1);
    expect((await t.store.ledger.head()).sequence).toBe(before.sequence + 1);
    expect(await t.store.ledger.dispositionsOf([run.externalId])).toEqual([decision]);
    expect(github.writes.at(-1)).toMatchObject({
      method: 'PATCH',
      id: run.id,
      body: { conclusion: 'success', details_url: page(decision!.receipt.receipt_id) },
    });
    expect(refusals()).toEqual([]);
  });
});
