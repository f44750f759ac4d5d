import { describe, expect, it } from '@jest/globals';
import { createPublicKey } from 'node:crypto';
// Imported before @noble/ed25519 is used: it installs the SHA-512 that noble's sync API needs.
import '@svc/verify';
import * as ed from '@noble/ed25519';
import { fromBase64, RECEIPT_ID_PATTERN, verifyReceipt } from '@svc/verify';
import type { ClaimInput } from '../../../src/core/claim-schema.js';
import { evaluateClaim } from '../../../src/core/evaluation.js';
import { resolvePolicy } from '../../../src/core/policy-config.js';
import {
  buildReceiptCore,
  buildSubject,
  chainReceipt,
  type Receipt,
  signReceipt,
} from '../../../src/core/receipt.js';
import { newServerKey } from '../../support/harness.js';
import { claimWith, source } from '../../support/claims.js';
import {
  clone,
  PINNED_V1_FIELDS as CONTRACT_FIELDS,
  referenceHash,
  referenceJcs,
  sha256Hex,
  utf8,
} from './reference.js';

const RECEIPT_ID = 'dr-01JH8Z6Q3V9W2X4Y5Z6A7B8C9D';
const ISSUED_AT = '2026-01-15T10:00:00.000Z';

const key = newServerKey();

function issue(claim: ClaimInput, sequence = 0, previous: string | null = null): Receipt {
  const evaluation = evaluateClaim(claim, resolvePolicy(claim.policyConfig));
  const core = buildReceiptCore({ receiptId: RECEIPT_ID, issuedAt: ISSUED_AT, claim, evaluation });
  return chainReceipt(signReceipt(core, key), { sequence, receipt_hash: previous });
}

/** The signed core picked by the contract's list, not by the code under test. */
const coreOf = (receipt: Record<string, unknown>) =>
  Object.fromEntries(CONTRACT_FIELDS.map((f) => [f, receipt[f]]));

const signatureOf = (receipt: Receipt) => fromBase64(receipt.attestations[0]!.signature)!;

const signatureStatus = (receipt: unknown) =>
  verifyReceipt(receipt, { publicKey: key.publicKeyRaw, keyId: key.keyId }).checks.find(
    (c) => c.name === 'signature_valid',
  )!.status;

describe('buildSubject (contract §2)', () => {
  it('takes entity and the action context, under their own names', () => {
    const claim = claimWith({
      action: {
        action_type: 'deployment',
        target_system: 'k8s',
        repository: 'acme/web',
        pull_request: 42,
        commit: 'a1b2c3d',
        branch: 'main',
        environment: 'staging',
        agent: 'coder-bot',
        agent_model: 'model-x',
        human_operator: 'alice',
        risk_scope: ['db'],
      },
    });
    expect(buildSubject(claim)).toEqual({
      entity: 'acme/web',
      agent: 'coder-bot',
      repository: 'acme/web',
      pull_request: 42,
      action_type: 'deployment',
      target_system: 'k8s',
      commit: 'a1b2c3d',
      branch: 'main',
      environment: 'staging',
    });
  });

  it('omits members the claim does not supply, rather than writing null or undefined', () => {
    const subject = buildSubject(claimWith({ action: undefined }));
    expect(subject).toEqual({ entity: 'acme/web' });
    expect(Object.keys(subject)).toEqual(['entity']);
    const minimal = buildSubject(
      claimWith({ action: { action_type: 'merge', target_system: 'github' } }),
    );
    expect(Object.keys(minimal).sort()).toEqual(['action_type', 'entity', 'target_system']);
    expect(Object.values(minimal)).not.toContain(undefined);
  });

  it.each([
    ['"42"', '42', 42],
    ['42', 42, 42],
    ['0', 0, 0],
    ['"0"', '0', 0],
    ['"abc"', 'abc', 'abc'],
    ['"42a"', '42a', '42a'],
    ['"-1"', '-1', '-1'],
    ['"4.2"', '4.2', '4.2'],
    ['" 42"', ' 42', ' 42'],
    ['"#42"', '#42', '#42'],
    ['"1234567890123456" (16 digits, still exact)', '1234567890123456', 1234567890123456],
    ['"9007199254740991" (2^53 - 1)', '9007199254740991', 9007199254740991],
    ['"9007199254740993" (beyond 2^53, so not a number)', '9007199254740993', '9007199254740993'],
  ])('writes pull_request %s as %j', (_, given, expected) => {
    const claim = claimWith({
      action: { action_type: 'merge', target_system: 'github', pull_request: given },
    });
    expect(buildSubject(claim).pull_request).toStrictEqual(expected);
  });
});

