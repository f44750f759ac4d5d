import { z } from 'zod';
import { MAX_SOURCES } from '../limits.js';

/** What a rule's failure calls for: a refusal (`BLOCKED`) or a human (`ESCALATED`). */
export const ON_FAIL = ['block', 'escalate'] as const;
export type OnFail = (typeof ON_FAIL)[number];

/** Which way a field gets stricter: a higher number, a lower one, or a requirement turned on. */
export type Stricter = 'higher' | 'lower' | 'on';

/**
 * What the threshold rules read of a source. Structural rather than the claim schema's own
 * type, because that schema is built from this registry.
 */
export interface SourceFacts {
  id: string;
  type: string;
  confidence: number;
  provenance?: unknown;
  admissibility?: { state: string; required?: boolean };
}

/** What every threshold rule reads of a claim, computed once per evaluation. */
export interface RuleContext {
  /** Every source, admissible or not. */
  sources: readonly SourceFacts[];
  admissible: readonly SourceFacts[];
  /** How many sources were excluded as inadmissible. */
  excluded: number;
  /** The distinct types of the admissible sources. */
  types: ReadonlySet<string>;
  /** The length of `action.risk_scope`, repeats included (0 without one). */
  riskScopeSize: number;
}

export interface RuleCheck {
  passed: boolean;
  reason: string;
}

interface ThresholdRule<T, N extends string> {
  /** The name in a receipt's `policy.rules` (contract §5). */
  name: N;
  onFail: OnFail;
  /** One line for the rule table of docs/POLICIES.md. */
  summary: string;
  evaluate(context: RuleContext, value: T): RuleCheck;
}

interface PolicyField<S extends z.ZodType, N extends string = never> {
  schema: S;
  default: z.output<S>;
  stricter: Stricter;
  description: string;
  /** The rule the field sets; absent for a field that is no rule (requireReplay). */
  rule?: ThresholdRule<z.output<S>, N>;
}

const field = <S extends z.ZodType, N extends string = never>(definition: PolicyField<S, N>) =>
  definition;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const round = (n: number) => Math.round(n * 1000) / 1000;
export const isAdmissible = (source: SourceFacts) => source.admissibility?.state !== 'INADMISSIBLE';

// Averages of decimal confidences are not exact in binary floating point (0.7+0.1+0.1 < 0.9);
// a margin far below any meaningful confidence keeps "equal to the minimum" passing.
const CONFIDENCE_EPSILON = 1e-9;

/**
 * The threshold fields of `policyConfig`, in contract order (§5), each defined once: its
 * schema, default, the direction it tightens in and, for the six that are rules, the rule's
 * name, evaluation, reason texts and whether a failure blocks or escalates. The policy
 * schema, the defaults, the rule order, the tighten-only checks, the OpenAPI document and the
 * rule table of docs/POLICIES.md all derive from this object.
 */
