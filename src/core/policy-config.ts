import { z } from 'zod';
import { conditionalRulesSchema, type ConditionalRule } from './rules/conditional-schema.js';
import {
  THRESHOLD_DEFAULTS,
  THRESHOLD_FIELDS,
  thresholdShape,
  type ThresholdValues,
} from './rules/threshold-rules.js';

/** `policyConfig`: the threshold fields of the rule registry, each optional, and conditional rules. */
export const policyConfigSchema = z.strictObject({
  ...thresholdShape,
  rules: conditionalRulesSchema.optional(),
});

export type PolicyConfigInput = z.infer<typeof policyConfigSchema>;
/**
 * The effective config: every threshold field set, and the conditional rules when there are
 * any. A config without rules has no `rules` member, so it hashes as it did before rules.
 */
export type PolicyConfig = ThresholdValues & { rules?: ConditionalRule[] };

export const effectivePolicyConfigSchema = z.strictObject({
  ...policyConfigSchema.required().shape,
  rules: conditionalRulesSchema.optional(),
});

/** Defaults of the receipt contract (§5), applied field by field. */
export const DEFAULT_POLICY: Readonly<PolicyConfig> = THRESHOLD_DEFAULTS;

/**
 * Layers overrides over a base, ignoring members that are absent. Threshold fields are
 * replaced; conditional rules add up, base first (a layer cannot remove a rule). Returns a
 * fresh object.
 */
export function resolvePolicy(...layers: (PolicyConfigInput | undefined)[]): PolicyConfig {
  const effective: PolicyConfig = { ...DEFAULT_POLICY };
  const rules: ConditionalRule[] = [];
  for (const layer of layers) {
    if (!layer) continue;
    for (const key of THRESHOLD_FIELDS) {
      const value = layer[key];
      if (value !== undefined) (effective as Record<string, unknown>)[key] = value;
    }
    if (layer.rules) rules.push(...layer.rules);
  }
  if (rules.length > 0) effective.rules = rules;
  return effective;
}
