import type { ProbotOctokit } from 'probot';
import { byHuman, type CiRun, type PullRequestFacts, type Review } from './pull-request-claim.js';
import {
  CODEOWNERS_LOCATIONS,
  GITHUB_MAX_LISTED_FILES,
  MAX_CODEOWNERS_BYTES,
  type ChangedFilesListing,
  type CommitLogins,
} from './rule-facts.js';

export type Octokit = InstanceType<typeof ProbotOctokit>;

export interface RepoRef {
  owner: string;
  repo: string;
}

interface PullRequestPayload {
  number: number;
  title: string;
  html_url: string;
  user: { login: string } | null;
  head: { sha: string; ref: string };
  base: { ref: string };
  additions?: number;
  deletions?: number;
  changed_files?: number;
  updated_at: string;
  draft?: boolean;
  state: string;
  assignees?: { login: string; type?: string }[] | null;
  labels?: ({ name?: string | null } | string)[] | null;
}

export interface LoadedPullRequest {
  facts: PullRequestFacts;
  draft: boolean;
  open: boolean;
  assignees: string[];
}

export function pullRequestFacts(repository: string, pr: PullRequestPayload): LoadedPullRequest {
  return {
    facts: {
      repository,
      number: pr.number,
      title: pr.title,
      url: pr.html_url,
      author: pr.user?.login ?? 'ghost',
      headSha: pr.head.sha,
      headRef: pr.head.ref,
      baseRef: pr.base.ref,
      additions: pr.additions ?? 0,
      deletions: pr.deletions ?? 0,
      changedFiles: pr.changed_files ?? 0,
      updatedAt: pr.updated_at,
      labels: (pr.labels ?? [])
        .map((l) => (typeof l === 'string' ? l : l.name))
        .filter((n): n is string => typeof n === 'string'),
    },
    draft: pr.draft === true,
    open: pr.state === 'open',
    assignees: (pr.assignees ?? []).filter((a) => a.type !== 'Bot').map((a) => a.login),
  };
}

/** The pull request as GitHub has it now (a payload may be older than the evidence). */
export async function loadPullRequest(
  octokit: Octokit,
  ref: RepoRef,
  number: number,
): Promise<LoadedPullRequest> {
  const { data } = await octokit.rest.pulls.get({ ...ref, pull_number: number });
  return pullRequestFacts(`${ref.owner}/${ref.repo}`, data as PullRequestPayload);
}

/** Open pull requests whose head is `sha` (the targets of a CI or status event). */
export async function openPullRequestsFor(
  octokit: Octokit,
  ref: RepoRef,
  sha: string,
): Promise<number[]> {
  const { data } = await octokit.rest.repos.listPullRequestsAssociatedWithCommit({
    ...ref,
    commit_sha: sha,
    per_page: 100,
  });
  return data.filter((pr) => pr.state === 'open' && pr.head.sha === sha).map((pr) => pr.number);
}

const checkState = (status: string | null, conclusion: string | null): CiRun['state'] => {
  if (status !== 'completed') return 'pending';
  switch (conclusion) {
    case 'success':
      return 'success';
    case 'neutral':
    case 'skipped':
      return 'neutral';
    default:
      return 'failure';
  }
};

const statusState = (state: string): CiRun['state'] =>
  state === 'success' ? 'success' : state === 'pending' ? 'pending' : 'failure';

/** A check run as GET /commits/{sha}/check-runs lists it, as far as svc reads it. */
export interface CheckRunPayload {
  name: string;
  status: string;
  conclusion: string | null;
  html_url?: string | null;
  started_at?: string | null;
  completed_at?: string | null;
  app?: { id?: number } | null;
  check_suite?: { id?: number } | null;
}

/** A commit status as GET /commits/{sha}/status lists it. */
export interface StatusPayload {
  context: string;
  state: string;
  target_url?: string | null;
  updated_at: string;
}

/**
 * CI of a commit from GitHub's listings: other apps' check runs (never our own, which would
 * judge itself) and commit statuses, latest per name.
 */
