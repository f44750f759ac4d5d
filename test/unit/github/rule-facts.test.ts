import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { claimInputSchema } from '../../../src/core/claim-schema.js';
import {
  ciRunsFrom,
  pullRequestFacts,
  reviewsFrom,
  type CheckRunPayload,
  type ReviewPayload,
  type StatusPayload,
} from '../../../src/github/github-evidence.js';
import {
  buildPullRequestClaim,
  ciFactOf,
  type PullRequestEvidence,
} from '../../../src/github/pull-request-claim.js';
import {
  approvalsOf,
  changedPathsOf,
  checksOf,
  codeOwnersInTurns,
  codeOwnersOf,
  committersOf,
  labelsOf,
  ownerTeams,
  teamsToLookUp,
  type ListedFile,
  type ReviewFact,
} from '../../../src/github/rule-facts.js';
import { loadFixture } from '../core/reference.js';

const SHA = 'c0ffee'.repeat(6) + 'abcd';
const OLD = 'baddad'.repeat(6) + 'abcd';
// GitHub's answers for acme/web#12, as the App reads them.
const pull = loadFixture<Parameters<typeof pullRequestFacts>[1]>('github/pull-request.json');
const files = loadFixture<ListedFile[]>('github/pull-files.json');
const commits = loadFixture<
  { author: { login: string } | null; committer: { login: string } | null }[]
>('github/pull-commits.json');
const checkRuns = loadFixture<{ check_runs: CheckRunPayload[] }>('github/check-runs.json');
const combined = loadFixture<{ statuses: StatusPayload[] }>('github/combined-status.json');
const reviewsCopilot = loadFixture<ReviewPayload[]>('github/reviews-copilot.json');
const CODEOWNERS = readFileSync(
  new URL('../../fixtures/github/CODEOWNERS', import.meta.url),
  'utf8',
);

const commitLogins = commits.map((c) => ({
  author: c.author?.login ?? null,
  committer: c.committer?.login ?? null,
}));

const many = (n: number) => Array.from({ length: n }, (_, i) => ({ filename: `src/f${i}.ts` }));

describe('changed_paths: what a pull request changes', () => {
  it('lists every file, and both paths of a rename', () => {
    expect(changedPathsOf({ files, total: 3 })).toEqual({
      changed_paths: [
        'src/auth/session.ts',
        'test/auth/session.test.ts',
        'infra/sessions.md',
        'docs/sessions.md',
      ],
      changed_paths_incomplete: false,
    });
  });

  it('pages of 100 put together make the whole list', () => {
    const listed = changedPathsOf({ files: many(250), total: 250 });
    expect(listed.changed_paths).toHaveLength(250);
    expect(listed.changed_paths_incomplete).toBe(false);
  });

  it('more than 3,000 files: the 3,000 GitHub lists, marked incomplete', () => {
    const listed = changedPathsOf({ files: many(3000), total: 3412 });
    expect(listed.changed_paths).toHaveLength(3000);
    expect(listed.changed_paths_incomplete).toBe(true);
    expect(
      claimInputSchema.shape.action.unwrap().shape.changed_paths.safeParse(listed.changed_paths)
        .success,
    ).toBe(true);
  });

  it('leaves out a file name a claim refuses (a backslash) and marks the list incomplete', () => {
    const files = [{ filename: 'docs/a.md' }, { filename: 'infra\\main.tf' }];
    expect(changedPathsOf({ files, total: 2 })).toEqual({
      changed_paths: ['docs/a.md'],
      changed_paths_incomplete: true,
    });
  });

  it('a list that could not be read is empty and incomplete', () => {
    expect(changedPathsOf({ files: [], total: 3, error: 'Sorry, the diff is too large' })).toEqual({
      changed_paths: [],
      changed_paths_incomplete: true,
    });
  });

  it('renames past 3,000 paths, or a path too long for a claim, make the list incomplete', () => {
    const renamed = many(2000).map((f) => ({ ...f, previous_filename: `old/${f.filename}` }));
    const listed = changedPathsOf({ files: renamed, total: 2000 });
    expect(listed.changed_paths).toHaveLength(3000);
    expect(listed.changed_paths_incomplete).toBe(true);
    const long = changedPathsOf({ files: [{ filename: `a/${'x'.repeat(1100)}` }], total: 1 });
    expect(long).toEqual({ changed_paths: [], changed_paths_incomplete: true });
  });
});