describe('buildReceiptCore (contract §2)', () => {
  it('copies identifiers and the evaluation outcome', () => {
    const claim = claimWith();
    const receipt = issue(claim);
    const evaluation = evaluateClaim(claim, resolvePolicy());
    expect(receipt.receipt_id).toBe(RECEIPT_ID);
    expect(receipt.receipt_id).toMatch(RECEIPT_ID_PATTERN);
    expect(receipt.issued_at).toBe(ISSUED_AT);
    expect(receipt.claim_id).toBe(claim.claim_id);
    expect(receipt.admissibility).toEqual(evaluation.admissibility);
    expect(receipt.evidence.inputs_hash).toBe(referenceHash(claim));
    expect(receipt.replay).toEqual({
      deterministic: true,
      replay_hash: evaluation.replay.replay_hash,
    });
  });

  it('counts every source and lists the distinct types sorted', () => {
    const receipt = issue(
      claimWith({
        sources: [
          source('scm'),
          source('ci'),
          source('scm'),
          source('agent_trace', 0.9, { admissibility: { state: 'INADMISSIBLE' } }),
          source('ci'),
        ],
      }),
    );
    expect(receipt.evidence.source_count).toBe(5);
    expect(receipt.evidence.source_types).toEqual(['agent_trace', 'ci', 'scm']);
  });

  it.each([
    ['ALLOWED', {}, 'PASS'],
    ['BLOCKED', { sources: [source('ci', 0.2)] }, 'FAIL'],
    ['ESCALATED', { action: { action_type: 'access_change', target_system: 'iam' } }, 'ESCALATE'],
  ] as const)('maps verdict %s to policy.status %s', (verdict, overrides, status) => {
    const receipt = issue(claimWith(overrides));
    expect(receipt.policy.verdict).toBe(verdict);
    expect(receipt.policy.status).toBe(status);
  });

  it('lists only the failed rules in policy.checks, with their reasons', () => {
    const claim = claimWith({
      sources: [source('ci', 0.2)],
      policyConfig: { minSources: 2, requireProvenance: true },
    });
    const evaluation = evaluateClaim(claim, resolvePolicy(claim.policyConfig));
    const receipt = issue(claim);
    expect(receipt.policy.checks.map((c) => c.rule)).toEqual([
      'min_sources',
      'min_confidence',
      'require_provenance',
    ]);
    expect(receipt.policy.checks.every((c) => c.passed === false && c.reason.length > 0)).toBe(
      true,
    );
    expect(receipt.policy.checks).toEqual(evaluation.policy.rules.filter((r) => !r.passed));
  });

  it('has empty policy.checks when every rule passed', () => {
    expect(issue(claimWith()).policy.checks).toEqual([]);
  });

  it('declares exactly the contract signed fields, and carries no other top-level member', () => {
    const receipt = issue(claimWith());
    expect(receipt.signed_fields).toEqual({ contract: 'receipt-core-v1', fields: CONTRACT_FIELDS });
    expect(Object.keys(receipt).sort()).toEqual(
      [...CONTRACT_FIELDS, 'attestations', 'chain'].sort(),
    );
  });
});

describe('signReceipt and chainReceipt', () => {
  const receipt = issue(claimWith());

  it('attests with the server key: signer, algorithm, SPKI key_id, base64 of 64 bytes', () => {
    expect(receipt.attestations).toHaveLength(1);
    const attestation = receipt.attestations[0]!;
    const spki = createPublicKey({
      key: key.publicKeyPem,
      format: 'pem',
    }).export({ format: 'der', type: 'spki' });
    expect(attestation).toMatchObject({
      signer: 'svc-server',
      algorithm: 'Ed25519',
      key_id: `sha256:${sha256Hex(spki)}`,
      timestamp: ISSUED_AT,
    });
    expect(attestation.signature).toBe(Buffer.from(signatureOf(receipt)).toString('base64'));
    expect(signatureOf(receipt)).toHaveLength(64);
  });

  it('signs UTF-8(JCS(core)), which @noble/ed25519 verifies strictly', () => {
    const message = utf8(referenceJcs(coreOf(receipt)));
    expect(ed.verify(signatureOf(receipt), message, key.publicKeyRaw, { zip215: false })).toBe(
      true,
    );
  });

  it('verifies asynchronously too, without the installed hash', async () => {
    const message = utf8(referenceJcs(coreOf(receipt)));
    await expect(
      ed.verifyAsync(signatureOf(receipt), message, key.publicKeyRaw, { zip215: false }),
    ).resolves.toBe(true);
  });

  it('is not a signature over the whole receipt or over chain coordinates', () => {
    const whole = utf8(referenceJcs(receipt));
    expect(ed.verify(signatureOf(receipt), whole, key.publicKeyRaw, { zip215: false })).toBe(false);
  });

  it('passes signature_valid in verifyReceipt', () => {
    expect(signatureStatus(receipt)).toBe('PASS');
  });

  it('places the first receipt at sequence 1 with no predecessor', () => {
    expect(receipt.chain).toEqual({
      sequence: 1,
      previous_receipt_hash: null,
      receipt_hash: referenceHash({
        evidence: receipt.evidence,
        policy: receipt.policy,
        replay: receipt.replay,
        attestations: receipt.attestations,
      }),
    });
  });

  it('links a later receipt to the head it is chained after', () => {
    const next = issue(claimWith(), 1, receipt.chain.receipt_hash);
    expect(next.chain.sequence).toBe(2);
    expect(next.chain.previous_receipt_hash).toBe(receipt.chain.receipt_hash);
  });
});

