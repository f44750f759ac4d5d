import type { ClaimInput, Source } from './claim-schema.js';
import type { PolicyConfig } from './policy-config.js';

export type Verdict = 'ALLOWED' | 'BLOCKED' | 'ESCALATED';

/** Evaluation order of the receipt contract (§5); every rule appears in every result. */
export const RULE_ORDER = [
  'min_sources',
  'min_source_types',
  'min_confidence',
  'require_provenance',
  'require_human_approval',
  'max_risk_scope',
] as const;
export type RuleName = (typeof RULE_ORDER)[number];

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

// A failure of these calls for a human rather than a refusal.
const REVIEW_RULES: ReadonlySet<RuleName> = new Set(['require_human_approval', 'max_risk_scope']);
const PRODUCTION_ENVIRONMENTS = new Set(['production', 'prod']);
// Averages of decimal confidences are not exact in binary floating point (0.7+0.1+0.1 < 0.9);
// a margin far below any meaningful confidence keeps "equal to the minimum" passing.
const CONFIDENCE_EPSILON = 1e-9;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const isAdmissible = (source: Source) => source.admissibility?.state !== 'INADMISSIBLE';

/** Pure: the same claim and config always give the same outcome (the replay check relies on it). */
export function evaluatePolicy(claim: ClaimInput, config: PolicyConfig): PolicyOutcome {
  const admissible = claim.sources.filter(isAdmissible);
  const excluded = claim.sources.length - admissible.length;
  const types = new Set(admissible.map((s) => s.type));
  const hasHumanApproval = types.has('human_approval');
  const rules: RuleResult[] = [
    minSources(claim.sources, admissible.length, excluded, config),
    {
      rule: 'min_source_types',
      passed: types.size >= config.minSourceTypes,
      reason: `${plural(types.size, 'distinct source type')}, minimum ${config.minSourceTypes}`,
    },
    minConfidence(admissible, config),
    requireProvenance(admissible, config),
    {
      rule: 'require_human_approval',
      passed: !config.requireHumanApproval || hasHumanApproval,
      reason: !config.requireHumanApproval
        ? 'human approval not required'
        : hasHumanApproval
          ? 'a human_approval source is present'
          : 'a human_approval source is required and none is present',
    },
    maxRiskScope(claim, config),
  ];

  const failed = rules.filter((r) => !r.passed);
  const hard = failed.filter((r) => !REVIEW_RULES.has(r.rule));
  if (hard.length > 0) {
    return { verdict: 'BLOCKED', reason: `Blocked: ${describe(hard)}`, rules };
  }
  const review = [...describeFailures(failed), ...escalationTriggers(claim, hasHumanApproval)];
  if (review.length > 0) {
    return { verdict: 'ESCALATED', reason: `Human review required: ${review.join('; ')}`, rules };
  }
  return { verdict: 'ALLOWED', reason: `All ${rules.length} policy rules passed`, rules };
}

function minSources(
  sources: Source[],
  count: number,
  excluded: number,
  config: PolicyConfig,
): RuleResult {
  // A source the caller marks required must itself be admissible: the minimum of evidence
  // is not met without it, however many other sources there are.
  const missing = sources.filter((s) => s.admissibility?.required && !isAdmissible(s));
  const counted = `${plural(count, 'admissible source')}${excluded ? ` (${excluded} excluded)` : ''}`;
  if (missing.length > 0) {
    const ids = missing.map((s) => JSON.stringify(s.id)).join(', ');
    return { rule: 'min_sources', passed: false, reason: `required source ${ids} is inadmissible` };
  }
  return {
    rule: 'min_sources',
    passed: count >= config.minSources,
    reason: `${counted}, minimum ${config.minSources}`,
  };
}

function minConfidence(admissible: Source[], config: PolicyConfig): RuleResult {
  const sum = admissible.reduce((n, s) => n + s.confidence, 0);
  const average = admissible.length ? sum / admissible.length : 0;
  return {
    rule: 'min_confidence',
    passed: average + CONFIDENCE_EPSILON >= config.minConfidence,
    reason: `average confidence ${round(average)}, minimum ${config.minConfidence}`,
  };
}

function requireProvenance(admissible: Source[], config: PolicyConfig): RuleResult {
  if (!config.requireProvenance) {
    return { rule: 'require_provenance', passed: true, reason: 'provenance not required' };
  }
  const without = admissible.filter((s) => !s.provenance).map((s) => JSON.stringify(s.id));
  return {
    rule: 'require_provenance',
    passed: without.length === 0,
    reason: without.length
      ? `sources without provenance: ${without.join(', ')}`
      : 'every source carries provenance',
  };
}

function maxRiskScope(claim: ClaimInput, config: PolicyConfig): RuleResult {
  // The spec compares "its size": the array's length, repeats included, so that any
  // third-party replay of the rule counts the same way.
  const size = claim.action?.risk_scope?.length ?? 0;
  return {
    rule: 'max_risk_scope',
    passed: size <= config.maxRiskScope,
    reason: `risk scope of ${plural(size, 'area')}, maximum ${config.maxRiskScope}`,
  };
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

const describeFailures = (rules: RuleResult[]) => rules.map((r) => `${r.rule} (${r.reason})`);
const describe = (rules: RuleResult[]) => describeFailures(rules).join('; ');
const round = (n: number) => Math.round(n * 1000) / 1000;
