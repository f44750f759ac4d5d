import type { RequestHandler } from 'express';
import {
  evaluationRequestSchema,
  evaluationsRequestSchema,
} from '../../core/authzen/request-schema.js';
import { evaluationError } from '../../core/authzen/decision.js';
import type { AuthzenService } from '../../services/authzen.js';
import { apiKeySubmitter } from '../../services/claims.js';
import { STATUS_OF } from '../middleware/errors.js';
import { defineRoute, type RouteDef } from '../route-table.js';
import {
  authzenConfigurationSchema,
  authzenDecisionSchema,
  authzenEvaluationsResponseSchema,
} from '../schemas/authzen.js';

/** The paths of the AuthZEN binding (AuthZEN §10.1's defaults) and its metadata (§9). */
export const AUTHZEN_PATHS = {
  configuration: '/.well-known/authzen-configuration',
  evaluation: '/access/v1/evaluation',
  evaluations: '/access/v1/evaluations',
} as const;

/** Whether a request is one of the AuthZEN binding's, whose bad media type is a 400 (§10.1). */
export const isAuthzenRequest = (path: string): boolean =>
  path.startsWith('/access/v1/') || path === AUTHZEN_PATHS.configuration;

// AuthZEN §10.1.3: "If the PEP specified a request identifier in the request, the PDP MUST
// include the same identifier in the response". svc's own id accepts a narrow alphabet (it
// lands in logs); here any printable value a header can carry is echoed as it came.
const PRINTABLE = /^[\x20-\x7e]{1,1024}$/;

/** Echoes the PEP's X-Request-ID on an AuthZEN answer, whatever svc logs it as. */
export const echoAuthzenRequestId: RequestHandler = (req, res, next) => {
  const sent = req.headers['x-request-id'];
  if (isAuthzenRequest(req.path) && typeof sent === 'string' && PRINTABLE.test(sent)) {
    res.setHeader('X-Request-Id', sent);
  }
  next();
};

const AUTH = 'Authenticated with the API key (X-API-Key or Authorization: Bearer).';

export function authzenRoutes(authzen: AuthzenService, baseUrl: string): RouteDef[] {
  const base = baseUrl.replace(/\/+$/, '');
  return [
    defineRoute({
      method: 'get',
      path: AUTHZEN_PATHS.configuration,
      operationId: 'getAuthzenConfiguration',
      tag: 'AuthZEN',
      summary: 'The Policy Decision Point metadata (AuthZEN 1.0 §9)',
      description:
        'The PDP identifier (the service base URL) and its evaluation endpoints. The search APIs are not offered, so their endpoints are absent (§9.1: absence says the PDP does not offer them).',
      access: 'public',
      response: {
        status: 200,
        description: 'The metadata.',
        schema: authzenConfigurationSchema,
      },
      handle: () => ({
        policy_decision_point: base,
        access_evaluation_endpoint: `${base}${AUTHZEN_PATHS.evaluation}`,
        access_evaluations_endpoint: `${base}${AUTHZEN_PATHS.evaluations}`,
      }),
    }),
    defineRoute({
      method: 'post',
      path: AUTHZEN_PATHS.evaluation,
      operationId: 'authzenEvaluation',
      tag: 'AuthZEN',
      summary: 'One access evaluation, decided with a receipt (AuthZEN 1.0 §6)',
      description: `Maps {subject, action, resource, context} to a claim (contract §13), evaluates it under the key's policy (or context.policy) and answers {decision, context}: decision is true exactly when the receipt says proceed; context names the receipt, the verdict, the reasons and, when ESCALATED, where to request approval. The claim_id is derived from the request, so a retried request answers the same receipt. context.dry_run: true simulates and records nothing. ${AUTH}`,
      access: 'key',
      body: evaluationRequestSchema,
      response: { status: 200, description: 'The decision.', schema: authzenDecisionSchema },
      errors: [409],
      handle: ({ body, res }) => authzen.evaluate(body, apiKeySubmitter(res.locals.apiKey!)),
    }),
    defineRoute({
      method: 'post',
      path: AUTHZEN_PATHS.evaluations,
      operationId: 'authzenEvaluations',
      tag: 'AuthZEN',
      summary: 'Several access evaluations in one request (AuthZEN 1.0 §7)',
      description: `Top-level subject, action, resource and context are defaults for each of evaluations (at most 64); options.evaluations_semantic is execute_all (default), deny_on_first_deny or permit_on_first_permit, and the answers stop where the semantic says. An evaluation that fails on its own is {decision: false, context: {error: {status, message}}}. Without evaluations it is one evaluation, answered as /access/v1/evaluation answers. ${AUTH}`,
      access: 'key',
      body: evaluationsRequestSchema,
      response: {
        status: 200,
        description: 'The decisions, in the order of the evaluations.',
        schema: authzenEvaluationsResponseSchema,
      },
      errors: [409],
      async handle({ body, res }) {
        const result = await authzen.evaluations(body, apiKeySubmitter(res.locals.apiKey!));
        if (result.single) return result.answer;
        return {
          evaluations: result.answers.map((answer) =>
            'failed' in answer
              ? evaluationError(STATUS_OF[answer.failed.code], answer.failed.message)
              : answer,
          ),
        };
      },
    }),
  ];
}