describe('tampering with a signed receipt', () => {
  const receipt = issue(
    claimWith({ sources: [source('ci', 0.2), source('scm')], policyConfig: { minSources: 3 } }),
  );
  type Mutable = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

  const signedChanges: [string, (r: Mutable) => void][] = [
    ['receipt_id', (r) => (r.receipt_id = 'dr-01JH8Z6Q3V9W2X4Y5Z6A7B8C9E')],
    ['issued_at', (r) => (r.issued_at = '2026-01-15T10:00:00.001Z')],
    ['claim_id', (r) => (r.claim_id = `${r.claim_id}x`)],
    ['admissibility.status', (r) => (r.admissibility.status = 'ACCEPTED')],
    ['admissibility.reason', (r) => (r.admissibility.reason += '.')],
    ['subject.repository', (r) => (r.subject.repository = 'acme/api')],
    ['subject.pull_request', (r) => (r.subject.pull_request = '42')],
    ['subject, a member added', (r) => (r.subject.environment = 'prod')],
    ['evidence.inputs_hash', (r) => (r.evidence.inputs_hash = `sha256:${'0'.repeat(64)}`)],
    ['evidence.source_types', (r) => r.evidence.source_types.reverse()],
    ['replay.deterministic', (r) => (r.replay.deterministic = false)],
    ['replay.replay_hash', (r) => (r.replay.replay_hash = `sha256:${'f'.repeat(64)}`)],
    ['policy.verdict', (r) => (r.policy.verdict = 'ALLOWED')],
    ['policy.status', (r) => (r.policy.status = 'PASS')],
    ['policy.checks, one removed', (r) => r.policy.checks.pop()],
    ['policy.checks[0].reason', (r) => (r.policy.checks[0].reason = 'fine')],
    ['signed_fields, a member added', (r) => (r.signed_fields.note = 'x')],
    ['signed_fields.fields, reordered', (r) => r.signed_fields.fields.reverse()],
    ['signed_fields.contract', (r) => (r.signed_fields.contract = 'receipt-core-v2')],
  ];

  it('covers every signed member', () => {
    const touched = new Set(signedChanges.map(([name]) => name.split(/[.,[]/)[0]));
    expect([...touched].sort()).toEqual([...CONTRACT_FIELDS].sort());
  });

  it.each(signedChanges)('fails signature_valid after a change to %s', (_, change) => {
    const tampered = clone(receipt) as unknown as Mutable;
    change(tampered);
    expect(tampered).not.toEqual(receipt);
    expect(signatureStatus(tampered)).toBe('FAIL');
    // And independently: the original signature does not cover the changed core.
    const message = utf8(referenceJcs(coreOf(tampered)));
    expect(ed.verify(signatureOf(receipt), message, key.publicKeyRaw, { zip215: false })).toBe(
      false,
    );
  });

  it.each([
    ['chain.sequence', (r: Mutable) => (r.chain.sequence = 7)],
    [
      'chain.previous_receipt_hash',
      (r: Mutable) => (r.chain.previous_receipt_hash = `sha256:${'1'.repeat(64)}`),
    ],
    ['chain.receipt_hash', (r: Mutable) => (r.chain.receipt_hash = `sha256:${'2'.repeat(64)}`)],
    ['attestations[0].timestamp', (r: Mutable) => (r.attestations[0].timestamp = ISSUED_AT + 'x')],
    ['attestations[0].signer', (r: Mutable) => (r.attestations[0].signer = 'someone')],
  ])('keeps signature_valid PASS after a change to the unsigned %s', (_, change) => {
    const tampered = clone(receipt) as unknown as Mutable;
    change(tampered);
    expect(signatureStatus(tampered)).toBe('PASS');
  });
});
