import { z } from 'zod';
import { receiptSchema, VERDICTS } from '../../core/receipt-schema.js';
import { limitParam, sequenceCursor, verdictCountsSchema } from './common.js';

const text = (max: number) => z.string().min(1, { error: 'must not be empty' }).max(max);

export const sessionListQuery = z.strictObject({
  agent: text(256).optional().meta({ description: 'Agent, exactly.' }),
  repo: text(1024).optional().meta({ description: 'Repository, exactly.' }),
  harness: text(64)
    .optional()
    .meta({ description: 'Harness, exactly (claude-code, codex, cursor, …).' }),
  covered: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .transform((v) => v === 'true')
    .optional()
    .meta({ description: 'Only covered sessions (true) or only sessions not covered (false).' }),
  limit: limitParam,
  after: sequenceCursor.meta({
    description:
      'Cursor: continue after this session in the newest-first order (the next_after of the previous page).',
  }),
});

export const sessionParams = z.strictObject({
  id: text(256).meta({ description: "The harness's session id." }),
});

export const sessionRecordsQuery = z.strictObject({ limit: limitParam, after: sequenceCursor });

export const sessionSchema = z
  .object({
    session_id: z.string(),
    harness: z.string(),
    agent: z.string().nullable(),
    repository: z.string().nullable(),
    first_sequence: z.number().int(),
    last_sequence: z.number().int(),
    first_seen: z.string(),
    last_seen: z.string(),
    decisions: verdictCountsSchema.meta({ description: 'Tool-call decisions by verdict.' }),
    dispositions: z.number().int(),
    outcomes: z.number().int(),
    ran_without_allow: z
      .number()
      .int()
      .meta({ description: 'Outcomes of calls that had no ALLOWED decision.' }),
    missing_outcomes: z.number().int().meta({
      description:
        'ALLOWED decisions without an outcome, counted when the harness reports outcomes in the session.',
    }),
    covered: z.boolean().meta({
      description:
        'Every outcome had an ALLOWED decision, none ran without one, and every ALLOWED decision has its outcome where the harness reports outcomes (contract §12).',
    }),
    started_at: z.string().nullable().meta({
      description:
        "When the harness's latest session start event came (svc's clock); null when it sent none.",
    }),
    ended_at: z.string().nullable().meta({
      description:
        "When the harness's latest session end event came, unless the session started again after it; null while the session is open or when the harness sends no end event.",
    }),
    end_reason: z.string().nullable().meta({
      description: "That end event's reason as the harness gave it (exit, clear, completed, …).",
    }),
  })
  .meta({ id: 'Session' });

export const sessionPageSchema = z
  .object({
    sessions: z.array(sessionSchema),
    limit: z.number().int(),
    next_after: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'Cursor of the next page; null on the last page.' }),
  })
  .meta({ id: 'SessionPage' });

const sessionRecordSchema = z
  .object({
    receipt_id: z.string(),
    sequence: z.number().int(),
    issued_at: z.string(),
    kind: z.enum(['decision', 'disposition', 'outcome']),
    verdict: z.enum(VERDICTS),
    tool_name: z.string(),
    input_digest: z.string(),
    parent_receipt_id: z
      .string()
      .nullable()
      .meta({ description: "An outcome's decision, or a disposition's escalated receipt." }),
    ran_without_allow: z.boolean(),
    tool: z.unknown().meta({
      description: "The claim's action.tool: harness, name, input_digest and redacted summary.",
    }),
    git_head: z.string().nullable().meta({
      description:
        "An outcome's action.git_head: the HEAD commit of the session's repository after the call, as svc-hook reported it; null otherwise.",
    }),
    receipt: receiptSchema,
  })
  .meta({ id: 'SessionRecord' });

export const sessionDetailSchema = z
  .object({
    session: sessionSchema,
    records: z.array(sessionRecordSchema),
    next_after: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'Cursor of the next page of records; null on the last page.' }),
  })
  .meta({ id: 'SessionDetail' });
