import type { ProbotOctokit } from 'probot';
import { byHuman, type CiRun, type PullRequestFacts, type Review } from './pull-request-claim.js';

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

/**
 * CI of a commit: other apps' check runs (never our own, which would judge itself) and commit
 * statuses, latest per name.
 */
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
    });
  }
  for (const status of combined.data.statuses) {
    runs.push({
      key: `status:${status.context}`,
      name: status.context,
      kind: 'status',
      state: statusState(status.state),
      url: status.target_url ?? null,
      at: status.updated_at,
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

/**
 * Everyone whose approval cannot count for this pull request: its author, its assignees (who
 * set the agent to work) and the authors and committers of its commits. Read from GitHub on
 * every evaluation, never from the event that triggered it, so the verdict does not depend on
 * which event arrived.
 */
export async function loadInvolved(
  octokit: Octokit,
  ref: RepoRef,
  number: number,
  pr: LoadedPullRequest,
): Promise<string[]> {
  const commits = await octokit.paginate(octokit.rest.pulls.listCommits, {
    ...ref,
    pull_number: number,
    per_page: 100,
  });
  const logins = new Set<string>([pr.facts.author, ...pr.assignees]);
  for (const commit of commits) {
    if (commit.author?.login) logins.add(commit.author.login);
    if (commit.committer?.login) logins.add(commit.committer.login);
  }
  return [...logins].sort();
}
