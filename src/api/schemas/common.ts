import { z } from 'zod';

export const errorSchema = z
  .object({
    error: z.string().meta({
      description: 'Human-readable message; for validation failures "<field>: <constraint>".',
    }),
    code: z.string().meta({ example: 'validation_failed' }),
    request_id: z.string(),
  })
  .meta({ id: 'Error' });

export const hashSchema = z.string().meta({ description: '"sha256:" + 64 lowercase hex digits' });

export const headSchema = z
  .object({ sequence: z.number().int(), receipt_hash: hashSchema.nullable() })
  .meta({
    id: 'LedgerHead',
    description: 'The newest receipt of the ledger; sequence 0 and null when empty.',
  });

const counts = <K extends string>(keys: readonly [K, ...K[]]) =>
  z.object(Object.fromEntries(keys.map((k) => [k, z.number().int()])) as Record<K, z.ZodNumber>);
export const verdictCountsSchema = counts(['ALLOWED', 'BLOCKED', 'ESCALATED']).meta({
  id: 'VerdictCounts',
});
export const admissibilityCountsSchema = counts(['ACCEPTED', 'NON_DETERMINISTIC', 'REJECTED']).meta(
  {
    id: 'AdmissibilityCounts',
  },
);

// A schema-level message would also replace the range messages of its checks ("limit: must
// be a whole number" for 0): give it to type errors only.
const onlyForType = (message: string) => (issue: { code: string }) =>
  issue.code === 'invalid_type' ? message : undefined;

/** `limit` of a listing: 1 to 1000, default 100. */
export const limitParam = z.coerce
  .number({ error: onlyForType('must be a whole number') })
  .int({ error: 'must be a whole number' })
  .min(1)
  .max(1000)
  .default(100)
  .meta({ description: 'Page size, 1 to 1000.' });

export const sequenceCursor = z.coerce
  .number({ error: onlyForType('must be a sequence number') })
  .int({ error: 'must be a sequence number' })
  .min(0)
  .max(Number.MAX_SAFE_INTEGER)
  .optional()
  .meta({
    description: 'Cursor: continue after this sequence (the next_after of the previous page).',
  });

export const nameCursor = z
  .string()
  .max(1024)
  .optional()
  .meta({ description: 'Cursor: continue after this name (the next_after of the previous page).' });

export const namePageQuery = z.strictObject({ limit: limitParam, after: nameCursor });

/** Retry-After, in seconds, described for the answer that sends it. */
export const retryAfterHeaders = (description: string) =>
  z.object({ 'Retry-After': z.string().meta({ description }) });
