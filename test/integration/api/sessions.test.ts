import { afterEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { verifyReceipt } from '@svc/verify';
import type { ClaimInput } from '../../../src/core/claim-schema.js';
import { AgentApprovals } from '../../../src/services/agent-approvals.js';
import { ApiKeyService } from '../../../src/services/api-keys.js';
import {
  apiKeySubmitter,
  ClaimService,
  type SubmitterContext,
} from '../../../src/services/claims.js';
import { OutcomeService } from '../../../src/services/outcomes.js';
import { PolicyService } from '../../../src/services/policies.js';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import {
  type Account,
  expectError,
  ledgerState,
  signupAccount,
  grantReviewer,
  uniqueEmail,
} from '../../support/api.js';
import { nobleVerifies, serverPublicKey } from '../../support/receipts.js';
import { inputDigestOf, toolCallClaim } from '../../support/tool-calls.js';

// The tool-call claims are handed to the services as the hook adapters do (the claim schema of
// this build does not take them over POST /v1/claims); everything read goes through the API.

interface World {
  t: TestApp;
  alice: Account;
  bob: Account;
  auditor: string;
  ids: Record<string, string>;
}

let w: World | undefined;
afterEach(async () => {
  await w?.t.close();
  w = undefined;
});

const PUBLISH = { command: 'npm publish' };
const LIST = { command: 'ls' };

async function world(publicReads: boolean): Promise<World> {
  const t = buildTestApp({ config: { publicReads }, logOrigin: 'svc/test' });
  const alice = await signupAccount(t);
  const bob = await signupAccount(t);
  const keys = new ApiKeyService({ keys: t.store.apiKeys, clock: t.clock });
  const readerOfAll = async (email: string) =>
    (await keys.create({ email, tier: 'free', lockedPolicy: null, reader: 'all' })).apiKey;
  const auditor = await readerOfAll(uniqueEmail('auditor'));
  // The reviewer reads the escalated receipt also while reads are private.
  const reviewerEmail = uniqueEmail('reviewer');
  const reviewer = { apiKey: await readerOfAll(reviewerEmail) };
  await grantReviewer(t, { email: reviewerEmail });
  const deps = {
    ledger: t.store.ledger,
    serverKey: t.serverKey,
    clock: t.clock,
    logOrigin: 'svc/test',
  };
  const claims = new ClaimService({
    ...deps,
    policies: new PolicyService({ policies: t.store.policies, clock: t.clock }),
  });
  const outcomes = new OutcomeService({ ...deps, sessions: t.store.sessions });
  const approvals = new AgentApprovals({
    sessions: t.store.sessions,
    clock: t.clock,
    ttlMs: 3_600_000,
  });
  const contextOf = async (account: Account): Promise<SubmitterContext> =>
    apiKeySubmitter((await t.store.apiKeys.findByKeyId(account.keyId))!);
  const aliceCtx = await contextOf(alice);
  const bobCtx = await contextOf(bob);
  const ids: Record<string, string> = {};
  const ask = async (ctx: SubmitterContext, claim: ClaimInput) =>
    (await claims.evaluate(await approvals.withApproval(claim, ctx.scope), ctx)).response.receipt;
  const ran = async (ctx: SubmitterContext, sessionId: string, input: unknown) =>
    (
      await outcomes.recordOutcome(
        {
          session_id: sessionId,
          tool_name: 'Bash',
          input_digest: inputDigestOf(input),
          status: 'succeeded',
          exit_code: 0,
        },
        ctx,
      )
    ).response.receipt;

  // Alice's session: an allowed call that ran, an escalated one approved by a reviewer, asked
  // again and run once.
  const session = { sessionId: 'sess-alice', agent: 'alice-bot', repository: 'alice/app' };
  ids.list = (await ask(aliceCtx, toolCallClaim({ ...session, input: LIST }))).receipt_id;
  ids.listRan = (await ran(aliceCtx, 'sess-alice', LIST)).receipt_id;
  const escalated = await ask(
    aliceCtx,
    toolCallClaim({ ...session, input: PUBLISH, kind: 'escalated' }),
  );
  expect(escalated.policy.verdict).toBe('ESCALATED');
  ids.escalated = escalated.receipt_id;
  const disposed = await request(t.app)
    .post(`/v1/receipts/${escalated.receipt_id}/disposition`)
    .set('X-API-Key', reviewer.apiKey)
    .send({ decision: 'approve', reviewer: { id: 'lead@acme.example' }, reason: 'release day' });
  expect(disposed.status).toBe(201);
  ids.approval = disposed.body.receipt.receipt_id;
  t.clock.advance(60_000);
  const again = await ask(
    aliceCtx,
    toolCallClaim({ ...session, input: PUBLISH, kind: 'escalated' }),
  );
  expect(again.policy.verdict).toBe('ALLOWED');
  ids.approved = again.receipt_id;
  ids.publishRan = (await ran(aliceCtx, 'sess-alice', PUBLISH)).receipt_id;

  // Bob's session: a blocked call that ran all the same.
  const blocked = await ask(
    bobCtx,
    toolCallClaim({
      sessionId: 'sess-bob',
      agent: 'bob-bot',
      input: LIST,
      kind: 'blocked',
      harness: 'codex',
    }),
  );
  ids.blocked = blocked.receipt_id;
  ids.bypass = (await ran(bobCtx, 'sess-bob', LIST)).receipt_id;
  return { t, alice, bob, auditor, ids };
}

const get = (t: TestApp, path: string, key?: string) => {
  const req = request(t.app).get(path);
  return key ? req.set('X-API-Key', key) : req;
};

describe('GET /v1/sessions and /v1/sessions/:id', () => {
  it('lists sessions with their counts and coverage, newest first, with filters', async () => {
    w = await world(true);
    const res = await get(w.t, '/v1/sessions');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ limit: 100, next_after: null });
    expect(res.body.sessions).toEqual([
      expect.objectContaining({
        session_id: 'sess-bob',
        harness: 'codex',
        decisions: { ALLOWED: 0, BLOCKED: 1, ESCALATED: 0 },
        outcomes: 1,
        ran_without_allow: 1,
        covered: false,
      }),
      expect.objectContaining({
        session_id: 'sess-alice',
        harness: 'claude-code',
        agent: 'alice-bot',
        repository: 'alice/app',
        decisions: { ALLOWED: 2, BLOCKED: 0, ESCALATED: 1 },
        dispositions: 1,
        outcomes: 2,
        ran_without_allow: 0,
        missing_outcomes: 0,
        covered: true,
      }),
    ]);
    // The submitter scope is internal.
    expect(res.body.sessions[0]).not.toHaveProperty('scope');
    const ids = async (query: string) =>
      (await get(w!.t, `/v1/sessions?${query}`)).body.sessions.map(
        (s: { session_id: string }) => s.session_id,
      );
    expect(await ids('covered=false')).toEqual(['sess-bob']);
    expect(await ids('covered=true')).toEqual(['sess-alice']);
    expect(await ids('agent=alice-bot')).toEqual(['sess-alice']);
    expect(await ids('repo=alice/app')).toEqual(['sess-alice']);
    expect(await ids('harness=codex')).toEqual(['sess-bob']);
    const first = await get(w.t, '/v1/sessions?limit=1');
    expect(first.body.sessions).toHaveLength(1);
    expect(await ids(`limit=1&after=${first.body.next_after}`)).toEqual(['sess-alice']);
  });

  it('answers one session’s receipts in ledger order, each verifying with the portable verifier', async () => {
    w = await world(true);
    const res = await get(w.t, '/v1/sessions/sess-alice');
    expect(res.status).toBe(200);
    expect(res.body.session).toMatchObject({ session_id: 'sess-alice', covered: true });
    const { ids } = w;
    expect(
      res.body.records.map((r: { kind: string; receipt_id: string }) => [r.kind, r.receipt_id]),
    ).toEqual([
      ['decision', ids.list],
      ['outcome', ids.listRan],
      ['decision', ids.escalated],
      ['disposition', ids.approval],
      ['decision', ids.approved],
      ['outcome', ids.publishRan],
    ]);
    const records = res.body.records as {
      receipt: Record<string, unknown>;
      parent_receipt_id: string | null;
      tool: unknown;
      input_digest: string;
    }[];
    expect(records[1]!.parent_receipt_id).toBe(ids.list);
    expect(records[5]!.parent_receipt_id).toBe(ids.approved);
    expect(records[0]!.tool).toMatchObject({ name: 'Bash', input_digest: inputDigestOf(LIST) });
    expect(records[4]!.receipt).toMatchObject({ policy: { verdict: 'ALLOWED' } });
    const publicKey = await serverPublicKey(w.t);
    for (const { receipt } of records) {
      expect(await nobleVerifies(receipt, publicKey)).toBe(true);
      const result = verifyReceipt(receipt, { publicKey, keyId: w.t.serverKey.keyId });
      expect(result.checks.filter((c) => c.status === 'FAIL')).toEqual([]);
    }
    // The server's verify checks the outcome's link to its decision in the ledger.
    const verified = await request(w.t.app).post('/v1/verify').send(records[5]!.receipt);
    expect(verified.status).toBe(200);
    expect(verified.body.valid).toBe(true);
    expect(verified.body.checks).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'parent_link', status: 'PASS' }),
        expect.objectContaining({ name: 'outcome_valid', status: 'PASS' }),
      ]),
    );
    const after = (records[1]!.receipt.chain as { sequence: number }).sequence;
    const page = await get(w.t, `/v1/sessions/sess-alice?limit=2&after=${after}`);
    expect(page.body.records.map((r: { receipt_id: string }) => r.receipt_id)).toEqual([
      ids.escalated,
      ids.approval,
    ]);
    expect(page.body.next_after).toEqual(expect.any(Number));
  });

  it('records a call that ran without an allow as ran_without_allow', async () => {
    w = await world(true);
    const res = await get(w.t, '/v1/sessions/sess-bob');
    expect(res.body.records).toEqual([
      expect.objectContaining({ kind: 'decision', verdict: 'BLOCKED', ran_without_allow: false }),
      expect.objectContaining({
        kind: 'outcome',
        verdict: 'BLOCKED',
        parent_receipt_id: w.ids.blocked,
        ran_without_allow: true,
      }),
    ]);
    expect(res.body.records[1].receipt.policy.checks).toEqual([
      expect.objectContaining({ rule: 'ran_without_allow', passed: false }),
    ]);
  });

  it('answers bad inputs with a clear 400 or 404 and leaves the ledger unchanged', async () => {
    w = await world(true);
    const before = await ledgerState(w.t);
    const cases: [string, number, string][] = [
      ['/v1/sessions?covered=maybe', 400, 'validation_failed'],
      ['/v1/sessions?limit=0', 400, 'validation_failed'],
      ['/v1/sessions?after=-1', 400, 'validation_failed'],
      ['/v1/sessions?verdict=ALLOWED', 400, 'validation_failed'],
      ['/v1/sessions?agent=', 400, 'validation_failed'],
      [`/v1/sessions/${'x'.repeat(300)}`, 400, 'validation_failed'],
      ['/v1/sessions/sess-alice?after=abc', 400, 'validation_failed'],
      ['/v1/sessions/no-such-session', 404, 'not_found'],
    ];
    for (const [path, status, code] of cases) {
      const res = await get(w.t, path);
      const message = expectError(res, status, code);
      if (status === 400) expect(message).toMatch(/^(covered|limit|after|agent|id|verdict|query)/);
    }
    expect(await ledgerState(w.t)).toEqual(before);
  });
});

