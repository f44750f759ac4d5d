import type {
  AuthzenEvaluation,
  AuthzenEvaluations,
  EvaluationsSemantic,
} from './request-schema.js';

/** Why a batch cannot be evaluated at all: the whole request is a 400 (AuthZEN §7.3). */
export class AuthzenRequestError extends Error {
  override readonly name = 'AuthzenRequestError';
}

/**
 * The evaluations of an Access Evaluations request, each with the top-level defaults applied
 * (AuthZEN §7.1.1: a member of an evaluation replaces the default of the same name, context
 * included), and the semantic to run them under. Without evaluations (absent or empty) the
 * request is one evaluation, as the single endpoint takes it; `single` says so, for the
 * answer's shape.
 */
export function resolveEvaluations(request: AuthzenEvaluations): {
  evaluations: AuthzenEvaluation[];
  semantic: EvaluationsSemantic;
  single: boolean;
} {
  const semantic = request.options?.evaluations_semantic ?? 'execute_all';
  const { subject, action, resource, context } = request;
  const single = !request.evaluations || request.evaluations.length === 0;
  const items = single ? [{}] : request.evaluations!;
  const evaluations = items.map((item, index) => {
    const merged = {
      subject: item.subject ?? subject,
      action: item.action ?? action,
      resource: item.resource ?? resource,
      context: item.context ?? context,
    };
    const missing = (['subject', 'action', 'resource'] as const).filter((k) => !merged[k]);
    if (missing.length > 0) {
      const where = single ? 'the request' : `evaluations.${index}`;
      throw new AuthzenRequestError(
        `${where}: ${missing.join(', ')} required (in the evaluation or as a top-level default)`,
      );
    }
    const evaluation: AuthzenEvaluation = {
      subject: merged.subject!,
      action: merged.action!,
      resource: merged.resource!,
    };
    if (merged.context) evaluation.context = merged.context;
    return evaluation;
  });
  return { evaluations, semantic, single };
}

/**
 * Whether a batch stops after a decision (AuthZEN §7.1.2.1): `deny_on_first_deny` at the
 * first `false` (an evaluation's error included), `permit_on_first_permit` at the first
 * `true`; `execute_all` never. The decision that stops it is the last one answered.
 */
export const stopsAfter = (semantic: EvaluationsSemantic, decision: boolean): boolean =>
  (semantic === 'deny_on_first_deny' && !decision) ||
  (semantic === 'permit_on_first_permit' && decision);
