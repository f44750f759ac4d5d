import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import {
  type Account,
  evaluate,
  expectError,
  ledgerState,
  signupAccount,
  textOf,
  verify,
} from '../../support/api.js';
import { expectValidV2, serverPublicKey } from '../../support/receipts.js';
import { validClaim } from '../../support/claims.js';

describe('idempotency per submitter (contract §7): claim_id is unique within one key', () => {
  let t: TestApp;
  let first: Account;
  let second: Account;
  beforeEach(async () => {
    t = buildTestApp();
    first = await signupAccount(t);
    second = await signupAccount(t);
  });
  afterEach(() => t.close());

  it('the same claim from two keys gives two receipts, each naming its own submitter', async () => {
    const claim = validClaim({ claim_id: 'acme-web-pr-78-cafe123' });
    const a = await evaluate(t, first.apiKey, claim);
    const b = await evaluate(t, second.apiKey, claim);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(a.headers['idempotent-replay']).toBeUndefined();
    expect(b.headers['idempotent-replay']).toBeUndefined();
    expect(b.body.receipt.receipt_id).not.toBe(a.body.receipt.receipt_id);
    expect(a.body.receipt.claim_id).toBe('acme-web-pr-78-cafe123');
    expect(b.body.receipt.claim_id).toBe('acme-web-pr-78-cafe123');
    expect(a.body.receipt.submitter).toEqual({ kind: 'api_key', key_id: first.keyId });
    expect(b.body.receipt.submitter).toEqual({ kind: 'api_key', key_id: second.keyId });
    expect(b.body.receipt.chain.sequence).toBe(a.body.receipt.chain.sequence + 1);
    const publicKey = await serverPublicKey(t);
    await expectValidV2(a.body.receipt, publicKey, { keyId: first.keyId });
    await expectValidV2(b.body.receipt, publicKey, { keyId: second.keyId });
    const { entries } = await ledgerState(t);
    expect(entries.map((e) => e.receipt.receipt_id)).toEqual([
      a.body.receipt.receipt_id,
      b.body.receipt.receipt_id,
    ]);
    for (const r of [a, b]) expect((await verify(t, r.body.receipt)).body.valid).toBe(true);
  });

  it('a squatter cannot block the rightful submitter: 200, never 409, and nothing of the squatter leaks', async () => {
    const id = 'acme-web-pr-78-cafe123';
    const squat = await evaluate(
      t,
      second.apiKey,
      validClaim({ claim_id: id, claim: 'squatted', entity: 'evil/repo' }),
    );
    expect(squat.status).toBe(200);
    const squatReceipt = squat.body.receipt.receipt_id as string;

    const rightful = await evaluate(t, first.apiKey, validClaim({ claim_id: id }));
    expect(rightful.status).toBe(200);
    expect(rightful.headers['idempotent-replay']).toBeUndefined();
    expect(rightful.body.receipt.receipt_id).not.toBe(squatReceipt);
    expect(rightful.body.receipt.submitter.key_id).toBe(first.keyId);
    expect(rightful.body.claim.entity).toBe('acme/web');
    expect(textOf(rightful)).not.toContain(squatReceipt);
    expect(textOf(rightful)).not.toContain(second.keyId);
    expect(textOf(rightful)).not.toContain('evil/repo');

    // The rightful submitter's own replay and conflict answers do not mention the squatter either.
    const replay = await evaluate(t, first.apiKey, validClaim({ claim_id: id }));
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replay']).toBe('true');
    expect(replay.body.receipt.receipt_id).toBe(rightful.body.receipt.receipt_id);
    expect(textOf(replay)).not.toContain(squatReceipt);
    const conflict = await evaluate(t, first.apiKey, validClaim({ claim_id: id, claim: 'other' }));
    expectError(conflict, 409, 'claim_conflict');
    expect(textOf(conflict)).not.toContain(squatReceipt);
    expect(textOf(conflict)).not.toContain(second.keyId);
  });

  it('the same key re-sending the same claim: 200, Idempotent-Replay, the stored receipt, nothing new', async () => {
    const claim = validClaim();
    const a = await evaluate(t, first.apiKey, claim);
    const before = await ledgerState(t);
    const again = await evaluate(t, first.apiKey, claim);
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replay']).toBe('true');
    expect(again.body.receipt).toEqual(a.body.receipt);
    expect(await ledgerState(t)).toEqual(before);
  });

  it('the same key with different inputs: 409 claim_conflict, ledger unchanged', async () => {
    const claim = validClaim();
    expect((await evaluate(t, first.apiKey, claim)).status).toBe(200);
    const before = await ledgerState(t);
    for (const changed of [
      { ...claim, claim: 'a different description' },
      { ...claim, policyConfig: { minSources: 2 } },
      { ...claim, policy: 'strict' },
    ]) {
      expectError(await evaluate(t, first.apiKey, changed), 409, 'claim_conflict');
    }
    expect(await ledgerState(t)).toEqual(before);
  });

  it('a third key replaying another key’s claim gets a receipt of its own, not theirs', async () => {
    const claim = validClaim();
    const a = await evaluate(t, first.apiKey, claim);
    const third = await signupAccount(t);
    const c = await evaluate(t, third.apiKey, claim);
    expect(c.status).toBe(200);
    expect(c.headers['idempotent-replay']).toBeUndefined();
    expect(c.body.receipt.receipt_id).not.toBe(a.body.receipt.receipt_id);
    expect(c.body.receipt.submitter.key_id).toBe(third.keyId);
  });

  it('GET /v1/account counts each key’s own receipts', async () => {
    const claim = validClaim();
    await evaluate(t, first.apiKey, claim);
    await evaluate(t, second.apiKey, claim);
    await evaluate(t, second.apiKey, validClaim());
    const usage = async (key: string) =>
      (await request(t.app).get('/v1/account').set('X-API-Key', key)).body.usage.receipts_issued;
    expect(await usage(first.apiKey)).toBe(1);
    expect(await usage(second.apiKey)).toBe(2);
  });
});
