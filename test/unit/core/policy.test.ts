import { describe, expect, it } from '@jest/globals';
import type { ClaimInput } from '../../../src/core/claim-schema.js';
import { evaluatePolicy, type PolicyOutcome } from '../../../src/core/policy.js';
import { resolvePolicy, type PolicyConfigInput } from '../../../src/core/policy-config.js';
import { baseAction, claimWith, provenance, source } from '../../support/claims.js';
import { RULE_ORDER } from '../../../src/core/rules/threshold-rules.js';

/** Evaluates under the claim's own policyConfig with defaults filled in, as the service does. */
const evaluate = (claim: ClaimInput): PolicyOutcome =>
  evaluatePolicy(claim, resolvePolicy(claim.policyConfig));

const ruleOf = (outcome: PolicyOutcome, name: string) => {
  const rule = outcome.rules.find((r) => r.rule === name);
  if (!rule) throw new Error(`rule ${name} missing`);
  return rule;
};

const failed = (outcome: PolicyOutcome) =>
  outcome.rules.filter((r) => !r.passed).map((r) => r.rule);

const withSources = (sources: unknown[], policyConfig?: PolicyConfigInput, action?: unknown) =>
  claimWith({
    sources,
    ...(policyConfig ? { policyConfig } : {}),
    ...(action ? { action } : {}),
  });

