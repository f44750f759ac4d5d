import type { ClaimAction } from './claim-schema.js';
import { SvcError } from './errors.js';
import type { PolicyConfig, PolicyConfigInput } from './policy-config.js';
import { applyOverrides, lockedMode, type OverrideMode } from './policy-overrides.js';
import { conditionsWithinBudget, REQUEST_RULE_STEP_BUDGET } from './rules/conditional.js';

/** A named policy as the policy store resolves it: built in, an account's own, or shared. */
export interface NamedPolicy {
  name: string;
  config: PolicyConfig;
  overrides: OverrideMode;
}

/**
 * What asks for a policy: a claim (the policy it names, its `policyConfig`, and the action its
 * own rules are matched against), or a repository's `.github/svc.yml`, which names the policy
 * and `policyConfig` of every claim the App builds for that repository and has no action.
 */
export interface PolicyRequest {
  policy?: string;
  policyConfig?: PolicyConfigInput;
  action?: ClaimAction;
}

/** The policy a claim is evaluated under, as its receipt names it. */
export interface EffectivePolicy {
  name: string;
  config: PolicyConfig;
  /** Whether the request's policyConfig changed a value or added a rule (`policy.overrides`). */
  overridden: boolean;
}

/** The name a request is evaluated under: a submitter's lock wins over what the request names. */
export const policyNameOf = (request: PolicyRequest, lockedPolicy: string | null): string =>
  lockedPolicy ?? request.policy ?? 'default';

/**
 * The effective policy of a request, the one computation the service, the policy CLI and the
 * App share. `resolved` is what the store answered for `policyNameOf(request, lockedPolicy)`
 * (null: no such policy). The request's policyConfig applies as far as the policy's
 * `overrides` allows, and never looser than `tighten` under a lock, so a gated agent cannot
 * loosen its gate. Refuses, as the service answers: `validation_failed` (unknown policy),
 * `policy_override_refused`, `rule_budget_exceeded`.
 */
// A policy applied as it is, without a request's policyConfig, is the same effective config for
// every claim under it: resolved once per policy config object (the built-ins are module
// constants, the store's are read per request), so that the evaluation's own memo of its
// canonical text and hash (core/evaluation.ts) finds it again. Configs are never mutated.
const asIs = new WeakMap<PolicyConfig, { config: PolicyConfig; overridden: boolean }>();
function unchanged(config: PolicyConfig): { config: PolicyConfig; overridden: boolean } {
  let found = asIs.get(config);
  if (!found) {
    const applied = applyOverrides({ name: '', config, overrides: 'none' }, undefined);
    found = { config: Object.freeze(applied.config), overridden: applied.overridden };
    asIs.set(config, found);
  }
  return found;
}

export function effectivePolicy(
  request: PolicyRequest,
  lockedPolicy: string | null,
  resolved: NamedPolicy | null,
): EffectivePolicy {
  const name = policyNameOf(request, lockedPolicy);
  if (!resolved) {
    throw lockedPolicy
      ? new SvcError(
          'validation_failed',
          `policy: this key is locked to "${name}", which no longer exists; ask the operator`,
        )
      : new SvcError('validation_failed', `policy: unknown policy "${name}"`);
  }
  const overrides = lockedPolicy ? lockedMode(resolved.overrides) : resolved.overrides;
  const { config, overridden } =
    request.policyConfig === undefined
      ? unchanged(resolved.config)
      : applyOverrides({ ...resolved, overrides }, request.policyConfig);
  // A claim's own rules are written per request: their globs get a small budget of their own,
  // checked before the evaluation (and its replay) match them again. A request without an
  // action (a repository config) has nothing to match yet.
  const own = request.policyConfig?.rules;
  if (own && own.length > 0 && !conditionsWithinBudget(own, request, REQUEST_RULE_STEP_BUDGET)) {
    throw new SvcError(
      'rule_budget_exceeded',
      `policyConfig.rules: matching the globs of the claim's own rules against it takes more than ${REQUEST_RULE_STEP_BUDGET} steps; use fewer globs, fewer * in each, or list fewer changed paths`,
    );
  }
  return { name, config, overridden };
}
