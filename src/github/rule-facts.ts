import { matchFile, parse as parseCodeOwners } from 'codeowners-utils';
import {
  CHECK_CONCLUSIONS,
  MAX_CHANGED_PATHS,
  MAX_PATH_CHARS,
  type Approval,
  type Check,
  type CodeOwners,
} from '../core/claim-schema.js';
import { MAX_ID_CHARS } from '../core/limits.js';
import type { PolicyNeeds } from '../core/policy-needs.js';
import { changedPathProblem } from '../core/claim-types.js';

// The claim schema's bounds (src/core/claim-schema.ts) for the lists built here: a longer
// list is cut, never sent, and every cut below errs towards a stricter verdict.
const MAX_LABELS = 100;
const MAX_LOGINS = 100;
const MAX_TEAMS = 100;
const MAX_CHECKS = 256;
const MAX_OWNERS = 64;

/**
 * GitHub's pull-request file listing (GET /pulls/{n}/files, 100 per page) stops at 3,000
 * files, whatever `changed_files` says: https://docs.github.com/rest/pulls/pulls#list-pull-requests-files
 */
export const GITHUB_MAX_LISTED_FILES = 3000;

/** A file of GitHub's pull-request file listing, as far as svc reads it. */
export interface ListedFile {
  filename: string;
  /** The file's former path, for a rename. */
  previous_filename?: string;
  status?: string;
}

/** What listing a pull request's files gave. */
export interface ChangedFilesListing {
  /** The files listed, in GitHub's order. */
  files: ListedFile[];
  /** The pull request's own count (`changed_files`): more than listed means the list is cut. */
  total: number;
  /** Set when the listing failed: nothing of it can be trusted to be whole. */
  error?: string;
}

/**
 * `changed_paths` and `changed_paths_incomplete` of a pull request. A rename contributes both
 * paths (moving a file out of `infra/` changes `infra/`). The list is incomplete — and rules
 * then fail closed — when GitHub listed fewer files than the pull request has (it lists at
 * most 3,000), when the listing failed, or when a path is longer than a claim may carry or not in its canonical spelling.
 */
export function changedPathsOf(listing: ChangedFilesListing): {
  changed_paths: string[];
  changed_paths_incomplete: boolean;
} {
  const paths = new Set<string>();
  let incomplete = listing.error !== undefined || listing.files.length < listing.total;
  for (const file of listing.files) {
    for (const path of [file.previous_filename, file.filename]) {
      if (typeof path !== 'string' || path === '' || paths.has(path)) continue;
      // A name git allows but a claim refuses (a backslash in it): left out, and the list
      // is then incomplete, so rules fail closed rather than miss it.
      if (
        path.length > MAX_PATH_CHARS ||
        paths.size >= MAX_CHANGED_PATHS ||
        changedPathProblem(path) !== null
      )
        incomplete = true;
      else paths.add(path);
    }
  }
  return { changed_paths: [...paths], changed_paths_incomplete: incomplete };
}

/** Label names of a pull request, unique, in GitHub's order. */
export function labelsOf(labels: readonly (string | { name?: string | null })[]): string[] {
  const names = labels
    .map((l) => (typeof l === 'string' ? l : l.name))
    .filter((n): n is string => typeof n === 'string' && n !== '' && n.length <= MAX_ID_CHARS);
  return [...new Set(names)].slice(0, MAX_LABELS);
}

/** The GitHub logins of a commit's author and committer (null: no GitHub account linked). */
export interface CommitLogins {
  author: string | null;
  committer: string | null;
  /** The commit's id, for the agent sessions that made it (agent-sessions.ts). */
  sha?: string;
}

/** Commit authors and committers, unique and sorted. */
export function committersOf(commits: readonly CommitLogins[]): string[] {
  const logins = new Set<string>();
  for (const commit of commits)
    for (const login of [commit.author, commit.committer])
      if (login && login.length <= MAX_ID_CHARS) logins.add(login);
  // The claim holds at most 100; approvals by the others are left out of `approvals` anyway
  // (they are `involved`), so the cut cannot let a committer approve.
  return [...logins].sort().slice(0, MAX_LOGINS);
}

/** A review, as far as `approvals` needs it. */
export interface ReviewFact {
  reviewer: string;
  reviewerType: string;
  state: string;
  commitId: string;
  submittedAt: string;
  permission?: Approval['permission'];
}

