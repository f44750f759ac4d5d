import { z } from 'zod';
import { ACTION_TYPES, MAX_PATH_CHARS, SOURCE_TYPES } from '../claim-types.js';
import { MAX_ID_CHARS } from '../limits.js';
import { alternativesOf, MAX_BRACE_ALTERNATIVES } from './glob.js';
import { ON_FAIL, RULE_FIELDS, thresholdShape, type ThresholdField } from './threshold-rules.js';

/** A conditional rule's name (contract §10); a receipt names it `rule:<name>`. */
export const RULE_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
export const MAX_RULES = 64;
const MAX_VALUES = 100;
const MAX_REQUIRED_APPROVALS = 100;
const MAX_REQUIRED_CHECKS = 256;

const TEAM = /^@?[^/\s@]+\/[^/\s]+$/;
const value = (max = MAX_ID_CHARS) => z.string().min(1, { error: 'must not be empty' }).max(max);
const globValue = (max = MAX_ID_CHARS) =>
  value(max)
    .regex(/^(?!!$)/, { error: 'must be a glob, not a lone "!"' })
    .refine((glob) => alternativesOf(glob) !== null, {
      error: `must expand to at most ${MAX_BRACE_ALTERNATIVES} alternatives`,
    });

/** One value or a non-empty list of them; a list matches when any of its values does. */
const oneOrMany = <T extends z.ZodType>(item: T, description: string) =>
  z
    .union([item, z.array(item).min(1).max(MAX_VALUES)])
    .optional()
    .meta({ description });

/**
 * When a rule applies: every condition given must match; an absent condition matches
 * anything. Globs are picomatch's (docs/POLICIES.md, "Globs").
 */
export const ruleConditionsSchema = z
  .strictObject({
    action_type: oneOrMany(z.enum(ACTION_TYPES), "The claim's action_type is one of these."),
    environment: oneOrMany(value(), 'action.environment equals one of these (case-insensitive).'),
    target_system: oneOrMany(
      value(MAX_ID_CHARS * 4),
      'action.target_system equals one of these (case-insensitive).',
    ),
    repository: oneOrMany(
      globValue(MAX_ID_CHARS * 4),
      'action.repository matches one of these globs (case-insensitive).',
    ),
    branch: oneOrMany(globValue(MAX_ID_CHARS * 4), 'action.branch matches one of these globs.'),
    agent: oneOrMany(globValue(), 'action.agent matches one of these globs (case-insensitive).'),
    author: oneOrMany(globValue(), 'action.author matches one of these globs (case-insensitive).'),
    labels: oneOrMany(value(), 'action.labels holds one of these (case-insensitive).'),
    risk_scope: oneOrMany(value(), 'action.risk_scope holds one of these.'),
    paths: oneOrMany(
      globValue(MAX_PATH_CHARS),
      'Some changed path matches one of these globs (always, when changed_paths_incomplete).',
    ),
    only_paths: oneOrMany(
      globValue(MAX_PATH_CHARS),
      'Every changed path matches one of these globs; never when changed_paths is empty, absent or incomplete.',
    ),
  })
  .meta({ id: 'RuleConditions' });

const approvalsRequirementSchema = z
  .strictObject({
    count: z.number().int().min(1).max(MAX_REQUIRED_APPROVALS).default(1).meta({
      description: 'How many distinct approvers are needed (default 1).',
    }),
    from: z
      .strictObject({
        users: z.array(value()).min(1).max(MAX_VALUES).optional().meta({
          description: 'Logins whose approval counts (a leading "@" is ignored).',
        }),
        teams: z
          .array(value().regex(TEAM, { error: 'must be an "org/team" slug' }))
          .min(1)
          .max(MAX_VALUES)
          .optional()
          .meta({
            description:
              '"org/team" slugs (a leading "@" is ignored): a member\'s approval counts.',
          }),
        code_owners: z.boolean().optional().meta({
          description:
            'Each changed path that has code owners needs `count` approvals from its owners.',
        }),
      })
      .optional()
      .meta({
        description:
          'Whose approval counts. Without users and teams, any eligible approver counts towards `count` (unless code_owners is set, which then is the whole requirement).',
      }),
  })
  .meta({ id: 'ApprovalRequirement' });

const ruleThresholds = Object.fromEntries(
  RULE_FIELDS.map((field) => [field, thresholdShape[field]]),
) as { [K in Exclude<ThresholdField, 'requireReplay'>]: (typeof thresholdShape)[K] };

/** What must hold when a rule applies: at least one requirement. */
export const ruleRequirementsSchema = z
  .strictObject({
    approvals: approvalsRequirementSchema.optional(),
    checks: z.array(value()).min(1).max(MAX_REQUIRED_CHECKS).optional().meta({
      description:
        'Each named check is in action.checks, completed, with conclusion success, neutral or skipped.',
    }),
    source_types: z.array(z.enum(SOURCE_TYPES)).min(1).max(SOURCE_TYPES.length).optional().meta({
      description: 'Each type is among the admissible sources.',
    }),
    ...ruleThresholds,
  })
  .refine((require) => Object.values(require).some((v) => v !== undefined), {
    error: 'must hold at least one requirement',
  })
  .meta({ id: 'RuleRequirements' });

export const conditionalRuleSchema = z
  .strictObject({
    name: z.string().regex(RULE_NAME, {
      error: 'must be 1-63 characters of a-z, 0-9, "_" or "-", starting with a letter or digit',
    }),
    description: z.string().max(1024).optional(),
    if: ruleConditionsSchema.default({}).meta({
      description: 'Conditions, all of which must match for the rule to apply; {} always applies.',
    }),
    require: ruleRequirementsSchema,
    on_fail: z.enum(ON_FAIL).default('block').meta({
      description:
        'What a failure makes the verdict: "block" (default) BLOCKED, "escalate" ESCALATED.',
    }),
  })
  .meta({ id: 'ConditionalRule' });

/** A policy's conditional rules, in evaluation order, names unique. */
export const conditionalRulesSchema = z
  .array(conditionalRuleSchema)
  .max(MAX_RULES)
  .superRefine((rules, ctx) => {
    const seen = new Set<string>();
    rules.forEach((rule, index) => {
      if (seen.has(rule.name)) {
        ctx.addIssue({
          code: 'custom',
          path: [index, 'name'],
          message: `duplicate rule name "${rule.name}"`,
        });
      }
      seen.add(rule.name);
    });
  })
  .meta({
    description:
      'Conditional rules (contract §10), evaluated after the threshold rules, in this order.',
  });

export type ConditionalRule = z.output<typeof conditionalRuleSchema>;
export type ConditionalRuleInput = z.input<typeof conditionalRuleSchema>;
export type RuleConditions = z.output<typeof ruleConditionsSchema>;
export type RuleRequirements = z.output<typeof ruleRequirementsSchema>;
