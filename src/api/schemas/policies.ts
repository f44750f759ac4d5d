import { z } from 'zod';
import { policyNameSchema } from '../../core/policies.js';
import { effectivePolicyConfigSchema, policyConfigSchema } from '../../core/policy-config.js';
import { OVERRIDE_MODES } from '../../core/policy-overrides.js';
import { claimInputSchema } from '../../core/claim-schema.js';
import { VERDICTS } from '../../core/receipt-schema.js';

export const policyConfigDoc = policyConfigSchema.meta({ id: 'PolicyConfig' });

export const createPolicySchema = z
  .strictObject({
    name: policyNameSchema,
    description: z.string().max(1024).optional(),
    config: policyConfigDoc,
    overrides: z.enum(OVERRIDE_MODES).optional().meta({
      description:
        'How far a claim\'s policyConfig may move this policy: "tighten" (default; only stricter values), "none", or "any".',
    }),
  })
  .meta({ id: 'PolicyCreate' });

export const policyNameParams = z.object({
  name: policyNameSchema.meta({ description: 'The name of the policy.' }),
});

export const policySchema = z
  .object({
    name: z.string(),
    description: z.string().nullable(),
    builtin: z.boolean(),
    shared: z.boolean().meta({ description: 'Created by the operator and usable by every key.' }),
    overrides: z.enum(OVERRIDE_MODES),
    config: policyConfigSchema,
    effective: effectivePolicyConfigSchema,
    config_hash: z.string().meta({
      description:
        'H(effective): a receipt evaluated under this policy without overrides carries it as policy.config_hash; pin it.',
    }),
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
