import { z } from 'zod';

export const verifyRequestSchema = z
  .looseObject({}, { error: 'expected a receipt object, as returned under "receipt" by evaluate' })
  .meta({
    id: 'ReceiptToVerify',
    description:
      'A receipt exactly as evaluate returned it under "receipt". Any JSON object is checked; problems are FAIL checks.',
  });

export const verifyResponseSchema = z
  .object({
    valid: z.boolean(),
    receipt_id: z.string().nullable(),
    admissibility: z.string().nullable(),
    verification_depth: z.literal('cryptographic'),
    checks: z.array(
      z.object({
        name: z.string(),
        layer: z.enum(['structural', 'cryptographic', 'ledger']),
        status: z.enum(['PASS', 'FAIL', 'UNVERIFIED', 'SKIPPED']),
        detail: z.string().optional(),
      }),
    ),
  })
  .meta({ id: 'VerifyResponse' });