describe('SVC_PUBLIC_READS=false: sessions are read like every other read', () => {
  it('needs a key, shows a key its own account’s sessions and a reader of everything all', async () => {
    w = await world(false);
    expectError(await get(w.t, '/v1/sessions'), 401, 'unauthorized');
    expectError(await get(w.t, '/v1/sessions/sess-alice'), 401, 'unauthorized');
    const ids = async (key: string) =>
      (await get(w!.t, '/v1/sessions', key)).body.sessions.map(
        (s: { session_id: string }) => s.session_id,
      );
    expect(await ids(w.alice.apiKey)).toEqual(['sess-alice']);
    expect(await ids(w.bob.apiKey)).toEqual(['sess-bob']);
    expect(await ids(w.auditor)).toEqual(['sess-bob', 'sess-alice']);
    expect((await get(w.t, '/v1/sessions/sess-alice', w.alice.apiKey)).status).toBe(200);
    // Another account's session is not found, the same answer as an unknown one.
    expectError(await get(w.t, '/v1/sessions/sess-alice', w.bob.apiKey), 404, 'not_found');
    expect((await get(w.t, '/v1/sessions/sess-alice', w.auditor)).status).toBe(200);
  });
});

describe('argument-bound approval through the services', () => {
  it('runs the approved input once: a second ask is ESCALATED again, a forged citation 409', async () => {
    w = await world(true);
    const { t } = w;
    const ctx = apiKeySubmitter((await t.store.apiKeys.findByKeyId(w.alice.keyId))!);
    const claims = new ClaimService({
      ledger: t.store.ledger,
      serverKey: t.serverKey,
      clock: t.clock,
      logOrigin: 'svc/test',
      policies: new PolicyService({ policies: t.store.policies, clock: t.clock }),
    });
    const approvals = new AgentApprovals({
      sessions: t.store.sessions,
      clock: t.clock,
      ttlMs: 3_600_000,
    });
    const claim = toolCallClaim({ sessionId: 'sess-alice', input: PUBLISH, kind: 'escalated' });
    // Used already: nothing to cite, so the call escalates again.
    expect(await approvals.withApproval(claim, ctx.scope)).toEqual(claim);
    const asked = await claims.evaluate(claim, ctx);
    expect(asked.response.receipt.policy.verdict).toBe('ESCALATED');
    // Citing the used approval by hand is refused, and writes nothing.
    const approval = (await get(t, `/v1/receipts/${w.ids.approval}`)).body.receipt;
    const before = await ledgerState(t);
    const forged = toolCallClaim({ sessionId: 'sess-alice', input: PUBLISH, kind: 'escalated' });
    forged.sources.push({
      id: 'svc-approval',
      type: 'human_approval',
      uri: `urn:svc:receipt:${w.ids.approval}`,
      confidence: 1,
      content: approval.chain.receipt_hash,
    });
    await expect(claims.evaluate(forged, ctx)).rejects.toMatchObject({ code: 'approval_refused' });
    expect(await ledgerState(t)).toEqual(before);
  });
});