/** GitHub's account type as a claim's approval `kind`: only a person is a `User`. */
export const kindOf = (review: Pick<ReviewFact, 'reviewer' | 'reviewerType'>): string =>
  review.reviewerType === 'User'
    ? review.reviewer.toLowerCase().endsWith('[bot]')
      ? 'Bot'
      : 'User'
    : review.reviewerType.slice(0, 64) || 'unknown';

/**
 * `approvals`: every reviewer whose latest review (at any commit; comments do not change a
 * state) approves the head commit. An approval of an earlier push is not current; a later
 * request for changes or a dismissal withdraws it. Bots stay in the list with their kind
 * (`Bot`), which never counts as a person. Reviewers involved in the change (author,
 * assignees, commit authors and committers) are left out, as they are of the
 * `human_approval` evidence. `teams` is set when teams were looked up: the approver's teams
 * among those the policy names.
 */
export function approvalsOf(
  reviews: readonly ReviewFact[],
  headSha: string,
  options: { involved?: readonly string[]; teams?: ReadonlyMap<string, readonly string[]> } = {},
): Approval[] {
  const involved = new Set((options.involved ?? []).map((l) => l.toLowerCase()));
  const latest = new Map<string, ReviewFact>();
  for (const review of [...reviews].sort((a, b) => a.submittedAt.localeCompare(b.submittedAt))) {
    if (review.state === 'COMMENTED' || review.state === 'PENDING') continue;
    latest.set(review.reviewer.toLowerCase(), review);
  }
  const approvals: Approval[] = [];
  for (const review of [...latest.values()].sort((a, b) => a.reviewer.localeCompare(b.reviewer))) {
    if (review.state !== 'APPROVED' || review.commitId !== headSha) continue;
    if (involved.has(review.reviewer.toLowerCase()) || review.reviewer.length > MAX_ID_CHARS)
      continue;
    const kind = kindOf(review);
    const teams = kind === 'User' ? options.teams?.get(review.reviewer.toLowerCase()) : undefined;
    approvals.push({
      user: review.reviewer,
      kind,
      ...(review.permission ? { permission: review.permission } : {}),
      ...(options.teams && kind === 'User'
        ? { teams: [...(teams ?? [])].sort().slice(0, MAX_TEAMS) }
        : {}),
    });
  }
  return approvals.slice(0, MAX_LOGINS);
}

/** A CI result of a commit as GitHub reports it: a check run or a commit status. */
export interface CiFact {
  name: string;
  kind: 'check_run' | 'status';
  /** A check run's `status`, or a commit status's `state`. */
  status: string;
  /** A check run's `conclusion` (null until completed); none for a commit status. */
  conclusion?: string | null;
}

const CONCLUSIONS = new Set<string>(CHECK_CONCLUSIONS);

/** A GitHub result as a claim's check. Anything unknown is a failure, never a pass. */
export function checkOf(fact: CiFact): Check {
  const name = fact.name.slice(0, MAX_ID_CHARS);
  if (fact.kind === 'status') {
    switch (fact.status) {
      case 'pending':
        return { name, status: 'pending' };
      case 'success':
        return { name, status: 'completed', conclusion: 'success' };
      case 'error':
        return { name, status: 'completed', conclusion: 'error' };
      default:
        return { name, status: 'completed', conclusion: 'failure' };
    }
  }
  if (fact.status === 'completed') {
    const conclusion = fact.conclusion ?? 'failure';
    return {
      name,
      status: 'completed',
      conclusion: (CONCLUSIONS.has(conclusion) ? conclusion : 'failure') as Check['conclusion'],
    };
  }
  return {
    name,
    status: fact.status === 'queued' || fact.status === 'in_progress' ? fact.status : 'pending',
  };
}

// How bad a result is: of several results under one name, the worst stands.
const badness = (check: Check): number => {
  if (check.status !== 'completed') return 1;
  if (check.conclusion === 'success') return 0;
  if (check.conclusion === 'neutral' || check.conclusion === 'skipped') return 0.5;
  return 2;
};