describe('labels, author and committers', () => {
  it('labels by name, each once, from the pull request GitHub answers', () => {
    const { facts } = pullRequestFacts('acme/web', pull);
    expect(facts.labels).toEqual(['agent', 'area: auth', 'agent']);
    expect(labelsOf(facts.labels!)).toEqual(['agent', 'area: auth']);
  });

  it('committers: commit authors and committers with a GitHub account, each once', () => {
    expect(committersOf(commitLogins)).toEqual(['copilot-swe-agent[bot]', 'octocat', 'web-flow']);
  });
});

const review = (over: Partial<ReviewFact>): ReviewFact => ({
  reviewer: 'maintainer',
  reviewerType: 'User',
  state: 'APPROVED',
  commitId: SHA,
  submittedAt: '2026-10-02T10:20:00Z',
  permission: 'write',
  ...over,
});

describe('approvals: the latest review of each reviewer', () => {
  it("keeps Copilot's approval with kind Bot beside a person's, with permissions", () => {
    const listed = reviewsFrom(reviewsCopilot).map((r) => ({
      ...r,
      ...(r.reviewerType === 'User' ? { permission: 'maintain' as const } : {}),
    }));
    expect(approvalsOf(listed, SHA)).toEqual([
      { user: 'Copilot', kind: 'Bot' },
      { user: 'maintainer', kind: 'User', permission: 'maintain' },
    ]);
  });

  it('a renovate[bot] login typed User is still a Bot', () => {
    expect(approvalsOf([review({ reviewer: 'renovate[bot]' })], SHA)).toEqual([
      { user: 'renovate[bot]', kind: 'Bot', permission: 'write' },
    ]);
  });

  it('an approval of an earlier push is not current; a later request for changes withdraws one', () => {
    expect(approvalsOf([review({ commitId: OLD })], SHA)).toEqual([]);
    expect(
      approvalsOf(
        [
          review({}),
          // Comments change no state.
          review({ state: 'COMMENTED', submittedAt: '2026-10-02T10:25:00Z' }),
          review({
            state: 'CHANGES_REQUESTED',
            commitId: OLD,
            submittedAt: '2026-10-02T10:30:00Z',
          }),
        ],
        SHA,
      ),
    ).toEqual([]);
    expect(
      approvalsOf(
        [
          review({ state: 'CHANGES_REQUESTED', submittedAt: '2026-10-02T10:00:00Z' }),
          review({ state: 'COMMENTED', submittedAt: '2026-10-02T10:25:00Z' }),
        ],
        SHA,
      ),
    ).toEqual([]);
    expect(
      approvalsOf(
        [
          review({
            state: 'CHANGES_REQUESTED',
            commitId: OLD,
            submittedAt: '2026-10-02T10:00:00Z',
          }),
          review({}),
        ],
        SHA,
      ),
    ).toEqual([{ user: 'maintainer', kind: 'User', permission: 'write' }]);
  });

  it('leaves out the people involved in the change, whatever the case of their login', () => {
    expect(
      approvalsOf([review({ reviewer: 'OctoCat' }), review({})], SHA, { involved: ['octocat'] }),
    ).toEqual([{ user: 'maintainer', kind: 'User', permission: 'write' }]);
  });

  it('teams: set for people only when teams were looked up', () => {
    const teams = new Map([['maintainer', ['acme/platform']]]);
    expect(
      approvalsOf(
        [review({}), review({ reviewer: 'Copilot', reviewerType: 'Bot', permission: undefined })],
        SHA,
        {
          teams,
        },
      ),
    ).toEqual([
      { user: 'Copilot', kind: 'Bot' },
      { user: 'maintainer', kind: 'User', permission: 'write', teams: ['acme/platform'] },
    ]);
    expect(approvalsOf([review({ reviewer: 'other' })], SHA, { teams })).toEqual([
      { user: 'other', kind: 'User', permission: 'write', teams: [] },
    ]);
    expect(approvalsOf([review({})], SHA)[0]).not.toHaveProperty('teams');
  });
});

