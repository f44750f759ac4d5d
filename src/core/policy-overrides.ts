import { SvcError } from './errors.js';
import { resolvePolicy, type PolicyConfig, type PolicyConfigInput } from './policy-config.js';
import { stricterOf, THRESHOLD_FIELDS, type ThresholdField } from './rules/threshold-rules.js';

/**
 * How far a claim's own `policyConfig` may move the policy it is evaluated under: `any` (the
 * specification's per-request overrides), `tighten` (only stricter values) or `none`.
 */
export const OVERRIDE_MODES = ['any', 'tighten', 'none'] as const;
export type OverrideMode = (typeof OVERRIDE_MODES)[number];

type Field = ThresholdField;

// Which way each field gets stricter is the registry's; a requirement can be turned on, never off.
function isStricterOrEqual(field: Field, base: number | boolean, value: number | boolean): boolean {
  switch (stricterOf(field)) {
    case 'higher':
      return (value as number) >= (base as number);
    case 'lower':
      return (value as number) <= (base as number);
    case 'on':
      return value === true || base === false;
  }
}

const allowed = (field: Field, base: number | boolean): string => {
  switch (stricterOf(field)) {
    case 'higher':
      return `at least ${String(base)}`;
    case 'lower':
      return `at most ${String(base)}`;
    case 'on':
      return base ? 'true' : 'true or false';
  }
};

/**
 * The effective config of a claim under a named policy, and whether its policyConfig changed
 * any value. Refuses (400 `policy_override_refused`, naming the field) what the mode forbids,
 * so a gated agent cannot loosen the gate it is evaluated under.
 */
export function applyOverrides(
  policy: { name: string; config: PolicyConfig; overrides: OverrideMode },
  requested: PolicyConfigInput | undefined,
): { config: PolicyConfig; overridden: boolean } {
  const config = resolvePolicy(policy.config, requested);
  let overridden = false;
  for (const field of THRESHOLD_FIELDS) {
    const base = policy.config[field];
    const value = config[field];
    if (value === base) continue;
    overridden = true;
    if (policy.overrides === 'any') continue;
    if (policy.overrides === 'tighten' && isStricterOrEqual(field, base, value)) continue;
    throw new SvcError(
      'policy_override_refused',
      policy.overrides === 'none'
        ? `policyConfig.${field}: policy "${policy.name}" takes no per-request overrides (it sets ${String(base)})`
        : `policyConfig.${field}: policy "${policy.name}" allows only stricter values here (${allowed(field, base)}); got ${String(value)}`,
    );
  }
  return { config, overridden };
}

/** The mode a locked key gets: never looser than `tighten`, whatever the policy allows. */
export const lockedMode = (mode: OverrideMode): OverrideMode => (mode === 'any' ? 'tighten' : mode);
