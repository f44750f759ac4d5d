import { z } from 'zod';
import {
  ADMISSIBILITY_STATUSES,
  DISPOSITION_DECISIONS,
  receiptSchema,
  reviewerSchema,
  subjectSchema,
  VERDICTS,
} from '../../core/receipt-schema.js';
import {
  admissibilityCountsSchema,
  headSchema,
  limitParam,
  sequenceCursor,
  verdictCountsSchema,
} from './common.js';

// Date.parse rolls impossible days over (2026-02-30 becomes 2 March): refuse them instead.
const isCalendarDay = (day: string) => {
  const ms = Date.parse(`${day}T00:00:00Z`);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 10) === day;
};

const isoInstant = z
  .string()
  .refine(
    (v) =>
      /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(v) &&
      !Number.isNaN(Date.parse(v)) &&
      isCalendarDay(v.slice(0, 10)),
    {
      error: 'must be an ISO 8601 date or date-time',
    },
  )
  .transform((v) => new Date(v).toISOString());

// Days before 1970 hold no receipts, and earlier years would not format as YYYY-MM-DD.
const isoDate = z
  .string()
  .refine((v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && isCalendarDay(v) && v >= '1970-01-01', {
    error: 'must be a date YYYY-MM-DD, 1970 or later',
  });

const text = (max: number) => z.string().min(1, { error: 'must not be empty' }).max(max);

export const ledgerQuery = z.strictObject({ limit: limitParam, after: sequenceCursor });

export const ledgerPageSchema = z
  .object({
    receipts: z.array(receiptSchema),
    limit: z.number().int(),
    next_after: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'Cursor of the next page; null on the last page.' }),
    head: headSchema,
  })
  .meta({ id: 'LedgerPage' });

export const searchQuery = z
  .strictObject({
    q: text(256)
      .refine((v) => /[\p{L}\p{N}]/u.test(v), { error: 'must contain a letter or digit' })
      .optional()
      .meta({
        description:
          'Words matched as prefixes in claim text, entity, repository and agent (all must match).',
      }),
    agent: text(256).optional().meta({ description: 'Agent, exactly.' }),
    repo: text(1024).optional().meta({ description: 'Repository, exactly.' }),
    verdict: z.enum(VERDICTS).optional().meta({ description: 'Policy verdict.' }),
    status: z
      .enum(ADMISSIBILITY_STATUSES)
      .optional()
      .meta({ description: 'Admissibility status.' }),
    action_type: z
      .enum(['deployment'])
      .optional()
      .meta({ description: 'deployment: only deployment receipts (subject.action_type).' }),
    environment: text(255).optional().meta({
      description:
        'Only deployment receipts to this environment (subject.environment), exactly; needs repo.',
    }),
    since: isoInstant.optional().meta({ description: 'Issued at or after (ISO 8601).' }),
    until: isoInstant.optional().meta({ description: 'Issued before (ISO 8601).' }),
    order: z
      .enum(['desc', 'asc'])
      .default('desc')
      .meta({ description: 'Newest first (desc, default) or oldest first.' }),
    limit: limitParam,
    after: sequenceCursor,
    include: z.enum(['claims']).optional().meta({
      description: 'claims: the page also carries each receipt’s claim text, in claims.',
    }),
  })
  // One environment's deployments are read from an index by repository and environment.
  .refine((query) => query.environment === undefined || query.repo !== undefined, {
    error: 'needs repo: an environment is searched within one repository',
    path: ['environment'],
  });

const dispositionSummarySchema = z
  .object({
    receipt_id: z.string(),
    sequence: z.number().int(),
    issued_at: z.string(),
    decision: z.enum(DISPOSITION_DECISIONS),
    reviewer: reviewerSchema,
    reason: z.string(),
  })
  .meta({
    id: 'DispositionSummary',
    description: 'The human decision on an ESCALATED receipt: its disposition receipt.',
  });

export const searchPageSchema = z
  .object({
    receipts: z.array(receiptSchema),
    limit: z.number().int(),
    order: z.enum(['desc', 'asc']),
    next_after: z.number().int().nullable(),
    dispositions: z.record(z.string(), dispositionSummarySchema).optional().meta({
      description:
        'Present when a receipt of the page has a disposition: by the receipt_id of that escalated receipt, its decision.',
    }),
    claims: z.record(z.string(), z.string()).optional().meta({
      description:
        'With include=claims: by receipt_id, the claim text each receipt was issued for (hashed into its evidence.inputs_hash, not signed as text).',
    }),
  })
  .meta({ id: 'SearchPage' });

export const receiptParams = z.strictObject({
  id: z.string().max(256).meta({ description: 'The receipt_id of the receipt.' }),
});

export const timelineQuery = z.strictObject({
  repository: text(1024).optional().meta({ description: 'Only this repository, exactly.' }),
  since: isoDate.optional().meta({ description: 'First day (UTC), default 29 days before until.' }),
  until: isoDate
    .optional()
    .meta({ description: 'Last day (UTC), inclusive; default today. At most 366 days in all.' }),
});

export const timelineSchema = z
  .object({
    repository: z.string().nullable(),
    since: z.string(),
    until: z.string(),
    days: z.array(
      z.object({
        date: z.string(),
        total: z.number().int(),
        ALLOWED: z.number().int(),
        BLOCKED: z.number().int(),
        ESCALATED: z.number().int(),
      }),
    ),
  })
  .meta({ id: 'Timeline' });

