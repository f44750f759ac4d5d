import { z } from 'zod';
import { emailSchema } from '../../core/email.js';

const keyIdSchema = z.string().meta({
  example: 'kid_01JHGZ3Q4W5E6R7T8Y9U0I1O2P',
  description: "The key's public identifier: the submitter.key_id of its receipts.",
});

export const signupRequestSchema = z
  .strictObject({
    email: emailSchema,
  })
  .meta({ id: 'SignupRequest' });

export const signupResponseSchema = z
  .object({
    api_key: z.string().meta({
      example: 'sk_svc_6f1c2d3e-4a5b-4c6d-8e7f-901234567890',
      description: 'Shown only here: svc keeps a digest of it, and cannot show it again.',
    }),
    key_id: keyIdSchema,
    message: z.string(),
  })
  .meta({ id: 'IssuedKey' });

export const revokedSchema = z
  .object({ revoked: z.literal(true), key_id: keyIdSchema })
  .meta({ id: 'RevokedKey' });

const limitValue = z.union([z.number().int(), z.literal('unlimited')]);

export const accountSchema = z
  .object({
    key_id: keyIdSchema,
    email: z.string(),
    locked_policy: z.string().nullable().meta({
      description: 'The policy an operator locked this key to: its claims are evaluated under it.',
    }),
    tier: z.enum(['free', 'pilot', 'enterprise']),
    limit: limitValue,
    remaining: limitValue,
    window_seconds: z.number().int(),
    reset_at: z.string().nullable(),
    usage: z.object({ requests_in_window: z.number().int(), receipts_issued: z.number().int() }),
    created_at: z.string(),
  })
  .meta({ id: 'Account' });
