import { z } from 'zod';
import { MAX_SOURCES } from './limits.js';

export const policyConfigSchema = z.strictObject({
  minSources: z.number().int().min(0).max(MAX_SOURCES).optional(),
  minSourceTypes: z.number().int().min(0).max(MAX_SOURCES).optional(),
  minConfidence: z.number().min(0).max(1).optional(),
  requireProvenance: z.boolean().optional(),
  requireReplay: z.boolean().optional(),
  requireHumanApproval: z.boolean().optional(),
  maxRiskScope: z.number().int().min(0).max(10_000).optional(),
});

export type PolicyConfigInput = z.infer<typeof policyConfigSchema>;
export type PolicyConfig = Required<PolicyConfigInput>;

/** Defaults of the receipt contract (§5), applied field by field. */
export const DEFAULT_POLICY: Readonly<PolicyConfig> = Object.freeze({
  minSources: 1,
  minSourceTypes: 1,
  minConfidence: 0.5,
  requireProvenance: false,
  requireReplay: true,
  requireHumanApproval: false,
  maxRiskScope: 5,
});

/** Layers overrides over a base, ignoring members that are absent. Returns a fresh object. */
export function resolvePolicy(...layers: (PolicyConfigInput | undefined)[]): PolicyConfig {
  const effective: PolicyConfig = { ...DEFAULT_POLICY };
  for (const layer of layers) {
    if (!layer) continue;
    for (const key of Object.keys(DEFAULT_POLICY) as (keyof PolicyConfig)[]) {
      const value = layer[key];
      if (value !== undefined) (effective as Record<string, unknown>)[key] = value;
    }
  }
  return effective;
}
