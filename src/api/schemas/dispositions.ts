import { z } from 'zod';
import { MAX_ID_CHARS } from '../../core/limits.js';
import { DISPOSITION_DECISIONS } from '../../core/receipt-schema.js';

/** The longest reason a disposition records. */
export const MAX_REASON_CHARS = 4096;

// Signed as given: no control characters, and no leading or trailing space that would make two
// spellings of one reviewer.
const CONTROL = /[\p{Cc}\p{Zl}\p{Zp}]/u;
const identifier = (what: string) =>
  z
    .string()
    .min(1, { error: 'must not be empty' })
    .max(MAX_ID_CHARS)
    .refine((s) => !CONTROL.test(s), { error: 'must not contain control characters' })
    .refine((s) => s.trim() === s, { error: 'must not start or end with white space' })
    .meta({ description: what });

export const dispositionRequestSchema = z
  .strictObject({
    decision: z.enum(DISPOSITION_DECISIONS).meta({
      description:
        'approve (verdict ALLOWED, admissibility ACCEPTED) or reject (BLOCKED, REJECTED).',
    }),
    reviewer: z.strictObject({
      id: identifier(
        'Who decided: a stable identifier (login, email, employee id). Must not be the claim’s agent or human_operator.',
      ),
      name: identifier('Display name.').optional(),
    }),
    reason: z
      .string()
      .max(MAX_REASON_CHARS)
      .refine((s) => s.trim().length > 0, { error: 'must not be empty' })
      .meta({ description: `Why, in at most ${MAX_REASON_CHARS} characters; signed as given.` }),
  })
  .meta({ id: 'DispositionRequest' });

/** Headers of the disposition's 200 (a repeated request) beyond the common ones. */
export const dispositionHeaders = z.object({
  'Idempotent-Replay': z.literal('true').optional().meta({
    description:
      'Present, "true", when the answer is the stored disposition of an earlier request by the same key with the same decision, reviewer and reason: nothing new was issued.',
  }),
});
