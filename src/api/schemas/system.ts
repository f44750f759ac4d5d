import { z } from 'zod';

const check = z.object({ ok: z.boolean(), latency_ms: z.number(), error: z.string().optional() });

export const healthQuery = z.strictObject({
  // Any other value is the shallow check, as before deep checks existed.
  deep: z.string().max(16).optional().meta({
    description: '"true" adds store, signing-key and job-queue checks; 503 when one fails.',
  }),
});

export const healthSchema = z
  .object({
    ok: z.boolean(),
    service: z.string(),
    version: z.string(),
    checks: z.object({ store: check, signer: check, jobs: check }).optional(),
  })
  .meta({ id: 'Health' });

export const statusSchema = z
  .object({
    service: z.string(),
    version: z.string(),
    spec_version: z.string(),
    started_at: z.string(),
    uptime_seconds: z.number().int(),
    receipts: z.object({
      total: z.number().int(),
      accepted: z.number().int(),
      blocked: z.number().int(),
      escalated: z.number().int(),
      non_deterministic: z.number().int(),
    }),
    memory: z.object({
      rss_bytes: z.number(),
      heap_used_bytes: z.number(),
      heap_total_bytes: z.number(),
    }),
    runtime: z.object({
      name: z.string(),
      version: z.string(),
      platform: z.string(),
      arch: z.string(),
    }),
    store: z.string(),
  })
  .meta({ id: 'Status' });

export const textSchema = z.string();
