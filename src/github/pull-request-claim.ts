import { hashCanonical } from '@svc/verify';
import type { ClaimInput, CodeOwners } from '../core/claim-schema.js';
import type { AgentSessionFacts } from './agent-sessions.js';
import {
  approvalsOf,
  changedPathsOf,
  checksOf,
  codeOwnersOf,
  committersOf,
  labelsOf,
  type ChangedFilesListing,
  type CiFact,
  type CommitLogins,
} from './rule-facts.js';

/** The collector named in every source's provenance. */
export const COLLECTOR = 'svc-github-app';

export interface PullRequestFacts {
  /** owner/name */
  repository: string;
  number: number;
  title: string;
  url: string;
  author: string;
  headSha: string;
  headRef: string;
  baseRef: string;
  additions: number;
  deletions: number;
  changedFiles: number;
  updatedAt: string;
  /** Label names. */
  labels?: string[];
}

export interface CiRun {
  name: string;
  /** `check_run` of another app, or a commit `status`. */
  kind: 'check_run' | 'status';
  state: 'success' | 'failure' | 'pending' | 'neutral';
  url: string | null;
  at: string | null;
  /** GitHub's own words: a check run's `status`, or a commit status's `state`. */
  status?: string;
  /** A check run's `conclusion` (null until it completes). */
  conclusion?: string | null;
}

export interface Review {
  reviewer: string;
  /**
   * GitHub's account type of the reviewer: `User` for a person, `Bot` for an App or Copilot
   * (whose login need not end in `[bot]`), `Organization`, or whatever GitHub adds later.
   */
  reviewerType: string;
  state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED' | 'DISMISSED' | 'PENDING';
  commitId: string;
  submittedAt: string;
  url: string;
  /** The reviewer's permission on the repository, when it was looked up. */
  permission?: 'admin' | 'maintain' | 'write' | 'triage' | 'read' | 'none';
}

export interface PullRequestEvidence {
  pr: PullRequestFacts;
  ci: CiRun[];
  reviews: Review[];
  /** The acting agent (the author, when the config names it an agent). */
  agent: string | null;
  /** The agent's responsible human: its first human assignee, when it has one. */
  humanOperator: string | null;
  /** Logins whose approval cannot count: author, assignees, commit authors and committers. */
  involved: string[];
  /** GitHub host, for the chain of custody (github.com or an Enterprise Server host). */
  host: string;
  /** What conditional rules read besides the above; without it the claim has no such members. */
  facts?: PullRequestRuleFacts;
}

/** The facts of a pull request that only conditional rules read (contract §10). */
export interface PullRequestRuleFacts {
  files: ChangedFilesListing;
  commits: CommitLogins[];
  /** The base branch's CODEOWNERS file, or null when it has none. */
  codeOwners: string | null;
  /** `codeOwnersOf(codeOwners, changed paths)` when already computed (codeOwnersInTurns). */
  owned?: CodeOwners[];
  /**
   * Approvers' memberships of the teams the policy names (login in lower case → `org/team`),
   * when the policy names any; absent when no team was looked up.
   */
  teams?: ReadonlyMap<string, string[]>;
  /** The agent sessions that made the commits, when a rule reads them (`agent_session`). */
  agentSessions?: AgentSessionFacts;
}

const shortSha = (sha: string) => sha.slice(0, 12);

/** The newest timestamp of the evidence: captured_at stays the same for the same evidence. */
export const latest = (times: (string | null | undefined)[]): string =>
  times
    .filter((t): t is string => typeof t === 'string' && !Number.isNaN(Date.parse(t)))
    .reduce((a, b) => (Date.parse(b) > Date.parse(a) ? b : a), '1970-01-01T00:00:00.000Z');

/** The latest review of each reviewer on the head commit: earlier pushes are not current. */
export function currentReviews(reviews: Review[], headSha: string): Review[] {
  const byReviewer = new Map<string, Review>();
  for (const review of [...reviews].sort((a, b) => a.submittedAt.localeCompare(b.submittedAt))) {
    if (review.commitId !== headSha) continue;
    if (review.state === 'COMMENTED' || review.state === 'PENDING') continue;
    byReviewer.set(review.reviewer.toLowerCase(), review);
  }
  return [...byReviewer.values()].filter((r) => r.state !== 'DISMISSED');
}

/**
 * Whether a review was written by a person. Only the account type decides: Copilot code review
 * approves as a `Bot` whose login (`Copilot`) has no `[bot]` suffix, and any type other than
 * `User` (a bot, an organization, one GitHub adds later) is no human.
 */
