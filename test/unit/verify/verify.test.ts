import { describe, expect, it } from '@jest/globals';
import { type VerifyOptions, verifyReceipt, type VerifyResult } from '@svc/verify';
import { createNativeStrictVerify } from '@svc/verify/node';
import { evaluateClaim } from '../../../src/core/evaluation.js';
import { resolvePolicy } from '../../../src/core/policy-config.js';
import {
  buildReceiptCore,
  chainReceipt,
  signReceipt,
  type Receipt,
  type ReceiptCore,
} from '../../../src/core/receipt.js';
import { newServerKey } from '../../support/harness.js';
import { claimWith } from '../../support/claims.js';
import { clone, referenceHash } from '../core/reference.js';

type Mutable = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const key = newServerKey();
const otherKey = newServerKey();

// Contract §6: names and layers.
const LAYERS = {
  receipt_id_valid: 'structural',
  admissibility_present: 'structural',
  replay_present: 'structural',
  policy_present: 'structural',
  evidence_present: 'structural',
  attestation_present: 'structural',
  no_unsigned_members: 'structural',
  signature_valid: 'cryptographic',
  hash_integrity: 'ledger',
  chain_linkage: 'ledger',
  policy_binding: 'cryptographic',
};

function coreFor(claimOverrides: Record<string, unknown> = {}): ReceiptCore {
  const claim = claimWith(claimOverrides);
  return buildReceiptCore({
    receiptId: 'dr-01JH8Z6Q3V9W2X4Y5Z6A7B8C9D',
    issuedAt: '2026-01-15T10:00:00.000Z',
    claim,
    evaluation: evaluateClaim(claim, resolvePolicy(claim.policyConfig)),
  });
}

const sealed = (core: ReceiptCore, signer = key): Receipt =>
  chainReceipt(signReceipt(core, signer), {
    sequence: 4,
    receipt_hash: `sha256:${'a'.repeat(64)}`,
  });

const receipt = sealed(coreFor());
/** What the ledger stored for `receipt`, computed here rather than read off the receipt. */
const ledgerHash = referenceHash({
  evidence: receipt.evidence,
  policy: receipt.policy,
  replay: receipt.replay,
  attestations: receipt.attestations,
});

const options = (extra: Partial<VerifyOptions> = {}): VerifyOptions => ({
  publicKey: key.publicKeyRaw,
  keyId: key.keyId,
  ledgerHash,
  ...extra,
});

const check = (result: VerifyResult, name: string) => {
  const found = result.checks.find((c) => c.name === name);
  if (!found) throw new Error(`check ${name} missing`);
  return found;
};

const tampered = (change: (r: Mutable) => void): Mutable => {
  const copy = clone(receipt) as unknown as Mutable;
  change(copy);
  return copy;
};

describe('verifyReceipt: an intact receipt', () => {
  const result = verifyReceipt(receipt, options());

  it('is valid, with every check in its layer', () => {
    expect(result.valid).toBe(true);
    expect(result.verification_depth).toBe('cryptographic');
    expect(result.checks.map((c) => [c.name, c.layer])).toEqual(Object.entries(LAYERS));
  });

  it('passes every check but chain_linkage, UNVERIFIED for receipt-core-v1, and policy_binding, SKIPPED without expectations', () => {
    for (const c of result.checks) {
      expect([c.name, c.status]).toEqual([
        c.name,
        c.name === 'chain_linkage'
          ? 'UNVERIFIED'
          : c.name === 'policy_binding'
            ? 'SKIPPED'
            : 'PASS',
      ]);
    }
    expect(check(result, 'chain_linkage').detail).toMatch(/receipt-core-v1/);
  });

  it('echoes receipt_id and the admissibility status', () => {
    expect(result.receipt_id).toBe(receipt.receipt_id);
    expect(result.admissibility).toBe(receipt.admissibility.status);
  });

  it('gives the same result with the native verifier as with the portable one', () => {
    expect(
      verifyReceipt(receipt, options({ verifySignature: createNativeStrictVerify() })),
    ).toEqual(result);
  });

  it('survives a JSON round trip, as a receipt sent to /v1/verify does', () => {
    expect(verifyReceipt(JSON.parse(JSON.stringify(receipt)), options()).valid).toBe(true);
  });

  it('does not change the receipt it checks', () => {
    const copy = clone(receipt);
    verifyReceipt(copy, options());
    expect(copy).toEqual(receipt);
  });
});

