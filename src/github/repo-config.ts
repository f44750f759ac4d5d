import { z } from 'zod';
import { policyNameSchema } from '../core/policies.js';
import { policyConfigSchema } from '../core/policy-config.js';

export const DEFAULT_CHECK_NAME = 'svc / admissibility';

/**
 * `.github/svc.yml` of a repository, read from the pull request's base branch (never its
 * head, so a pull request cannot loosen its own gate), with the owner's `.github` repository
 * as fallback.
 */
export const repoConfigSchema = z.strictObject({
  policy: policyNameSchema.optional(),
  policyConfig: policyConfigSchema.optional(),
  /** Author logins that are agents; `*` matches any run of characters. */
  agents: z.array(z.string().min(1).max(100)).max(100).default(['*[bot]']),
  /** Whether pull requests by humans are gated too; otherwise they get a neutral check. */
  gate_humans: z.boolean().default(false),
  /** Whether draft pull requests are evaluated. */
  drafts: z.boolean().default(false),
  check_name: z.string().min(1).max(100).default(DEFAULT_CHECK_NAME),
});

export type RepoConfig = z.infer<typeof repoConfigSchema>;

export const DEFAULT_REPO_CONFIG: RepoConfig = repoConfigSchema.parse({});

/** The config, or the exact member that is wrong, so the check run can say so. */
export function parseRepoConfig(
  raw: unknown,
): { ok: true; config: RepoConfig } | { ok: false; problem: string } {
  if (raw === null || raw === undefined) return { ok: true, config: DEFAULT_REPO_CONFIG };
  const parsed = repoConfigSchema.safeParse(raw);
  if (parsed.success) return { ok: true, config: parsed.data };
  return {
    ok: false,
    problem: parsed.error.issues
      .map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`)
      .join('; '),
  };
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