/**
 * `checks`: the CI of the evaluated commit by name (check runs of other apps and commit
 * statuses). A name reported more than once — by two apps, or by a status and a check run —
 * is listed once with its worst result: another reporter of the same name (which a pull
 * request's own workflow can add) can make a required check fail, never pass.
 */
export function checksOf(facts: readonly CiFact[]): Check[] {
  const byName = new Map<string, Check>();
  for (const fact of facts) {
    if (fact.name === '') continue;
    const check = checkOf(fact);
    const seen = byName.get(check.name);
    if (!seen || badness(check) > badness(seen)) byName.set(check.name, check);
  }
  // Cut at the claim's bound: a required check left out counts as missing, so fails.
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name)).slice(0, MAX_CHECKS);
}

/** Where GitHub looks for CODEOWNERS, in its order: the first file found is used. */
export const CODEOWNERS_LOCATIONS = ['.github/CODEOWNERS', 'CODEOWNERS', 'docs/CODEOWNERS'];

/** GitHub ignores a CODEOWNERS file of 3 MB or more. */
export const MAX_CODEOWNERS_BYTES = 3 * 1024 * 1024;

/**
 * `code_owners`: the owners of each changed path under a CODEOWNERS file (the base branch's:
 * a pull request cannot choose its own owners). The last matching pattern wins, as on GitHub;
 * a path whose last match names nobody, or that no pattern matches, is left out.
 */
export function codeOwnersOf(codeowners: string | null, paths: readonly string[]): CodeOwners[] {
  return [...ownersOfEach(codeowners, paths)].filter((o): o is CodeOwners => o !== null);
}

/**
 * codeOwnersOf, giving the event loop a turn every 50 paths: matching costs some
 * microseconds per path and pattern, so 3,000 paths under a CODEOWNERS of thousands of lines
 * take seconds, which must not stall the service's other requests.
 */
export async function codeOwnersInTurns(
  codeowners: string | null,
  paths: readonly string[],
): Promise<CodeOwners[]> {
  const owned: CodeOwners[] = [];
  let done = 0;
  for (const entry of ownersOfEach(codeowners, paths)) {
    if (entry) owned.push(entry);
    if (++done % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  return owned;
}

function* ownersOfEach(
  codeowners: string | null,
  paths: readonly string[],
): Generator<CodeOwners | null> {
  if (codeowners === null || Buffer.byteLength(codeowners, 'utf8') >= MAX_CODEOWNERS_BYTES) return;
  // codeowners-utils' parse lists entries last line first, so its first match is the last one.
  const entries = parseCodeOwners(codeowners.replace(/\r\n?/g, '\n'));
  for (const path of paths) {
    const owners = (matchFile(path, entries)?.owners ?? []).filter(
      (o) => o !== '' && o.length <= MAX_ID_CHARS,
    );
    yield owners.length > 0 ? { path, owners: owners.slice(0, MAX_OWNERS) } : null;
  }
}

/** An `org/team` slug as GitHub spells it, lower case; null for anything else. */
export const teamSlug = (value: unknown): string | null => {
  if (typeof value !== 'string') return null;
  const slug = value.replace(/^@/, '').toLowerCase();
  return /^[a-z0-9][a-z0-9-]*\/[a-z0-9][a-z0-9_.-]*$/.test(slug) ? slug : null;
};

/** The `@org/team` owners among the code owners, as team slugs. */
export const ownerTeams = (owned: readonly CodeOwners[]): string[] =>
  [
    ...new Set(
      owned.flatMap((o) => o.owners.map((owner) => (owner.includes('/') ? teamSlug(owner) : null))),
    ),
  ]
    .filter((t): t is string => t !== null)
    .sort();

/**
 * The teams whose memberships of the approvers a policy's needs (core/policy-needs.ts) call
 * for, as GitHub slugs: the teams it names, and the `@org/team` code owners of the changed
 * paths when it counts code owners' approvals. None for a refused policy (null), whose
 * evaluation answers an error whatever the approvers' teams.
 */
export function teamsToLookUp(
  needs: Pick<PolicyNeeds, 'teams' | 'codeOwners'> | null,
  owned: readonly CodeOwners[],
): string[] {
  if (!needs) return [];
  const named = needs.teams.map(teamSlug).filter((t): t is string => t !== null);
  return [...new Set([...named, ...(needs.codeOwners ? ownerTeams(owned) : [])])].sort();
}
