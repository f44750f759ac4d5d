import { canonicalize } from '@svc/verify';
import { SvcError } from './errors.js';
import type { ConditionalRule } from './rules/conditional-schema.js';
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
 * any value or added a conditional rule. Refuses (400 `policy_override_refused`, naming the field) what the mode forbids,
 * so a gated agent cannot loosen the gate it is evaluated under.
 */
export function applyOverrides(
  policy: { name: string; config: PolicyConfig; overrides: OverrideMode },
  requested: PolicyConfigInput | undefined,
): { config: PolicyConfig; overridden: boolean } {
  const added = addedRules(policy, requested?.rules ?? []);
  const config = resolvePolicy(
    policy.config,
    requested && { ...requested, rules: added.length ? added : undefined },
  );
  let overridden = added.length > 0;
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

/**
 * The rules a claim's policyConfig adds. It may add conditional rules (each can only fail more,
 * so adding one tightens) and restate one of the policy's exactly, never replace or remove one:
 * a different rule of the same name is refused, under every mode. Under `none` nothing may be
 * added.
 */
function addedRules(
  policy: { name: string; config: PolicyConfig; overrides: OverrideMode },
  rules: readonly ConditionalRule[],
): ConditionalRule[] {
  const own = new Map((policy.config.rules ?? []).map((rule) => [rule.name, canonicalize(rule)]));
  const added: ConditionalRule[] = [];
  rules.forEach((rule, index) => {
    const existing = own.get(rule.name);
    if (existing === canonicalize(rule)) return;
    if (existing !== undefined) {
      throw new SvcError(
        'policy_override_refused',
        `policyConfig.rules[${index}].name: policy "${policy.name}" has a different rule named "${rule.name}"; a claim may add rules, never replace or remove one`,
      );
    }
    if (policy.overrides === 'none') {
      throw new SvcError(
        'policy_override_refused',
        `policyConfig.rules[${index}]: policy "${policy.name}" takes no per-request overrides, added rules included`,
      );
    }
    added.push(rule);
  });
  return added;
}

/** The mode a locked key gets: never looser than `tighten`, whatever the policy allows. */
export const lockedMode = (mode: OverrideMode): OverrideMode => (mode === 'any' ? 'tighten' : mode);
