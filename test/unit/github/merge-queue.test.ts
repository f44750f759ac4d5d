import { describe, expect, it } from '@jest/globals';
import type { Receipt } from '../../../src/core/receipt.js';
import type { LedgerEntry } from '../../../src/ports/ledger-store.js';
import { buildMergeGroupClaim } from '../../../src/github/merge-group-claim.js';
import {
  mergeGroupMember,
  mergeQueueBase,
  mergeQueueBranchOf,
  mergeQueuePullRequests,
  receiptIdsOfChecks,
  recordedMergeGroup,
} from '../../../src/github/merge-queue.js';
import { loadFixture } from '../core/reference.js';

interface MergeGroupPayload {
  merge_group: { head_sha: string; head_ref: string; base_ref: string };
}
const delivery = loadFixture<MergeGroupPayload>('github/merge-group-checks-requested.json');
const status = loadFixture<{ sha: string; branches: { name: string }[] }>(
  'github/status-merge-queue.json',
);
const checks = loadFixture<{
  check_runs: { app: { id: number }; external_id: string | null }[];
}>('github/check-runs-merge-group.json');

const APP = 4242;
const INSTALLATION = 4711;
const GROUP = delivery.merge_group.head_sha;
const PR_HEAD = 'c0ffee'.repeat(6) + 'abcd';

/** A ledger entry of the merge-group claim with members 12 and 14, submitted as given. */
function groupEntry(
  submitter: Receipt['submitter'],
  headSha = GROUP,
  repository = 'acme/web',
): LedgerEntry {
  const member = (number: number) => ({
    number,
    headSha: PR_HEAD,
    url: `https://github.com/${repository}/pull/${number}`,
    receipt: { receipt_id: `dr-${number}`, verdict: 'ALLOWED', admissibility: 'ACCEPTED' },
    approved: true,
  });
  const claim = buildMergeGroupClaim(
    {
      repository,
      headSha,
      baseRef: 'main',
      members: [member(12), member(14)],
      ci: [],
      host: 'github.com',
      baseUrl: 'https://svc.example.com',
    },
    {},
  );
  // Only the parts recordedMergeGroup reads: the claim and the receipt's submitter.
  return { claim, receipt: { submitter } } as unknown as LedgerEntry;
}
const ours = { kind: 'github_app', app_id: APP, installation_id: INSTALLATION } as const;
const recorder = { repository: 'acme/web', appId: APP, installationId: INSTALLATION };

describe('merge-queue branch names', () => {
  it("a merge_group delivery's head ref names its base and its pull request", () => {
    expect(mergeQueueBase(delivery.merge_group.head_ref)).toBe('main');
    expect(mergeQueuePullRequests(delivery.merge_group.head_ref)).toEqual([12]);
  });

  it('a branch listing several pull requests names each of them, in order', () => {
    const sha = 'a'.repeat(40);
    const branch = `gh-readonly-queue/release/v2/pr-7-${sha}-pr-9-${sha}`;
    expect(mergeQueuePullRequests(branch)).toEqual([7, 9]);
    expect(mergeQueueBase(`refs/heads/gh-readonly-queue/release/v2/pr-9-${sha}`)).toBe(
      'release/v2',
    );
  });

  it('an ordinary branch is no merge-queue branch', () => {
    expect(mergeQueueBase('main')).toBeNull();
    expect(mergeQueueBase('copilot/fix-timeout')).toBeNull();
    expect(mergeQueueBase('gh-readonly-queue/main')).toBeNull();
    expect(mergeQueuePullRequests('copilot/fix-timeout')).toEqual([]);
  });

  it("a status delivery's branches: the merge-queue one is picked, else none", () => {
    expect(mergeQueueBranchOf(status.branches.map((b) => b.name))).toBe(status.branches[0]!.name);
    expect(mergeQueueBranchOf(['main', 'changes'])).toBeNull();
    expect(mergeQueueBranchOf([])).toBeNull();
  });
});

describe('the merge group recorded on a commit', () => {
  it("only this App's check runs with a receipt id are read", () => {
    expect(receiptIdsOfChecks(checks.check_runs, APP)).toEqual(['dr-group-1']);
    expect(receiptIdsOfChecks(checks.check_runs, 1)).toEqual([]);
  });

  it("this installation's merge-group receipt at the commit names the members and base", () => {
    expect(recordedMergeGroup([groupEntry(ours)], GROUP, recorder)).toEqual({
      numbers: [12, 14],
      baseRef: 'main',
    });
  });

  it('a receipt of another installation, another app or an API key is no recorded group', () => {
    const others: Receipt['submitter'][] = [
      { ...ours, installation_id: INSTALLATION + 1 },
      { ...ours, app_id: APP + 1 },
      { kind: 'api_key', key_id: 'k_1' } as unknown as Receipt['submitter'],
      undefined as unknown as Receipt['submitter'],
    ];
    for (const submitter of others) {
      expect(recordedMergeGroup([groupEntry(submitter)], GROUP, recorder)).toBeNull();
    }
  });

  it('a merge group at another commit or in another repository is no recorded group', () => {
    expect(recordedMergeGroup([groupEntry(ours, 'b'.repeat(40))], GROUP, recorder)).toBeNull();
    expect(recordedMergeGroup([groupEntry(ours, GROUP, 'acme/api')], GROUP, recorder)).toBeNull();
  });
});

describe('mergeGroupMember', () => {
  const pr = { number: 12, headSha: PR_HEAD, url: 'https://github.com/acme/web/pull/12' };

  it("carries the member's receipt and whether its claim holds a human approval", () => {
    const entry = groupEntry(ours);
    expect(mergeGroupMember(pr, { ...entry, receipt: fakeReceipt('ALLOWED') })).toEqual({
      ...pr,
      receipt: { receipt_id: 'dr-12', verdict: 'ALLOWED', admissibility: 'ACCEPTED' },
      approved: true,
    });
  });

  it('a member without a receipt at its head is unapproved and has none', () => {
    expect(mergeGroupMember(pr, null)).toEqual({ ...pr, receipt: null, approved: false });
  });
});

function fakeReceipt(verdict: string): Receipt {
  return {
    receipt_id: 'dr-12',
    policy: { verdict },
    admissibility: { status: 'ACCEPTED' },
  } as unknown as Receipt;
}
