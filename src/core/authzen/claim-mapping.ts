import { z } from 'zod';
import { hashCanonical, type Sha256Hex } from '@svc/verify';
import { ACTION_TYPES } from '../claim-types.js';
import { claimInputSchema, formatIssues, type ClaimInput, type Source } from '../claim-schema.js';
import { MAX_ID_CHARS, MAX_STRING_CHARS } from '../limits.js';
import type { AuthzenEvaluation } from './request-schema.js';
import { buildToolCallClaim } from '../agent/tool-call-claim.js';
import { SvcError } from '../errors.js';

/** Why one evaluation cannot become a claim: a 400 for a single request, its own error in a batch. */
export class AuthzenMappingError extends Error {
  override readonly name = 'AuthzenMappingError';
}

type ActionType = (typeof ACTION_TYPES)[number];
const isActionType = (name: string): name is ActionType =>
  (ACTION_TYPES as readonly string[]).includes(name);

// The members of properties and context that contract §13 maps; the rest is not read.
const subjectPropertiesSchema = z.looseObject({ model: z.string().max(MAX_ID_CHARS).optional() });
const resourcePropertiesSchema = z.looseObject({
  repository: z
    .string()
    .max(MAX_ID_CHARS * 4)
    .optional(),
  environment: z.string().max(MAX_ID_CHARS).optional(),
  branch: z
    .string()
    .max(MAX_ID_CHARS * 4)
    .optional(),
  paths: z.array(z.string()).optional(),
});
const sessionSchema = z.union([
  z.string().min(1).max(MAX_ID_CHARS),
  z.looseObject({ id: z.string().min(1).max(MAX_ID_CHARS), cwd: z.string().max(4096).optional() }),
]);
const contextSchema = z.looseObject({
  sources: z.array(z.unknown()).optional(),
  policy: z.string().optional(),
  session: sessionSchema.optional(),
  dry_run: z.boolean().optional(),
});

function parsed<T extends z.ZodType>(schema: T, value: unknown, where: string): z.infer<T> {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  throw new AuthzenMappingError(
    result.error.issues
      .map((issue) => `${[where, ...issue.path.map(String)].join('.')}: ${issue.message}`)
      .join('; '),
  );
}

/** What an evaluation's context asks of svc beyond the claim: a dry run is a simulate. */
export const isDryRun = (evaluation: AuthzenEvaluation): boolean =>
  evaluation.context?.dry_run === true;

/**
 * The claim_id of an evaluation: derived from the request (contract §13), so that a PEP
 * retrying the same request gets the same receipt back rather than a second one. `dry_run`
 * is left out: a dry run previews the claim its real request would make, and records nothing.
 */
export function authzenClaimId(evaluation: AuthzenEvaluation, sha256Hex: Sha256Hex): string {
  const context = { ...evaluation.context };
  delete context.dry_run;
  const digest = hashCanonical(
    {
      subject: evaluation.subject,
      action: evaluation.action,
      resource: evaluation.resource,
      context,
    },
    sha256Hex,
  );
  return `authzen-${digest.slice('sha256:'.length, 'sha256:'.length + 40)}`;
}

/** The actor of the subject (contract §13): an agent, a user, or another kind named by type. */
function actor(subject: AuthzenEvaluation['subject']): Partial<NonNullable<ClaimInput['action']>> {
  const model = parsed(subjectPropertiesSchema, subject.properties, 'subject.properties').model;
  const modelPart = model ? { agent_model: model } : {};
  if (subject.type === 'agent') return { agent: subject.id, ...modelPart };
  if (subject.type === 'user') return { human_operator: subject.id, ...modelPart };
  // A kind the contract does not name (a service account, a workload) acts as an agent would;
  // its type is kept so that `agent:` globs can tell the kinds apart.
  return { agent: `${subject.type}:${subject.id}`, ...modelPart };
}

/** The policy a tool call is decided under when the request names none (as the hooks do). */
export const AUTHZEN_TOOL_POLICY = 'agent';

/**
 * The ClaimInput of one AuthZEN evaluation (contract §13): an action named by one of the seven
 * action types is a claim of that type; any other name is a tool, and makes a tool-call claim
 * (§12) with `harness: "authzen"`.
 */
