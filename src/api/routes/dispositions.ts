import { SvcError } from '../../core/errors.js';
import { apiKeySubmitter } from '../../services/claims.js';
import type { DispositionService } from '../../services/dispositions.js';
import type { Metrics } from '../../services/metrics.js';
import { readScopeOf } from '../read-scope.js';
import { defineRoute, type RouteDef } from '../route-table.js';
import { evaluateResponseSchema } from '../schemas/claims.js';
import { dispositionHeaders, dispositionRequestSchema } from '../schemas/dispositions.js';
import { receiptParams } from '../schemas/ledger.js';

export function dispositionRoutes(
  dispositions: DispositionService,
  metrics: Metrics,
  options: { publicReads: boolean },
): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/receipts/:id/disposition',
      operationId: 'disposeReceipt',
      tag: 'Claims',
      summary: 'Record the human decision on an ESCALATED receipt, as a signed receipt',
      description:
        'Writes a disposition receipt (receipt-core-v2 signing a `disposition` member: the parent receipt id and chain.receipt_hash, the decision, the reviewer {kind: "user", id, name} and the reason), appended to the same chain and log as every receipt, with a receipt.created webhook. approve gives verdict ALLOWED and admissibility ACCEPTED, reject BLOCKED and REJECTED; policy.rules holds the one rule human_disposition. 403 forbidden for a key without the reviewer capability (granted by the operator: `svc keys create --reviewer`, `svc keys set-reviewer <email|key_id> on`; never a signup key), nothing written; 404 for a receipt this key cannot read; 409 not_escalated for a receipt that is not ESCALATED; 409 already_disposed when it has a disposition already; 403 separation_of_duties when reviewer.id is the claim’s agent or human_operator, or this key’s account submitted the escalated claim. The same request again by the same account (also with a rotated key) answers the stored disposition with 200 and Idempotent-Replay: true.',
      access: 'key',
      params: receiptParams,
      body: dispositionRequestSchema,
      response: {
        status: 201,
        description: 'The disposition receipt, in the shape evaluate answers.',
        schema: evaluateResponseSchema,
      },
      otherSuccess: {
        200: 'The same request again by the same account (also with a rotated key): the stored disposition, nothing written (Idempotent-Replay: true).',
      },
      errors: [403, 404, 409],
      headers: { 200: dispositionHeaders },
      async handle({ params, body, res }) {
        const key = res.locals.apiKey!;
        // Deciding an escalation is the operator's grant: signup is self-service, so without
        // it the gated agent could sign up a second address and approve its own escalation.
        if (!key.reviewer)
          throw new SvcError(
            'forbidden',
            'Recording a disposition needs the reviewer capability, which this key does not have: the operator grants it (svc keys set-reviewer <email|key_id> on)',
          );
        const { response, replayed } = await dispositions.dispose(
          params.id,
          {
            decision: body.decision,
            reviewer: {
              kind: 'user',
              id: body.reviewer.id,
              ...(body.reviewer.name === undefined ? {} : { name: body.reviewer.name }),
            },
            reason: body.reason,
          },
          apiKeySubmitter(key),
          readScopeOf(res, options.publicReads),
        );
        if (replayed) {
          // Nothing new was written: 200, as evaluate answers a repeated claim.
          res.setHeader('Idempotent-Replay', 'true');
          res.status(200).json(response);
          return;
        }
        metrics.receiptsIssued.inc({
          verdict: response.receipt.policy.verdict,
          admissibility: response.receipt.admissibility.status,
        });
        return response;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/receipts/:id/disposition',
      operationId: 'getDisposition',
      tag: 'Ledger',
      summary: 'The disposition of an escalated receipt',
      description:
        'The disposition receipt of receipt :id, in the shape evaluate answers. 404 when the receipt is unknown, unreadable to this caller (private reads), or has no disposition.',
      access: 'read',
      params: receiptParams,
      response: {
        status: 200,
        description: 'The disposition receipt.',
        schema: evaluateResponseSchema,
      },
      errors: [404],
      handle: ({ params, res }) =>
        dispositions.dispositionOf(params.id, readScopeOf(res, options.publicReads)),
    }),
  ];
}