describe('evaluatePolicy: rules', () => {
  it('lists every rule, in the contract order, each with a reason', () => {
    const outcome = evaluate(claimWith());
    expect(outcome.rules.map((r) => r.rule)).toEqual(RULE_ORDER);
    for (const rule of outcome.rules) {
      expect(typeof rule.passed).toBe('boolean');
      expect(rule.reason.length).toBeGreaterThan(0);
    }
  });

  it('lists every rule even when several fail', () => {
    const outcome = evaluate(
      withSources(
        [source('ci', 0.1)],
        {
          minSources: 2,
          minSourceTypes: 2,
          requireProvenance: true,
          requireHumanApproval: true,
          maxRiskScope: 0,
        },
        { ...baseAction, risk_scope: ['x'] },
      ),
    );
    expect(outcome.rules.map((r) => r.rule)).toEqual(RULE_ORDER);
    expect(failed(outcome)).toEqual(RULE_ORDER);
  });

  it('allows the harness claim under the defaults', () => {
    const outcome = evaluate(claimWith());
    expect(failed(outcome)).toEqual([]);
    expect(outcome.verdict).toBe('ALLOWED');
    expect(outcome.reason.length).toBeGreaterThan(0);
  });

  describe('min_sources', () => {
    it('passes at exactly the minimum and fails one below', () => {
      const two = [source('ci'), source('scm')];
      expect(ruleOf(evaluate(withSources(two, { minSources: 2 })), 'min_sources').passed).toBe(
        true,
      );
      const outcome = evaluate(withSources(two, { minSources: 3 }));
      expect(ruleOf(outcome, 'min_sources').passed).toBe(false);
      expect(outcome.verdict).toBe('BLOCKED');
    });
  });

  describe('min_source_types', () => {
    it('counts distinct types, not sources', () => {
      const sameType = [source('ci'), source('ci'), source('ci')];
      const outcome = evaluate(withSources(sameType, { minSourceTypes: 2 }));
      expect(ruleOf(outcome, 'min_source_types').passed).toBe(false);
      expect(outcome.verdict).toBe('BLOCKED');
      const mixed = [source('ci'), source('ci'), source('scm')];
      expect(
        ruleOf(evaluate(withSources(mixed, { minSourceTypes: 2 })), 'min_source_types').passed,
      ).toBe(true);
    });
  });

  describe('min_confidence (average)', () => {
    it.each([
      ['an average exactly at the minimum, summed in floating point', [0.7, 0.1, 0.1], 0.3, true],
      ['a single source at the minimum', [0.5], 0.5, true],
      ['the average, not the lowest', [0.2, 0.9], 0.5, true],
      ['the average, not the highest', [0.2, 0.7], 0.5, false],
      ['just below the minimum', [0.299], 0.3, false],
      ['a millionth below the minimum', [0.299999], 0.3, false],
      ['zero confidence with a zero minimum', [0], 0, true],
      ['full confidence with a minimum of 1', [1, 1], 1, true],
    ])('%s: %j against %d', (_, confidences, minConfidence, passes) => {
      const sources = confidences.map((c) => source('ci', c));
      const outcome = evaluate(withSources(sources, { minConfidence }));
      expect(ruleOf(outcome, 'min_confidence').passed).toBe(passes);
      expect(outcome.verdict).toBe(passes ? 'ALLOWED' : 'BLOCKED');
    });
  });

  describe('require_provenance', () => {
    it('passes when off, saying so, even without any provenance', () => {
      const rule = ruleOf(evaluate(withSources([source('ci')])), 'require_provenance');
      expect(rule.passed).toBe(true);
      expect(rule.reason).toMatch(/not required/);
    });

    it('fails when on and one source lacks provenance', () => {
      const outcome = evaluate(
        withSources([source('ci', 0.9, { provenance }), source('scm')], {
          requireProvenance: true,
        }),
      );
      expect(ruleOf(outcome, 'require_provenance').passed).toBe(false);
      expect(outcome.verdict).toBe('BLOCKED');
    });

    it('passes when on and every source carries provenance', () => {
      const outcome = evaluate(
        withSources([source('ci', 0.9, { provenance }), source('scm', 0.9, { provenance })], {
          requireProvenance: true,
        }),
      );
      expect(ruleOf(outcome, 'require_provenance').passed).toBe(true);
      expect(outcome.verdict).toBe('ALLOWED');
    });
  });

  describe('require_human_approval', () => {
    it('passes when off, saying so', () => {
      const rule = ruleOf(evaluate(claimWith()), 'require_human_approval');
      expect(rule.passed).toBe(true);
      expect(rule.reason).toMatch(/not required/);
    });

    it('fails when on without a human_approval source, and calls for review', () => {
      const outcome = evaluate(
        withSources([source('ci'), source('scm')], { requireHumanApproval: true }),
      );
      expect(failed(outcome)).toEqual(['require_human_approval']);
      expect(outcome.verdict).toBe('ESCALATED');
    });

    it('passes when on with a human_approval source', () => {
      const outcome = evaluate(
        withSources([source('ci'), source('human_approval')], { requireHumanApproval: true }),
      );
      expect(ruleOf(outcome, 'require_human_approval').passed).toBe(true);
      expect(outcome.verdict).toBe('ALLOWED');
    });
  });

  describe('max_risk_scope', () => {
    const scope = (n: number) => Array.from({ length: n }, (_, i) => `area-${i}`);

    it('passes at the maximum', () => {
      const outcome = evaluate(
        withSources([source('ci')], undefined, { ...baseAction, risk_scope: scope(5) }),
      );
      expect(ruleOf(outcome, 'max_risk_scope').passed).toBe(true);
      expect(outcome.verdict).toBe('ALLOWED');
    });

    it('fails over the maximum and calls for review, not a block', () => {
      const outcome = evaluate(
        withSources([source('ci')], undefined, { ...baseAction, risk_scope: scope(6) }),
      );
      expect(failed(outcome)).toEqual(['max_risk_scope']);
      expect(outcome.verdict).toBe('ESCALATED');
    });

    it('uses the configured maximum', () => {
      const action = { ...baseAction, risk_scope: scope(1) };
      expect(evaluate(withSources([source('ci')], { maxRiskScope: 0 }, action)).verdict).toBe(
        'ESCALATED',
      );
      expect(evaluate(withSources([source('ci')], { maxRiskScope: 1 }, action)).verdict).toBe(
        'ALLOWED',
      );
    });

    it('passes without an action or risk scope', () => {
      const claim = claimWith({ action: undefined });
      expect(
        ruleOf(evaluatePolicy(claim, resolvePolicy({ maxRiskScope: 0 })), 'max_risk_scope'),
      ).toMatchObject({ passed: true });
    });
  });
});

