import { describe, expect, it } from '@jest/globals';
import { evaluatePolicy } from '../../../src/core/policy.js';
import { resolvePolicy } from '../../../src/core/policy-config.js';
import { escalationCausesOf } from '../../../src/core/policy-reason.js';
import { claimWith, source } from '../../support/claims.js';

// The causes of an escalation that are no rule, read back from the reason the evaluation
// wrote: what the explorer shows as a rule row of its own.

const outcomeOf = (action: unknown, policyConfig?: object) => {
  const claim = claimWith({
    sources: [source('ci'), source('scm')],
    action,
    ...(policyConfig ? { policyConfig } : {}),
  });
  return evaluatePolicy(claim, resolvePolicy(claim.policyConfig));
};

describe('escalationCausesOf', () => {
  it('names the sensitive action of an escalation whose rules all passed', () => {
    const outcome = outcomeOf({ action_type: 'access_change', target_system: 'iam' });
    expect(outcome.verdict).toBe('ESCALATED');
    expect(outcome.rules.every((r) => r.passed)).toBe(true);
    expect(escalationCausesOf(outcome.reason, outcome.rules)).toEqual([
      'access_change requires a human_approval source',
    ]);
  });

  it('leaves out the failed rules the reason names first, keeping the action', () => {
    const outcome = outcomeOf(
      {
        action_type: 'deployment',
        target_system: 'k8s',
        environment: 'production',
        risk_scope: ['a', 'b', 'c'],
      },
      { maxRiskScope: 1 },
    );
    expect(outcome.verdict).toBe('ESCALATED');
    expect(outcome.rules.filter((r) => !r.passed).map((r) => r.rule)).toEqual(['max_risk_scope']);
    expect(escalationCausesOf(outcome.reason, outcome.rules)).toEqual([
      'a production deployment requires a human_approval source',
    ]);
  });

  it('is empty when a failed rule is the only cause, and for other verdicts', () => {
    const ruleOnly = outcomeOf(
      { action_type: 'merge', target_system: 'github', risk_scope: ['a', 'b'] },
      { maxRiskScope: 1 },
    );
    expect(ruleOnly.verdict).toBe('ESCALATED');
    expect(escalationCausesOf(ruleOnly.reason, ruleOnly.rules)).toEqual([]);
    const allowed = outcomeOf({ action_type: 'merge', target_system: 'github' });
    expect(allowed.verdict).toBe('ALLOWED');
    expect(escalationCausesOf(allowed.reason, allowed.rules)).toEqual([]);
  });
});
