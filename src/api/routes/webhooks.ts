import type { WebhookService } from '../../services/webhooks.js';
import { defineRoute, type RouteDef } from '../route-table.js';
import {
  deliveriesQuery,
  deliveryListSchema,
  registeredWebhookSchema,
  registerWebhookSchema,
  webhookIdParams,
  webhookListSchema,
} from '../schemas/webhooks.js';

export function webhookRoutes(webhooks: WebhookService): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/webhooks/outbound',
      operationId: 'registerWebhook',
      tag: 'Webhooks',
      summary: 'Register a receiver of receipt.created events',
      description:
        'Every receipt written after the registration is POSTed to the URL, signed with the returned secret (docs/API.md, "Outbound webhooks"). At most 20 receivers per key: the 21st is 409 receiver_limit. A refused URL is 400 validation_failed naming the reason.',
      access: 'key',
      body: registerWebhookSchema,
      response: {
        status: 201,
        description: 'The receiver, with its secret (shown only here).',
        schema: registeredWebhookSchema,
      },
      errors: [409],
      handle: ({ body, res }) => webhooks.register(res.locals.apiKey!.id, body),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/webhooks/outbound',
      operationId: 'listWebhooks',
      tag: 'Webhooks',
      summary: "The caller's receivers (never their secrets)",
      description:
        'The receivers registered by the calling key, oldest first, active or disabled (with when and why). Secrets are shown only when a receiver is registered, never here.',
      access: 'key',
      response: { status: 200, description: 'Oldest first.', schema: webhookListSchema },
      handle: ({ res }) => webhooks.list(res.locals.apiKey!.id),
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/webhooks/outbound/:id',
      operationId: 'deleteWebhook',
      tag: 'Webhooks',
      summary: 'Remove a receiver',
      description: 'Its pending deliveries are not sent. Another key’s receiver is 404.',
      access: 'key',
      params: webhookIdParams,
      response: { status: 204, description: 'Removed.', empty: true },
      errors: [404],
      handle: ({ params, res }) => webhooks.remove(res.locals.apiKey!.id, params.id),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/webhooks/outbound/:id/deliveries',
      operationId: 'listWebhookDeliveries',
      tag: 'Webhooks',
      summary: 'Deliveries to a receiver and their attempts',
      description: 'Newest delivery first; each with every attempt made so far.',
      access: 'key',
      params: webhookIdParams,
      query: deliveriesQuery,
      response: { status: 200, description: 'Deliveries.', schema: deliveryListSchema },
      errors: [404],
      handle: ({ params, query, res }) =>
        webhooks.deliveries(res.locals.apiKey!.id, params.id, query.limit),
    }),
  ];
}
