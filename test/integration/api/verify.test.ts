import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import { appendRequest, makeClaim, signClaim } from '../../contract/ledger-fixtures.js';
import {
  clone,
  expectCommonHeaders,
  expectError,
  type Json,
  ledgerState,
  newKey,
  postRaw,
} from '../../support/api.js';
import { validClaim } from '../../support/claims.js';

const STRUCTURAL = [
  'receipt_id_valid',
  'admissibility_present',
  'replay_present',
  'policy_present',
  'evidence_present',
  'attestation_present',
];
const CHAIN_LINKAGE = {
  name: 'chain_linkage',
  layer: 'ledger',
  status: 'UNVERIFIED',
  detail:
    'receipt-core-v1 does not sign chain coordinates; sequence needs an independently kept ledger head',
};
const INCLUSION_PASS = { name: 'inclusion', layer: 'ledger', status: 'PASS' };
const NO_EXPECTATION = {
  name: 'policy_binding',
  layer: 'cryptographic',
  status: 'SKIPPED',
  detail: 'no expectation stated',
};
/** The checks of an intact receipt-core-v1 receipt. */
const STRUCTURAL_V1 = [...STRUCTURAL, 'no_unsigned_members'];
const ALL_PASS_V1 = [
  ...STRUCTURAL_V1.map((name) => ({ name, layer: 'structural', status: 'PASS' })),
  { name: 'signature_valid', layer: 'cryptographic', status: 'PASS' },
  { name: 'hash_integrity', layer: 'ledger', status: 'PASS' },
  CHAIN_LINKAGE,
  INCLUSION_PASS,
  NO_EXPECTATION,
];
const STRUCTURAL_V2 = [
  ...STRUCTURAL,
  'submitter_present',
  'position_present',
  'no_unsigned_members',
];
/** The checks of an intact receipt-core-v2 receipt. */
const ALL_PASS = [
  ...STRUCTURAL_V2.map((name) => ({ name, layer: 'structural', status: 'PASS' })),
  { name: 'signature_valid', layer: 'cryptographic', status: 'PASS' },
  { name: 'hash_integrity', layer: 'ledger', status: 'PASS' },
  { name: 'chain_linkage', layer: 'ledger', status: 'PASS' },
  INCLUSION_PASS,
  NO_EXPECTATION,
];

type Check = { name: string; layer: string; status: string; detail?: string };
const statusOf = (checks: Check[]) => Object.fromEntries(checks.map((c) => [c.name, c.status]));
const check = (checks: Check[], name: string) => checks.find((c) => c.name === name)!;
const ANOTHER_HASH = `sha256:${'ab'.repeat(32)}`;

