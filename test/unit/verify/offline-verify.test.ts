import { describe, expect, it } from '@jest/globals';
import {
  attestationKeyIds,
  CHECK_NAMES,
  decisionOf,
  hashCanonical,
  parseExpectations,
  parsePublicKeyPem,
  parseReceiptInput,
  publicKeyFromRaw,
  verifyOffline,
  type VerifyResult,
} from '@svc/verify';
import { evaluateClaim } from '../../../src/core/evaluation.js';
import { resolvePolicy } from '../../../src/core/policy-config.js';
import {
  buildReceiptDraft,
  chainReceipt,
  buildReceiptCore,
  sealReceipt,
  signReceipt,
  type Receipt,
} from '../../../src/core/receipt.js';
import { newServerKey } from '../../support/harness.js';
import { claimWith } from '../../support/claims.js';
import { clone } from '../core/reference.js';

type Mutable = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const serverKey = newServerKey();
const key = parsePublicKeyPem(serverKey.publicKeyPem);
const KID = 'kid_01JH8Z6Q3V9W2X4Y5Z6A7B8C9D';

function v2Receipt(): Receipt {
  const claim = claimWith();
  const config = resolvePolicy(claim.policyConfig);
  return sealReceipt(
    buildReceiptDraft({
      receiptId: 'dr-01JH8Z6Q3V9W2X4Y5Z6A7B8C9E',
      issuedAt: '2026-01-15T10:00:00.000Z',
      claim,
      evaluation: evaluateClaim(claim, config),
      policy: { name: 'default', config_hash: hashCanonical(config), overrides: false },
      submitter: { kind: 'api_key', key_id: KID },
    }),
    { sequence: 6, receipt_hash: `sha256:${'b'.repeat(64)}` },
    { signer: serverKey, log: 'svc.example/ledger' },
  );
}

function v1Receipt(): Receipt {
  const claim = claimWith();
  const core = buildReceiptCore({
    receiptId: 'dr-01JH8Z6Q3V9W2X4Y5Z6A7B8C9F',
    issuedAt: '2026-01-15T10:00:00.000Z',
    claim,
    evaluation: evaluateClaim(claim, resolvePolicy(claim.policyConfig)),
  });
  return chainReceipt(signReceipt(core, serverKey), { sequence: 2, receipt_hash: null });
}

const receipt = v2Receipt();
const status = (result: VerifyResult, name: string) =>
  result.checks.find((c) => c.name === name)?.status;
const tampered = (change: (r: Mutable) => void): Mutable => {
  const copy = clone(receipt) as unknown as Mutable;
  change(copy);
  return copy;
};

