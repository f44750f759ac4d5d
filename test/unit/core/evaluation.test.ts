import { describe, expect, it } from '@jest/globals';
import type { ClaimInput } from '../../../src/core/claim-schema.js';
import { evaluateClaim, type Evaluation } from '../../../src/core/evaluation.js';
import { resolvePolicy, type PolicyConfigInput } from '../../../src/core/policy-config.js';
import { claimWith, source } from '../../support/claims.js';

const evaluate = (claim: ClaimInput): Evaluation =>
  evaluateClaim(claim, resolvePolicy(claim.policyConfig));

// One claim per verdict, each checked for its verdict before it is used.
const allowed = (extra: Record<string, unknown> = {}) => claimWith(extra);
const blocked = (extra: Record<string, unknown> = {}) =>
  claimWith({ sources: [source('ci', 0.1)], ...extra });
const escalated = (extra: Record<string, unknown> = {}) =>
  claimWith({ action: { action_type: 'access_change', target_system: 'iam' }, ...extra });

const withPolicy = (policyConfig: PolicyConfigInput) => ({ policyConfig });

describe('evaluateClaim: admissibility (contract §5)', () => {
  it.each([
    ['ALLOWED', allowed, 'ACCEPTED'],
    ['BLOCKED', blocked, 'REJECTED'],
    ['ESCALATED', escalated, 'REJECTED'],
  ] as const)('maps %s to %s when replay passes', (verdict, make, status) => {
    const evaluation = evaluate(make());
    expect(evaluation.policy.verdict).toBe(verdict);
    expect(evaluation.replay.passed).toBe(true);
    expect(evaluation.admissibility.status).toBe(status);
    expect(evaluation.admissibility.reason.length).toBeGreaterThan(0);
  });

  it.each([
    ['ALLOWED', allowed],
    ['BLOCKED', blocked],
    ['ESCALATED', escalated],
  ] as const)(
    'is NON_DETERMINISTIC for a %s verdict when replay does not pass and requireReplay is on',
    (verdict, make) => {
      const evaluation = evaluate(make({ expected_replay_match: false }));
      expect(evaluation.policy.verdict).toBe(verdict);
      expect(evaluation.replay.passed).toBe(false);
      expect(evaluation.config.requireReplay).toBe(true);
      expect(evaluation.admissibility.status).toBe('NON_DETERMINISTIC');
    },
  );

  it('treats requireReplay as on by default (contract §5)', () => {
    const claim = allowed({ expected_replay_match: false });
    expect(claim.policyConfig).toBeUndefined();
    expect(evaluate(claim).admissibility.status).toBe('NON_DETERMINISTIC');
  });

  it.each([
    ['ALLOWED', allowed, 'ACCEPTED'],
    ['BLOCKED', blocked, 'REJECTED'],
    ['ESCALATED', escalated, 'REJECTED'],
  ] as const)(
    'ignores a failed replay for a %s verdict when requireReplay is off (%s)',
    (verdict, make, status) => {
      const evaluation = evaluate(
        make({ expected_replay_match: false, ...withPolicy({ requireReplay: false }) }),
      );
      expect(evaluation.policy.verdict).toBe(verdict);
      expect(evaluation.replay.passed).toBe(false);
      expect(evaluation.admissibility.status).toBe(status);
    },
  );
});

describe('evaluateClaim: replay', () => {
  it.each([
    ['absent', undefined, true],
    ['true', true, true],
    ['false', false, false],
  ])(
    'with expected_replay_match %s, a deterministic replay gives passed = %s',
    (_, expected, passed) => {
      const claim = allowed(expected === undefined ? {} : { expected_replay_match: expected });
      const { replay } = evaluate(claim);
      expect(replay.deterministic).toBe(true);
      expect(replay.passed).toBe(passed);
    },
  );

  it('gives the same evaluation every time for the same claim', () => {
    const claim = escalated({ sources: [source('ci'), source('scm', 0.7)] });
    expect(evaluate(claim)).toEqual(evaluate(claim));
    expect(evaluate(structuredClone(claim))).toEqual(evaluate(claim));
  });

  it('gives the same replay_hash whatever the key order of the claim', () => {
    const claim = allowed();
    const reversed = Object.fromEntries(Object.entries(claim).reverse()) as ClaimInput;
    expect(Object.keys(reversed)).not.toEqual(Object.keys(claim));
    expect(evaluate(reversed).replay.replay_hash).toBe(evaluate(claim).replay.replay_hash);
  });

  it('changes replay_hash when the effective policy changes, even with the same verdict', () => {
    const claim = allowed();
    const a = evaluateClaim(claim, resolvePolicy());
    const b = evaluateClaim(claim, resolvePolicy({ requireReplay: false }));
    expect(a.policy.verdict).toBe(b.policy.verdict);
    expect(a.replay.replay_hash).not.toBe(b.replay.replay_hash);
  });

  it('keeps the effective config with every default filled in', () => {
    const evaluation = evaluate(allowed(withPolicy({ minSources: 2 })));
    expect(evaluation.config).toEqual(resolvePolicy({ minSources: 2 }));
  });

  it('does not change the claim it evaluates', () => {
    const claim = escalated({ expected_replay_match: true });
    const before = structuredClone(claim);
    evaluate(claim);
    expect(claim).toEqual(before);
  });
});