export function authzenClaim(
  evaluation: AuthzenEvaluation,
  options: { sha256Hex: Sha256Hex },
): ClaimInput {
  return isActionType(evaluation.action.name)
    ? authzenActionClaim(evaluation, options)
    : authzenToolClaim(evaluation, options);
}

/**
 * A tool call asked about through AuthZEN: the tool's input is `action.properties` (its
 * digest and redacted summary are what is stored), the session is `context.session` (else one
 * per subject, `<type>:<id>`), and the call is named by the request's claim_id, so a retried
 * request is the same call.
 */
function authzenToolClaim(evaluation: AuthzenEvaluation, options: { sha256Hex: Sha256Hex }) {
  const { subject, action, resource } = evaluation;
  const context = parsed(contextSchema, evaluation.context, 'context');
  const properties = parsed(resourcePropertiesSchema, resource.properties, 'resource.properties');
  const who = actor(subject);
  const session =
    context.session === undefined
      ? { id: `${subject.type}:${subject.id}` }
      : typeof context.session === 'string'
        ? { id: context.session }
        : { id: context.session.id, ...(context.session.cwd && { cwd: context.session.cwd }) };
  try {
    const { claim } = buildToolCallClaim(
      {
        harness: 'authzen',
        session,
        agent: who.agent ?? who.human_operator ?? subject.id,
        ...(who.agent_model !== undefined && { agent_model: who.agent_model }),
        ...(who.human_operator !== undefined && { human_operator: who.human_operator }),
        tool_name: action.name,
        tool_input: action.properties ?? {},
        tool_use_id: authzenClaimId(evaluation, options.sha256Hex),
        ...(properties.repository !== undefined && { repository: properties.repository }),
      },
      options.sha256Hex,
    );
    return validClaim({ ...claim, policy: context.policy ?? AUTHZEN_TOOL_POLICY });
  } catch (error) {
    if (error instanceof SvcError) throw new AuthzenMappingError(error.message);
    throw error;
  }
}

/**
 * The ClaimInput of one AuthZEN evaluation whose action names one of the seven action types
 * (contract §13).
 * Without `context.sources` the claim's one source is the request itself, as the PEP
 * reported it (docs/AUTHZEN.md).
 */
export function authzenActionClaim(
  evaluation: AuthzenEvaluation,
  options: { sha256Hex: Sha256Hex },
): ClaimInput {
  const { subject, action, resource } = evaluation;
  if (!isActionType(action.name)) {
    throw new AuthzenMappingError(
      `action.name: ${JSON.stringify(action.name)} is not one of ${ACTION_TYPES.join(', ')}`,
    );
  }
  const context = parsed(contextSchema, evaluation.context, 'context');
  const properties = parsed(resourcePropertiesSchema, resource.properties, 'resource.properties');
  const claimId = authzenClaimId(evaluation, options.sha256Hex);
  const describe = `${subject.type} ${subject.id} asks to ${action.name} ${resource.type} ${resource.id}`;
  const request: Source = {
    id: claimId,
    type: subject.type === 'agent' ? 'agent_trace' : 'runtime_log',
    uri: `urn:authzen:evaluation:${claimId}`,
    confidence: 1,
    content: `AuthZEN access evaluation: ${describe}`.slice(0, MAX_STRING_CHARS),
  };
  const claim = {
    claim_id: claimId,
    entity: resource.id,
    claim: describe.slice(0, MAX_STRING_CHARS),
    action: {
      action_type: action.name,
      target_system: resource.type,
      ...actor(subject),
      ...(properties.repository !== undefined ? { repository: properties.repository } : {}),
      ...(properties.environment !== undefined ? { environment: properties.environment } : {}),
      ...(properties.branch !== undefined ? { branch: properties.branch } : {}),
      ...(properties.paths !== undefined ? { changed_paths: properties.paths } : {}),
    },
    sources: context.sources ?? [request],
    ...(context.policy !== undefined ? { policy: context.policy } : {}),
  };
  return validClaim(claim);
}

/** The claim checked as POST /v1/evaluate checks one, its problems named as the claim's. */
export function validClaim(claim: unknown): ClaimInput {
  const result = claimInputSchema.safeParse(claim);
  if (result.success) return result.data;
  throw new AuthzenMappingError(`the claim made of the request: ${formatIssues(result.error)}`);
}
