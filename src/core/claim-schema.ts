import { z } from 'zod';
import {
  MAX_ID_CHARS,
  MAX_LIST_ITEMS,
  MAX_SOURCES,
  MAX_STRING_CHARS,
  MAX_URI_CHARS,
} from './limits.js';
import {
  ACTION_TYPES,
  changedPathProblem,
  MAX_CHANGED_PATHS,
  MAX_PATH_CHARS,
  SOURCE_TYPES,
} from './claim-types.js';
import { agentSessionSchema, toolCallSchema } from './agent/tool-call-schema.js';
import { agentSessionFactsShape, gitHeadShape } from './agent/session-facts-schema.js';
import { policyNameSchema } from './policies.js';
import { policyConfigSchema } from './policy-config.js';

const text = (max = MAX_STRING_CHARS) => z.string().max(max);
const required = (max = MAX_STRING_CHARS) =>
  z.string().min(1, { error: 'must not be empty' }).max(max);
const list = <T extends z.ZodType>(item: T) => z.array(item).max(MAX_LIST_ITEMS);

export { ACTION_TYPES, SOURCE_TYPES };

/** Bounds of the members conditional rules read (contract §10); docs/API.md lists them. */
export { MAX_CHANGED_PATHS, MAX_PATH_CHARS };
const MAX_LABELS = 100;
const MAX_APPROVALS = 100;
const MAX_TEAMS = 100;
const MAX_CHECKS = 256;
const MAX_OWNERS = 64;