describe('verifyReceipt: structural checks', () => {
  const cases: [string, string, (r: Mutable) => void][] = [
    ['receipt_id_valid', 'receipt_id missing', (r) => delete r.receipt_id],
    [
      'receipt_id_valid',
      'receipt_id without dr-',
      (r) => (r.receipt_id = '01JH8Z6Q3V9W2X4Y5Z6A7B8C9D'),
    ],
    ['receipt_id_valid', 'receipt_id not a ULID', (r) => (r.receipt_id = 'dr-hello')],
    [
      'receipt_id_valid',
      'receipt_id with a lowercase ULID',
      (r) => (r.receipt_id = 'dr-01jh8z6q3v9w2x4y5z6a7b8c9d'),
    ],
    [
      'receipt_id_valid',
      'receipt_id with U in the ULID',
      (r) => (r.receipt_id = 'dr-01JH8Z6Q3V9W2X4Y5Z6A7B8C9U'),
    ],
    ['receipt_id_valid', 'receipt_id a number', (r) => (r.receipt_id = 1)],
    ['admissibility_present', 'admissibility missing', (r) => delete r.admissibility],
    [
      'admissibility_present',
      'admissibility.status unknown',
      (r) => (r.admissibility.status = 'MAYBE'),
    ],
    ['admissibility_present', 'admissibility an array', (r) => (r.admissibility = ['ACCEPTED'])],
    ['replay_present', 'replay missing', (r) => delete r.replay],
    [
      'replay_present',
      'replay.deterministic not a boolean',
      (r) => (r.replay.deterministic = 'true'),
    ],
    [
      'replay_present',
      'replay.replay_hash malformed',
      (r) => (r.replay.replay_hash = 'sha256:XYZ'),
    ],
    ['policy_present', 'policy missing', (r) => delete r.policy],
    ['policy_present', 'policy.status unknown', (r) => (r.policy.status = 'OK')],
    ['policy_present', 'policy.verdict unknown', (r) => (r.policy.verdict = 'DENIED')],
    ['policy_present', 'policy.checks not an array', (r) => (r.policy.checks = {})],
    ['evidence_present', 'evidence missing', (r) => delete r.evidence],
    ['evidence_present', 'evidence.inputs_hash malformed', (r) => (r.evidence.inputs_hash = 'abc')],
    ['evidence_present', 'evidence.source_count 0', (r) => (r.evidence.source_count = 0)],
    [
      'evidence_present',
      'evidence.source_count fractional',
      (r) => (r.evidence.source_count = 1.5),
    ],
    ['evidence_present', 'evidence.source_count a string', (r) => (r.evidence.source_count = '2')],
    [
      'evidence_present',
      'evidence.source_types with an unknown type',
      (r) => r.evidence.source_types.push('email'),
    ],
    ['evidence_present', 'evidence.source_types missing', (r) => delete r.evidence.source_types],
    ['attestation_present', 'attestations missing', (r) => delete r.attestations],
    ['attestation_present', 'attestations empty', (r) => (r.attestations = [])],
    [
      'attestation_present',
      'attestation of another algorithm',
      (r) => (r.attestations[0].algorithm = 'ES256'),
    ],
    [
      'attestation_present',
      'attestation without signature',
      (r) => delete r.attestations[0].signature,
    ],
    ['attestation_present', 'attestation without key_id', (r) => delete r.attestations[0].key_id],
    ['attestation_present', 'attestation without signer', (r) => delete r.attestations[0].signer],
    [
      'attestation_present',
      'attestation without timestamp',
      (r) => delete r.attestations[0].timestamp,
    ],
  ];

  it.each(cases)('%s fails for %s, and the receipt is not valid', (name, _, change) => {
    const result = verifyReceipt(tampered(change), options());
    const failed = check(result, name);
    expect(failed.status).toBe('FAIL');
    expect(failed.detail?.length).toBeGreaterThan(0);
    expect(result.valid).toBe(false);
  });

  it.each(cases)('%s is the only structural check to fail for %s', (name, _, change) => {
    const result = verifyReceipt(tampered(change), options());
    const structuralFailures = result.checks
      .filter((c) => c.layer === 'structural' && c.status === 'FAIL')
      .map((c) => c.name);
    expect(structuralFailures).toEqual([name]);
  });

  it('fails structure, and nothing else, for a correctly signed receipt with malformed evidence', () => {
    const core = coreFor();
    core.evidence.source_count = 0;
    const odd = sealed(core);
    const result = verifyReceipt(
      odd,
      options({
        ledgerHash: referenceHash({
          evidence: odd.evidence,
          policy: odd.policy,
          replay: odd.replay,
          attestations: odd.attestations,
        }),
      }),
    );
    expect(check(result, 'evidence_present').status).toBe('FAIL');
    expect(check(result, 'signature_valid').status).toBe('PASS');
    expect(check(result, 'hash_integrity').status).toBe('PASS');
    expect(result.valid).toBe(false);
  });

  it.each([
    ['null', null],
    ['an array', [receipt]],
    ['a string', JSON.stringify(receipt)],
    ['a number', 42],
    ['an empty object', {}],
  ])(
    'fails every check but chain_linkage and policy_binding for %s, without throwing',
    (_, input) => {
      const result = verifyReceipt(input, options());
      expect(result.valid).toBe(false);
      expect(result.receipt_id).toBeNull();
      expect(result.admissibility).toBeNull();
      for (const c of result.checks.filter(
        (x) => x.name !== 'chain_linkage' && x.name !== 'policy_binding',
      )) {
        expect([c.name, c.status]).toEqual([c.name, 'FAIL']);
      }
    },
  );
});

