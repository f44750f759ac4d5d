import type { ThresholdRuleName } from './rules/threshold-rules.js';

// What a policy's evaluation answers: apart from the evaluation itself, so that what refines
// an outcome afterwards (an approval, core/approval.ts) and the evaluation both read it.

export type Verdict = 'ALLOWED' | 'BLOCKED' | 'ESCALATED';

/** A threshold rule's name, or `rule:<name>` for a conditional rule (contract §10). */
export type RuleName = ThresholdRuleName | `rule:${string}`;

export interface RuleResult {
  rule: RuleName;
  passed: boolean;
  reason: string;
}

export interface PolicyOutcome {
  verdict: Verdict;
  reason: string;
  rules: RuleResult[];
}
