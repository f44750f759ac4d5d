import { apiKeySubmitter, type ClaimService } from '../../services/claims.js';
import type { Metrics } from '../../services/metrics.js';
import { defineRoute, type RouteDef } from '../route-table.js';
import {
  claimInputDoc,
  evaluateHeaders,
  evaluateResponseSchema,
  simulateResponseSchema,
} from '../schemas/claims.js';

export function claimRoutes(claims: ClaimService, metrics: Metrics): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/evaluate',
      operationId: 'evaluateClaim',
      tag: 'Claims',
      summary: 'Evaluate a claim and issue a signed receipt',
      description:
        'Evaluates the claim against its policy (the key\'s locked policy, else the one the claim names, else "default"), checks replay, signs a receipt-core-v2 receipt naming the submitter, the policy and the ledger position, and appends it. claim_id is unique per account: the same claim_id with the same content answers the stored receipt with header Idempotent-Replay: true; with different content 409 claim_conflict. A policyConfig the policy does not allow is 400 policy_override_refused.',
      access: 'key',
      body: claimInputDoc,
      response: {
        status: 200,
        description: 'The evaluation and its receipt.',
        schema: evaluateResponseSchema,
      },
      errors: [409],
      headers: { 200: evaluateHeaders },
      async handle({ body, res }) {
        const { response, replayed } = await claims.evaluate(
          body,
          apiKeySubmitter(res.locals.apiKey!),
        );
        if (replayed) {
          res.setHeader('Idempotent-Replay', 'true');
        } else {
          metrics.receiptsIssued.inc({
            verdict: response.receipt.policy.verdict,
            admissibility: response.receipt.admissibility.status,
          });
        }
        return response;
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/simulate',
      operationId: 'simulateClaim',
      tag: 'Claims',
      summary: 'Evaluate a claim without issuing or storing anything',
      description:
        'The evaluation of evaluate; the receipt part is an unsigned preview (attestations empty, chain null).',
      access: 'key',
      body: claimInputDoc,
      response: {
        status: 200,
        description: 'The evaluation and an unsigned receipt preview.',
        schema: simulateResponseSchema,
      },
      handle: ({ body, res }) => claims.simulate(body, apiKeySubmitter(res.locals.apiKey!)),
    }),
  ];
}