describe('verifyReceipt: no_unsigned_members', () => {
  const blocked = sealed(coreFor({ policyConfig: { minSources: 5 } }));
  const decorated = (change: (r: Mutable) => void): Mutable => {
    const copy = clone(blocked) as unknown as Mutable;
    change(copy);
    return copy;
  };
  const hashOf = (r: Mutable) =>
    referenceHash({
      evidence: r.evidence,
      policy: r.policy,
      replay: r.replay,
      attestations: r.attestations,
    });

  it('passes for a receipt as sealed, whose members are the signed ones, attestations and chain', () => {
    expect(blocked.policy.verdict).toBe('BLOCKED');
    const result = verifyReceipt(blocked, options({ ledgerHash: hashOf(blocked as never) }));
    expect(check(result, 'no_unsigned_members').status).toBe('PASS');
    expect(result.valid).toBe(true);
  });

  it.each<[string, (r: Mutable) => void, RegExp]>([
    [
      'a decision saying proceed',
      (r) => (r.decision = { proceed: true }),
      /members neither signed nor attestations or chain: "decision"/,
    ],
    ['an ALLOWED verdict', (r) => (r.verdict = 'ALLOWED'), /"verdict"/],
    [
      'several members',
      (r) => {
        for (const name of ['a', 'b', 'c', 'd', 'e', 'f', 'g']) r[name] = true;
      },
      /"a", "b", "c", "d", "e" and 2 more/,
    ],
    [
      'v2 members beside a receipt-core-v1 declaration',
      (r) => (r.submitter = { kind: 'api_key', key_id: 'kid_01JH8Z6Q3V9W2X4Y5Z6A7B8C9D' }),
      /"submitter"/,
    ],
    [
      'a member inside chain',
      (r) => (r.chain.verdict = 'ALLOWED'),
      /chain members other than sequence, previous_receipt_hash and receipt_hash: "verdict"/,
    ],
  ])(
    'fails a BLOCKED receipt decorated with %s, though signature and hash still pass',
    (_, change, detail) => {
      const r = decorated(change);
      const result = verifyReceipt(r, options({ ledgerHash: hashOf(r) }));
      expect(check(result, 'signature_valid').status).toBe('PASS');
      expect(check(result, 'hash_integrity').status).toBe('PASS');
      expect(check(result, 'no_unsigned_members')).toMatchObject({ status: 'FAIL' });
      expect(check(result, 'no_unsigned_members').detail).toMatch(detail);
      expect(result.valid).toBe(false);
    },
  );

  it('shortens a long member name in its detail', () => {
    const r = decorated((x) => (x['n'.repeat(10_000)] = 1));
    const detail = check(verifyReceipt(r, options()), 'no_unsigned_members').detail!;
    expect(detail.length).toBeLessThan(200);
  });

  it('fails when signed_fields declares no known contract', () => {
    const r = decorated((x) => (x.signed_fields.contract = 'receipt-core-v9'));
    expect(check(verifyReceipt(r, options()), 'no_unsigned_members')).toMatchObject({
      status: 'FAIL',
      detail: 'signed_fields declares no known contract, so no member can be told signed',
    });
  });
});