export const byHuman = (review: Pick<Review, 'reviewer' | 'reviewerType'>): boolean =>
  review.reviewerType === 'User' && !review.reviewer.toLowerCase().endsWith('[bot]');

/**
 * Approvals that count as a human's: on the head commit, by a person (never a bot, whatever
 * its login) with write, maintain or admin permission who is neither the author nor the
 * agent's operator (separation of duties: whoever set the agent to work cannot also wave its
 * change through).
 */
export function qualifyingApprovals(evidence: PullRequestEvidence): Review[] {
  const excluded = new Set(
    [evidence.pr.author, evidence.humanOperator, ...evidence.involved]
      .filter(Boolean)
      .map((l) => l!.toLowerCase()),
  );
  return currentReviews(evidence.reviews, evidence.pr.headSha).filter(
    (r) =>
      r.state === 'APPROVED' &&
      !excluded.has(r.reviewer.toLowerCase()) &&
      byHuman(r) &&
      (r.permission === 'admin' || r.permission === 'maintain' || r.permission === 'write'),
  );
}

type Source = ClaimInput['sources'][number];

/** A CI run as the claim's `checks` see it: GitHub's own status and conclusion. */
export const ciFactOf = (run: CiRun): CiFact => {
  if (run.status !== undefined)
    return { name: run.name, kind: run.kind, status: run.status, conclusion: run.conclusion };
  // Folded states only (no raw words kept): the nearest GitHub result.
  if (run.state === 'pending') return { name: run.name, kind: run.kind, status: 'pending' };
  const conclusion = run.state === 'neutral' ? 'neutral' : run.state;
  return run.kind === 'status'
    ? { name: run.name, kind: 'status', status: conclusion === 'success' ? 'success' : 'failure' }
    : { name: run.name, kind: 'check_run', status: 'completed', conclusion };
};

/** The members of a pull request's `action` that conditional rules read (contract §10). */
export function ruleMembersOf(
  evidence: PullRequestEvidence,
): Partial<NonNullable<ClaimInput['action']>> {
  const { pr, facts } = evidence;
  if (!facts) return {};
  const paths = changedPathsOf(facts.files);
  return {
    ...paths,
    labels: labelsOf(pr.labels ?? []),
    author: pr.author,
    committers: committersOf(facts.commits),
    approvals: approvalsOf(evidence.reviews, pr.headSha, {
      involved: [pr.author, evidence.humanOperator ?? '', ...evidence.involved].filter(Boolean),
      ...(facts.teams ? { teams: facts.teams } : {}),
    }),
    checks: checksOf(evidence.ci.map(ciFactOf)),
    code_owners: facts.owned ?? codeOwnersOf(facts.codeOwners, paths.changed_paths),
    ...facts.agentSessions,
  };
}

/** Where a source came from: the commit it describes, and the GitHub API it was read from. */
export const sourceProvenance = (
  host: string,
  snapshotId: string,
  capturedAt: string,
  via: string,
) => ({
  captured_at: capturedAt,
  snapshot_id: snapshotId,
  collector: COLLECTOR,
  chain_of_custody: [`${host}:${via}`, COLLECTOR],
});

const provenance = (evidence: PullRequestEvidence, capturedAt: string, via: string) =>
  sourceProvenance(evidence.host, evidence.pr.headSha, capturedAt, via);

/** CI as one source: admissible and required only when every run succeeded. */
export function ciSource(
  runs: CiRun[],
  sha: string,
  uri: string,
  prov: Source['provenance'],
): Source | null {
  if (runs.length === 0) return null;
  const failed = runs.filter((r) => r.state === 'failure');
  const pending = runs.filter((r) => r.state === 'pending');
  const passed = runs.filter((r) => r.state === 'success' || r.state === 'neutral');
  const list = (rs: CiRun[]) => rs.map((r) => r.name).join(', ');
  const content = [
    `CI on ${shortSha(sha)}: ${passed.length} passed, ${failed.length} failed, ${pending.length} pending`,
    failed.length ? `failed: ${list(failed)}` : '',
    pending.length ? `pending: ${list(pending)}` : '',
  ]
    .filter(Boolean)
    .join('; ');
  const state = failed.length ? 'failed' : pending.length ? 'pending' : 'passed';
  return {
    id: `ci@${shortSha(sha)}`,
    type: 'ci',
    uri,
    confidence: state === 'passed' ? 0.95 : state === 'pending' ? 0.3 : 0.05,
    content,
    admissibility:
      state === 'passed'
        ? { state: 'ADMISSIBLE', reason: 'every check passed', required: true }
        : {
            state: 'INADMISSIBLE',
            reason:
              state === 'pending'
                ? `CI is still pending (${list(pending)}); svc evaluates again when it completes`
                : `CI failed (${list(failed)})`,
            required: true,
          },
    provenance: prov,
  };
}

