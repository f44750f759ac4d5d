import type { ClaimService } from '../../services/claims.js';
import type { Metrics } from '../../services/metrics.js';
import { defineRoute, type RouteDef } from '../route-table.js';
import {
  claimInputDoc,
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
        'Evaluates the claim against its policy, checks replay, signs a receipt and appends it to the ledger. The same claim_id with the same content answers the stored receipt with header Idempotent-Replay: true; with different content 409 claim_conflict.',
      access: 'key',
      body: claimInputDoc,
      response: {
        status: 200,
        description: 'The evaluation and its receipt.',
        schema: evaluateResponseSchema,
      },
      errors: [409],
      async handle({ body, res }) {
        const { response, replayed } = await claims.evaluate(body, {
          apiKeyId: res.locals.apiKey!.id,
        });
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
      handle: ({ body }) => claims.simulate(body),
    }),
  ];
}
