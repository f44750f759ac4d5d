import { z } from 'zod';
import { WEBHOOK_EVENTS } from '../../ports/webhook-store.js';
import { limitParam } from './common.js';

export const registerWebhookSchema = z
  .strictObject({
    url: z.string().min(1).max(2048).meta({
      description:
        'https URL of the receiver (http only where the operator allows private URLs). It must not resolve to a loopback, private, link-local, unique-local, CGNAT, multicast or metadata address.',
      example: 'https://hooks.example.com/svc',
    }),
    event: z.enum(WEBHOOK_EVENTS, { error: 'must be "receipt.created", the only event' }),
  })
  .meta({ id: 'WebhookRegistration' });

export const registeredWebhookSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    event: z.enum(WEBHOOK_EVENTS),
    secret: z.string().meta({
      description:
        'Signing secret ("whsec_" + base64 of 32 bytes). Shown only in this response; keep it.',
    }),
    created_at: z.string(),
  })
  .meta({ id: 'RegisteredWebhook' });

export const webhookReceiverSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    event: z.enum(WEBHOOK_EVENTS),
    status: z.enum(['active', 'disabled']).meta({
      description: 'disabled after the receiver answered 410 Gone; nothing is sent to it.',
    }),
    created_at: z.string(),
    disabled_at: z.string().nullable(),
    disabled_reason: z.string().nullable(),
  })
  .meta({ id: 'WebhookReceiver' });

export const webhookListSchema = z
  .object({ receivers: z.array(webhookReceiverSchema) })
  .meta({ id: 'WebhookReceiverList' });

export const webhookIdParams = z.strictObject({
  id: z.string().max(64).meta({ description: 'Receiver id (wh_...).' }),
});

export const deliveriesQuery = z.strictObject({ limit: limitParam });

const attemptSchema = z.object({
  attempt: z.number().int(),
  at: z.string(),
  status_code: z.number().int().nullable().meta({ description: 'null when no answer came.' }),
  error: z.string().nullable(),
  duration_ms: z.number().int(),
  next_attempt_at: z.string().nullable().meta({ description: 'null after the last attempt.' }),
});

export const deliveryListSchema = z
  .object({
    receiver: webhookReceiverSchema,
    deliveries: z.array(
      z.object({
        id: z.string().meta({ description: 'The delivery id: X-Svc-Delivery and webhook-id.' }),
        receipt_id: z.string(),
        event: z.enum(WEBHOOK_EVENTS),
        status: z.enum(['pending', 'delivered', 'failed']),
        created_at: z.string(),
        finished_at: z.string().nullable(),
        attempts: z.array(attemptSchema),
      }),
    ),
  })
  .meta({ id: 'WebhookDeliveryList' });
