import type { LedgerEntry } from '../ports/ledger-store.js';
import type { MergeGroupMember } from './merge-group-claim.js';

const MERGE_QUEUE_BRANCH = /^(?:refs\/heads\/)?gh-readonly-queue\/(.+)\/pr-\d+-[0-9a-f]+$/;

/** The base branch of a merge-queue branch (`gh-readonly-queue/<base>/pr-<n>-<sha>`). */
export const mergeQueueBase = (branch: string): string | null =>
  MERGE_QUEUE_BRANCH.exec(branch)?.[1] ?? null;

/** The pull requests a merge-queue branch name lists (`…/pr-104-<sha>`). */
export const mergeQueuePullRequests = (headRef: string): number[] =>
  [...headRef.matchAll(/pr-(\d+)-[0-9a-f]+/g)].map((m) => Number(m[1]));

/** The first of a commit's branches that looks like a merge-queue branch, or null. */
export const mergeQueueBranchOf = (branches: readonly string[]): string | null =>
  branches.find((name) => mergeQueueBase(name) !== null) ?? null;

/** Who recorded a merge group's receipt: this App, in this installation. */
export interface GroupRecorder {
  repository: string;
  appId: number;
  installationId: number;
}

/** The receipt ids this App left on a commit's check runs (their `external_id`). */
export const receiptIdsOfChecks = (
  checkRuns: readonly { app?: { id?: number } | null; external_id?: string | null }[],
  appId: number,
): string[] =>
  checkRuns
    .filter((run) => run.app?.id === appId && run.external_id)
    .map((run) => run.external_id!);

/**
 * Of the receipts found on a commit, the merge group this installation evaluated there, or
 * null. Only a receipt of this App and installation whose claim is a merge group at that very
 * commit counts: its base and members were read from a signed merge_group delivery, never from
 * a branch name anyone can choose.
 */
export function recordedMergeGroup(
  entries: readonly LedgerEntry[],
  headSha: string,
  recorder: GroupRecorder,
): { numbers: number[]; baseRef: string } | null {
  const prefix = `gh:${recorder.repository}:merge-group@${headSha}:`;
  const entry = entries.find(
    (e) =>
      e.claim.claim_id.startsWith(prefix) &&
      e.receipt.submitter?.kind === 'github_app' &&
      e.receipt.submitter.app_id === recorder.appId &&
      e.receipt.submitter.installation_id === recorder.installationId,
  );
  if (!entry) return null;
  const numbers = entry.claim.sources
    .map((s) => /^receipt:pr-(\d+)$/.exec(s.id)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number);
  return { numbers, baseRef: entry.claim.action?.branch ?? '' };
}

/** A member of a merge group: its pull request at its head, with its receipt there if any. */
export function mergeGroupMember(
  pr: { number: number; headSha: string; url: string },
  entry: LedgerEntry | null,
): MergeGroupMember {
  return {
    ...pr,
    receipt: entry
      ? {
          receipt_id: entry.receipt.receipt_id,
          verdict: entry.receipt.policy.verdict,
          admissibility: entry.receipt.admissibility.status,
        }
      : null,
    approved: entry?.claim.sources.some((s) => s.type === 'human_approval') ?? false,
  };
}
