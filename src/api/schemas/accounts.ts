import { z } from 'zod';

export const signupRequestSchema = z
  .strictObject({
    // Surrounding white space is not part of the address (the key lookup ignores it too).
    email: z
      .string()
      .trim()
      .pipe(z.email({ error: 'must be an e-mail address' }).max(254)),
  })
  .meta({ id: 'SignupRequest' });

export const signupResponseSchema = z
  .object({
    api_key: z.string().meta({ example: 'sk_svc_6f1c2d3e-4a5b-4c6d-8e7f-901234567890' }),
    message: z.string(),
  })
  .meta({ id: 'SignupResponse' });

const limitValue = z.union([z.number().int(), z.literal('unlimited')]);

export const accountSchema = z
  .object({
    email: z.string(),
    tier: z.enum(['free', 'pilot', 'enterprise']),
    limit: limitValue,
    remaining: limitValue,
    window_seconds: z.number().int(),
    reset_at: z.string().nullable(),
    usage: z.object({ requests_in_window: z.number().int(), receipts_issued: z.number().int() }),
    created_at: z.string(),
  })
  .meta({ id: 'Account' });
