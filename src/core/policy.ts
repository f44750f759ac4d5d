import { applyApproval } from './approval.js';
import type { ClaimInput } from './claim-schema.js';
import type { PolicyConfig } from './policy-config.js';
import { CAUSE_SEPARATOR, describeRuleFailure, REVIEW_PREFIX } from './policy-reason.js';
import { evaluateConditionalRule, GLOB_STEP_BUDGET } from './rules/conditional.js';
import { GlobBudget } from './rules/glob.js';
import {
  isAdmissible,
  RULE_ORDER,
  THRESHOLD_RULES,
  type OnFail,
  type RuleContext,
} from './rules/threshold-rules.js';
import type { PolicyOutcome, RuleResult } from './policy-outcome.js';

export { RULE_ORDER };

export type { PolicyOutcome, RuleName, RuleResult, Verdict } from './policy-outcome.js';

const PRODUCTION_ENVIRONMENTS = new Set(['production', 'prod']);

/**
 * Pure: the same claim and config always give the same outcome (the replay check relies on it).
 * A tool call that cites an approval (contract §12) has it applied last.
 */
export const evaluatePolicy = (claim: ClaimInput, config: PolicyConfig): PolicyOutcome =>
  applyApproval(claim, evaluateRules(claim, config));

function evaluateRules(claim: ClaimInput, config: PolicyConfig): PolicyOutcome {
  const admissible = claim.sources.filter(isAdmissible);
  const context: RuleContext = {
    sources: claim.sources,
    admissible,
    excluded: claim.sources.length - admissible.length,
    types: new Set(admissible.map((s) => s.type)),
    // The spec compares "its size": the array's length, repeats included, so that any
    // third-party replay of the rule counts the same way.
    riskScopeSize: claim.action?.risk_scope?.length ?? 0,
  };
  const budget = new GlobBudget(GLOB_STEP_BUDGET);
  const evaluated: { result: RuleResult; onFail: OnFail }[] = [
    ...THRESHOLD_RULES.map((rule) => ({
      result: { rule: rule.name, ...rule.evaluate(context, config[rule.field]) },
      onFail: rule.onFail,
    })),
    ...(config.rules ?? []).map((rule) => ({
      result: {
        rule: `rule:${rule.name}` as const,
        ...evaluateConditionalRule(rule, claim, context, budget),
      },
      onFail: rule.on_fail,
    })),
  ];
  const rules = evaluated.map((e) => e.result);

  const failed = evaluated.filter((e) => !e.result.passed);
  const hard = failed.filter((e) => e.onFail === 'block').map((e) => e.result);
  if (hard.length > 0) {
    return { verdict: 'BLOCKED', reason: `Blocked: ${describe(hard)}`, rules };
  }
  const review = [
    ...describeFailures(failed.map((e) => e.result)),
    ...escalationTriggers(claim, context.types.has('human_approval')),
  ];
  if (review.length > 0) {
    return { verdict: 'ESCALATED', reason: REVIEW_PREFIX + review.join(CAUSE_SEPARATOR), rules };
  }
  return { verdict: 'ALLOWED', reason: `All ${rules.length} policy rules passed`, rules };
}

/** Sensitive actions that call for review unless a human already approved (contract §5). */
function escalationTriggers(claim: ClaimInput, hasHumanApproval: boolean): string[] {
  const action = claim.action;
  if (!action || hasHumanApproval) return [];
  if (action.action_type === 'access_change' || action.action_type === 'policy_exception') {
    return [`${action.action_type} requires a human_approval source`];
  }
  const environment = action.environment?.trim().toLowerCase() ?? '';
  if (action.action_type === 'deployment' && PRODUCTION_ENVIRONMENTS.has(environment)) {
    return ['a production deployment requires a human_approval source'];
  }
  return [];
}

const describeFailures = (rules: RuleResult[]) => rules.map(describeRuleFailure);
const describe = (rules: RuleResult[]) => describeFailures(rules).join('; ');