describe('verifyReceipt: signature_valid', () => {
  const signatureCheck = (input: unknown, extra: Partial<VerifyOptions> = {}) =>
    check(verifyReceipt(input, options(extra)), 'signature_valid');

  it('fails when no attestation carries the expected key_id', () => {
    const result = signatureCheck(receipt, { keyId: otherKey.keyId });
    expect(result.status).toBe('FAIL');
    expect(result.detail).toContain(otherKey.keyId);
  });

  it('fails when the key_id matches but the public key is another one', () => {
    expect(signatureCheck(receipt, { publicKey: otherKey.publicKeyRaw }).status).toBe('FAIL');
  });

  it('fails for a receipt signed by another key under this key_id', () => {
    const forged = signReceipt(coreFor(), { keyId: key.keyId, sign: otherKey.sign });
    expect(signatureCheck(forged).status).toBe('FAIL');
  });

  it.each([
    ['not base64', (s: string) => `${s.slice(0, -4)}!!!!`],
    ['unpadded', (s: string) => s.replace(/=+$/, '')],
    [
      'non-canonical padding bits',
      (s: string) => {
        const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
        const last = alphabet.indexOf(s.at(-3)!);
        return `${s.slice(0, -3)}${alphabet[last | 1]}==`;
      },
    ],
    ['63 bytes', (s: string) => Buffer.from(s, 'base64').subarray(0, 63).toString('base64')],
    [
      '65 bytes',
      (s: string) => Buffer.concat([Buffer.from(s, 'base64'), Buffer.of(0)]).toString('base64'),
    ],
    ['empty', () => ''],
    ['with a line break', (s: string) => `${s.slice(0, 40)}\n${s.slice(40)}`],
  ])('fails for a signature that is %s', (_, change) => {
    const bad = tampered(
      (r) => (r.attestations[0].signature = change(r.attestations[0].signature)),
    );
    expect(bad.attestations[0].signature).not.toBe(receipt.attestations[0]!.signature);
    expect(signatureCheck(bad).status).toBe('FAIL');
  });

  it('fails when the signature is not a string', () => {
    expect(signatureCheck(tampered((r) => (r.attestations[0].signature = 42))).status).toBe('FAIL');
  });

  it.each([
    ['missing', (r: Mutable) => delete r.signed_fields],
    ['another contract', (r: Mutable) => (r.signed_fields.contract = 'receipt-core-v0')],
    ['a field left out', (r: Mutable) => r.signed_fields.fields.splice(4, 1)],
    ['a field added', (r: Mutable) => r.signed_fields.fields.push('chain')],
    ['fields reordered', (r: Mutable) => r.signed_fields.fields.reverse()],
    ['fields not an array', (r: Mutable) => (r.signed_fields.fields = 'all')],
    ['a listed member absent', (r: Mutable) => delete r.subject],
  ])('fails when signed_fields is altered: %s', (_, change) => {
    expect(signatureCheck(tampered(change)).status).toBe('FAIL');
  });

  it('fails, rather than throwing, when a signed member has no canonical form', () => {
    const result = signatureCheck(tampered((r) => (r.subject.pull_request = 2 ** 60)));
    expect(result.status).toBe('FAIL');
  });

  it('uses the verifier it is given', () => {
    expect(signatureCheck(receipt, { verifySignature: () => false }).status).toBe('FAIL');
    const seen: number[] = [];
    signatureCheck(receipt, {
      verifySignature: (sig, msg, pub) => {
        seen.push(sig.length, pub.length, msg.length);
        return true;
      },
    });
    expect(seen.slice(0, 2)).toEqual([64, 32]);
  });

  it('finds the attestation of the expected key among several', () => {
    const extra = { ...receipt.attestations[0]!, key_id: otherKey.keyId, signature: 'AAAA' };
    const both = tampered((r) => r.attestations.unshift(extra));
    expect(signatureCheck(both).status).toBe('PASS');
  });
});

