import { z } from 'zod';
import { ACTION_TYPES, MAX_PATH_CHARS, SOURCE_TYPES } from '../claim-types.js';
import { MAX_ID_CHARS } from '../limits.js';
import { commandPatternProblem } from '../agent/command-pattern.js';
import { HARNESS_NAME } from '../agent/tool-call-schema.js';
import { alternativesOf, MAX_BRACE_ALTERNATIVES } from './glob.js';
import { ON_FAIL, RULE_FIELDS, thresholdShape, type ThresholdField } from './threshold-rules.js';

/** A conditional rule's name (contract §10); a receipt names it `rule:<name>`. */
export const RULE_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
export const MAX_RULES = 64;
const MAX_VALUES = 100;
const MAX_REQUIRED_APPROVALS = 100;
const MAX_REQUIRED_CHECKS = 256;

/** What `require.agent_session` asks of the sessions that made a change (docs/POLICIES.md). */
export const AGENT_SESSION_REQUIREMENTS = ['covered', 'covered_no_pending'] as const;

const TEAM = /^@?[^/\s@]+\/[^/\s]+$/;
const value = (max = MAX_ID_CHARS) => z.string().min(1, { error: 'must not be empty' }).max(max);
const globValue = (max = MAX_ID_CHARS) =>
  value(max)
    .regex(/^(?!!$)/, { error: 'must be a glob, not a lone "!"' })
    .refine((glob) => alternativesOf(glob) !== null, {
      error: `must expand to at most ${MAX_BRACE_ALTERNATIVES} alternatives`,
    });

const commandPattern = () =>
  value(1024).superRefine((pattern, ctx) => {
    const problem = commandPatternProblem(pattern);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
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
    // Tool calls (contract §12): each reads action.tool or action.session, and never matches
    // a claim without them. They read the signed summary only, never a raw input.
    tool: oneOrMany(
      globValue(),
      'action.tool.name matches one of these globs (case-insensitive; `mcp__*` for every MCP tool).',
    ),
    command: oneOrMany(
      commandPattern(),
      "One of the simple commands of the call's command line (wrappers and chains looked through) matches one of these command patterns.",
    ),
    tool_paths: oneOrMany(
      globValue(MAX_PATH_CHARS),
      'Some path of the call (action.tool.summary.paths) matches one of these globs (case-sensitive).',
    ),
    outside_project: z.boolean().optional().meta({
      description:
        "true: some path of the call lies outside the session's project directory; false: the call has paths and every one lies inside it.",
    }),
    urls: oneOrMany(
      globValue(),
      'The host of some URL of the call matches one of these globs (case-insensitive; `!host` excludes, so a list of `!` globs is an allowlist).',
    ),
    mcp_server: oneOrMany(
      globValue(),
      'action.tool.summary.mcp_server matches one of these globs (case-insensitive).',
    ),
    session: z
      .strictObject({
        harness: oneOrMany(
          z.string().regex(HARNESS_NAME, { error: 'must be a harness name' }),
          'action.session.harness is one of these.',
        ),
        id: oneOrMany(globValue(), 'action.session.id matches one of these globs.'),
        cwd: oneOrMany(
          globValue(MAX_PATH_CHARS),
          'action.session.cwd (the project directory) matches one of these globs.',
        ),
      })
      .optional()
      .meta({ description: "Facts of the agent's session (action.session)." }),
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
    never: z.literal(true).optional().meta({
      description:
        'Never holds: the rule fails whenever it applies (a deny with on_fail block, an ask with escalate).',
    }),
    agent_session: z.enum(AGENT_SESSION_REQUIREMENTS).optional().meta({
      description:
        "When the claim names an agent: each of the change's commits was reported by an agent-gate session (action.agent_sessions) that is covered (contract §12), without ran_without_allow; `covered_no_pending` also wants no ESCALATED decision left undecided. A claim without agent passes.",
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
