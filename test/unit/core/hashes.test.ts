import { describe, expect, it } from '@jest/globals';
import { HASH_PATTERN, hashCanonical, receiptHash, sha256Prefixed } from '@svc/verify';
import type { ClaimInput } from '../../../src/core/claim-schema.js';
import { evaluateClaim, replayHash } from '../../../src/core/evaluation.js';
import { resolvePolicy } from '../../../src/core/policy-config.js';
import { buildReceiptCore, chainReceipt, signReceipt } from '../../../src/core/receipt.js';
import { newServerKey } from '../../support/harness.js';
import { claimWith, source } from '../../support/claims.js';
import { referenceHash, referenceJcs, sha256Hex, utf8 } from './reference.js';

const FORMAT = /^sha256:[0-9a-f]{64}$/;

/** Rebuilds an object with its keys in reverse order at every level. */
function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, reverseKeys(v)]),
  );
}

describe('H(x) (contract §1)', () => {
  it('is "sha256:" + lowercase hex of node:crypto SHA-256 over the UTF-8 of the JCS text', () => {
    const value = { b: 'é€😀', a: [1, 0.5, null, true], c: { z: '\n', y: -0 } };
    const text = '{"a":[1,0.5,null,true],"b":"é€😀","c":{"y":0,"z":"\\n"}}';
    expect(referenceJcs(value)).toBe(text);
    expect(hashCanonical(value)).toBe(`sha256:${sha256Hex(Buffer.from(text, 'utf8'))}`);
    expect(hashCanonical(value)).toMatch(FORMAT);
  });

  it('is the known SHA-256 of the empty object text', () => {
    // SHA-256("{}"), a constant any implementation can check.
    expect(hashCanonical({})).toBe(
      'sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a',
    );
  });

  it('prefixes raw bytes the same way', () => {
    const bytes = utf8('abc');
    expect(sha256Prefixed(bytes)).toBe(`sha256:${sha256Hex(bytes)}`);
  });

  it('exports a pattern that takes exactly the format', () => {
    expect(HASH_PATTERN.test(hashCanonical([]))).toBe(true);
    for (const bad of [
      'sha256:' + 'A'.repeat(64),
      'sha256:' + 'a'.repeat(63),
      'sha256:' + 'a'.repeat(65),
      'sha512:' + 'a'.repeat(64),
      'a'.repeat(64),
      ` sha256:${'a'.repeat(64)}`,
    ]) {
      expect(HASH_PATTERN.test(bad)).toBe(false);
    }
  });
});

describe('inputs_hash = H(claim) (contract §4)', () => {
  it('equals an independent SHA-256 of the JCS of the claim as sent', () => {
    const claim = claimWith({ expected_replay_match: true });
    const evaluation = evaluateClaim(claim, resolvePolicy(claim.policyConfig));
    expect(evaluation.inputs_hash).toBe(referenceHash(claim));
  });

  it('does not depend on the key order of the input, at any depth', () => {
    const claim = claimWith({ sources: [source('ci'), source('scm', 0.6)] });
    const shuffled = reverseKeys(claim) as ClaimInput;
    expect(JSON.stringify(shuffled)).not.toBe(JSON.stringify(claim));
    const a = evaluateClaim(claim, resolvePolicy());
    const b = evaluateClaim(shuffled, resolvePolicy());
    expect(b.inputs_hash).toBe(a.inputs_hash);
    expect(b.inputs_hash).toBe(referenceHash(claim));
  });

  it('commits to the claim without defaults: an explicit default policy changes it', () => {
    const bare = claimWith();
    const explicit = claimWith({ claim_id: bare.claim_id, policyConfig: { minSources: 1 } });
    expect(evaluateClaim(explicit, resolvePolicy()).inputs_hash).not.toBe(
      evaluateClaim(bare, resolvePolicy()).inputs_hash,
    );
    expect(evaluateClaim(explicit, resolvePolicy()).inputs_hash).toBe(referenceHash(explicit));
  });

  it('changes when any part of the claim changes', () => {
    const claim = claimWith();
    const other = structuredClone(claim);
    other.sources[0]!.confidence = 0.91;
    expect(evaluateClaim(other, resolvePolicy()).inputs_hash).not.toBe(
      evaluateClaim(claim, resolvePolicy()).inputs_hash,
    );
  });
});

describe('replay_hash = H({ inputs_hash, policy, verdict, rules }) (contract §4)', () => {
  it.each([
    ['an ALLOWED claim', {}],
    ['a BLOCKED claim', { sources: [source('ci', 0.1)] }],
    ['an ESCALATED claim', { action: { action_type: 'policy_exception', target_system: 'opa' } }],
    ['a claim with a partial policy', { policyConfig: { minSourceTypes: 2 } }],
  ])('recomputes independently for %s', (_, overrides) => {
    const claim = claimWith(overrides);
    const config = resolvePolicy(claim.policyConfig);
    const evaluation = evaluateClaim(claim, config);
    const expected = referenceHash({
      inputs_hash: referenceHash(claim),
      policy: { ...config },
      verdict: evaluation.policy.verdict,
      rules: evaluation.policy.rules,
    });
    expect(evaluation.replay.replay_hash).toBe(expected);
    expect(replayHash(evaluation.inputs_hash, config, evaluation.policy)).toBe(expected);
  });

  it('commits to the policy with defaults filled in, not to the claim policyConfig', () => {
    const claim = claimWith({ policyConfig: { minSources: 1 } });
    const evaluation = evaluateClaim(claim, resolvePolicy(claim.policyConfig));
    const partial = referenceHash({
      inputs_hash: evaluation.inputs_hash,
      policy: claim.policyConfig,
      verdict: evaluation.policy.verdict,
      rules: evaluation.policy.rules,
    });
    expect(evaluation.replay.replay_hash).not.toBe(partial);
  });
});

describe('receipt_hash = H({ evidence, policy, replay, attestations }) (contract §4)', () => {
  const key = newServerKey();
  const claim = claimWith();
  const evaluation = evaluateClaim(claim, resolvePolicy());
  const signed = signReceipt(
    buildReceiptCore({
      receiptId: 'dr-01JH0000000000000000000000',
      issuedAt: '2026-01-15T10:00:00.000Z',
      claim,
      evaluation,
    }),
    key,
  );

  it('recomputes independently from those four members of the receipt', () => {
    const expected = referenceHash({
      evidence: signed.evidence,
      policy: signed.policy,
      replay: signed.replay,
      attestations: signed.attestations,
    });
    expect(receiptHash(signed)).toBe(expected);
    expect(chainReceipt(signed, { sequence: 0, receipt_hash: null }).chain.receipt_hash).toBe(
      expected,
    );
  });

  it('ignores every other member, and changes with each of the four', () => {
    const base = receiptHash(signed);
    expect(receiptHash({ ...signed, receipt_id: 'dr-01JH0000000000000000000001' } as never)).toBe(
      base,
    );
    expect(receiptHash({ ...signed, subject: {} } as never)).toBe(base);
    const changes = [
      { evidence: { ...signed.evidence, source_count: 3 } },
      { policy: { ...signed.policy, checks: [], status: 'FAIL' as const } },
      { replay: { ...signed.replay, deterministic: false } },
      { attestations: [{ ...signed.attestations[0]!, timestamp: '2026-01-15T10:00:01.000Z' }] },
    ];
    for (const change of changes) {
      expect(receiptHash({ ...signed, ...change })).not.toBe(base);
    }
  });
});