describe('evaluatePolicy: defaults of contract §5 when policyConfig is omitted', () => {
  it('needs one source (minSources 1): a claim whose only source is inadmissible is blocked', () => {
    const outcome = evaluate(
      withSources([source('ci', 0.9, { admissibility: { state: 'INADMISSIBLE' } })]),
    );
    expect(ruleOf(outcome, 'min_sources').passed).toBe(false);
  });

  it('needs an average confidence of 0.5', () => {
    expect(ruleOf(evaluate(withSources([source('ci', 0.5)])), 'min_confidence').passed).toBe(true);
    expect(ruleOf(evaluate(withSources([source('ci', 0.49)])), 'min_confidence').passed).toBe(
      false,
    );
  });

  it('allows a risk scope of 5 and escalates 6', () => {
    const scope = (n: number) => Array.from({ length: n }, (_, i) => `r${i}`);
    const at = (n: number) =>
      evaluate(withSources([source('ci')], undefined, { ...baseAction, risk_scope: scope(n) }));
    expect(at(5).verdict).toBe('ALLOWED');
    expect(at(6).verdict).toBe('ESCALATED');
  });

  it('does not require provenance or human approval, and one source type is enough', () => {
    const outcome = evaluate(withSources([source('manual', 0.6)]));
    expect(outcome.verdict).toBe('ALLOWED');
  });

  it('applies the defaults to the members a partial policyConfig leaves out', () => {
    const outcome = evaluate(
      withSources([source('ci', 0.4), source('ci', 0.4)], { minSources: 2 }),
    );
    expect(ruleOf(outcome, 'min_sources').passed).toBe(true);
    expect(ruleOf(outcome, 'min_confidence').passed).toBe(false);
    expect(ruleOf(outcome, 'min_confidence').reason).toMatch(/0\.5/);
  });
});

describe('evaluatePolicy: ESCALATED triggers (contract §5)', () => {
  const deploy = (environment?: string) => ({
    action_type: 'deployment',
    target_system: 'k8s',
    ...(environment === undefined ? {} : { environment }),
  });

  it.each([
    ['access_change', { action_type: 'access_change', target_system: 'iam' }],
    ['policy_exception', { action_type: 'policy_exception', target_system: 'opa' }],
    ['a deployment to production', deploy('production')],
    ['a deployment to prod', deploy('prod')],
    ['a deployment to "Production"', deploy('Production')],
    ['a deployment to "PROD"', deploy('PROD')],
  ])('escalates %s without a human_approval source, all rules passing', (_, action) => {
    const outcome = evaluate(withSources([source('ci'), source('scm')], undefined, action));
    expect(failed(outcome)).toEqual([]);
    expect(outcome.verdict).toBe('ESCALATED');
  });

  it.each([
    ['access_change', { action_type: 'access_change', target_system: 'iam' }],
    ['policy_exception', { action_type: 'policy_exception', target_system: 'opa' }],
    ['a deployment to production', deploy('production')],
    ['a deployment to "Production"', deploy('Production')],
  ])('allows %s with a human_approval source', (_, action) => {
    const outcome = evaluate(
      withSources([source('ci'), source('human_approval')], undefined, action),
    );
    expect(outcome.verdict).toBe('ALLOWED');
  });

  it('does not count an inadmissible human_approval source as approval', () => {
    const outcome = evaluate(
      withSources(
        [source('ci'), source('human_approval', 0.9, { admissibility: { state: 'INADMISSIBLE' } })],
        undefined,
        { action_type: 'access_change', target_system: 'iam' },
      ),
    );
    expect(outcome.verdict).toBe('ESCALATED');
  });

  it.each([
    ['staging', deploy('staging')],
    ['no environment', deploy()],
    ['"production-like"', deploy('production-like')],
  ])('allows a deployment to %s', (_, action) => {
    expect(evaluate(withSources([source('ci')], undefined, action)).verdict).toBe('ALLOWED');
  });

  it.each(['code_change', 'infra_change', 'merge', 'agent_execution'])(
    'allows %s to production without approval (only deployments are production-gated)',
    (actionType) => {
      const action = { action_type: actionType, target_system: 't', environment: 'production' };
      expect(evaluate(withSources([source('ci')], undefined, action)).verdict).toBe('ALLOWED');
    },
  );

  it('still escalates an oversized risk scope when a human approved', () => {
    const action = {
      action_type: 'access_change',
      target_system: 'iam',
      risk_scope: ['a', 'b', 'c'],
    };
    const outcome = evaluate(
      withSources([source('ci'), source('human_approval')], { maxRiskScope: 2 }, action),
    );
    expect(failed(outcome)).toEqual(['max_risk_scope']);
    expect(outcome.verdict).toBe('ESCALATED');
  });
});

