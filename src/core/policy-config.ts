import { z } from 'zod';
import {
  THRESHOLD_DEFAULTS,
  THRESHOLD_FIELDS,
  thresholdShape,
  type ThresholdValues,
} from './rules/threshold-rules.js';

/** `policyConfig`: the threshold fields of the rule registry, each optional. */
export const policyConfigSchema = z.strictObject(thresholdShape);

export type PolicyConfigInput = z.infer<typeof policyConfigSchema>;
export type PolicyConfig = ThresholdValues;

/** The effective config: every threshold field set. */
export const effectivePolicyConfigSchema = policyConfigSchema.required();

/** Defaults of the receipt contract (§5), applied field by field. */
export const DEFAULT_POLICY: Readonly<PolicyConfig> = THRESHOLD_DEFAULTS;

/** Layers overrides over a base, ignoring members that are absent. Returns a fresh object. */
export function resolvePolicy(...layers: (PolicyConfigInput | undefined)[]): PolicyConfig {
  const effective: PolicyConfig = { ...DEFAULT_POLICY };
  for (const layer of layers) {
    if (!layer) continue;
    for (const key of THRESHOLD_FIELDS) {
      const value = layer[key];
      if (value !== undefined) (effective as Record<string, unknown>)[key] = value;
    }
  }
  return effective;
}