describe('verifyOffline', () => {
  it('calls an intact v2 receipt valid and reports what was signed', () => {
    const result = verifyOffline(receipt, key);
    expect(result.valid).toBe(true);
    expect(status(result, 'signature_valid')).toBe('PASS');
    expect(status(result, 'hash_integrity')).toBe('SKIPPED');
    expect(status(result, 'chain_linkage')).toBe('PASS');
    expect(status(result, 'policy_binding')).toBe('SKIPPED');
    expect(result.signed).toEqual({
      contract: 'receipt-core-v2',
      submitter: { kind: 'api_key', key_id: KID },
      policy: { name: 'default', config_hash: receipt.policy.config_hash, overrides: false },
      position: {
        log: 'svc.example/ledger',
        sequence: 7,
        previous_receipt_hash: `sha256:${'b'.repeat(64)}`,
      },
    });
  });

  it('calls an intact v1 receipt valid, with chain_linkage UNVERIFIED and nothing of policy signed', () => {
    const result = verifyOffline(v1Receipt(), key);
    expect(result.valid).toBe(true);
    expect(status(result, 'chain_linkage')).toBe('UNVERIFIED');
    expect(result.signed).toMatchObject({ contract: 'receipt-core-v1', policy: null });
  });

  const SIGNED_MEMBERS: [string, (r: Mutable) => void][] = [
    ['receipt_id', (r) => (r.receipt_id = 'dr-01JH8Z6Q3V9W2X4Y5Z6A7B8C9Z')],
    ['issued_at', (r) => (r.issued_at = '2026-01-15T10:00:01.000Z')],
    ['claim_id', (r) => (r.claim_id = 'another')],
    ['admissibility', (r) => (r.admissibility.reason = 'edited')],
    ['subject', (r) => (r.subject.repository = 'acme/other')],
    ['evidence', (r) => (r.evidence.source_count = 3)],
    ['replay', (r) => (r.replay.deterministic = false)],
    ['policy', (r) => (r.policy.verdict = 'BLOCKED')],
    ['policy.name', (r) => (r.policy.name = 'strict')],
    ['policy.config_hash', (r) => (r.policy.config_hash = `sha256:${'c'.repeat(64)}`)],
    ['policy.overrides', (r) => (r.policy.overrides = true)],
    ['signed_fields', (r) => (r.signed_fields.contract = 'receipt-core-v1')],
    ['submitter', (r) => (r.submitter.key_id = 'kid_01JH8Z6Q3V9W2X4Y5Z6A7B8C9A')],
    ['position', (r) => (r.position.log = 'elsewhere/ledger')],
  ];
  it.each(SIGNED_MEMBERS)('is not valid when the signed %s is tampered with', (_name, change) => {
    const result = verifyOffline(tampered(change), key);
    expect(result.valid).toBe(false);
    expect(status(result, 'signature_valid')).toBe('FAIL');
    expect(result.signed).toBeNull();
  });

  it('is not valid when the unsigned chain disagrees with the signed position', () => {
    const result = verifyOffline(
      tampered((r) => (r.chain.sequence = 99)),
      key,
    );
    expect(status(result, 'signature_valid')).toBe('PASS');
    expect(status(result, 'chain_linkage')).toBe('FAIL');
    expect(result.valid).toBe(false);
  });

  it('is not valid under another key, and names the key that did sign', () => {
    const other = parsePublicKeyPem(newServerKey().publicKeyPem);
    const result = verifyOffline(receipt, other);
    expect(result.valid).toBe(false);
    expect(result.checks.find((c) => c.name === 'signature_valid')?.detail).toContain(other.keyId);
    expect(attestationKeyIds(receipt)).toEqual([key.keyId]);
  });

  it('is not valid when an attestation claims the key but the signature is from another', () => {
    const forged = clone(receipt) as unknown as Mutable;
    const byOther = sealReceipt(
      { ...clone(receipt), position: undefined } as never,
      { sequence: 6, receipt_hash: `sha256:${'b'.repeat(64)}` },
      { signer: newServerKey(), log: 'svc.example/ledger' },
    );
    forged.attestations[0].signature = byOther.attestations[0]!.signature;
    expect(verifyOffline(forged, key).valid).toBe(false);
  });

  it('checks stated expectations against the signed policy and submitter', () => {
    const good = verifyOffline(receipt, key, {
      policy: 'default',
      configHash: receipt.policy.config_hash!,
      submitter: KID,
    });
    expect(status(good, 'policy_binding')).toBe('PASS');
    expect(good.valid).toBe(true);
    const bad = verifyOffline(receipt, key, { policy: 'strict' });
    expect(status(bad, 'policy_binding')).toBe('FAIL');
    expect(bad.valid).toBe(false);
    const v1 = verifyOffline(v1Receipt(), key, { policy: 'default' });
    expect(status(v1, 'policy_binding')).toBe('FAIL');
  });

  it('verifies the .receipt of an evaluate response read from text', () => {
    const text = JSON.stringify({ policy: { verdict: 'ALLOWED' }, receipt });
    const input = parseReceiptInput(text);
    expect(input.fromEvaluateResponse).toBe(true);
    expect(verifyOffline(input.receipt, key).valid).toBe(true);
  });

  it('never gets to verify text with duplicate keys or unsafe integers', () => {
    const text = JSON.stringify(receipt);
    const duplicated = text.replace('"claim_id":', '"claim_id":"shadow","claim_id":');
    expect(() => parseReceiptInput(duplicated)).toThrow(/duplicate key "claim_id"/);
    const unsafe = text.replace(/"source_count":\d+/, '"source_count":9007199254740993');
    expect(() => parseReceiptInput(unsafe)).toThrow(/evidence\.source_count: integer outside/);
  });

  it('refuses each malformed key before any verification', () => {
    expect(() => publicKeyFromRaw(new Uint8Array(31))).toThrow(/wrong length/);
    expect(() => publicKeyFromRaw(new Uint8Array(32))).toThrow(/small order/);
    const offCurve = new Uint8Array(32);
    offCurve[0] = 2;
    expect(() => publicKeyFromRaw(offCurve)).toThrow(/not a point/);
    const nonCanonical = new Uint8Array(32).fill(0xff);
    nonCanonical[0] = 0xee;
    nonCanonical[31] = 0x7f;
    expect(() => publicKeyFromRaw(nonCanonical)).toThrow(/non-canonical/);
  });
});

