// The words of a policy outcome's reason: written by the evaluation (policy.ts) and read back
// by the ledger explorer, so that the two cannot drift apart. No import: the explorer's
// browser bundle takes this module as it is.

/** What an ESCALATED outcome's reason starts with, before its causes. */
export const REVIEW_PREFIX = 'Human review required: ';

/** The causes of a reason are joined with this. */
export const CAUSE_SEPARATOR = '; ';

interface RuleOutcome {
  rule: string;
  passed: boolean;
  reason: string;
}

/** A failed rule as a reason names it. */
export const describeRuleFailure = (r: RuleOutcome): string => `${r.rule} (${r.reason})`;

/**
 * The causes of an escalation that are no rule of the policy — a sensitive action without a
 * human approval ("access_change requires a human_approval source") — read from the reason
 * it recorded: the reason's causes, less the failed rules it names first. Empty for an
 * outcome that is not an escalation.
 */
export function escalationCausesOf(reason: string, rules: readonly RuleOutcome[]): string[] {
  if (!reason.startsWith(REVIEW_PREFIX)) return [];
  let rest = reason.slice(REVIEW_PREFIX.length);
  for (const rule of rules) {
    if (rule.passed) continue;
    const named = describeRuleFailure(rule);
    if (!rest.startsWith(named)) continue;
    rest = rest.slice(named.length);
    if (rest.startsWith(CAUSE_SEPARATOR)) rest = rest.slice(CAUSE_SEPARATOR.length);
  }
  return rest ? rest.split(CAUSE_SEPARATOR) : [];
}
