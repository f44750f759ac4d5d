// Closed sets and bounds of the claim that policy rules name too. They live apart from the
// claim schema, which is built from the policy schema, so that the policy schema can use them.

export const ACTION_TYPES = [
  'code_change',
  'infra_change',
  'access_change',
  'deployment',
  'merge',
  'policy_exception',
  'agent_execution',
] as const;

// The source types are part of the receipt contract the verifier package holds.
export { SOURCE_TYPES } from '@svc/verify';

/** Bounds of the changed paths conditional rules read (contract §10); docs/API.md lists them. */
export const MAX_CHANGED_PATHS = 3000;
export const MAX_PATH_CHARS = 1024;

/**
 * Why a changed path is not in the one spelling globs are matched against, or null when it
 * is: repository-relative, `/` between segments, no empty, `.` or `..` segment, no backslash.
 * Attacker-controlled: `./infra/main.tf`, `x/../infra/main.tf` and `infra\main.tf` name the
 * same file as `infra/main.tf` to some tools, and would slip past `paths: infra/**` or
 * satisfy `only_paths: docs/**` (`docs/../infra/main.tf`); they are refused, not guessed at.
 */
export function changedPathProblem(path: string): string | null {
  if (path.includes('\\')) return 'must use / as separator, never a backslash';
  if (path.startsWith('/')) return 'must be relative to the repository root (no leading /)';
  if (path.endsWith('/')) return 'must name a file (no trailing /)';
  for (const segment of path.split('/')) {
    if (segment === '') return 'must not hold an empty segment (//)';
    if (segment === '.' || segment === '..') return `must not hold a ${segment} segment`;
  }
  return null;
}
