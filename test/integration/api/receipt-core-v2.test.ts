import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import { makeClaim, signClaim, appendRequest } from '../../contract/ledger-fixtures.js';
import {
  type Account,
  clone,
  evaluate,
  type Json,
  ledgerState,
  signupAccount,
  statusOf,
  verify,
} from '../../support/api.js';
import {
  coreOf,
  defaultLogOrigin,
  expectValidV2,
  H,
  keyOfPem,
  nobleVerifies,
  serverPublicKey,
  v1ReceiptHash,
  V2_SIGNED_FIELDS,
  v2ReceiptHash,
} from '../../support/receipts.js';
import { DEFAULT_CONFIG, STRICT_CONFIG } from '../../support/policies.js';
import { validClaim } from '../../support/claims.js';

const OTHER_HASH = `sha256:${'cd'.repeat(32)}`;

describe('receipt-core-v2: every new receipt says who asked, under which policy, and where', () => {
  let t: TestApp;
  let a: Account;
  let pem: string;
  let publicKey: Uint8Array;
  const issued: Json[] = [];
  let strictBody: Json & { policy: { config: Json }; receipt: Json };

  beforeAll(async () => {
    t = buildTestApp();
    a = await signupAccount(t);
    pem = (await request(t.app).get('/v1/keys/server')).text;
    publicKey = await serverPublicKey(t);
    for (let i = 0; i < 3; i++) {
      const res = await evaluate(t, a.apiKey, validClaim());
      expect(res.status).toBe(200);
      issued.push(res.body.receipt);
    }
    const strict = await evaluate(
      t,
      a.apiKey,
      validClaim({ policy: 'strict', policyConfig: { minSources: 4 } }),
    );
    expect(strict.status).toBe(200);
    strictBody = strict.body;
    issued.push(strict.body.receipt);
  });
  afterAll(() => t.close());

  it('declares receipt-core-v2 with the exact field list', () => {
    for (const r of issued) expect(r.signed_fields).toEqual(V2_SIGNED_FIELDS);
  });

  it('signs the submitter: {kind: api_key, key_id} of the caller', () => {
    for (const r of issued) expect(r.submitter).toEqual({ kind: 'api_key', key_id: a.keyId });
  });

  it('signs the position, equal to chain; log is svc/ + 16 hex digits of the server key_id', () => {
    const log = defaultLogOrigin(pem);
    expect(log).toMatch(/^svc\/[0-9a-f]{16}$/);
    issued.forEach((r, i) => {
      const chain = r.chain as Json;
      expect(r.position).toEqual({
        log,
        sequence: chain.sequence,
        previous_receipt_hash: chain.previous_receipt_hash,
      });
      expect(chain.sequence).toBe(i + 1);
      expect(chain.previous_receipt_hash).toBe(
        i === 0 ? null : (issued[i - 1]!.chain as Json).receipt_hash,
      );
    });
  });

  it('the attestation key_id is the SHA-256 of the server key’s SPKI DER', () => {
    for (const r of issued) {
      expect((r.attestations as Json[])[0]!.key_id).toBe(keyOfPem(pem).keyId);
    }
  });

  it('chain.receipt_hash = H({core, attestations}), core exactly the signed fields', () => {
    for (const r of issued) {
      expect(Object.keys(coreOf(r)).sort()).toEqual([...V2_SIGNED_FIELDS.fields].sort());
      expect((r.chain as Json).receipt_hash).toBe(v2ReceiptHash(r));
      // Not the v1 hash.
      expect((r.chain as Json).receipt_hash).not.toBe(v1ReceiptHash(r));
    }
  });

  it('the signature verifies with @noble/ed25519 over JCS of the core, strict RFC 8032', async () => {
    for (const r of issued) await expectValidV2(r, publicKey, { keyId: a.keyId });
  });

  it('policy: name, config_hash = H(evaluate policy.config), overrides', () => {
    expect(issued[0]!.policy).toMatchObject({
      name: 'default',
      config_hash: H(DEFAULT_CONFIG),
      overrides: false,
    });
    const effective = { ...STRICT_CONFIG, minSources: 4 };
    expect(strictBody.policy.config).toEqual(effective);
    expect(strictBody.receipt.policy).toMatchObject({
      name: 'strict',
      config_hash: H(strictBody.policy.config),
      overrides: true,
    });
    expect((strictBody.receipt.policy as Json).config_hash).toBe(H(effective));
  });

  it('the stored receipt equals the one evaluate returned', async () => {
    const { entries } = await ledgerState(t);
    expect(entries.map((e) => e.receipt)).toEqual(issued);
  });
});