export function ciRunsFrom(
  checks: readonly CheckRunPayload[],
  statuses: readonly StatusPayload[],
  ownAppId: number,
): CiRun[] {
  const runs: (CiRun & { key: string })[] = [];
  for (const run of checks) {
    if (run.app?.id === ownAppId) continue;
    runs.push({
      // A re-run replaces the earlier run of its own suite only: a run of the same name in
      // another suite or from another app (which a pull request's own workflow can add)
      // never hides a failure.
      key: `check:${run.app?.id ?? 0}:${run.check_suite?.id ?? 0}:${run.name}`,
      name: run.name,
      kind: 'check_run',
      state: checkState(run.status, run.conclusion),
      url: run.html_url ?? null,
      at: run.completed_at ?? run.started_at ?? null,
      status: run.status,
      conclusion: run.conclusion,
    });
  }
  for (const status of statuses) {
    runs.push({
      key: `status:${status.context}`,
      name: status.context,
      kind: 'status',
      state: statusState(status.state),
      url: status.target_url ?? null,
      at: status.updated_at,
      status: status.state,
    });
  }
  const newest = new Map<string, CiRun>();
  for (const { key, ...run } of runs) {
    const seen = newest.get(key);
    if (!seen || (run.at ?? '') >= (seen.at ?? '')) newest.set(key, run);
  }
  return [...newest.values()].sort(
    (a, b) => a.name.localeCompare(b.name) || a.state.localeCompare(b.state),
  );
}

/** CI of a commit, as ciRunsFrom reads it. */
export async function loadCi(
  octokit: Octokit,
  ref: RepoRef,
  sha: string,
  ownAppId: number,
): Promise<CiRun[]> {
  const [checks, combined] = await Promise.all([
    octokit.paginate(octokit.rest.checks.listForRef, { ...ref, ref: sha, per_page: 100 }),
    octokit.rest.repos.getCombinedStatusForRef({ ...ref, ref: sha, per_page: 100 }),
  ]);
  return ciRunsFrom(checks as CheckRunPayload[], combined.data.statuses, ownAppId);
}

type Permission = NonNullable<Review['permission']>;

/** A review as GET /repos/{owner}/{repo}/pulls/{number}/reviews lists it. */
export interface ReviewPayload {
  user: { login: string; type?: string } | null;
  state: string;
  commit_id: string | null;
  submitted_at?: string | null;
  html_url: string;
}

/**
 * The reviews of GitHub's listing that are submitted and attributed. A reviewer whose type
 * GitHub did not say is no person: approvals count only for a known `User`.
 */
export function reviewsFrom(raw: ReviewPayload[]): Review[] {
  return raw
    .filter((r) => r.user && r.commit_id && r.submitted_at)
    .map((r) => ({
      reviewer: r.user!.login,
      reviewerType: r.user!.type ?? 'unknown',
      state: r.state as Review['state'],
      commitId: r.commit_id!,
      submittedAt: r.submitted_at!,
      url: r.html_url,
    }));
}

/**
 * Reviews, with the permission of each human approver looked up (separation of duties needs
 * it). A bot's approval never counts, so its permission is not asked for.
 */
export async function loadReviews(
  octokit: Octokit,
  ref: RepoRef,
  number: number,
): Promise<Review[]> {
  const raw = await octokit.paginate(octokit.rest.pulls.listReviews, {
    ...ref,
    pull_number: number,
    per_page: 100,
  });
  const reviews = reviewsFrom(raw as ReviewPayload[]);
  const approvers = [
    ...new Set(reviews.filter((r) => r.state === 'APPROVED' && byHuman(r)).map((r) => r.reviewer)),
  ];
  const permissions = new Map<string, Permission>();
  for (const login of approvers) {
    const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({
      ...ref,
      username: login,
    });
    // role_name tells maintain from write; permission alone folds it into write.
    const role = (data as { role_name?: string }).role_name;
    permissions.set(
      login,
      (role === 'maintain' ? 'maintain' : (data.permission as Permission)) ?? 'none',
    );
  }
  return reviews.map((r) =>
    byHuman(r) && permissions.has(r.reviewer)
      ? { ...r, permission: permissions.get(r.reviewer) }
      : r,
  );
}

/** The GitHub logins of the authors and committers of a pull request's commits. */
export async function loadCommits(
  octokit: Octokit,
  ref: RepoRef,
  number: number,
): Promise<CommitLogins[]> {
  // GitHub lists at most 250 commits of a pull request.
  const commits = await octokit.paginate(octokit.rest.pulls.listCommits, {
    ...ref,
    pull_number: number,
    per_page: 100,
  });
  return commits.map((commit) => ({
    author: commit.author?.login ?? null,
    committer: commit.committer?.login ?? null,
    sha: commit.sha,
  }));
}

/**
 * Everyone whose approval cannot count for this pull request: its author, its assignees (who
 * set the agent to work) and the authors and committers of its commits. Read from GitHub on
 * every evaluation, never from the event that triggered it, so the verdict does not depend on
 * which event arrived.
 */
export function involvedOf(pr: LoadedPullRequest, commits: readonly CommitLogins[]): string[] {
  const logins = new Set<string>([pr.facts.author, ...pr.assignees]);
  for (const commit of commits) {
    if (commit.author) logins.add(commit.author);
    if (commit.committer) logins.add(commit.committer);
  }
  return [...logins].sort();
}

