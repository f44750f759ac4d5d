import { z } from 'zod';
import { formatIssues } from '../core/claim-schema.js';
import { KEY_ID_PATTERN } from '../core/ids.js';
import { policyNameSchema } from '../core/policies.js';
import { policyConfigSchema } from '../core/policy-config.js';
import { conditionalRulesSchema } from '../core/rules/conditional-schema.js';
import { environmentsSchema } from './environment-config.js';

/** Where a repository keeps its gate's config (on the base branch). */
export const CONFIG_PATH = '.github/svc.yml';
export const DEFAULT_CHECK_NAME = 'svc / admissibility';

/**
 * `.github/svc.yml` of a repository, read from the pull request's base branch (never its
 * head, so a pull request cannot loosen its own gate), with the owner's `.github` repository
 * as fallback.
 */
export const repoConfigSchema = z
  .strictObject({
    policy: policyNameSchema.optional(),
    policyConfig: policyConfigSchema.optional(),
    /**
     * Conditional rules (docs/POLICIES.md), added to the policy's own as a claim's
     * `policyConfig.rules` would be: they can tighten the gate, never loosen it.
     */
    rules: conditionalRulesSchema.optional(),
    /** Author logins that are agents; `*` matches any run of characters. */
    agents: z.array(z.string().min(1).max(100)).max(100).default(['*[bot]']),
    /** Whether pull requests by humans are gated too; otherwise they get a neutral check. */
    gate_humans: z.boolean().default(false),
    /** Whether draft pull requests are evaluated. */
    drafts: z.boolean().default(false),
    check_name: z.string().min(1).max(100).default(DEFAULT_CHECK_NAME),
    /**
     * API keys (key_id) whose dispositions the check run shows. A decision recorded through
     * the API by any other key stays in the ledger but leaves the check as it was: only the
     * App's Approve and Reject (people with write access) and the keys named here decide
     * the repository's escalations.
     */
    reviewers: z
      .array(z.string().regex(KEY_ID_PATTERN, 'must be an API key id (kid_ and a ULID)'))
      .max(100)
      .default([]),
    /** How deployments to each environment are judged (environment-config.ts). */
    environments: environmentsSchema.optional(),
  })
  // The rules travel in the claim's policyConfig, after any written there.
  .superRefine((config, ctx) => {
    const taken = new Set((config.policyConfig?.rules ?? []).map((rule) => rule.name));
    config.rules?.forEach((rule, index) => {
      if (taken.has(rule.name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['rules', index, 'name'],
          message: `duplicate rule name "${rule.name}" (also in policyConfig.rules)`,
        });
      }
    });
  })
  .transform(({ rules, ...config }) =>
    rules?.length
      ? {
          ...config,
          policyConfig: {
            ...config.policyConfig,
            rules: [...(config.policyConfig?.rules ?? []), ...rules],
          },
        }
      : config,
  );

export type RepoConfig = z.infer<typeof repoConfigSchema>;

export const DEFAULT_REPO_CONFIG: RepoConfig = repoConfigSchema.parse({});

/**
 * The rule a repository without `.github/svc.yml` gets: the App gates only agents' pull
 * requests there, and an agent's pull request is never ALLOWED on its own word (the pull
 * request its only evidence): passing CI and a person's approval, or a person decides.
 */
export const NO_CONFIG_RULE = {
  name: 'agent-pr-needs-ci-and-approval',
  description:
    'No .github/svc.yml: an agent’s pull request needs passing CI and a human approval, else a person decides.',
  require: { source_types: ['ci', 'human_approval'] },
  on_fail: 'escalate',
} as const;

/** The config of a repository with no `.github/svc.yml` (nor one in the owner's `.github`). */
export const NO_FILE_REPO_CONFIG: RepoConfig = repoConfigSchema.parse({
  rules: [NO_CONFIG_RULE],
});

/** The config, or the exact member that is wrong, so the check run can say so. */
export function parseRepoConfig(raw: unknown): LoadedConfig {
  if (raw === null || raw === undefined) return { ok: true, config: NO_FILE_REPO_CONFIG };
  const parsed = repoConfigSchema.safeParse(raw);
  if (parsed.success) return { ok: true, config: parsed.data };
  return {
    ok: false,
    problem: formatIssues(parsed.error),
  };
}

/** The repository's config as read from a branch: usable, or why not. */
export type LoadedConfig = { ok: true; config: RepoConfig } | { ok: false; problem: string };

/** What the config plugin (`octokit.config.get`) found: each file it read, and their merge. */
export interface FoundConfig {
  files: readonly { config: unknown }[];
  config: unknown;
}

/**
 * The config on `branch` from what the plugin found: the merged content when any file held
 * one (the repository's, else its owner's `.github` repository's, with what they extend), the
 * defaults when none did.
 */
export function configOnBranch(found: FoundConfig, branch: string): LoadedConfig {
  const raw = found.files.some((file) => file.config !== null) ? found.config : null;
  const parsed = parseRepoConfig(raw);
  return parsed.ok
    ? parsed
    : { ok: false, problem: `${CONFIG_PATH} on ${branch}: ${parsed.problem}` };
}

const globToRegExp = (glob: string) =>
  new RegExp(
    `^${glob
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
    'i',
  );

/** Whether a login is one of the configured agents (globs, case-insensitive as logins are). */
export const isAgent = (login: string, agents: readonly string[]): boolean =>
  agents.some((glob) => globToRegExp(glob).test(login));