describe('POST /v1/verify for receipt-core-v2', () => {
  let t: TestApp;
  let a: Account;
  let receipt: Json;
  let second: Json;

  beforeAll(async () => {
    t = buildTestApp();
    a = await signupAccount(t);
    receipt = (await evaluate(t, a.apiKey, validClaim())).body.receipt;
    second = (await evaluate(t, a.apiKey, validClaim({ policy: 'strict' }))).body.receipt;
  });
  afterAll(() => t.close());

  it('an intact receipt is valid: chain_linkage PASS, policy_binding SKIPPED, signed facts reported', async () => {
    const before = await ledgerState(t);
    for (const r of [receipt, second]) {
      const res = await verify(t, r);
      expect(res.status).toBe(200);
      expect(res.body.valid).toBe(true);
      expect(statusOf(res)).toMatchObject({
        signature_valid: 'PASS',
        hash_integrity: 'PASS',
        chain_linkage: 'PASS',
        policy_binding: 'SKIPPED',
      });
      expect(res.body.signed).toEqual({
        contract: 'receipt-core-v2',
        submitter: { kind: 'api_key', key_id: a.keyId },
        policy: {
          name: (r.policy as Json).name,
          config_hash: (r.policy as Json).config_hash,
          overrides: (r.policy as Json).overrides,
        },
        position: r.position,
      });
    }
    expect(await ledgerState(t)).toEqual(before);
  });

  it('expectations that match: policy_binding PASS', async () => {
    const res = await verify(t, second, {
      expect_policy: 'strict',
      expect_config_hash: H(STRICT_CONFIG),
      expect_submitter: a.keyId,
    });
    expect(res.body.valid).toBe(true);
    expect(statusOf(res).policy_binding).toBe('PASS');
    for (const query of [
      { expect_policy: 'strict' } as Record<string, string>,
      { expect_config_hash: H(STRICT_CONFIG) },
      { expect_submitter: a.keyId },
    ]) {
      const one = await verify(t, second, query);
      expect(statusOf(one).policy_binding).toBe('PASS');
      expect(one.body.valid).toBe(true);
    }
  });

  it.each([
    ['expect_policy', { expect_policy: 'default' }],
    ['expect_config_hash', { expect_config_hash: H(DEFAULT_CONFIG) }],
    ['expect_submitter', { expect_submitter: 'kid_01ARZ3NDEKTSV4RRFFQ69G5FAV' }],
    [
      'one of three',
      { expect_policy: 'strict', expect_config_hash: OTHER_HASH, expect_submitter: 'x' },
    ],
  ])('an expectation that differs (%s): policy_binding FAIL, valid false', async (_name, query) => {
    const res = await verify(t, second, query as Record<string, string>);
    expect(res.status).toBe(200);
    expect(statusOf(res).policy_binding).toBe('FAIL');
    expect(statusOf(res).signature_valid).toBe('PASS');
    expect(res.body.valid).toBe(false);
  });

  const TAMPER: [string, (r: Json) => void][] = [
    ['policy.name', (r) => ((r.policy as Json).name = 'permissive')],
    ['policy.config_hash', (r) => ((r.policy as Json).config_hash = OTHER_HASH)],
    ['policy.overrides', (r) => ((r.policy as Json).overrides = !(r.policy as Json).overrides)],
    ['submitter.key_id', (r) => ((r.submitter as Json).key_id = 'kid_01ARZ3NDEKTSV4RRFFQ69G5FAV')],
    ['position.sequence', (r) => ((r.position as Json).sequence = 7)],
    ['position.log', (r) => ((r.position as Json).log = 'svc/0000000000000000')],
    [
      'position.previous_receipt_hash',
      (r) => ((r.position as Json).previous_receipt_hash = OTHER_HASH),
    ],
    [
      'signed_fields.contract back to v1',
      (r) => ((r.signed_fields as Json).contract = 'receipt-core-v1'),
    ],
    ['submitter removed', (r) => delete r.submitter],
    ['position removed', (r) => delete r.position],
  ];
  it.each(TAMPER)(
    'tampering with %s makes valid false and the signature FAIL',
    async (_name, change) => {
      const tampered = clone(second);
      change(tampered);
      const res = await verify(t, tampered);
      expect(res.status).toBe(200);
      expect(res.body.valid).toBe(false);
      expect(statusOf(res).signature_valid).toBe('FAIL');
      expect(res.body.signed).toBeNull();
    },
  );

  it.each([
    ['position.sequence', (r: Json) => ((r.position as Json).sequence = 1)],
    [
      'position.previous_receipt_hash',
      (r: Json) => ((r.position as Json).previous_receipt_hash = OTHER_HASH),
    ],
  ])('a changed %s also fails chain_linkage', async (_name, change) => {
    const tampered = clone(second);
    change(tampered);
    const res = await verify(t, tampered);
    expect(statusOf(res).chain_linkage).toBe('FAIL');
  });

  it.each([
    ['chain.sequence', (r: Json) => ((r.chain as Json).sequence = 5)],
    [
      'chain.previous_receipt_hash',
      (r: Json) => ((r.chain as Json).previous_receipt_hash = OTHER_HASH),
    ],
  ])(
    '%s differing from position: chain_linkage FAIL, valid false (signature still PASS)',
    async (_name, change) => {
      const tampered = clone(second);
      change(tampered);
      const res = await verify(t, tampered);
      expect(res.body.valid).toBe(false);
      expect(statusOf(res)).toMatchObject({ signature_valid: 'PASS', chain_linkage: 'FAIL' });
    },
  );

  it('the tampered receipts really differ in what they sign (the test can fail)', async () => {
    const publicKey = await serverPublicKey(t);
    expect(await nobleVerifies(second, publicKey)).toBe(true);
    const tampered = clone(second);
    (tampered.policy as Json).name = 'permissive';
    expect(await nobleVerifies(tampered, publicKey)).toBe(false);
  });

  it('a malformed expect_config_hash is 400 validation_failed', async () => {
    const res = await verify(t, second, { expect_config_hash: 'nope' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
  });
});

describe('a ledger holding v1 receipts then v2 receipts is one chain', () => {
  let t: TestApp;
  let a: Account;
  const v1: Json[] = [];
  const v2: Json[] = [];

  beforeAll(async () => {
    t = buildTestApp();
    // Two legacy receipts, signed with the v1 code path by the same server key.
    for (let i = 0; i < 2; i++) {
      const signed = signClaim(makeClaim({ claimId: `legacy-${i}` }), t.serverKey, {
        contract: 'v1',
        issuedAt: new Date(t.clock.now()).toISOString(),
      });
      const result = await t.store.ledger.append(appendRequest(signed));
      expect(result.status).toBe('appended');
      v1.push(result.entry.receipt as unknown as Json);
    }
    a = await signupAccount(t);
    for (let i = 0; i < 2; i++) {
      const res = await evaluate(t, a.apiKey, validClaim());
      expect(res.status).toBe(200);
      v2.push(res.body.receipt);
    }
  });
  afterAll(() => t.close());

  it('sequences 1..4 without gaps, each previous_receipt_hash the hash before it', () => {
    const all = [...v1, ...v2];
    all.forEach((r, i) => {
      const chain = r.chain as Json;
      expect(chain.sequence).toBe(i + 1);
      expect(chain.previous_receipt_hash).toBe(
        i === 0 ? null : (all[i - 1]!.chain as Json).receipt_hash,
      );
    });
    for (const r of v1) {
      expect((r.signed_fields as Json).contract).toBe('receipt-core-v1');
      expect((r.chain as Json).receipt_hash).toBe(v1ReceiptHash(r));
    }
    expect((v2[0]!.position as Json).previous_receipt_hash).toBe(
      (v1[1]!.chain as Json).receipt_hash,
    );
  });

  it('v1 receipts keep verifying (chain_linkage UNVERIFIED); v2 ones verify with PASS', async () => {
    const publicKey = await serverPublicKey(t);
    for (const r of v1) {
      expect(await nobleVerifies(r, publicKey)).toBe(true);
      const res = await verify(t, r);
      expect(res.body.valid).toBe(true);
      expect(statusOf(res)).toMatchObject({
        signature_valid: 'PASS',
        hash_integrity: 'PASS',
        chain_linkage: 'UNVERIFIED',
        policy_binding: 'SKIPPED',
      });
      expect(res.body.signed).toMatchObject({
        contract: 'receipt-core-v1',
        submitter: null,
        policy: null,
        position: null,
      });
    }
    for (const r of v2) {
      await expectValidV2(r, publicKey, { keyId: a.keyId });
      const res = await verify(t, r);
      expect(res.body.valid).toBe(true);
      expect(statusOf(res).chain_linkage).toBe('PASS');
    }
  });

  it('a v1 receipt cannot satisfy a policy expectation', async () => {
    const res = await verify(t, v1[0], { expect_policy: 'default' });
    expect(statusOf(res).policy_binding).toBe('FAIL');
    expect(res.body.valid).toBe(false);
  });
});

describe('a configured ledger origin (SVC_LOG_ORIGIN, or the host of SVC_BASE_URL)', () => {
  let t: TestApp;
  let other: TestApp;
  beforeAll(() => {
    t = buildTestApp({ config: { logOrigin: 'svc.example.com/ledger' } });
    other = buildTestApp({ serverKey: t.serverKey, config: { logOrigin: 'other.example/ledger' } });
  });
  afterAll(async () => {
    await t.close();
    await other.close();
  });

  it('is the signed position.log, reported by verify; another ledger does not hold the receipt', async () => {
    const a = await signupAccount(t);
    const res = await evaluate(t, a.apiKey, validClaim());
    expect(res.status).toBe(200);
    await expectValidV2(res.body.receipt, await serverPublicKey(t), {
      log: 'svc.example.com/ledger',
      keyId: a.keyId,
    });
    expect((await verify(t, res.body.receipt)).body.valid).toBe(true);
    // Same signing key, another ledger: the receipt is not that ledger's.
    const elsewhere = await verify(other, res.body.receipt);
    expect(elsewhere.body.valid).toBe(false);
    expect(statusOf(elsewhere)).toMatchObject({ signature_valid: 'PASS', hash_integrity: 'FAIL' });
    expect(elsewhere.body.signed.position.log).toBe('svc.example.com/ledger');
  });
});