const statusOf = (error: unknown): number | undefined => {
  const status = (error as { status?: unknown }).status;
  return typeof status === 'number' ? status : undefined;
};

// Worth another run of the whole job (as gate.ts's isTransient): server errors, rate limits.
const transient = (status: number | undefined) =>
  status === undefined || status >= 500 || status === 429 || status === 403;

/**
 * The pull request's changed files, 100 per page, up to the 3,000 GitHub lists. A failure
 * worth retrying (5xx, rate limit, network) propagates, so the job runs again; any other
 * (GitHub refusing the listing, e.g. a diff too large to compute) is reported in `error`,
 * and the list then counts as incomplete.
 */
export async function loadChangedFiles(
  octokit: Octokit,
  ref: RepoRef,
  pr: LoadedPullRequest,
): Promise<ChangedFilesListing> {
  const total = pr.facts.changedFiles;
  try {
    let listed = 0;
    const files = await octokit.paginate(
      octokit.rest.pulls.listFiles,
      { ...ref, pull_number: pr.facts.number, per_page: 100 },
      (response, done) => {
        // GitHub answers no file past the 3,000th: stop rather than ask for more pages.
        listed += response.data.length;
        if (response.data.length < 100 || listed >= GITHUB_MAX_LISTED_FILES) done();
        return response.data.map((f) => ({
          filename: f.filename,
          ...(f.previous_filename ? { previous_filename: f.previous_filename } : {}),
          status: f.status,
        }));
      },
    );
    return { files: files.slice(0, GITHUB_MAX_LISTED_FILES), total };
  } catch (error) {
    if (transient(statusOf(error))) throw error;
    return { files: [], total, error: (error as Error).message };
  }
}

/**
 * The CODEOWNERS file of a branch, from the first of GitHub's locations that has one; null
 * when none does. Read from the base branch, so a pull request cannot name its own owners.
 */
export async function loadCodeOwners(
  octokit: Octokit,
  ref: RepoRef,
  branch: string,
): Promise<string | null> {
  for (const path of CODEOWNERS_LOCATIONS) {
    try {
      const { data } = await octokit.rest.repos.getContent({
        ...ref,
        path,
        ref: branch,
        mediaType: { format: 'raw' },
      });
      const raw: unknown = data;
      // A directory of that name is no CODEOWNERS file.
      if (typeof raw !== 'string') continue;
      // GitHub ignores a file of 3 MB or more; so does svc (no owners, as on GitHub).
      return Buffer.byteLength(raw, 'utf8') >= MAX_CODEOWNERS_BYTES ? null : raw;
    } catch (error) {
      if (statusOf(error) === 404) continue;
      throw error;
    }
  }
  return null;
}

/** At most this many membership lookups per evaluation; past it, no further team counts. */
export const MAX_TEAM_LOOKUPS = 100;

/**
 * The teams (`org/team`, of the repository's owner only: an installation cannot read another
 * organization's teams) each user is an active member of, asked of
 * GET /orgs/{org}/teams/{team}/memberships/{user} (organization permission Members: read).
 * Not a member (404), or the permission not granted (403 without a rate limit): no team, so
 * a rule that needs the team fails closed.
 */
export async function loadTeamMemberships(
  octokit: Octokit,
  org: string,
  teams: readonly string[],
  users: readonly string[],
  log?: { warn(obj: object, msg: string): void },
): Promise<Map<string, string[]>> {
  const memberships = new Map<string, string[]>(users.map((u) => [u.toLowerCase(), []]));
  const own = teams.filter((t) => t.split('/')[0] === org.toLowerCase());
  let lookups = 0;
  for (const user of users) {
    for (const team of own) {
      if (++lookups > MAX_TEAM_LOOKUPS) return memberships;
      try {
        const { data } = await octokit.rest.teams.getMembershipForUserInOrg({
          org,
          team_slug: team.split('/')[1]!,
          username: user,
        });
        if (data.state === 'active') memberships.get(user.toLowerCase())!.push(team);
      } catch (error) {
        const status = statusOf(error);
        if (status === 404) continue;
        const headers = (error as { response?: { headers?: Record<string, unknown> } }).response
          ?.headers;
        const rateLimited =
          headers?.['x-ratelimit-remaining'] === '0' || headers?.['retry-after'] !== undefined;
        if (status === 403 && !rateLimited) {
          log?.warn({ team, status }, 'team membership not readable (Members: read not granted?)');
          continue;
        }
        throw error;
      }
    }
  }
  return memberships;
}