describe('evaluatePolicy: BLOCKED wins over review', () => {
  it('blocks when a hard rule fails together with require_human_approval', () => {
    const outcome = evaluate(
      withSources([source('ci')], { minSources: 2, requireHumanApproval: true }),
    );
    expect(failed(outcome)).toEqual(['min_sources', 'require_human_approval']);
    expect(outcome.verdict).toBe('BLOCKED');
  });

  it('blocks when a hard rule fails together with max_risk_scope', () => {
    const outcome = evaluate(
      withSources(
        [source('ci', 0.1)],
        { maxRiskScope: 1 },
        { ...baseAction, risk_scope: ['a', 'b'] },
      ),
    );
    expect(failed(outcome)).toEqual(['min_confidence', 'max_risk_scope']);
    expect(outcome.verdict).toBe('BLOCKED');
  });

  it('blocks a sensitive action whose evidence fails a hard rule', () => {
    const outcome = evaluate(
      withSources([source('ci', 0.1)], undefined, {
        action_type: 'access_change',
        target_system: 'iam',
      }),
    );
    expect(outcome.verdict).toBe('BLOCKED');
  });
});

describe('evaluatePolicy: source admissibility override', () => {
  const inadmissible = { admissibility: { state: 'INADMISSIBLE' as const } };

  it('does not count inadmissible sources towards min_sources', () => {
    const outcome = evaluate(
      withSources([source('ci'), source('scm', 0.9, inadmissible)], { minSources: 2 }),
    );
    expect(ruleOf(outcome, 'min_sources').passed).toBe(false);
    expect(outcome.verdict).toBe('BLOCKED');
  });

  it('counts sources marked ADMISSIBLE like unmarked ones', () => {
    const outcome = evaluate(
      withSources([source('ci'), source('scm', 0.9, { admissibility: { state: 'ADMISSIBLE' } })], {
        minSources: 2,
      }),
    );
    expect(ruleOf(outcome, 'min_sources').passed).toBe(true);
  });

  it('does not count the type of an inadmissible source', () => {
    const outcome = evaluate(
      withSources([source('ci'), source('scm', 0.9, inadmissible)], { minSourceTypes: 2 }),
    );
    expect(ruleOf(outcome, 'min_source_types').passed).toBe(false);
  });

  it('leaves inadmissible sources out of the average confidence', () => {
    const outcome = evaluate(withSources([source('ci', 0.8), source('scm', 0, inadmissible)]));
    expect(ruleOf(outcome, 'min_confidence').passed).toBe(true);
  });

  it('does not ask an inadmissible source for provenance', () => {
    const outcome = evaluate(
      withSources([source('ci', 0.9, { provenance }), source('scm', 0.9, inadmissible)], {
        requireProvenance: true,
      }),
    );
    expect(ruleOf(outcome, 'require_provenance').passed).toBe(true);
  });

  it('fails min_sources when a required source is inadmissible, however many others there are', () => {
    const outcome = evaluate(
      withSources([
        source('ci'),
        source('scm'),
        source('code_review'),
        source('test_result', 0.9, {
          id: 'tests',
          admissibility: { state: 'INADMISSIBLE', required: true, reason: 'stale run' },
        }),
      ]),
    );
    const rule = ruleOf(outcome, 'min_sources');
    expect(rule.passed).toBe(false);
    expect(rule.reason).toContain('"tests"');
    expect(outcome.verdict).toBe('BLOCKED');
  });

  it('accepts a required source that is admissible', () => {
    const outcome = evaluate(
      withSources([source('ci', 0.9, { admissibility: { state: 'ADMISSIBLE', required: true } })]),
    );
    expect(outcome.verdict).toBe('ALLOWED');
  });

  it('is pure: the same claim and config give deep-equal outcomes and the claim is not changed', () => {
    const claim = withSources([source('ci'), source('scm', 0.9, inadmissible)]);
    const before = structuredClone(claim);
    const config = resolvePolicy({ minSources: 2 });
    expect(evaluatePolicy(claim, config)).toEqual(evaluatePolicy(claim, config));
    expect(claim).toEqual(before);
  });
});
