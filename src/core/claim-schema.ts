import { z } from 'zod';
import {
  MAX_ID_CHARS,
  MAX_LIST_ITEMS,
  MAX_SOURCES,
  MAX_STRING_CHARS,
  MAX_URI_CHARS,
} from './limits.js';
import { policyNameSchema } from './policies.js';
import { policyConfigSchema } from './policy-config.js';

const text = (max = MAX_STRING_CHARS) => z.string().max(max);
const required = (max = MAX_STRING_CHARS) =>
  z.string().min(1, { error: 'must not be empty' }).max(max);
const list = <T extends z.ZodType>(item: T) => z.array(item).max(MAX_LIST_ITEMS);

export const ACTION_TYPES = [
  'code_change',
  'infra_change',
  'access_change',
  'deployment',
  'merge',
  'policy_exception',
  'agent_execution',
] as const;

export const SOURCE_TYPES = [
  'scm',
  'ci',
  'agent_trace',
  'code_review',
  'test_result',
  'policy_check',
  'human_approval',
  'model_output',
  'runtime_log',
  'infrastructure',
  'manual',
] as const;

export const actionSchema = z.strictObject({
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

/** `<field path>: <message>` for every issue, the form the spec's validation errors take. */
export function formatIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length ? issue.path.join('.') : '(root)'}: ${issue.message}`)
    .join('; ');
}
