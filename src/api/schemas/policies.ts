import { z } from 'zod';
import { policyNameSchema } from '../../core/policies.js';
import { policyConfigSchema } from '../../core/policy-config.js';
import { claimInputSchema } from '../../core/claim-schema.js';
import { VERDICTS } from '../../core/receipt-schema.js';

export const policyConfigDoc = policyConfigSchema.meta({ id: 'PolicyConfig' });

export const createPolicySchema = z
  .strictObject({
    name: policyNameSchema,
    description: z.string().max(1024).optional(),
    config: policyConfigDoc,
  })
  .meta({ id: 'PolicyCreate' });

export const policySchema = z
  .object({
    name: z.string(),
    description: z.string().nullable(),
    builtin: z.boolean(),
    config: policyConfigSchema,
    effective: policyConfigSchema.required(),
    created_at: z.string().nullable(),
  })
  .meta({ id: 'Policy' });

export const policyListSchema = z
  .object({ policies: z.array(policySchema) })
  .meta({ id: 'PolicyList' });

export const templateListSchema = z
  .object({
    templates: z.array(
      z.object({
        id: z.string(),
        title: z.string(),
        description: z.string(),
        expected_verdict: z.enum(VERDICTS),
        claim: claimInputSchema,
      }),
    ),
  })
  .meta({ id: 'TemplateList' });
