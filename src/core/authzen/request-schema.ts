import { z } from 'zod';
import { MAX_ID_CHARS } from '../limits.js';

// OpenID AuthZEN Authorization API 1.0 (docs/AUTHZEN.md cites the sections). Receivers MUST
// ignore unknown fields (§ "JSON Serialization"), so every object is loose: what svc does not
// read passes through unread, yet a required member missing or of the wrong type is a 400.

/** The evaluations of one batch request; each becomes a receipt. */
export const MAX_AUTHZEN_EVALUATIONS = 64;

const id = (what: string) =>
  z.string({ error: `must be a string (${what})` }).min(1, { error: 'must not be empty' });
const properties = z.record(z.string(), z.unknown()).optional();

/** §5.1 Subject: `type` and `id` required. */
export const subjectSchema = z
  .looseObject({
    type: id('the subject type').max(MAX_ID_CHARS),
    id: id('the subject id').max(MAX_ID_CHARS),
    properties,
  })
  .meta({ id: 'AuthzenSubject' });

/** §5.2 Resource: `type` and `id` required. */
export const resourceSchema = z
  .looseObject({
    type: id('the resource type').max(MAX_ID_CHARS * 4),
    id: id('the resource id').max(MAX_ID_CHARS * 4),
    properties,
  })
  .meta({ id: 'AuthzenResource' });

/** §5.3 Action: `name` required. */
export const actionSchema = z
  .looseObject({ name: id('the action name').max(MAX_ID_CHARS), properties })
  .meta({ id: 'AuthzenAction' });

/** §5.4 Context: any object. */
export const contextSchema = z.record(z.string(), z.unknown()).meta({ id: 'AuthzenContext' });

/** §6.1 The Access Evaluation request. */
export const evaluationRequestSchema = z
  .looseObject({
    subject: subjectSchema,
    action: actionSchema,
    resource: resourceSchema,
    context: contextSchema.optional(),
  })
  .meta({ id: 'AuthzenEvaluationRequest' });

export const EVALUATIONS_SEMANTICS = [
  'execute_all',
  'deny_on_first_deny',
  'permit_on_first_permit',
] as const;

/**
 * §7.1 The Access Evaluations request: top-level members are defaults for each evaluation,
 * which may omit what the defaults give. Without evaluations it is a single evaluation.
 */
export const evaluationsRequestSchema = z
  .looseObject({
    subject: subjectSchema.optional(),
    action: actionSchema.optional(),
    resource: resourceSchema.optional(),
    context: contextSchema.optional(),
    evaluations: z
      .array(
        z.looseObject({
          subject: subjectSchema.optional(),
          action: actionSchema.optional(),
          resource: resourceSchema.optional(),
          context: contextSchema.optional(),
        }),
      )
      .max(MAX_AUTHZEN_EVALUATIONS, {
        error: `must hold at most ${MAX_AUTHZEN_EVALUATIONS} evaluations`,
      })
      .optional(),
    options: z
      .looseObject({ evaluations_semantic: z.enum(EVALUATIONS_SEMANTICS).optional() })
      .optional(),
  })
  .meta({ id: 'AuthzenEvaluationsRequest' });

export type AuthzenEvaluation = z.infer<typeof evaluationRequestSchema>;
export type AuthzenEvaluations = z.infer<typeof evaluationsRequestSchema>;
export type EvaluationsSemantic = (typeof EVALUATIONS_SEMANTICS)[number];
