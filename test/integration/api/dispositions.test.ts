import { afterEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import type { ClaimInput } from '../../../src/core/claim-schema.js';
import { githubSubmitter } from '../../../src/github/gate.js';
import { ApiKeyService } from '../../../src/services/api-keys.js';
import { ClaimService } from '../../../src/services/claims.js';
import { DispositionService } from '../../../src/services/dispositions.js';
import { PolicyService } from '../../../src/services/policies.js';
import type { ResolveHost } from '../../../src/services/webhook-url-guard.js';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import {
  type Account,
  evaluate,
  expectError,
  type Json,
  ledgerState,
  grantReviewer,
  signupAccount,
  signupReviewer,
  uniqueEmail,
} from '../../support/api.js';
import {
  coreOf,
  H,
  nobleVerifies,
  serverPublicKey,
  DISPOSITION_FIELDS,
  v2ReceiptHash,
} from '../../support/receipts.js';
import { escalatedClaim, validClaim } from '../../support/claims.js';

const resolve: ResolveHost = async () => [{ address: '93.184.216.34', family: 4 }];

/** An access change without a human approval: ESCALATED under the default policy. */
const escalated = (overrides: Record<string, unknown> = {}) =>
  escalatedClaim({ pull_request: 7, human_operator: 'oncall@acme.example' }, overrides);

interface World {
  t: TestApp;
  /** The submitter of the escalated claims. */
  agentKey: Account;
  /** Another account, whose key records decisions. */
  reviewerKey: Account;
  parent: Json;
}

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function world(options: { publicReads?: boolean } = {}): Promise<World> {
  t = buildTestApp({
    config: { publicReads: options.publicReads ?? true },
    webhookDelivery: { resolve },
  });
  const agentKey = await signupAccount(t);
  const reviewerKey = await signupReviewer(t);
  // A reviewer too, so that what refuses it is separation of duties, not the missing grant.
  await grantReviewer(t, agentKey);
  const res = await evaluate(t, agentKey.apiKey, escalated());
  expect(res.status).toBe(200);
  expect(res.body.receipt.policy.verdict).toBe('ESCALATED');
  return { t, agentKey, reviewerKey, parent: res.body.receipt as Json };
}

const approve = {
  decision: 'approve',
  reviewer: { id: 'security-lead@acme.example', name: 'Sam Lead' },
  reason: 'Access change reviewed against ticket SEC-12',
};

const dispose = (t: TestApp, key: string | null, id: string, body: unknown) => {
  const req = request(t.app).post(`/v1/receipts/${encodeURIComponent(id)}/disposition`);
  if (key !== null) req.set('X-API-Key', key);
  return req.send(body as object);
};

describe('POST /v1/receipts/:id/disposition', () => {
  it('approves an escalated receipt with a signed disposition receipt appended to the chain', async () => {
    const w = await world();
    const parentId = w.parent.receipt_id as string;
    const parentHash = (w.parent.chain as Json).receipt_hash as string;
    const res = await dispose(w.t, w.reviewerKey.apiKey, parentId, approve);
    expect(res.status).toBe(201);
    expect(res.headers['idempotent-replay']).toBeUndefined();
    const receipt = res.body.receipt as Json;
    expect(receipt.signed_fields).toEqual({
      contract: 'receipt-core-v2',
      fields: DISPOSITION_FIELDS,
    });
    expect(receipt.disposition).toEqual({
      parent_receipt_id: parentId,
      parent_receipt_hash: parentHash,
      decision: 'approve',
      reviewer: { kind: 'user', id: 'security-lead@acme.example', name: 'Sam Lead' },
      reason: approve.reason,
    });
    expect(receipt.policy).toMatchObject({
      status: 'PASS',
      verdict: 'ALLOWED',
      checks: [],
      name: (w.parent.policy as Json).name,
      config_hash: (w.parent.policy as Json).config_hash,
    });
    expect(receipt.admissibility).toMatchObject({ status: 'ACCEPTED' });
    expect(receipt.submitter).toEqual({ kind: 'api_key', key_id: w.reviewerKey.keyId });
    expect(receipt.subject).toEqual(w.parent.subject);
    expect(res.body.policy.rules).toEqual([
      {
        rule: 'human_disposition',
        passed: true,
        reason: approve.reason,
        reviewer: { kind: 'user', id: 'security-lead@acme.example', name: 'Sam Lead' },
      },
    ]);
    expect(res.body.decision).toMatchObject({ proceed: true, verdict: 'ALLOWED' });
    // Next in the one chain, signed over the core that includes the disposition.
    expect(receipt.chain).toEqual({
      sequence: ((w.parent.chain as Json).sequence as number) + 1,
      previous_receipt_hash: parentHash,
      receipt_hash: v2ReceiptHash(receipt),
    });
    expect(coreOf(receipt).disposition).toEqual(receipt.disposition);
    expect(await nobleVerifies(receipt, await serverPublicKey(w.t))).toBe(true);
    expect(receipt.evidence).toEqual({
      inputs_hash: H(res.body.claim),
      source_count: 1,
      source_types: ['human_approval'],
    });

    // In the ledger after the fact: the parent, then its disposition, found by the parent.
    const state = await ledgerState(w.t);
    expect(state.entries.map((e) => e.receipt.receipt_id)).toEqual([parentId, receipt.receipt_id]);
    expect(state.entries[1]!.receipt).toEqual(receipt);
    expect(await w.t.store.ledger.receiptHashOf(receipt.receipt_id as string)).toBe(
      v2ReceiptHash(receipt),
    );
    const read = await request(w.t.app).get(`/v1/receipts/${parentId}/disposition`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body);
    // And in the transparency log, as leaf sequence - 1.
    const proof = await request(w.t.app).get(`/v1/receipts/${receipt.receipt_id}/proof`);
    expect(proof.status).toBe(200);
    expect(proof.body.leaf_index).toBe(1);
  });

  it('rejects with a BLOCKED, REJECTED receipt whose failed rule is the disposition', async () => {
    const w = await world();
    const body = { decision: 'reject', reviewer: { id: 'sam' }, reason: 'Not on the change list' };
    const res = await dispose(w.t, w.reviewerKey.apiKey, w.parent.receipt_id as string, body);
    expect(res.status).toBe(201);
    const receipt = res.body.receipt as Json;
    expect(receipt.policy).toMatchObject({
      status: 'FAIL',
      verdict: 'BLOCKED',
      checks: [
        {
          rule: 'human_disposition',
          passed: false,
          reason: 'Not on the change list',
          reviewer: { kind: 'user', id: 'sam' },
        },
      ],
    });
    expect(receipt.admissibility).toMatchObject({ status: 'REJECTED' });
    expect((receipt.disposition as Json).reviewer).toEqual({ kind: 'user', id: 'sam' });
    expect(res.body.decision).toMatchObject({ proceed: false, verdict: 'BLOCKED' });
    expect(await nobleVerifies(receipt, await serverPublicKey(w.t))).toBe(true);
  });

  it('emits receipt.created for the disposition', async () => {
    const w = await world();
    const hook = await request(w.t.app)
      .post('/v1/webhooks/outbound')
      .set('X-API-Key', w.reviewerKey.apiKey)
      .send({ url: 'https://hooks.example.com/svc', event: 'receipt.created' });
    expect(hook.status).toBe(201);
    const res = await dispose(w.t, w.reviewerKey.apiKey, w.parent.receipt_id as string, approve);
    expect(res.status).toBe(201);
    const deliveries = await request(w.t.app)
      .get(`/v1/webhooks/outbound/${hook.body.id}/deliveries`)
      .set('X-API-Key', w.reviewerKey.apiKey);
    expect(deliveries.status).toBe(200);
    expect(deliveries.body.deliveries).toEqual([
      expect.objectContaining({
        receipt_id: res.body.receipt.receipt_id,
        event: 'receipt.created',
      }),
    ]);
  });

  it('answers the same request again with the stored disposition, 200 and Idempotent-Replay', async () => {
    const w = await world();
    const id = w.parent.receipt_id as string;
    const first = await dispose(w.t, w.reviewerKey.apiKey, id, approve);
    expect(first.status).toBe(201);
    const before = await ledgerState(w.t);
    const again = await dispose(w.t, w.reviewerKey.apiKey, id, approve);
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replay']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await ledgerState(w.t)).toEqual(before);
    // Another decision, reason or reviewer is not the same request: 409, nothing written.
    for (const other of [
      { ...approve, decision: 'reject' },
      { ...approve, reason: 'Other reason' },
      { ...approve, reviewer: { id: 'security-lead@acme.example' } },
    ]) {
      expectError(await dispose(w.t, w.reviewerKey.apiKey, id, other), 409, 'already_disposed');
    }
    expect(await ledgerState(w.t)).toEqual(before);
  });

  it('answers the same decision by the recording account’s rotated key with 200 and Idempotent-Replay', async () => {
    const w = await world();
    const id = w.parent.receipt_id as string;
    const first = await dispose(w.t, w.reviewerKey.apiKey, id, approve);
    expect(first.status).toBe(201);
    const rotated = await request(w.t.app)
      .post('/v1/account/rotate')
      .set('X-API-Key', w.reviewerKey.apiKey);
    expect(rotated.status).toBe(201);
    const before = await ledgerState(w.t);
    const again = await dispose(w.t, rotated.body.api_key as string, id, approve);
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replay']).toBe('true');
    expect(again.body).toEqual(first.body);
    // Another decision by the rotated key is still a second decision.
    expectError(
      await dispose(w.t, rotated.body.api_key as string, id, { ...approve, decision: 'reject' }),
      409,
      'already_disposed',
    );
    expect(await ledgerState(w.t)).toEqual(before);
  });

  it('refuses a key the operator did not make a reviewer (403 forbidden naming the capability), writing nothing', async () => {
    const w = await world();
    const id = w.parent.receipt_id as string;
    // Signup is self-service: an agent can sign up a second address, whose key must not decide.
    const selfService = await signupAccount(w.t);
    const before = await ledgerState(w.t);
    for (const decision of ['approve', 'reject'])
      expect(
        expectError(
          await dispose(w.t, selfService.apiKey, id, { ...approve, decision }),
          403,
          'forbidden',
        ),
      ).toMatch(/reviewer capability/);
    expect(await ledgerState(w.t)).toEqual(before);
    expect(await w.t.store.ledger.dispositionsOf([id])).toEqual([]);
    // The operator's grant (once the authentication cache has let the old record go) lets it.
    await grantReviewer(w.t, selfService);
    w.t.clock.advance(60_000);
    const granted = await dispose(w.t, selfService.apiKey, id, approve);
    expect(granted.status).toBe(201);
    expect(granted.body.receipt.submitter).toEqual({ kind: 'api_key', key_id: selfService.keyId });
  });

  it('answers 409 already_disposed to a second reviewer’s key', async () => {
    const w = await world();
    const third = await signupReviewer(w.t);
    const id = w.parent.receipt_id as string;
    expect((await dispose(w.t, w.reviewerKey.apiKey, id, approve)).status).toBe(201);
    const before = await ledgerState(w.t);
    const error = expectError(
      await dispose(w.t, third.apiKey, id, approve),
      409,
      'already_disposed',
    );
    expect(error).toContain(id);
    expect(await ledgerState(w.t)).toEqual(before);
  });

  it('of two dispositions sent at once, writes one (201) and refuses the other (409)', async () => {
    const w = await world();
    const third = await signupReviewer(w.t);
    const id = w.parent.receipt_id as string;
    const [a, b] = await Promise.all([
      dispose(w.t, w.reviewerKey.apiKey, id, approve),
      dispose(w.t, third.apiKey, id, { ...approve, decision: 'reject' }),
    ]);
    expect([a.status, b.status].sort()).toEqual([201, 409]);
    const loser = a.status === 409 ? a : b;
    expectError(loser, 409, 'already_disposed');
    const entries = (await ledgerState(w.t)).entries;
    expect(entries).toHaveLength(2);
    expect(await w.t.store.ledger.dispositionsOf([id])).toHaveLength(1);
  });

  it('answers 409 not_escalated for an ALLOWED receipt and for a disposition', async () => {
    const w = await world();
    const allowed = await evaluate(w.t, w.agentKey.apiKey, validClaim());
    expect(allowed.body.receipt.policy.verdict).toBe('ALLOWED');
    const blocked = await evaluate(
      w.t,
      w.agentKey.apiKey,
      validClaim({ policyConfig: { minSources: 5 } }),
    );
    expect(blocked.body.receipt.policy.verdict).toBe('BLOCKED');
    const disposition = await dispose(
      w.t,
      w.reviewerKey.apiKey,
      w.parent.receipt_id as string,
      approve,
    );
    const before = await ledgerState(w.t);
    for (const id of [
      allowed.body.receipt.receipt_id,
      blocked.body.receipt.receipt_id,
      disposition.body.receipt.receipt_id,
    ]) {
      expectError(await dispose(w.t, w.reviewerKey.apiKey, id, approve), 409, 'not_escalated');
    }
    expect(await ledgerState(w.t)).toEqual(before);
  });

  it('answers 404 for an unknown receipt, and for another account’s receipt while reads are private', async () => {
    const w = await world({ publicReads: false });
    const before = await ledgerState(w.t);
    expectError(
      await dispose(w.t, w.reviewerKey.apiKey, 'dr-01JHGZ3Q4W5E6R7T8Y9V0W1X2Z', approve),
      404,
      'not_found',
    );
    const hidden = await dispose(w.t, w.reviewerKey.apiKey, w.parent.receipt_id as string, approve);
    expectError(hidden, 404, 'not_found');
    const read = await request(w.t.app)
      .get(`/v1/receipts/${w.parent.receipt_id}/disposition`)
      .set('X-API-Key', w.reviewerKey.apiKey);
    expectError(read, 404, 'not_found');
    expect(await ledgerState(w.t)).toEqual(before);
    // A reviewer key the operator made a reader of everything may decide, and then both read it.
    const auditor = await new ApiKeyService({ keys: w.t.store.apiKeys, clock: w.t.clock }).create({
      email: uniqueEmail('auditor'),
      tier: 'free',
      lockedPolicy: null,
      reader: 'all',
      reviewer: true,
    });
    const res = await dispose(w.t, auditor.apiKey, w.parent.receipt_id as string, approve);
    expect(res.status).toBe(201);
    const own = await request(w.t.app)
      .get(`/v1/receipts/${w.parent.receipt_id}/disposition`)
      .set('X-API-Key', w.agentKey.apiKey);
    expect(own.status).toBe(200);
    expect(own.body.receipt.receipt_id).toBe(res.body.receipt.receipt_id);
  });

  it('answers 404 to GET for a receipt without a disposition', async () => {
    const w = await world();
    expectError(
      await request(w.t.app).get(`/v1/receipts/${w.parent.receipt_id}/disposition`),
      404,
      'not_found',
    );
  });

  it('refuses the claim’s agent, its human operator and the submitting key (403), writing nothing', async () => {
    const w = await world();
    const id = w.parent.receipt_id as string;
    const before = await ledgerState(w.t);
    for (const reviewer of ['coder-bot', 'Coder-Bot', 'ONCALL@acme.example']) {
      const res = await dispose(w.t, w.reviewerKey.apiKey, id, {
        ...approve,
        reviewer: { id: reviewer },
      });
      expect(expectError(res, 403, 'separation_of_duties')).toMatch(/agent|human operator/);
    }
    const own = await dispose(w.t, w.agentKey.apiKey, id, approve);
    expect(expectError(own, 403, 'separation_of_duties')).toContain(
      'submitted the escalated claim',
    );
    // A rotated key of the same account is the same submitter.
    const rotated = await request(w.t.app)
      .post('/v1/account/rotate')
      .set('X-API-Key', w.agentKey.apiKey);
    expect(rotated.status).toBe(201);
    expectError(
      await dispose(w.t, rotated.body.api_key as string, id, approve),
      403,
      'separation_of_duties',
    );
    expect(await ledgerState(w.t)).toEqual(before);
  });

  it('validates the body and the key (400, 401), writing nothing', async () => {
    const w = await world();
    const id = w.parent.receipt_id as string;
    const before = await ledgerState(w.t);
    expectError(await dispose(w.t, null, id, approve), 401, 'unauthorized');
    const bad: unknown[] = [
      {},
      { ...approve, decision: 'maybe' },
      { ...approve, decision: 'APPROVE' },
      { ...approve, reason: '' },
      { ...approve, reason: '   ' },
      { ...approve, reason: 'x'.repeat(4097) },
      { ...approve, reviewer: {} },
      { ...approve, reviewer: { id: '' } },
      { ...approve, reviewer: { id: 'x'.repeat(257) } },
      { ...approve, reviewer: { id: ' sam' } },
      { ...approve, reviewer: { id: 'sam\nroot' } },
      { ...approve, reviewer: { id: 'sam', kind: 'github_user' } },
      { ...approve, reviewer: { id: 'sam', name: 7 } },
      { ...approve, reviewer: 'sam' },
      { ...approve, extra: true },
      [],
    ];
    for (const body of bad) {
      expectError(await dispose(w.t, w.reviewerKey.apiKey, id, body), 400, 'validation_failed');
    }
    expectError(
      await dispose(w.t, w.reviewerKey.apiKey, 'x'.repeat(300), approve),
      400,
      'validation_failed',
    );
    expect(await ledgerState(w.t)).toEqual(before);
  });

  it('shows each disposition beside its parent in search, compare, diff and stats', async () => {
    const w = await world();
    const parentId = w.parent.receipt_id as string;
    const pending = await evaluate(w.t, w.agentKey.apiKey, escalated());
    const res = await dispose(w.t, w.reviewerKey.apiKey, parentId, approve);
    const disposition = res.body.receipt as Json;
    const summary = {
      receipt_id: disposition.receipt_id,
      sequence: (disposition.chain as Json).sequence,
      issued_at: disposition.issued_at,
      decision: 'approve',
      reviewer: { kind: 'user', id: 'security-lead@acme.example', name: 'Sam Lead' },
      reason: approve.reason,
    };
    // Search: the receipts as signed, and beside them the decisions by parent.
    const search = await request(w.t.app).get('/v1/receipts/search').query({ repo: 'acme/web' });
    expect(search.status).toBe(200);
    expect(search.body.receipts.map((r: Json) => r.receipt_id)).toEqual([
      disposition.receipt_id,
      pending.body.receipt.receipt_id,
      parentId,
    ]);
    expect(search.body.receipts[2]).toEqual(w.parent);
    expect(search.body.dispositions).toEqual({ [parentId]: summary });
    // A page without a decided receipt has no dispositions member.
    const other = await request(w.t.app)
      .get('/v1/receipts/search')
      .query({ repo: 'acme/web', limit: 1, after: 3 });
    expect(other.body.receipts.map((r: Json) => r.receipt_id)).toEqual([
      pending.body.receipt.receipt_id,
    ]);
    expect(other.body.dispositions).toBeUndefined();

    const compare = await request(w.t.app)
      .get('/v1/receipts/compare')
      .query({
        ids: [parentId, disposition.receipt_id, pending.body.receipt.receipt_id].join(','),
      });
    expect(compare.status).toBe(200);
    const [parentRow, pendingRow, dispositionRow] = compare.body.receipts as Json[];
    expect(parentRow).toMatchObject({ receipt_id: parentId, disposition: summary });
    expect(parentRow!.parent_receipt_id).toBeUndefined();
    expect(pendingRow!.disposition).toBeUndefined();
    expect(dispositionRow).toMatchObject({
      verdict: 'ALLOWED',
      parent_receipt_id: parentId,
    });

    const diff = await request(w.t.app)
      .get('/v1/receipts/diff')
      .query({ repository: 'acme/web', pr: '7' });
    expect(diff.status).toBe(200);
    expect(
      diff.body.receipts.map((r: Json) => (r.disposition as Json | undefined)?.decision ?? null),
    ).toEqual(['approve', null, null]);
    expect(diff.body.changes[1]).toMatchObject({
      to: disposition.receipt_id,
      verdict: { from: 'ESCALATED', to: 'ALLOWED' },
    });

    const stats = await request(w.t.app).get('/v1/ledger/stats');
    expect(stats.body).toMatchObject({
      total: 3,
      escalated: 2,
      allowed: 1,
      dispositions: { approved: 1, rejected: 0, pending: 1 },
    });
    const timeline = await request(w.t.app)
      .get('/v1/receipts/timeline')
      .query({ since: '2026-01-15', until: '2026-01-15' });
    expect(timeline.body.days).toEqual([
      { date: '2026-01-15', total: 3, ALLOWED: 1, BLOCKED: 0, ESCALATED: 2 },
    ]);
  });

  it('counts the decisions on a scope’s own escalations while reads are private', async () => {
    const w = await world({ publicReads: false });
    const auditor = await new ApiKeyService({ keys: w.t.store.apiKeys, clock: w.t.clock }).create({
      email: uniqueEmail('auditor'),
      tier: 'free',
      lockedPolicy: null,
      reader: 'all',
      reviewer: true,
    });
    const res = await dispose(w.t, auditor.apiKey, w.parent.receipt_id as string, {
      ...approve,
      decision: 'reject',
    });
    expect(res.status).toBe(201);
    const own = await request(w.t.app).get('/v1/ledger/stats').set('X-API-Key', w.agentKey.apiKey);
    expect(own.body).toMatchObject({
      total: 1,
      escalated: 1,
      dispositions: { approved: 0, rejected: 1, pending: 0 },
    });
    const search = await request(w.t.app)
      .get('/v1/receipts/search')
      .set('X-API-Key', w.agentKey.apiKey);
    expect(search.body.receipts).toHaveLength(1);
    expect(search.body.dispositions[w.parent.receipt_id as string].decision).toBe('reject');
    const reviewer = await request(w.t.app)
      .get('/v1/ledger/stats')
      .set('X-API-Key', w.reviewerKey.apiKey);
    expect(reviewer.body.dispositions).toEqual({ approved: 0, rejected: 0, pending: 0 });
  });

  it('lets the GitHub App record a github_user’s decision on its own escalation', async () => {
    t = buildTestApp();
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
    const app = githubSubmitter(1, 77);
    const claim = escalated({ claim_id: 'gh:acme/web#7' }) as unknown as ClaimInput;
    const parent = (await claims.evaluate(claim, app)).response.receipt;
    expect(parent.policy.verdict).toBe('ESCALATED');
    const dispositions = new DispositionService({ ...deps, queries: t.store.queries });
    const request = {
      decision: 'approve' as const,
      reviewer: { kind: 'github_user' as const, id: 'octocat' },
      reason: 'Approved from the check run',
    };
    // The agent's login is refused as a reviewer, whoever records the decision.
    await expect(
      dispositions.dispose(
        parent.receipt_id,
        { ...request, reviewer: { kind: 'github_user', id: 'coder-bot' } },
        app,
        undefined,
      ),
    ).rejects.toMatchObject({ code: 'separation_of_duties' });
    const { response, replayed } = await dispositions.dispose(
      parent.receipt_id,
      request,
      app,
      undefined,
    );
    expect(replayed).toBe(false);
    expect(response.receipt.submitter).toEqual({
      kind: 'github_app',
      app_id: 1,
      installation_id: 77,
    });
    expect(response.receipt.disposition).toMatchObject({
      parent_receipt_id: parent.receipt_id,
      reviewer: { kind: 'github_user', id: 'octocat' },
    });
    const again = await dispositions.dispose(parent.receipt_id, request, app, undefined);
    expect(again).toEqual({ response, replayed: true });
    expect((await t.store.ledger.list(0, 10)).map((e) => e.receipt.receipt_id)).toEqual([
      parent.receipt_id,
      response.receipt.receipt_id,
    ]);
  });

  it('is described in the OpenAPI document', async () => {
    const w = await world();
    const doc = (await request(w.t.app).get('/v1/openapi.json')).body;
    const path = doc.paths['/v1/receipts/{id}/disposition'];
    expect(Object.keys(path).sort()).toEqual(['get', 'post']);
    expect(Object.keys(path.post.responses)).toEqual(
      expect.arrayContaining(['200', '201', '400', '401', '403', '404', '409']),
    );
  });
});
