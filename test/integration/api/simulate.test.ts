import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import {
  expectCommonHeaders,
  expectError,
  type Json,
  ledgerState,
  newKey,
  postRaw,
} from '../../support/api.js';
import { H } from '../../support/receipts.js';
import { validClaim } from '../../support/claims.js';

describe('POST /v1/simulate', () => {
  let t: TestApp;
  let key: string;

  const post = (path: '/v1/simulate' | '/v1/evaluate', body: unknown) =>
    request(t.app)
      .post(path)
      .set('X-API-Key', key)
      .send(body as object);

  beforeEach(async () => {
    t = buildTestApp();
    key = await newKey(t);
  });
  afterEach(() => t.close());

  it('answers the evaluate shape plus simulated: true, with an unsigned, unchained receipt', async () => {
    const claim = validClaim();
    const res = await post('/v1/simulate', claim);
    expect(res.status).toBe(200);
    expectCommonHeaders(res);
    expect(res.headers['idempotent-replay']).toBeUndefined();
    expect(Object.keys(res.body).sort()).toEqual([
      'claim',
      'decision',
      'policy',
      'receipt',
      'replay',
      'simulated',
    ]);
    expect(res.body.simulated).toBe(true);
    expect(res.body.claim).toEqual(claim);
    const { receipt } = res.body;
    expect(receipt.receipt_id).toMatch(/^dr-sim-[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(receipt.attestations).toEqual([]);
    expect(receipt.chain).toBeNull();
    expect(receipt).toMatchObject({
      issued_at: new Date(t.clock.now()).toISOString(),
      claim_id: claim.claim_id,
      admissibility: { status: 'ACCEPTED', reason: 'verdict ALLOWED; replay passed' },
      evidence: { inputs_hash: H(claim), source_count: 2, source_types: ['ci', 'code_review'] },
      policy: { status: 'PASS', verdict: 'ALLOWED', checks: [] },
      signed_fields: { contract: 'receipt-core-v2' },
    });
  });

  it('gives the verdict evaluate gives for the same claim', async () => {
    const claims = [
      validClaim(),
      validClaim({ policyConfig: { minSources: 5 } }),
      validClaim({ action: { action_type: 'access_change', target_system: 'iam' } }),
      validClaim({ expected_replay_match: false }),
    ];
    for (const claim of claims) {
      const simulated = await post('/v1/simulate', claim);
      const evaluated = await post('/v1/evaluate', claim);
      expect(evaluated.headers['idempotent-replay']).toBeUndefined();
      const { simulated: flag, receipt: simReceipt, ...simRest } = simulated.body;
      const { receipt, ...rest } = evaluated.body;
      expect(flag).toBe(true);
      expect(simRest).toEqual(rest);
      for (const member of [
        'claim_id',
        'admissibility',
        'subject',
        'evidence',
        'replay',
        'policy',
      ]) {
        expect(simReceipt[member]).toEqual(receipt[member]);
      }
      expect(simReceipt.signed_fields).toEqual(receipt.signed_fields);
    }
  });

  it('persists nothing: no ledger entry, no receipt counted for the key', async () => {
    await post('/v1/evaluate', validClaim());
    const before = await ledgerState(t);
    for (let i = 0; i < 3; i++) expect((await post('/v1/simulate', validClaim())).status).toBe(200);
    const blocked = await post('/v1/simulate', validClaim({ policyConfig: { minSources: 9 } }));
    expect(blocked.body.decision.verdict).toBe('BLOCKED');
    expect(await ledgerState(t)).toEqual(before);
    const stats = await request(t.app).get('/v1/ledger/stats');
    expect(stats.body.total).toBe(1);
    const account = await request(t.app).get('/v1/account').set('X-API-Key', key);
    expect(account.body.usage.receipts_issued).toBe(1);
  });

  it('does not consult the ledger: a claim_id already evaluated can be simulated with any content', async () => {
    const claim = validClaim();
    const evaluated = await post('/v1/evaluate', claim);
    const before = await ledgerState(t);
    const same = await post('/v1/simulate', claim);
    expect(same.status).toBe(200);
    expect(same.headers['idempotent-replay']).toBeUndefined();
    expect(same.body.receipt.receipt_id).not.toBe(evaluated.body.receipt.receipt_id);
    const changed = await post('/v1/simulate', { ...claim, claim: 'changed' });
    expect(changed.status).toBe(200);
    expect(await ledgerState(t)).toEqual(before);
  });

  it('a claim simulated first is evaluated afresh afterwards', async () => {
    const claim = validClaim();
    await post('/v1/simulate', claim);
    const evaluated = await post('/v1/evaluate', claim);
    expect(evaluated.status).toBe(200);
    expect(evaluated.headers['idempotent-replay']).toBeUndefined();
    expect(evaluated.body.receipt.chain.sequence).toBe(1);
  });

  it('requires a key and counts against it', async () => {
    expectError(await request(t.app).post('/v1/simulate').send(validClaim()), 401, 'unauthorized');
    const a = await post('/v1/simulate', validClaim());
    const b = await post('/v1/simulate', validClaim());
    expect(Number(b.headers['x-ratelimit-remaining'])).toBe(
      Number(a.headers['x-ratelimit-remaining']) - 1,
    );
  });

  it('rejects what evaluate rejects, with the same messages', async () => {
    const bodies: Json[] = [
      validClaim({ sources: [] }),
      validClaim({ claim_id: 7 }),
      validClaim({ extra: true }),
    ];
    for (const body of bodies) {
      const simulated = await post('/v1/simulate', body);
      const evaluated = await post('/v1/evaluate', body);
      expect(expectError(simulated, 400, 'validation_failed')).toBe(evaluated.body.error);
    }
    expectError(await postRaw(t, '/v1/simulate', key, '{"claim_id"'), 400, 'malformed_json');
    expect((await ledgerState(t)).head.sequence).toBe(0);
  });
});