export const POLICY_FIELDS = {
  minSources: field({
    schema: z.number().int().min(0).max(MAX_SOURCES),
    default: 1,
    stricter: 'higher',
    description: 'Minimum number of admissible sources.',
    rule: {
      name: 'min_sources',
      onFail: 'block',
      summary:
        'At least `minSources` admissible sources; a source marked `admissibility.required` must itself be admissible.',
      evaluate({ sources, admissible, excluded }, minimum) {
        // A source the caller marks required must itself be admissible: the minimum of evidence
        // is not met without it, however many other sources there are.
        const missing = sources.filter((s) => s.admissibility?.required && !isAdmissible(s));
        if (missing.length > 0) {
          const ids = missing.map((s) => JSON.stringify(s.id)).join(', ');
          return { passed: false, reason: `required source ${ids} is inadmissible` };
        }
        const count = admissible.length;
        const counted = `${plural(count, 'admissible source')}${excluded ? ` (${excluded} excluded)` : ''}`;
        return { passed: count >= minimum, reason: `${counted}, minimum ${minimum}` };
      },
    },
  }),
  minSourceTypes: field({
    schema: z.number().int().min(0).max(MAX_SOURCES),
    default: 1,
    stricter: 'higher',
    description: 'Minimum number of distinct source types among the admissible sources.',
    rule: {
      name: 'min_source_types',
      onFail: 'block',
      summary: 'At least `minSourceTypes` distinct types among the admissible sources.',
      evaluate: ({ types }, minimum) => ({
        passed: types.size >= minimum,
        reason: `${plural(types.size, 'distinct source type')}, minimum ${minimum}`,
      }),
    },
  }),
  minConfidence: field({
    schema: z.number().min(0).max(1),
    default: 0.5,
    stricter: 'higher',
    description: 'Minimum average confidence of the admissible sources (0 when there are none).',
    rule: {
      name: 'min_confidence',
      onFail: 'block',
      summary: 'The average confidence of the admissible sources is at least `minConfidence`.',
      evaluate({ admissible }, minimum) {
        const sum = admissible.reduce((n, s) => n + s.confidence, 0);
        const average = admissible.length ? sum / admissible.length : 0;
        return {
          passed: average + CONFIDENCE_EPSILON >= minimum,
          reason: `average confidence ${round(average)}, minimum ${minimum}`,
        };
      },
    },
  }),
  requireProvenance: field({
    schema: z.boolean(),
    default: false,
    stricter: 'on',
    description: 'Whether every admissible source must carry provenance.',
    rule: {
      name: 'require_provenance',
      onFail: 'block',
      summary: 'When `requireProvenance` is on, every admissible source carries `provenance`.',
      evaluate({ admissible }, required) {
        if (!required) return { passed: true, reason: 'provenance not required' };
        const without = admissible.filter((s) => !s.provenance).map((s) => JSON.stringify(s.id));
        return {
          passed: without.length === 0,
          reason: without.length
            ? `sources without provenance: ${without.join(', ')}`
            : 'every source carries provenance',
        };
      },
    },
  }),
  requireReplay: field({
    schema: z.boolean(),
    default: true,
    stricter: 'on',
    description:
      'Whether replay must reproduce the evaluation for the receipt to be admissible (a condition of admissibility, not a rule).',
  }),
  requireHumanApproval: field({
    schema: z.boolean(),
    default: false,
    stricter: 'on',
    description: 'Whether an admissible human_approval source is required.',
    rule: {
      name: 'require_human_approval',
      onFail: 'escalate',
      summary:
        'When `requireHumanApproval` is on, an admissible `human_approval` source is present.',
      evaluate({ types }, required) {
        const present = types.has('human_approval');
        return {
          passed: !required || present,
          reason: !required
            ? 'human approval not required'
            : present
              ? 'a human_approval source is present'
              : 'a human_approval source is required and none is present',
        };
      },
    },
  }),
  maxRiskScope: field({
    schema: z.number().int().min(0).max(10_000),
    default: 5,
    stricter: 'lower',
    description: "Maximum number of entries in the action's risk_scope.",
    rule: {
      name: 'max_risk_scope',
      onFail: 'escalate',
      summary: '`action.risk_scope` has at most `maxRiskScope` entries (repeats counted).',
      evaluate({ riskScopeSize: size }, maximum) {
        return {
          passed: size <= maximum,
          reason: `risk scope of ${plural(size, 'area')}, maximum ${maximum}`,
        };
      },
    },
  }),
};

type Fields = typeof POLICY_FIELDS;
export type ThresholdField = keyof Fields;
export type ThresholdValues = { [K in ThresholdField]: z.output<Fields[K]['schema']> };

/** The names of the threshold rules, in contract order. */
export type ThresholdRuleName = {
  [K in ThresholdField]: NonNullable<Fields[K]['rule']>['name'];
}[ThresholdField];

/** The threshold fields in contract order (also the order refusals are reported in). */
export const THRESHOLD_FIELDS = Object.keys(POLICY_FIELDS) as ThresholdField[];

/** A threshold rule together with the field that sets it. */
export interface ThresholdRuleEntry {
  field: ThresholdField;
  name: ThresholdRuleName;
  onFail: OnFail;
  summary: string;
  evaluate(context: RuleContext, value: unknown): RuleCheck;
}

/** The six threshold rules in contract order. */
export const THRESHOLD_RULES: readonly ThresholdRuleEntry[] = THRESHOLD_FIELDS.flatMap((name) => {
  const rule = (POLICY_FIELDS[name] as PolicyField<z.ZodType, ThresholdRuleName>).rule;
  return rule ? [{ ...rule, field: name, name: rule.name as ThresholdRuleName }] : [];
});

/** The fields that are rules, usable in a conditional rule's `require`. */
export const RULE_FIELDS = THRESHOLD_RULES.map((rule) => rule.field);

/** Evaluation order of the receipt contract (§5); every threshold rule appears in every result. */
export const RULE_ORDER = THRESHOLD_RULES.map((rule) => rule.name) as [
  ThresholdRuleName,
  ...ThresholdRuleName[],
];

/** Defaults of the receipt contract (§5), field by field. */
export const THRESHOLD_DEFAULTS = Object.freeze(
  Object.fromEntries(THRESHOLD_FIELDS.map((name) => [name, POLICY_FIELDS[name].default])),
) as Readonly<ThresholdValues>;

/** The zod shape of the threshold fields, each optional, described for the OpenAPI document. */
export const thresholdShape = Object.fromEntries(
  THRESHOLD_FIELDS.map((name) => {
    const f = POLICY_FIELDS[name] as PolicyField<z.ZodType, ThresholdRuleName>;
    return [
      name,
      f.schema.optional().meta({ description: `${f.description} Default ${String(f.default)}.` }),
    ];
  }),
) as { [K in ThresholdField]: z.ZodOptional<Fields[K]['schema']> };

export const stricterOf = (name: ThresholdField): Stricter => POLICY_FIELDS[name].stricter;
