import { z } from 'zod';
import { RAN_WITHOUT_ALLOW } from '@svc/verify';
import { RULE_ORDER } from './rules/threshold-rules.js';

// The receipt of contract §2 as zod schemas: the TypeScript types of receipt.ts are inferred
// from these, and the OpenAPI document is generated from them.

const hash = z
  .string()
  .regex(/^sha256:[0-9a-f]{64}$/)
  .meta({ description: '"sha256:" + 64 lowercase hex digits' });
const timestamp = z
  .string()
  .meta({ description: 'ISO 8601 UTC timestamp', example: '2026-01-15T10:00:00.000Z' });

export const VERDICTS = ['ALLOWED', 'BLOCKED', 'ESCALATED'] as const;
export const ADMISSIBILITY_STATUSES = ['ACCEPTED', 'NON_DETERMINISTIC', 'REJECTED'] as const;

export const verdictSchema = z.enum(VERDICTS).meta({ id: 'Verdict' });
export const admissibilityStatusSchema = z
  .enum(ADMISSIBILITY_STATUSES)
  .meta({ id: 'AdmissibilityStatus' });

export const DISPOSITION_RULE = 'human_disposition';
export const DISPOSITION_DECISIONS = ['approve', 'reject'] as const;
/**
 * Who decided an escalation (contract §11): `user`, an identity the API key that records the
 * decision vouches for; `github_user`, a GitHub login the GitHub App read from GitHub.
 */
export const REVIEWER_KINDS = ['user', 'github_user'] as const;

export const reviewerSchema = z
  .object({
    kind: z.enum(REVIEWER_KINDS),
    id: z.string(),
    name: z.string().optional(),
  })
  .meta({ id: 'Reviewer', description: 'The human who decided an escalated receipt.' });

export const ruleResultSchema = z
  .object({
    rule: z.union([
      z.enum(RULE_ORDER),
      z.literal(DISPOSITION_RULE),
      z.literal(RAN_WITHOUT_ALLOW),
      z
        .string()
        .regex(/^rule:[a-z0-9][a-z0-9_-]{0,62}$/)
        .meta({ description: 'A conditional rule of the policy (contract §10).' }),
    ]),
    passed: z.boolean(),
    reason: z.string(),
    reviewer: reviewerSchema.optional().meta({
      description: 'human_disposition only: the reviewer whose decision the rule records.',
    }),
  })
  .meta({ id: 'RuleResult' });

export const subjectSchema = z
  .object({
    entity: z.string().optional(),
    agent: z.string().optional(),
    repository: z.string().optional(),
    pull_request: z.union([z.number(), z.string()]).optional(),
    action_type: z.string().optional(),
    target_system: z.string().optional(),
    commit: z.string().optional(),
    branch: z.string().optional(),
    environment: z.string().optional(),
  })
  .meta({ id: 'ReceiptSubject', description: 'Members the claim does not supply are omitted.' });

export const attestationSchema = z
  .object({
    signer: z.string().meta({ example: 'svc-server' }),
    algorithm: z.literal('Ed25519'),
    key_id: hash.meta({
      description: 'SHA-256 over the DER SubjectPublicKeyInfo of the signing key',
    }),
    signature: z.string().meta({ description: 'base64 of the 64-byte Ed25519 signature' }),
    timestamp,
  })
  .meta({ id: 'Attestation' });

export const chainPositionSchema = z
  .object({
    sequence: z.number().int().min(1),
    previous_receipt_hash: hash.nullable(),
    receipt_hash: hash,
  })
  .meta({ id: 'ChainPosition', description: 'Outside the signed core of receipt-core-v1.' });

export const submitterSchema = z
  .discriminatedUnion('kind', [
    z.object({
      kind: z.literal('api_key'),
      key_id: z.string().meta({ example: 'kid_01JHGZ3Q4W5E6R7T8Y9U0I1O2P' }),
    }),
    z.object({
      kind: z.literal('github_app'),
      app_id: z.number().int(),
      installation_id: z.number().int(),
    }),
  ])
  .meta({ id: 'Submitter', description: 'receipt-core-v2: who asked for the receipt.' });

export const signedPositionSchema = z
  .object({
    log: z.string().meta({ description: "The ledger's origin string." }),
    sequence: z.number().int().min(1),
    previous_receipt_hash: hash.nullable(),
  })
  .meta({
    id: 'SignedPosition',
    description: 'receipt-core-v2: the chain position, signed; equal to the same members of chain.',
  });

export const dispositionSchema = z
  .object({
    parent_receipt_id: z.string(),
    parent_receipt_hash: hash.meta({ description: "The parent's chain.receipt_hash." }),
    decision: z.enum(DISPOSITION_DECISIONS),
    reviewer: reviewerSchema,
    reason: z.string(),
  })
  .meta({
    id: 'Disposition',
    description:
      'receipt-core-v2 dispositions only (signed): the human decision on an ESCALATED receipt, linked to it by id and hash.',
  });

export const OUTCOME_STATUSES = ['succeeded', 'failed'] as const;

export const outcomeSchema = z
  .object({
    parent_receipt_id: z.string().nullable().meta({
      description: 'The decision on the call; null when the ledger holds none (ran_without_allow).',
    }),
    parent_receipt_hash: hash
      .nullable()
      .meta({ description: "The decision's chain.receipt_hash." }),
    status: z.enum(OUTCOME_STATUSES),
    exit_code: z.number().int().optional(),
    output_digest: hash.optional().meta({ description: "SHA-256 of the call's output." }),
  })
  .meta({
    id: 'Outcome',
    description:
      'receipt-core-v2 outcomes only (signed): what the harness reported after a tool call, linked to its decision by id and hash (contract §12).',
  });

export const receiptCoreSchema = z.object({
  receipt_id: z.string().meta({ example: 'dr-01JHGZ3Q4W5E6R7T8Y9U0I1O2P' }),
  issued_at: timestamp,
  claim_id: z.string(),
  admissibility: z.object({ status: admissibilityStatusSchema, reason: z.string() }),
  subject: subjectSchema,
  evidence: z.object({
    inputs_hash: hash,
    source_count: z.number().int(),
    source_types: z.array(z.string()),
  }),
  replay: z.object({ deterministic: z.boolean(), replay_hash: hash }),
  policy: z.object({
    status: z.enum(['PASS', 'FAIL', 'ESCALATE']),
    verdict: verdictSchema,
    checks: z
      .array(ruleResultSchema)
      .meta({ description: 'The failed rules; empty when all passed.' }),
    name: z.string().optional().meta({
      description: 'receipt-core-v2: the applied policy (a built-in, "default", or a custom name).',
    }),
    config_hash: hash.optional().meta({
      description: 'receipt-core-v2: H(effective policy config with defaults filled in).',
    }),
    overrides: z.boolean().optional().meta({
      description: "receipt-core-v2: whether the claim's policyConfig changed the named policy.",
    }),
  }),
  signed_fields: z.object({ contract: z.string(), fields: z.array(z.string()) }),
  submitter: submitterSchema.optional(),
  position: signedPositionSchema.optional(),
  disposition: dispositionSchema.optional(),
  outcome: outcomeSchema.optional(),
});

export const receiptSchema = receiptCoreSchema
  .extend({ attestations: z.array(attestationSchema), chain: chainPositionSchema })
  .meta({
    id: 'Receipt',
    description:
      'A decision receipt. New receipts are receipt-core-v2 (submitter, position and the policy name, config hash and overrides signed); receipt-core-v1 receipts lack those members.',
  });