export const compareQuery = z.strictObject({
  ids: z
    .string()
    .max(20 * 300)
    .transform((v) =>
      v
        .split(',')
        .map((id) => id.trim())
        .filter(Boolean),
    )
    .refine((ids) => ids.length >= 1, { error: 'must name at least one receipt id' })
    .meta({ description: 'Comma-separated receipt ids, at most 20.' }),
});

const receiptSummarySchema = z
  .object({
    receipt_id: z.string(),
    sequence: z.number().int(),
    issued_at: z.string(),
    claim_id: z.string(),
    subject: subjectSchema,
    verdict: z.enum(VERDICTS),
    admissibility: z.enum(ADMISSIBILITY_STATUSES),
    failed_rules: z.array(z.string()),
    evidence: z.object({
      inputs_hash: z.string(),
      source_count: z.number().int(),
      source_types: z.array(z.string()),
      sources: z.array(z.object({ id: z.string(), type: z.string(), confidence: z.number() })),
    }),
    disposition: dispositionSummarySchema
      .optional()
      .meta({ description: 'An ESCALATED receipt that was decided: the decision.' }),
    parent_receipt_id: z
      .string()
      .optional()
      .meta({ description: 'A disposition: the escalated receipt it decides.' }),
  })
  .meta({ id: 'ReceiptSummary' });

export const compareSchema = z
  .object({
    receipts: z.array(receiptSummarySchema),
    rules: z.array(
      z.object({
        rule: z.string(),
        results: z.array(
          z.object({
            receipt_id: z.string(),
            passed: z.boolean().nullable(),
            reason: z.string().nullable(),
          }),
        ),
      }),
    ),
    same_verdict: z.boolean(),
    unknown_ids: z.array(z.string()),
  })
  .meta({ id: 'Comparison' });

export const diffQuery = z.strictObject({
  repository: text(1024).meta({ description: 'Repository, exactly (owner/name).' }),
  pr: text(64).meta({ description: 'Pull request number (or identifier).' }),
});

const change = <T extends z.ZodType>(value: T) => z.object({ from: value, to: value }).nullable();

export const diffSchema = z
  .object({
    repository: z.string(),
    pull_request: z.union([z.number(), z.string()]),
    receipts: z.array(receiptSummarySchema),
    changes: z.array(
      z.object({
        from: z.string(),
        to: z.string(),
        commit: change(z.string().nullable()),
        verdict: change(z.enum(VERDICTS)),
        admissibility: change(z.enum(ADMISSIBILITY_STATUSES)),
        rules_flipped: z.array(z.object({ rule: z.string(), from: z.boolean(), to: z.boolean() })),
        sources_added: z.array(z.string()),
        sources_removed: z.array(z.string()),
      }),
    ),
  })
  .meta({ id: 'PullRequestDiff' });

export const reposSchema = z
  .object({
    repositories: z.array(
      z.object({
        repository: z.string(),
        total: z.number().int(),
        by_verdict: verdictCountsSchema,
        by_admissibility: admissibilityCountsSchema,
        acceptance_rate: z.number().meta({ description: 'Share of ACCEPTED receipts, 0 to 1.' }),
        last_receipt: z.object({
          receipt_id: z.string(),
          sequence: z.number().int(),
          issued_at: z.string(),
        }),
      }),
    ),
    limit: z.number().int(),
    next_after: z.string().nullable(),
  })
  .meta({ id: 'Repositories' });

export const agentsSchema = z
  .object({
    agents: z.array(
      z.object({
        agent: z.string(),
        total: z.number().int(),
        by_verdict: verdictCountsSchema,
        by_admissibility: admissibilityCountsSchema,
        acceptance_rate: z.number(),
        models: z.array(z.string()),
        first_seen: z.string(),
        last_seen: z.string(),
      }),
    ),
    limit: z.number().int(),
    next_after: z.string().nullable(),
  })
  .meta({ id: 'Agents' });

export const overviewSchema = z
  .object({
    receipts: z.number().int(),
    agents: z.number().int(),
    repositories: z.number().int(),
    acceptance_rate: z.number(),
    by_verdict: verdictCountsSchema,
    by_admissibility: admissibilityCountsSchema,
    last_24h: z.object({ receipts: z.number().int(), by_verdict: verdictCountsSchema }),
    head: headSchema,
    generated_at: z.string(),
  })
  .meta({ id: 'Overview' });

export const ledgerStatsSchema = z
  .object({
    total: z.number().int(),
    accepted: z.number().int(),
    blocked: z.number().int(),
    escalated: z.number().int(),
    non_deterministic: z.number().int(),
    rejected: z.number().int(),
    allowed: z.number().int(),
    by_verdict: verdictCountsSchema,
    by_admissibility: admissibilityCountsSchema,
    agents: z.array(z.string()),
    repositories: z.array(z.string()),
    dispositions: z
      .object({
        approved: z.number().int(),
        rejected: z.number().int(),
        pending: z.number().int(),
      })
      .meta({
        description:
          'Human decisions on the escalations counted here (whoever recorded them), and the escalations still undecided. Each disposition is also counted in total and by_verdict as the receipt it is (ALLOWED or BLOCKED).',
      }),
    head: headSchema,
  })
  .meta({ id: 'LedgerStats' });
