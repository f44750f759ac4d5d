import { describe, expect, it } from '@jest/globals';
import { claimInputSchema } from '../../../src/core/claim-schema.js';
import { ciRunsFrom, type CheckRunPayload } from '../../../src/github/github-evidence.js';
import {
  buildMergeGroupClaim,
  type MergeGroupEvidence,
} from '../../../src/github/merge-group-claim.js';
import { loadFixture } from '../core/reference.js';

const HEAD = 'abc123'.repeat(6) + 'beef';
const checkRuns = loadFixture<{ check_runs: CheckRunPayload[] }>('github/check-runs.json');
const green = ciRunsFrom(checkRuns.check_runs.slice(0, 1), [], 4242);

const evidence = (over: Partial<MergeGroupEvidence> = {}): MergeGroupEvidence => ({
  repository: 'acme/web',
  headSha: HEAD,
  baseRef: 'main',
  members: [
    {
      number: 12,
      headSha: 'c0ffee'.repeat(6) + 'abcd',
      url: 'https://github.com/acme/web/pull/12',
      receipt: { receipt_id: 'dr-1', verdict: 'ALLOWED', admissibility: 'ACCEPTED' },
      approved: true,
    },
    {
      number: 13,
      headSha: 'feed'.repeat(10),
      url: 'https://github.com/acme/web/pull/13',
      receipt: { receipt_id: 'dr-2', verdict: 'ALLOWED', admissibility: 'ACCEPTED' },
      approved: true,
    },
  ],
  ci: green,
  host: 'github.com',
  baseUrl: 'https://svc.example.com',
  ...over,
});

describe('buildMergeGroupClaim', () => {
  it("holds each member's receipt, the group's CI and the members' approval", () => {
    const claim = buildMergeGroupClaim(evidence(), { policy: 'strict' });
    expect(claimInputSchema.safeParse(claim).success).toBe(true);
    expect(claim.claim_id).toMatch(new RegExp(`^gh:acme/web:merge-group@${HEAD}:[0-9a-f]{16}$`));
    expect(claim.policy).toBe('strict');
    expect(claim.action).toEqual({
      action_type: 'merge',
      target_system: 'github',
      repository: 'acme/web',
      commit: HEAD,
      branch: 'main',
      // The merged result's CI, for rules that require checks; no member's own facts.
      checks: [{ name: 'build', status: 'completed', conclusion: 'success' }],
    });
    expect(claim.sources.map((s) => [s.id, s.type, s.admissibility?.state])).toEqual([
      ['receipt:pr-12', 'policy_check', 'ADMISSIBLE'],
      ['receipt:pr-13', 'policy_check', 'ADMISSIBLE'],
      [`approvals@${HEAD.slice(0, 12)}`, 'human_approval', undefined],
      [`ci@${HEAD.slice(0, 12)}`, 'ci', 'ADMISSIBLE'],
    ]);
    expect(claim.sources[0]!.uri).toBe('https://svc.example.com/v1/receipts/dr-1');
  });

  it('a member without an allowing receipt is inadmissible; one unapproved member carries no approval', () => {
    const [first, second] = evidence().members;
    const claim = buildMergeGroupClaim(
      evidence({
        members: [
          { ...first!, receipt: null, approved: false },
          { ...second!, receipt: { ...second!.receipt!, verdict: 'ESCALATED' } },
        ],
      }),
      {},
    );
    expect(claim.sources.map((s) => [s.id, s.admissibility?.reason])).toEqual([
      ['receipt:pr-12', 'not evaluated by svc'],
      ['receipt:pr-13', 'its own gate did not allow it'],
      [`ci@${HEAD.slice(0, 12)}`, 'every check passed'],
    ]);
  });

  it('no CI yet on the merged result: an inadmissible CI source', () => {
    const claim = buildMergeGroupClaim(evidence({ ci: [] }), {});
    expect(claim.sources.at(-1)).toMatchObject({
      type: 'ci',
      content: 'No CI has reported on the merge group yet',
      admissibility: { state: 'INADMISSIBLE', required: true },
    });
  });

  it('the same evidence makes the same claim_id', () => {
    expect(buildMergeGroupClaim(evidence(), {}).claim_id).toBe(
      buildMergeGroupClaim(evidence(), {}).claim_id,
    );
    expect(buildMergeGroupClaim(evidence({ ci: [] }), {}).claim_id).not.toBe(
      buildMergeGroupClaim(evidence(), {}).claim_id,
    );
  });
});