describe('checks: check runs and commit statuses by name', () => {
  const runs = ciRunsFrom(checkRuns.check_runs, combined.statuses, 4242);

  it("maps GitHub's results; our own check never counts; the worst result of a name stands", () => {
    expect(checksOf(runs.map(ciFactOf))).toEqual([
      { name: 'build', status: 'completed', conclusion: 'success' },
      { name: 'ci/jenkins', status: 'completed', conclusion: 'success' },
      { name: 'coverage', status: 'pending' },
      // Another app's success under the same name cannot hide this failure.
      { name: 'deploy-check', status: 'completed', conclusion: 'timed_out' },
      { name: 'e2e', status: 'in_progress' },
      { name: 'license/cla', status: 'completed', conclusion: 'error' },
      { name: 'lint', status: 'completed', conclusion: 'skipped' },
      { name: 'security/scan', status: 'completed', conclusion: 'failure' },
    ]);
  });

  it('an unknown status or conclusion is never a pass', () => {
    expect(
      checksOf([
        { name: 'a', kind: 'check_run', status: 'completed', conclusion: 'someday' },
        { name: 'b', kind: 'check_run', status: 'waiting', conclusion: null },
        { name: 'c', kind: 'status', status: 'weird' },
      ]),
    ).toEqual([
      { name: 'a', status: 'completed', conclusion: 'failure' },
      { name: 'b', status: 'pending' },
      { name: 'c', status: 'completed', conclusion: 'failure' },
    ]);
  });
});

describe('code_owners: the base branch CODEOWNERS, last match wins', () => {
  const paths = [
    'src/auth/session.ts',
    'src/app.ts',
    'docs/sessions.md',
    'src/auth/README.md',
    'docs/generated/api.md',
    'infra/sessions.md',
  ];

  it('names the owners of each changed path; a path whose last match names nobody is left out', () => {
    expect(codeOwnersOf(CODEOWNERS, paths)).toEqual([
      { path: 'src/auth/session.ts', owners: ['@acme/security', 'alice'] },
      { path: 'src/app.ts', owners: ['@acme/reviewers'] },
      { path: 'docs/sessions.md', owners: ['@acme/docs'] },
      // *.md comes after /src/auth/: the later line wins.
      { path: 'src/auth/README.md', owners: ['@acme/docs'] },
      { path: 'infra/sessions.md', owners: ['@acme/platform', 'ops@acme.example'] },
    ]);
  });

  it('no file, no owners; a file of 3 MB or more is ignored, as GitHub does', () => {
    expect(codeOwnersOf(null, paths)).toEqual([]);
    expect(codeOwnersOf(`* @acme/all\n${'#'.repeat(3 * 1024 * 1024)}`, paths)).toEqual([]);
    expect(codeOwnersOf('* @acme/all\r\n', ['x'])).toEqual([{ path: 'x', owners: ['@acme/all'] }]);
  });

  it('in turns, the same owners as at once', async () => {
    const many = Array.from({ length: 230 }, (_, i) => `src/auth/f${i}.md`);
    expect(await codeOwnersInTurns(CODEOWNERS, [...paths, ...many])).toEqual(
      codeOwnersOf(CODEOWNERS, [...paths, ...many]),
    );
  });

  it('team owners as slugs', () => {
    expect(ownerTeams(codeOwnersOf(CODEOWNERS, paths))).toEqual([
      'acme/docs',
      'acme/platform',
      'acme/reviewers',
      'acme/security',
    ]);
  });
});