describe('POST /v1/verify', () => {
  let t: TestApp;
  let key: string;
  let receipt: Json;
  let receiptV1: Json;

  const verify = (body: unknown) =>
    request(t.app)
      .post('/v1/verify')
      .send(body as object);

  // Verify writes nothing, so one app and one receipt serve every test.
  beforeAll(async () => {
    t = buildTestApp();
    key = await newKey(t, 'enterprise');
    const res = await request(t.app).post('/v1/evaluate').set('X-API-Key', key).send(validClaim());
    expect(res.status).toBe(200);
    receipt = res.body.receipt;
    // A receipt-core-v1 receipt as an older version of svc wrote it, in the same chain.
    const legacy = await t.store.ledger.append(
      appendRequest(signClaim(makeClaim(), t.serverKey, { contract: 'v1' })),
    );
    receiptV1 = legacy.entry.receipt as unknown as Json;
  });
  afterAll(() => t.close());

  it('the receipt evaluate returned, unchanged, is valid: every check of contract §6', async () => {
    const before = await ledgerState(t);
    const res = await verify(receipt);
    expect(res.status).toBe(200);
    expectCommonHeaders(res);
    expect(res.body).toEqual({
      valid: true,
      receipt_id: receipt.receipt_id,
      admissibility: 'ACCEPTED',
      verification_depth: 'cryptographic',
      checks: ALL_PASS,
      signed: {
        contract: 'receipt-core-v2',
        submitter: receipt.submitter,
        policy: {
          name: 'default',
          config_hash: (receipt.policy as Json).config_hash,
          overrides: false,
        },
        position: receipt.position,
      },
    });
    expect(await ledgerState(t)).toEqual(before);
  });

  it('a receipt-core-v1 receipt of the same ledger stays valid, chain_linkage UNVERIFIED', async () => {
    expect((receiptV1.signed_fields as Json).contract).toBe('receipt-core-v1');
    expect((receiptV1.chain as Json).previous_receipt_hash).toBe(
      (receipt.chain as Json).receipt_hash,
    );
    const res = await verify(receiptV1);
    expect(res.body).toEqual({
      valid: true,
      receipt_id: receiptV1.receipt_id,
      admissibility: 'ACCEPTED',
      verification_depth: 'cryptographic',
      checks: ALL_PASS_V1,
      signed: { contract: 'receipt-core-v1', submitter: null, policy: null, position: null },
    });
  });

  it('needs no key, and a valid key does not change the answer', async () => {
    const anonymous = await verify(receipt);
    const keyed = await request(t.app).post('/v1/verify').set('X-API-Key', key).send(receipt);
    expect(keyed.body).toEqual(anonymous.body);
  });

  it('key order and white space of the submitted JSON do not matter', async () => {
    const reorder = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(reorder)
        : v !== null && typeof v === 'object'
          ? Object.fromEntries(
              Object.entries(v)
                .reverse()
                .map(([k, x]) => [k, reorder(x)]),
            )
          : v;
    const res = await postRaw(t, '/v1/verify', null, JSON.stringify(reorder(receipt), null, 3));
    expect(res.body.valid).toBe(true);
  });

  it('a REJECTED receipt is authentic: valid true, admissibility REJECTED', async () => {
    const rejected = await request(t.app)
      .post('/v1/evaluate')
      .set('X-API-Key', key)
      .send(validClaim({ policyConfig: { minSources: 4 } }));
    const res = await verify(rejected.body.receipt);
    expect(res.body).toMatchObject({ valid: true, admissibility: 'REJECTED', checks: ALL_PASS });
  });

  it('a BLOCKED receipt decorated with unsigned members saying proceed is not valid', async () => {
    const blocked = await request(t.app)
      .post('/v1/evaluate')
      .set('X-API-Key', key)
      .send(validClaim({ policyConfig: { minSources: 4 } }));
    expect(blocked.body.receipt.policy.verdict).toBe('BLOCKED');
    const before = await ledgerState(t);
    for (const [member, value] of [
      ['decision', { proceed: true }],
      ['verdict', 'ALLOWED'],
    ] as const) {
      const res = await verify({ ...blocked.body.receipt, [member]: value });
      expect(res.status).toBe(200);
      expect(res.body.valid).toBe(false);
      expect(statusOf(res.body.checks)).toMatchObject({
        signature_valid: 'PASS',
        hash_integrity: 'PASS',
        no_unsigned_members: 'FAIL',
      });
      expect(check(res.body.checks, 'no_unsigned_members').detail).toBe(
        `members neither signed nor attestations or chain: "${member}"`,
      );
    }
    expect(await ledgerState(t)).toEqual(before);
  });

  it('receipts as evaluate and GET /v1/receipts/:id return them hold only signed members, attestations and chain', async () => {
    const evaluated = await request(t.app)
      .post('/v1/evaluate')
      .set('X-API-Key', key)
      .send(validClaim());
    const stored = await request(t.app).get(`/v1/receipts/${evaluated.body.receipt.receipt_id}`);
    expect(stored.status).toBe(200);
    for (const served of [evaluated.body.receipt as Json, stored.body.receipt as Json]) {
      const signed = (served.signed_fields as Json).fields as string[];
      expect(Object.keys(served).sort()).toEqual([...signed, 'attestations', 'chain'].sort());
      expect(Object.keys(served.chain as Json).sort()).toEqual([
        'previous_receipt_hash',
        'receipt_hash',
        'sequence',
      ]);
      const res = await verify(served);
      expect(res.body).toMatchObject({ valid: true, checks: ALL_PASS });
    }
    expect(stored.body.receipt).toEqual(evaluated.body.receipt);
  });

  it('a receipt answered by an idempotent replay is valid', async () => {
    const claim = validClaim();
    await request(t.app).post('/v1/evaluate').set('X-API-Key', key).send(claim);
    const again = await request(t.app).post('/v1/evaluate').set('X-API-Key', key).send(claim);
    expect(again.headers['idempotent-replay']).toBe('true');
    expect((await verify(again.body.receipt)).body.valid).toBe(true);
  });

  describe.each([
    ['receipt-core-v2', () => receipt],
    ['receipt-core-v1', () => receiptV1],
  ])('tampering with a %s receipt', (contract, original) => {
    const v2 = contract === 'receipt-core-v2';
    const cases: [string, (r: Json) => void, { signature: string; hash: string }][] = [
      [
        'subject.entity',
        (r) => ((r.subject as Json).entity = 'acme/evil'),
        { signature: 'FAIL', hash: 'PASS' },
      ],
      [
        'subject.pull_request',
        (r) => ((r.subject as Json).pull_request = 43),
        { signature: 'FAIL', hash: 'PASS' },
      ],
      [
        'admissibility.status',
        (r) => ((r.admissibility as Json).status = 'REJECTED'),
        { signature: 'FAIL', hash: 'PASS' },
      ],
      [
        'admissibility.reason',
        (r) => ((r.admissibility as Json).reason = 'ok'),
        { signature: 'FAIL', hash: 'PASS' },
      ],
      [
        'issued_at',
        (r) => (r.issued_at = '2026-01-15T10:00:00.001Z'),
        { signature: 'FAIL', hash: 'PASS' },
      ],
      ['claim_id', (r) => (r.claim_id = 'other-claim'), { signature: 'FAIL', hash: 'PASS' }],
      [
        'evidence.inputs_hash',
        (r) => ((r.evidence as Json).inputs_hash = ANOTHER_HASH),
        { signature: 'FAIL', hash: 'FAIL' },
      ],
      [
        'evidence.source_count',
        (r) => ((r.evidence as Json).source_count = 3),
        { signature: 'FAIL', hash: 'FAIL' },
      ],
      [
        'replay.deterministic',
        (r) => ((r.replay as Json).deterministic = false),
        { signature: 'FAIL', hash: 'FAIL' },
      ],
      [
        'replay.replay_hash',
        (r) => ((r.replay as Json).replay_hash = ANOTHER_HASH),
        { signature: 'FAIL', hash: 'FAIL' },
      ],
      [
        'policy.verdict and status',
        (r) => Object.assign(r.policy as Json, { verdict: 'BLOCKED', status: 'FAIL' }),
        { signature: 'FAIL', hash: 'FAIL' },
      ],
      [
        'policy.checks',
        (r) => ((r.policy as Json).checks = [{ rule: 'min_sources', passed: false, reason: 'x' }]),
        { signature: 'FAIL', hash: 'FAIL' },
      ],
      [
        'signed_fields.fields (order)',
        (r) => (r.signed_fields as { fields: string[] }).fields.reverse(),
        { signature: 'FAIL', hash: 'PASS' },
      ],
      [
        'signed_fields.fields (chain added)',
        (r) => (r.signed_fields as { fields: string[] }).fields.push('chain'),
        { signature: 'FAIL', hash: 'PASS' },
      ],
      [
        'signed_fields.contract',
        (r) =>
          ((r.signed_fields as Json).contract =
            (r.signed_fields as Json).contract === 'receipt-core-v2'
              ? 'receipt-core-v1'
              : 'receipt-core-v2'),
        { signature: 'FAIL', hash: 'FAIL' },
      ],
      [
        'the signature',
        (r) => {
          const [a] = r.attestations as Json[];
          const bytes = Buffer.from(a!.signature as string, 'base64');
          bytes[10]! ^= 1;
          a!.signature = bytes.toString('base64');
        },
        { signature: 'FAIL', hash: 'FAIL' },
      ],
      [
        'the attestation timestamp (unsigned, but hashed)',
        (r) => ((r.attestations as Json[])[0]!.timestamp = '2030-01-01T00:00:00.000Z'),
        { signature: 'PASS', hash: 'FAIL' },
      ],
      [
        'the attestation key_id',
        (r) => ((r.attestations as Json[])[0]!.key_id = ANOTHER_HASH),
        { signature: 'FAIL', hash: 'FAIL' },
      ],
    ];

    it.each(cases)('%s: valid false', async (_name, mutate, expected) => {
      const tampered = clone(original());
      mutate(tampered);
      const res = await verify(tampered);
      expect(res.status).toBe(200);
      expect(res.body.valid).toBe(false);
      expect(res.body.verification_depth).toBe('cryptographic');
      const statuses = statusOf(res.body.checks);
      expect(statuses.signature_valid).toBe(expected.signature);
      // The v2 receipt hash covers the whole signed core, the v1 hash only part of it.
      expect(statuses.hash_integrity).toBe(v2 ? 'FAIL' : expected.hash);
      if (!v2) expect(statuses.chain_linkage).toBe('UNVERIFIED');
      expect(res.body.signed).toBe(expected.signature === 'PASS' ? res.body.signed : null);
      for (const c of res.body.checks as Check[]) {
        expect(['PASS', 'FAIL', 'UNVERIFIED', 'SKIPPED']).toContain(c.status);
        if (c.status === 'FAIL') expect(c.detail).toEqual(expect.any(String));
      }
    });

    it('the echo fields report the submitted receipt', async () => {
      const receipt = original();
      const tampered = clone(receipt);
      (tampered.admissibility as Json).status = 'REJECTED';
      const res = await verify(tampered);
      expect(res.body).toMatchObject({ receipt_id: receipt.receipt_id, admissibility: 'REJECTED' });
      expect(check(res.body.checks, 'signature_valid').detail).toBe(
        'Ed25519 signature does not verify over the signed core',
      );
    });

    it('a changed hash reports both values', async () => {
      const receipt = original();
      const tampered = clone(receipt);
      (tampered.evidence as Json).source_count = 3;
      const res = await verify(tampered);
      expect(check(res.body.checks, 'hash_integrity').detail).toMatch(
        new RegExp(
          `^recomputed sha256:[0-9a-f]{64} differs from the ledger's ${(receipt.chain as Json).receipt_hash}$`,
        ),
      );
    });

    it(
      v2
        ? "only chain.receipt_hash changed: chain_linkage fails, as the member third parties chain by must be the receipt's own hash"
        : 'only chain.receipt_hash changed: still valid (hash_integrity recomputes from the content)',
      async () => {
        const tampered = clone(original());
        (tampered.chain as Json).receipt_hash = ANOTHER_HASH;
        const res = await verify(tampered);
        if (v2) {
          expect(res.body.valid).toBe(false);
          expect(check(res.body.checks, 'chain_linkage')).toMatchObject({
            status: 'FAIL',
            detail: 'chain.receipt_hash is not the hash of this receipt ({core, attestations})',
          });
          expect(check(res.body.checks, 'hash_integrity').status).toBe('PASS');
        } else {
          expect(res.body).toMatchObject({ valid: true, checks: ALL_PASS_V1 });
        }
      },
    );

    it(
      v2
        ? 'chain.sequence and previous_receipt_hash that differ from the signed position fail chain_linkage'
        : 'chain.sequence and previous_receipt_hash are unsigned: a changed sequence fails only inclusion, a changed previous hash goes unnoticed',
      async () => {
        const tampered = clone(original());
        Object.assign(tampered.chain as Json, {
          sequence: 77,
          previous_receipt_hash: ANOTHER_HASH,
        });
        const res = await verify(tampered);
        if (v2) {
          expect(res.body.valid).toBe(false);
          expect(check(res.body.checks, 'chain_linkage')).toEqual({
            name: 'chain_linkage',
            layer: 'ledger',
            status: 'FAIL',
            detail: 'chain.sequence 77 differs from the signed position 1',
          });
        } else {
          // The log places the receipt by its sequence: another sequence is another leaf.
          expect(res.body.valid).toBe(false);
          expect(
            (res.body.checks as Check[]).filter((c) => c.status === 'FAIL').map((c) => c.name),
          ).toEqual(['inclusion']);
          const sequence = (original().chain as Json).sequence as number;
          expect(check(res.body.checks, 'inclusion').detail).toBe(
            `leaf_index ${sequence - 1} is not this receipt's leaf: chain.sequence 77 is leaf 76`,
          );
          expect(check(res.body.checks, 'chain_linkage')).toEqual(CHAIN_LINKAGE);
          const relinked = clone(original());
          (relinked.chain as Json).previous_receipt_hash = ANOTHER_HASH;
          const again = await verify(relinked);
          expect(again.body).toMatchObject({ valid: true, checks: ALL_PASS_V1 });
        }
      },
    );

    it('a member outside the signed core and the hash fails no_unsigned_members, and only it', async () => {
      const res = await verify({ ...original(), note: 'added by a relay' });
      expect(res.body.valid).toBe(false);
      expect(
        (res.body.checks as Check[]).filter((c) => c.status === 'FAIL').map((c) => c.name),
      ).toEqual(['no_unsigned_members']);
    });

    it('a signature that is not 64 bytes of base64', async () => {
      const tampered = clone(original());
      (tampered.attestations as Json[])[0]!.signature = 'AAAA';
      const res = await verify(tampered);
      expect(check(res.body.checks, 'signature_valid')).toEqual({
        name: 'signature_valid',
        layer: 'cryptographic',
        status: 'FAIL',
        detail: 'signature is not the base64 of 64 bytes',
      });
    });

    it.each([
      ['admissibility', 'admissibility_present'],
      ['replay', 'replay_present'],
      ['policy', 'policy_present'],
      ['evidence', 'evidence_present'],
      ['attestations', 'attestation_present'],
      ['receipt_id', 'receipt_id_valid'],
    ])('without %s: %s fails, and the signature with it', async (member, failing) => {
      const stripped = clone(original());
      delete stripped[member];
      const res = await verify(stripped);
      expect(res.status).toBe(200);
      expect(res.body.valid).toBe(false);
      const statuses = statusOf(res.body.checks);
      expect(statuses[failing]).toBe('FAIL');
      expect(statuses.signature_valid).toBe('FAIL');
      for (const name of STRUCTURAL.filter((n) => n !== failing))
        expect(statuses[name]).toBe('PASS');
    });

    it('an unknown source type fails evidence_present', async () => {
      const tampered = clone(original());
      (tampered.evidence as Json).source_types = ['ci', 'telepathy'];
      const res = await verify(tampered);
      expect(statusOf(res.body.checks).evidence_present).toBe('FAIL');
    });
  });

  it('an unknown receipt_id fails hash_integrity, even with a good signature', async () => {
    // Same signing key, another ledger: the signature holds, the ledger does not know it.
    const other = buildTestApp({ serverKey: t.serverKey });
    try {
      const otherKey = await newKey(other);
      const foreign = await request(other.app)
        .post('/v1/evaluate')
        .set('X-API-Key', otherKey)
        .send(validClaim());
      const res = await verify(foreign.body.receipt);
      expect(res.body).toEqual({
        valid: false,
        receipt_id: foreign.body.receipt.receipt_id,
        admissibility: 'ACCEPTED',
        verification_depth: 'cryptographic',
        checks: [
          ...ALL_PASS.slice(0, 10),
          {
            name: 'hash_integrity',
            layer: 'ledger',
            status: 'FAIL',
            detail: 'receipt_id is unknown to this ledger',
          },
          { name: 'chain_linkage', layer: 'ledger', status: 'PASS' },
          {
            name: 'inclusion',
            layer: 'ledger',
            status: 'FAIL',
            detail:
              'receipt_id is unknown to this ledger, so the ledger has no inclusion proof of it',
          },
          NO_EXPECTATION,
        ],
        signed: expect.objectContaining({ contract: 'receipt-core-v2' }),
      });
    } finally {
      await other.close();
    }
  });

  it('a receipt signed by another key fails the signature', async () => {
    const other = buildTestApp();
    try {
      const otherKey = await newKey(other);
      const foreign = await request(other.app)
        .post('/v1/evaluate')
        .set('X-API-Key', otherKey)
        .send(validClaim());
      const res = await verify(foreign.body.receipt);
      expect(res.body.valid).toBe(false);
      expect(check(res.body.checks, 'signature_valid')).toEqual({
        name: 'signature_valid',
        layer: 'cryptographic',
        status: 'FAIL',
        detail: `no Ed25519 attestation by key ${t.serverKey.keyId}`,
      });
      expect(statusOf(res.body.checks).hash_integrity).toBe('FAIL');
    } finally {
      await other.close();
    }
  });

  it('a simulate receipt is not valid', async () => {
    const simulated = await request(t.app)
      .post('/v1/simulate')
      .set('X-API-Key', key)
      .send(validClaim());
    const res = await verify(simulated.body.receipt);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      valid: false,
      receipt_id: simulated.body.receipt.receipt_id,
      admissibility: 'ACCEPTED',
      verification_depth: 'cryptographic',
    });
    expect(statusOf(res.body.checks)).toEqual({
      receipt_id_valid: 'FAIL',
      admissibility_present: 'PASS',
      replay_present: 'PASS',
      policy_present: 'PASS',
      evidence_present: 'PASS',
      attestation_present: 'FAIL',
      submitter_present: 'PASS',
      position_present: 'FAIL',
      no_unsigned_members: 'PASS',
      signature_valid: 'FAIL',
      hash_integrity: 'FAIL',
      chain_linkage: 'FAIL',
      inclusion: 'FAIL',
      policy_binding: 'SKIPPED',
    });
    expect(res.body.signed).toBeNull();
  });

  it('an empty object gets every check, all failing', async () => {
    const res = await verify({});
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ valid: false, receipt_id: null, admissibility: null });
    expect(res.body.checks.map((c: Check) => [c.name, c.layer, c.status])).toEqual([
      ...STRUCTURAL_V1.map((n) => [n, 'structural', 'FAIL']),
      ['signature_valid', 'cryptographic', 'FAIL'],
      ['hash_integrity', 'ledger', 'FAIL'],
      ['chain_linkage', 'ledger', 'UNVERIFIED'],
      ['inclusion', 'ledger', 'FAIL'],
      ['policy_binding', 'cryptographic', 'SKIPPED'],
    ]);
  });

  describe('bodies that are not a receipt object', () => {
    it.each([
      ['an array', '[]'],
      ['an array holding the receipt', 'RECEIPT_IN_ARRAY'],
      ['a string', '"dr-01"'],
      ['a number', '42'],
      ['null', 'null'],
      ['true', 'true'],
    ])('%s is 400 validation_failed', async (_name, text) => {
      const body = text === 'RECEIPT_IN_ARRAY' ? JSON.stringify([receipt]) : text;
      const res = await postRaw(t, '/v1/verify', null, body);
      expect(expectError(res, 400, 'validation_failed')).toBe(
        '(root): expected a receipt object, as returned under "receipt" by evaluate',
      );
    });

    it('an empty body is 400 validation_failed', async () => {
      expectError(await request(t.app).post('/v1/verify'), 400, 'validation_failed');
    });

    it('malformed JSON is 400 malformed_json', async () => {
      expectError(await postRaw(t, '/v1/verify', null, '{"receipt_id":'), 400, 'malformed_json');
    });

    it('duplicate keys are refused, not resolved to the last one', async () => {
      const text = JSON.stringify(receipt).replace(
        '"claim_id":',
        `"claim_id":"forged","claim_id":`,
      );
      const res = await postRaw(t, '/v1/verify', null, text);
      expect(expectError(res, 400, 'validation_failed')).toBe('(root): duplicate key "claim_id"');
      const nested = JSON.stringify(receipt).replace(
        '"status":"ACCEPTED"',
        '"status":"REJECTED","status":"ACCEPTED"',
      );
      const res2 = await postRaw(t, '/v1/verify', null, nested);
      expect(expectError(res2, 400, 'validation_failed')).toBe(
        'admissibility: duplicate key "status"',
      );
    });

    it.each([
      [
        'an unsafe integer',
        '"sequence":1',
        '"sequence":9007199254740993',
        'position.sequence: integer outside',
      ],
      [
        'a non-finite number',
        '"sequence":1',
        '"sequence":1e400',
        'position.sequence: number out of range',
      ],
      [
        'a lone surrogate',
        '"claim_id":"',
        '"claim_id":"\\ud800',
        'claim_id: lone UTF-16 surrogate',
      ],
    ])('%s is refused with 400', async (_name, from, to, message) => {
      const text = JSON.stringify(receipt).replace(from, to);
      expect(text).not.toBe(JSON.stringify(receipt));
      const res = await postRaw(t, '/v1/verify', null, text);
      expect(expectError(res, 400, 'validation_failed')).toContain(message);
    });
  });
});