describe('verifyReceipt: hash_integrity', () => {
  it('passes when the recomputed hash equals the ledger hash', () => {
    expect(check(verifyReceipt(receipt, options()), 'hash_integrity').status).toBe('PASS');
  });

  it('fails when the ledger holds another hash for this receipt_id', () => {
    const result = verifyReceipt(receipt, options({ ledgerHash: `sha256:${'0'.repeat(64)}` }));
    expect(check(result, 'hash_integrity').status).toBe('FAIL');
    expect(result.valid).toBe(false);
  });

  it('fails, saying so, when the ledger does not know the receipt (null)', () => {
    const result = verifyReceipt(receipt, options({ ledgerHash: null }));
    const c = check(result, 'hash_integrity');
    expect(c.status).toBe('FAIL');
    expect(c.detail).toMatch(/unknown/);
    expect(result.valid).toBe(false);
  });

  it('is SKIPPED when no ledger is consulted (undefined), and then the receipt is not valid', () => {
    const result = verifyReceipt(receipt, options({ ledgerHash: undefined }));
    expect(check(result, 'hash_integrity').status).toBe('SKIPPED');
    expect(check(result, 'signature_valid').status).toBe('PASS');
    expect(result.checks.some((c) => c.status === 'FAIL')).toBe(false);
    expect(result.valid).toBe(false);
  });

  it('fails when an unsigned attestation member changed after the ledger stored the hash', () => {
    const moved = tampered((r) => (r.attestations[0].timestamp = '2030-01-01T00:00:00.000Z'));
    const result = verifyReceipt(moved, options());
    expect(check(result, 'signature_valid').status).toBe('PASS');
    expect(check(result, 'hash_integrity').status).toBe('FAIL');
    expect(result.valid).toBe(false);
  });

  it('ignores chain coordinates, which it does not cover', () => {
    const moved = tampered((r) => {
      r.chain.sequence = 99;
      r.chain.previous_receipt_hash = null;
    });
    const result = verifyReceipt(moved, options());
    expect(check(result, 'hash_integrity').status).toBe('PASS');
    expect(check(result, 'chain_linkage').status).toBe('UNVERIFIED');
    expect(result.valid).toBe(true);
  });

  it('fails, rather than throwing, when the hashed members have no canonical form', () => {
    const broken = tampered((r) => (r.evidence.extra = Number.NaN));
    expect(check(verifyReceipt(broken, options()), 'hash_integrity').status).toBe('FAIL');
  });
});

describe('verifyReceipt: valid (contract §6)', () => {
  it('is false whenever any check fails, even with signature and hash passing', () => {
    const result = verifyReceipt(
      tampered((r) => (r.receipt_id = 'dr-x')),
      options(),
    );
    expect(check(result, 'signature_valid').status).toBe('FAIL');
    expect(result.valid).toBe(false);
    const core = coreFor();
    core.replay.replay_hash = 'not a hash';
    const odd = sealed(core);
    const oddHash = referenceHash({
      evidence: odd.evidence,
      policy: odd.policy,
      replay: odd.replay,
      attestations: odd.attestations,
    });
    const oddResult = verifyReceipt(odd, options({ ledgerHash: oddHash }));
    expect(check(oddResult, 'signature_valid').status).toBe('PASS');
    expect(check(oddResult, 'hash_integrity').status).toBe('PASS');
    expect(check(oddResult, 'replay_present').status).toBe('FAIL');
    expect(oddResult.valid).toBe(false);
  });

  it('equals "no FAIL, and signature_valid and hash_integrity PASS" across many variants', () => {
    const variants: [unknown, Partial<VerifyOptions>][] = [
      [receipt, {}],
      [receipt, { ledgerHash: undefined }],
      [receipt, { ledgerHash: null }],
      [receipt, { keyId: otherKey.keyId }],
      [tampered((r) => (r.claim_id = 'other')), {}],
      [tampered((r) => (r.chain.sequence = 1)), {}],
      [tampered((r) => delete r.policy), {}],
      [{}, { ledgerHash: undefined }],
    ];
    const outcomes = variants.map(([input, extra]) => {
      const result = verifyReceipt(input, options(extra));
      const status = (name: string) => check(result, name).status;
      const expected =
        result.checks.every((c) => c.status !== 'FAIL') &&
        status('signature_valid') === 'PASS' &&
        status('hash_integrity') === 'PASS';
      expect(result.valid).toBe(expected);
      return result.valid;
    });
    // Both answers occur, so the rule above was tested both ways.
    expect(outcomes).toContain(true);
    expect(outcomes).toContain(false);
  });
});