describe('teamsToLookUp: which team memberships the App looks up for a policy', () => {
  const owned = [
    { path: 'src/auth/session.ts', owners: ['@acme/security', 'alice'] },
    { path: 'infra/main.tf', owners: ['@acme/platform', 'ops@acme.example'] },
  ];

  it('none for a refused policy, or one that names no teams and counts no code owners', () => {
    expect(teamsToLookUp(null, owned)).toEqual([]);
    expect(teamsToLookUp({ teams: [], codeOwners: false }, owned)).toEqual([]);
  });

  it('the teams it names as GitHub slugs, with the team owners when it counts code owners', () => {
    expect(
      teamsToLookUp({ teams: ['acme/sec', 'not a slug/x'], codeOwners: false }, owned),
    ).toEqual(['acme/sec']);
    expect(
      teamsToLookUp({ teams: ['acme/sec', 'acme/platform'], codeOwners: true }, owned),
    ).toEqual(['acme/platform', 'acme/sec', 'acme/security']);
  });
});

describe('buildPullRequestClaim: the members conditional rules read', () => {
  const loaded = pullRequestFacts('acme/web', pull);
  const evidence: PullRequestEvidence = {
    pr: loaded.facts,
    ci: ciRunsFrom(checkRuns.check_runs, combined.statuses, 4242),
    reviews: reviewsFrom(reviewsCopilot).map((r) =>
      r.reviewerType === 'User' ? { ...r, permission: 'write' as const } : r,
    ),
    agent: 'copilot-swe-agent[bot]',
    humanOperator: 'octocat',
    involved: ['copilot-swe-agent[bot]', 'octocat', 'web-flow'],
    host: 'github.com',
    facts: { files: { files, total: 3 }, commits: commitLogins, codeOwners: CODEOWNERS },
  };

  it('fills every member from the facts, and the claim is valid', () => {
    const claim = buildPullRequestClaim(evidence, {});
    expect(claimInputSchema.safeParse(claim).success).toBe(true);
    expect(claim.action).toMatchObject({
      changed_paths: [
        'src/auth/session.ts',
        'test/auth/session.test.ts',
        'infra/sessions.md',
        'docs/sessions.md',
      ],
      changed_paths_incomplete: false,
      labels: ['agent', 'area: auth'],
      author: 'copilot-swe-agent[bot]',
      committers: ['copilot-swe-agent[bot]', 'octocat', 'web-flow'],
      approvals: [
        { user: 'Copilot', kind: 'Bot' },
        { user: 'maintainer', kind: 'User', permission: 'write' },
      ],
      code_owners: [
        { path: 'src/auth/session.ts', owners: ['@acme/security', 'alice'] },
        { path: 'test/auth/session.test.ts', owners: ['@acme/reviewers'] },
        { path: 'infra/sessions.md', owners: ['@acme/platform', 'ops@acme.example'] },
        { path: 'docs/sessions.md', owners: ['@acme/docs'] },
      ],
    });
    expect(claim.action!.checks).toHaveLength(8);
  });

  it('the same facts make the same claim; another label, another claim_id', () => {
    expect(buildPullRequestClaim(evidence, {})).toEqual(buildPullRequestClaim(evidence, {}));
    const relabelled = { ...evidence, pr: { ...evidence.pr, labels: ['agent'] } };
    expect(buildPullRequestClaim(relabelled, {}).claim_id).not.toBe(
      buildPullRequestClaim(evidence, {}).claim_id,
    );
  });

  it('without facts the claim has none of these members', () => {
    const claim = buildPullRequestClaim({ ...evidence, facts: undefined }, {});
    for (const member of [
      'changed_paths',
      'labels',
      'author',
      'approvals',
      'checks',
      'code_owners',
    ])
      expect(claim.action).not.toHaveProperty(member);
  });
});