const login = () => required(MAX_ID_CHARS);
const path = () => required(MAX_PATH_CHARS);
/** A changed path in its one canonical spelling (claim-types.ts), as globs see it. */
const changedPath = () =>
  path().superRefine((value, ctx) => {
    const problem = changedPathProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(value)} ${problem}` });
  });

export const REPO_PERMISSIONS = ['admin', 'maintain', 'write', 'triage', 'read', 'none'] as const;

/** A person's approval of the action, with what a rule needs to know of them. */
export const approvalSchema = z.strictObject({
  user: login(),
  /**
   * GitHub's account type; omitted means `User`, a person. Any other kind (a `Bot`: an App,
   * Copilot) never counts as an approver.
   */
  kind: text(64).optional(),
  permission: z.enum(REPO_PERMISSIONS).optional(),
  /** `org/team` slugs the approver belongs to (only the ones a policy names need be listed). */
  teams: z.array(login()).max(MAX_TEAMS).optional(),
});

export const CHECK_CONCLUSIONS = [
  'success',
  'failure',
  'neutral',
  'cancelled',
  'skipped',
  'timed_out',
  'action_required',
  'stale',
  'startup_failure',
  'error',
] as const;

/** A named CI check (a check run or a commit status) of the evaluated commit. */
export const checkSchema = z.strictObject({
  name: required(MAX_ID_CHARS),
  status: z.enum(['queued', 'in_progress', 'pending', 'completed']),
  /** Set once `status` is `completed`. */
  conclusion: z.enum(CHECK_CONCLUSIONS).nullable().optional(),
});

/** The code owners of one changed path (`@user`, `@org/team` or an e-mail address). */
export const codeOwnersSchema = z.strictObject({
  path: path(),
  owners: z.array(required(MAX_ID_CHARS)).max(MAX_OWNERS),
});

export const actionSchema = z
  .strictObject({
    action_type: z.enum(ACTION_TYPES),
    target_system: required(MAX_ID_CHARS * 4),
    repository: text(MAX_ID_CHARS * 4).optional(),
    pull_request: z.union([text(64), z.number().int().nonnegative()]).optional(),
    commit: text(MAX_ID_CHARS).optional(),
    branch: text(MAX_ID_CHARS * 4).optional(),
    environment: text(MAX_ID_CHARS).optional(),
    risk_scope: list(text(MAX_ID_CHARS)).optional(),
    affected_controls: list(text(MAX_ID_CHARS)).optional(),
    agent: text(MAX_ID_CHARS).optional(),
    agent_model: text(MAX_ID_CHARS).optional(),
    human_operator: text(MAX_ID_CHARS).optional(),
    /** The files the action changes, for `paths` and `only_paths` conditions. */
    changed_paths: z.array(changedPath()).max(MAX_CHANGED_PATHS).optional(),
    /**
     * True when `changed_paths` is not the whole list (the source listed more than it returned,
     * or the list could not be read): every `paths` condition then applies and no `only_paths`
     * condition does, so an unknown path fails closed.
     */
    changed_paths_incomplete: z.boolean().optional(),
    labels: z.array(required(MAX_ID_CHARS)).max(MAX_LABELS).optional(),
    /** Who wrote the change (a pull request's author). */
    author: text(MAX_ID_CHARS).optional(),
    /** Commit authors and committers: like the author, their approval never counts. */
    committers: z.array(login()).max(MAX_APPROVALS).optional(),
    approvals: z.array(approvalSchema).max(MAX_APPROVALS).optional(),
    checks: z.array(checkSchema).max(MAX_CHECKS).optional(),
    /** The code owners of each changed path that has any. */
    code_owners: z.array(codeOwnersSchema).max(MAX_CHANGED_PATHS).optional(),
    /** The tool call an agent asks to make (contract §12), on an `agent_execution` claim. */
    tool: toolCallSchema.optional(),
    /** The agent's session the call belongs to (contract §12). */
    session: agentSessionSchema.optional(),
    /** After the call, the HEAD of the session's repository (an outcome's claim; contract §12). */
    ...gitHeadShape,
    /** The agent sessions that made a change's commits (the `agent_session` requirement). */
    ...agentSessionFactsShape,
  })
  .superRefine((action, ctx) => {
    for (const key of ['tool', 'session', 'git_head'] as const) {
      if (action[key] !== undefined && action.action_type !== 'agent_execution') {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: 'is for action_type "agent_execution" only (contract §12)',
        });
      }
    }
  });

export const decisionRightSchema = z.strictObject({
  principal: required(MAX_ID_CHARS),
  role: required(MAX_ID_CHARS),
  permission: required(MAX_ID_CHARS),
});

export const SOURCE_STATES = ['ADMISSIBLE', 'INADMISSIBLE'] as const;

export const sourceAdmissibilitySchema = z.strictObject({
  state: z.enum(SOURCE_STATES),
  reason: text().optional(),
  required: z.boolean().optional(),
});

export const provenanceSchema = z.strictObject({
  captured_at: z.iso.datetime({ error: 'must be an ISO 8601 UTC timestamp' }),
  snapshot_id: text(MAX_ID_CHARS).optional(),
  collector: text(MAX_ID_CHARS).optional(),
  chain_of_custody: list(text(MAX_ID_CHARS)).optional(),
});

const URI = /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/;

export const sourceSchema = z.strictObject({
  id: required(MAX_ID_CHARS),
  type: z.enum(SOURCE_TYPES),
  uri: required(MAX_URI_CHARS).regex(URI, { error: 'must be a URI with a scheme' }),
  confidence: z.number().min(0).max(1),
  content: text(),
  admissibility: sourceAdmissibilitySchema.optional(),
  provenance: provenanceSchema.optional(),
});

export const claimInputSchema = z.strictObject({
  claim_id: required(MAX_ID_CHARS),
  entity: required(MAX_ID_CHARS * 4),
  claim: required(),
  expected_replay_match: z.boolean().optional(),
  action: actionSchema.optional(),
  decision_rights: list(decisionRightSchema).optional(),
  sources: z
    .array(sourceSchema)
    .min(1, { error: 'must hold at least 1 evidence source' })
    .max(MAX_SOURCES, { error: `must hold at most ${MAX_SOURCES} evidence sources` }),
  /** Extension: a named policy (built-in or created with POST /v1/policies); policyConfig overrides it. */
  policy: policyNameSchema.optional(),
  policyConfig: policyConfigSchema.optional(),
});

export type ClaimInput = z.infer<typeof claimInputSchema>;
export type Source = z.infer<typeof sourceSchema>;
export type ClaimAction = z.infer<typeof actionSchema>;
export type Approval = z.infer<typeof approvalSchema>;
export type Check = z.infer<typeof checkSchema>;
export type CodeOwners = z.infer<typeof codeOwnersSchema>;

/** `<field path>: <message>` for every issue, the form the spec's validation errors take. */
export function formatIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length ? fieldPath(issue.path) : '(root)'}: ${issue.message}`)
    .join('; ');
}

/** `a.b.0.c`, except that a conditional rule's index reads `rules[2]`, as docs/POLICIES.md writes it. */
const fieldPath = (path: readonly PropertyKey[]): string =>
  path
    .map((key, i) =>
      typeof key === 'number' && path[i - 1] === 'rules'
        ? `[${key}]`
        : `${i ? '.' : ''}${String(key)}`,
    )
    .join('');
