import { z } from 'zod';
import { policyNameSchema } from '../core/policies.js';
import { policyConfigSchema } from '../core/policy-config.js';
import { conditionalRulesSchema } from '../core/rules/conditional-schema.js';
import { alternativesOf, GlobBudget, globMatcher } from '../core/rules/glob.js';

// The `environments:` section of `.github/svc.yml`: how a deployment to each environment is
// judged (docs/GITHUB_APP.md, "Gate deployments"). Read from the default branch only.

const MAX_ENVIRONMENTS = 64;
const MAX_ENVIRONMENT_KEY = 255;

/** One environment's gate: a policy, its overrides, and conditional rules added to them. */
export const environmentGateSchema = z
  .strictObject({
    policy: policyNameSchema.optional(),
    policyConfig: policyConfigSchema.optional(),
    rules: conditionalRulesSchema.optional(),
  })
  .superRefine((gate, ctx) => {
    const taken = new Set((gate.policyConfig?.rules ?? []).map((rule) => rule.name));
    gate.rules?.forEach((rule, index) => {
      if (taken.has(rule.name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['rules', index, 'name'],
          message: `duplicate rule name "${rule.name}" (also in policyConfig.rules)`,
        });
      }
    });
  });

/** Environment names or globs (`*`, `{a,b}`, case-insensitive as GitHub's names are). */
export const environmentsSchema = z
  .record(
    z
      .string()
      .min(1)
      .max(MAX_ENVIRONMENT_KEY)
      .refine((glob) => alternativesOf(glob) !== null, {
        error: 'must be an environment name or a glob with few alternatives',
      }),
    environmentGateSchema,
  )
  .refine((map) => Object.keys(map).length <= MAX_ENVIRONMENTS, {
    error: `at most ${MAX_ENVIRONMENTS} environments`,
  });

export type EnvironmentGate = z.output<typeof environmentGateSchema>;
export type Environments = z.output<typeof environmentsSchema>;

/** What judges a deployment: the policy name and overrides its claim carries. */
export interface DeploymentPolicy {
  /** The environments: key that matched, or null when none did. */
  matched: string | null;
  policy?: string;
  policyConfig?: z.output<typeof policyConfigSchema>;
}

/**
 * The gate of a deployment to `environment`. An exact name wins over a glob (case-insensitive);
 * among globs, the first in the file's order. The file's top-level `rules` are about pull
 * requests and never reach a deployment; its `policy` and threshold overrides do, unless the
 * environment names its own. An environment that no key matches is judged by those alone:
 * the App answers every protection rule that names it, never leaving a job waiting for
 * GitHub's timeout.
 */
export function deploymentPolicy(
  config: {
    policy?: string;
    policyConfig?: z.output<typeof policyConfigSchema>;
    environments?: Environments;
  },
  environment: string,
): DeploymentPolicy {
  const entries = Object.entries(config.environments ?? {});
  const name = environment.toLowerCase();
  const budget = new GlobBudget(1_000_000);
  const found =
    entries.find(([key]) => key.toLowerCase() === name) ??
    entries.find(([key]) => globMatcher([key], true)(environment, budget));
  // The file's threshold overrides, without the pull-request rules its `rules:` joined to them.
  const fileThresholds = { ...config.policyConfig };
  delete fileThresholds.rules;
  const [matched, gate] = found ?? [null, {} as EnvironmentGate];
  const policy = gate.policy ?? config.policy;
  // An environment's own policy comes with its own settings, not the file's overrides of
  // another policy.
  const own: z.output<typeof policyConfigSchema> =
    gate.policyConfig ?? (gate.policy ? {} : fileThresholds);
  const { rules: ownRules, ...thresholds } = own;
  const rules = [...(ownRules ?? []), ...(gate.rules ?? [])];
  const policyConfig = { ...thresholds, ...(rules.length ? { rules } : {}) };
  return {
    matched,
    ...(policy ? { policy } : {}),
    ...(Object.keys(policyConfig).length ? { policyConfig } : {}),
  };
}
