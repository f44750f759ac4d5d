import { describe, expect, it } from '@jest/globals';
import { reviewsFrom, type ReviewPayload } from '../../../src/github/github-evidence.js';
import {
  buildPullRequestClaim,
  qualifyingApprovals,
  type PullRequestEvidence,
  type Review,
} from '../../../src/github/pull-request-claim.js';
import { loadFixture } from '../core/reference.js';

const SHA = 'c0ffee'.repeat(6) + 'abcd';
// GET /repos/acme/web/pulls/12/reviews: Copilot code review's approval, then a maintainer's.
const listed = loadFixture<ReviewPayload[]>('github/reviews-copilot.json');

const evidence = (reviews: Review[]): PullRequestEvidence => ({
  pr: {
    repository: 'acme/web',
    number: 12,
    title: 'Fix the session timeout',
    url: 'https://github.com/acme/web/pull/12',
    author: 'copilot-swe-agent[bot]',
    headSha: SHA,
    headRef: 'copilot/fix-timeout',
    baseRef: 'main',
    additions: 10,
    deletions: 2,
    changedFiles: 3,
    updatedAt: '2026-10-02T10:00:00Z',
  },
  ci: [
    {
      name: 'build',
      kind: 'check_run',
      state: 'success',
      url: null,
      at: '2026-10-02T10:05:00Z',
    },
  ],
  reviews,
  agent: 'copilot-swe-agent[bot]',
  humanOperator: 'octocat',
  involved: ['copilot-swe-agent[bot]', 'octocat'],
  host: 'github.com',
});

// Both reviewers hold write access: only the account type tells them apart.
const withWrite = (reviews: Review[]): Review[] =>
  reviews.map((r) => ({ ...r, permission: 'write' as const }));

describe('buildPullRequestClaim: who counts as a human approver', () => {
  it("reads the reviewer's account type from GitHub's review listing", () => {
    expect(reviewsFrom(listed).map((r) => [r.reviewer, r.reviewerType, r.state])).toEqual([
      ['Copilot', 'Bot', 'APPROVED'],
      ['maintainer', 'User', 'APPROVED'],
    ]);
  });

  it("Copilot's approval (type Bot, a login without [bot]) is no human approval", () => {
    const copilotOnly = withWrite(reviewsFrom(listed.slice(0, 1)));
    expect(qualifyingApprovals(evidence(copilotOnly))).toEqual([]);
    const claim = buildPullRequestClaim(evidence(copilotOnly), {});
    expect(claim.sources.map((s) => s.type)).toEqual(['scm', 'ci', 'code_review']);
    // Still evidence, named as a bot's.
    expect(claim.sources.find((s) => s.type === 'code_review')!.content).toBe(
      'Reviews of the latest push: 1 approving (Copilot (bot)), 0 requesting changes',
    );
  });

  it("a person's approval beside Copilot's counts, and names only the person", () => {
    const claim = buildPullRequestClaim(evidence(withWrite(reviewsFrom(listed))), {});
    const approval = claim.sources.find((s) => s.type === 'human_approval');
    expect(approval?.content).toBe(
      'Approved on the latest push by maintainer (write), who neither wrote, committed nor was assigned this change',
    );
    expect(approval?.uri).toBe(listed[1]!.html_url);
  });

  it.each([
    ['Bot', 'Copilot'],
    ['Organization', 'acme'],
    ['unknown', 'someone'],
    // The login suffix still rules a bot out, whatever type a payload claims.
    ['User', 'renovate[bot]'],
  ])('a reviewer of type %s (%s) never approves as a human', (reviewerType, reviewer) => {
    const review: Review = {
      reviewer,
      reviewerType,
      state: 'APPROVED',
      commitId: SHA,
      submittedAt: '2026-10-02T10:15:00Z',
      url: 'https://github.com/acme/web/pull/12#pullrequestreview-1',
      permission: 'admin',
    };
    expect(qualifyingApprovals(evidence([review]))).toEqual([]);
    expect(
      qualifyingApprovals(evidence([{ ...review, reviewer: 'maintainer', reviewerType: 'User' }])),
    ).toHaveLength(1);
  });

  it('a review listed without a type is no human approval', () => {
    const untyped = listed.map((r) => ({ ...r, user: { login: r.user!.login } }));
    expect(qualifyingApprovals(evidence(withWrite(reviewsFrom(untyped))))).toEqual([]);
  });
});