/** The claim of a pull request at its head commit: what the App asks svc to evaluate. */
export function buildPullRequestClaim(
  evidence: PullRequestEvidence,
  repoPolicy: { policy?: string; policyConfig?: ClaimInput['policyConfig'] },
): ClaimInput {
  const { pr } = evidence;
  const current = currentReviews(evidence.reviews, pr.headSha);
  const capturedAt = latest([
    pr.updatedAt,
    ...evidence.ci.map((r) => r.at),
    ...current.map((r) => r.submittedAt),
  ]);
  const sources: Source[] = [
    {
      id: `scm:pr-${pr.number}@${shortSha(pr.headSha)}`,
      type: 'scm',
      uri: pr.url,
      confidence: 0.9,
      content: `Pull request #${pr.number} by ${pr.author}: "${pr.title}"; ${pr.headRef} → ${pr.baseRef}; ${pr.changedFiles} files changed (+${pr.additions} −${pr.deletions})`,
      provenance: provenance(evidence, capturedAt, 'pulls'),
    },
  ];
  const ci = ciSource(evidence.ci, pr.headSha, `${pr.url}/checks`, {
    ...provenance(evidence, capturedAt, 'checks'),
  });
  if (ci) sources.push(ci);
  if (current.length > 0) {
    const approvals = current.filter((r) => r.state === 'APPROVED');
    const changes = current.filter((r) => r.state === 'CHANGES_REQUESTED');
    // A bot's review is evidence too, but is named as one: only people approve (see below).
    const names = (rs: Review[]) =>
      rs.map((r) => (byHuman(r) ? r.reviewer : `${r.reviewer} (bot)`)).join(', ');
    sources.push({
      id: `review@${shortSha(pr.headSha)}`,
      type: 'code_review',
      uri: `${pr.url}/files`,
      confidence: changes.length ? 0.1 : 0.85,
      content: `Reviews of the latest push: ${approvals.length} approving${approvals.length ? ` (${names(approvals)})` : ''}, ${changes.length} requesting changes${changes.length ? ` (${names(changes)})` : ''}`,
      ...(changes.length
        ? {
            admissibility: {
              state: 'INADMISSIBLE',
              reason: `changes requested by ${names(changes)}`,
              required: true,
            },
          }
        : {}),
      provenance: provenance(evidence, capturedAt, 'reviews'),
    });
  }
  const approvers = qualifyingApprovals(evidence);
  if (approvers.length > 0) {
    sources.push({
      id: `approval@${shortSha(pr.headSha)}`,
      type: 'human_approval',
      uri: approvers[0]!.url,
      confidence: 0.95,
      content: `Approved on the latest push by ${approvers.map((r) => `${r.reviewer} (${r.permission})`).join(', ')}, who neither wrote, committed nor was assigned this change`,
      provenance: provenance(evidence, capturedAt, 'reviews'),
    });
  }
  const action: NonNullable<ClaimInput['action']> = {
    action_type: 'merge',
    target_system: 'github',
    repository: pr.repository,
    pull_request: pr.number,
    commit: pr.headSha,
    branch: pr.baseRef,
    ...(evidence.agent ? { agent: evidence.agent } : {}),
    ...(evidence.humanOperator ? { human_operator: evidence.humanOperator } : {}),
    ...ruleMembersOf(evidence),
  };
  const claim = {
    entity: pr.repository,
    claim: `Merge pull request #${pr.number} into ${pr.baseRef}: ${pr.title}`,
    action,
    sources,
    ...(repoPolicy.policy ? { policy: repoPolicy.policy } : {}),
    ...(repoPolicy.policyConfig ? { policyConfig: repoPolicy.policyConfig } : {}),
  };
  // Same evidence, same claim_id: a redelivered event is idempotent, new evidence (a push, a
  // review, CI completing) is a new receipt.
  const digest = hashCanonical(claim).slice('sha256:'.length, 'sha256:'.length + 16);
  return { claim_id: `gh:${pr.repository}#${pr.number}@${pr.headSha}:${digest}`, ...claim };
}