describe('CHECK_NAMES', () => {
  it('names every check of an offline verification of a v2 receipt, in report order', () => {
    // parent_link is a disposition's and an outcome's only (contract §11, §12), outcome_valid
    // an outcome's: test/unit/core/disposition-vectors and outcome-receipt.
    expect(verifyOffline(receipt, key).checks.map((c) => c.name)).toEqual(
      CHECK_NAMES.filter((name) => name !== 'parent_link' && name !== 'outcome_valid'),
    );
  });

  it('types check names, so comparing with a name that is no check does not compile', () => {
    const [first] = verifyOffline(receipt, key).checks;
    // @ts-expect-error 'signature_ok' is no check name: tsc refuses the comparison.
    expect(first!.name === 'signature_ok').toBe(false);
    expect(first!.name === 'receipt_id_valid').toBe(true);
  });
});

describe('parseExpectations', () => {
  it('drops empty values and keeps the rest', () => {
    expect(parseExpectations({ policy: ' strict ', configHash: '', submitter: undefined })).toEqual(
      { policy: 'strict' },
    );
    expect(parseExpectations({ submitter: 'github_app:1:2' })).toEqual({
      submitter: 'github_app:1:2',
    });
  });
  it('refuses a malformed config hash or submitter', () => {
    expect(() => parseExpectations({ configHash: 'sha256:abc' })).toThrow(/config hash/);
    expect(() => parseExpectations({ submitter: 'sk_svc_secret' })).toThrow(/submitter/);
  });
});

describe('decisionOf', () => {
  const blocked = (): Receipt => {
    const claim = claimWith({ policyConfig: { minSources: 5 } });
    const config = resolvePolicy(claim.policyConfig);
    return sealReceipt(
      buildReceiptDraft({
        receiptId: 'dr-01JH8Z6Q3V9W2X4Y5Z6A7B8C9G',
        issuedAt: '2026-01-15T10:00:00.000Z',
        claim,
        evaluation: evaluateClaim(claim, config),
        policy: { name: 'default', config_hash: hashCanonical(config), overrides: true },
        submitter: { kind: 'api_key', key_id: KID },
      }),
      { sequence: 7, receipt_hash: `sha256:${'b'.repeat(64)}` },
      { signer: serverKey, log: 'svc.example/ledger' },
    );
  };
  const decide = (r: unknown) => decisionOf(r, verifyOffline(r, key));

  it('proceeds on a valid ALLOWED, ACCEPTED receipt', () => {
    expect(decide(receipt)).toEqual({
      verdict: 'ALLOWED',
      admissibility: 'ACCEPTED',
      failedRules: [],
      proceed: true,
      reason: 'the signed verdict is ALLOWED and admissibility ACCEPTED',
    });
  });

  it('does not proceed on a valid BLOCKED receipt, naming the failed rules', () => {
    const r = blocked();
    expect(verifyOffline(r, key).valid).toBe(true);
    const decision = decide(r);
    expect(decision).toMatchObject({
      verdict: 'BLOCKED',
      admissibility: 'REJECTED',
      proceed: false,
    });
    expect(decision.failedRules.map((f) => f.rule)).toEqual(['min_sources']);
    expect(decision.reason).toMatch(
      /^the signed verdict is BLOCKED and admissibility REJECTED, not ALLOWED and ACCEPTED; failed rules: min_sources \(.*minimum 5\)$/,
    );
  });

  it('reads nothing from a receipt whose signature fails, and never proceeds on it', () => {
    const forged = clone(blocked()) as Mutable;
    forged.policy.verdict = 'ALLOWED';
    forged.admissibility.status = 'ACCEPTED';
    forged.policy.checks = [];
    expect(decide(forged)).toMatchObject({
      verdict: null,
      admissibility: null,
      failedRules: [],
      proceed: false,
    });
  });

  it('does not proceed on an ALLOWED receipt made invalid by an unsigned member', () => {
    const decorated = { ...receipt, decision: { proceed: true } };
    expect(decide(decorated)).toMatchObject({
      verdict: 'ALLOWED',
      proceed: false,
      reason: 'the receipt is not valid (a check failed), so its verdict cannot be relied on',
    });
  });
});
