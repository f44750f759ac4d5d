import { z } from 'zod';
import { claimInputSchema } from '../../core/claim-schema.js';
import { effectivePolicyConfigSchema } from '../../core/policy-config.js';
import {
  admissibilityStatusSchema,
  attestationSchema,
  receiptCoreSchema,
  receiptSchema,
  ruleResultSchema,
  verdictSchema,
} from '../../core/receipt-schema.js';

export const claimInputDoc = claimInputSchema.meta({ id: 'ClaimInput' });

const decisionSchema = z
  .object({
    proceed: z
      .boolean()
      .meta({ description: 'True only for verdict ALLOWED with admissibility ACCEPTED.' }),
    verdict: verdictSchema,
    admissibility: admissibilityStatusSchema,
    reason: z.string(),
  })
  .meta({ id: 'Decision' });

const evaluationParts = {
  claim: claimInputDoc,
  decision: decisionSchema,
  policy: z.object({
    verdict: verdictSchema,
    reason: z.string(),
    rules: z
      .array(ruleResultSchema)
      .meta({ description: 'Every rule evaluated, in contract order.' }),
    config: effectivePolicyConfigSchema.meta({
      description: 'The effective policy, defaults filled in.',
    }),
  }),
  replay: z.object({ passed: z.boolean(), deterministic: z.boolean(), replay_hash: z.string() }),
};

export const evaluateResponseSchema = z
  .object({ ...evaluationParts, receipt: receiptSchema })
  .meta({ id: 'EvaluateResponse' });

export const simulateResponseSchema = z
  .object({
    simulated: z.literal(true),
    ...evaluationParts,
    receipt: receiptCoreSchema
      .extend({
        position: z.null(),
        attestations: z.array(attestationSchema).max(0),
        chain: z.null(),
      })
      .meta({
        id: 'SimulatedReceipt',
        description:
          'Unsigned preview: position null, attestations empty, chain null; never passes verify.',
      }),
  })
  .meta({ id: 'SimulateResponse' });

/** Headers of evaluate's 200 beyond the common ones. */
export const evaluateHeaders = z.object({
  'Idempotent-Replay': z.literal('true').optional().meta({
    description:
      'Present, "true", when the answer is the stored receipt of an earlier request with the same claim_id and content: nothing new was issued.',
  }),
});
