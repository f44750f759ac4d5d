import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import {
  appWithGithub,
  closedNetwork,
  deliver,
  fakeGitHub,
  newRepoState,
  pullRequestEvent,
  type AppUnderTest,
  type PullRequestState,
  type RepoState,
} from './fake-github.js';

const SHA = 'c0ffee'.repeat(6) + 'abcd';
const bot: PullRequestState = {
  number: 12,
  author: 'copilot-swe-agent[bot]',
  authorType: 'Bot',
  headSha: SHA,
  assignees: ['octocat'],
  labels: ['agent', 'area: auth'],
  files: [
    'src/auth/session.ts',
    { filename: 'docs/sessions.md', previous_filename: 'infra/sessions.md' },
  ],
};

describe('GitHub App: the claim holds what conditional rules read', () => {
  let t: AppUnderTest;
  let state: RepoState;
  let github: ReturnType<typeof fakeGitHub>;

  closedNetwork();
  beforeEach(() => {
    state = newRepoState();
    github = fakeGitHub(state);
    t = appWithGithub();
  });
  afterEach(() => t.close());

  /** Delivers the pull request, runs the job, and answers the stored claim and receipt. */
  const evaluate = async (pr: PullRequestState) => {
    state.pulls.set(pr.number, pr);
    expect((await deliver(t, 'pull_request', pullRequestEvent('opened', pr))).status).toBe(202);
    expect(await t.jobs.runDue()).toBe(1);
    const done = github.writes.filter((w) => w.method === 'PATCH').at(-1)!;
    const stored = await request(t.app).get(`/v1/receipts/${done.body.external_id}`);
    expect(stored.status).toBe(200);
    return { ...stored.body, done };
  };

  it('records changed paths, labels, author, committers, approvals, checks and code owners in the receipt', async () => {
    state.checkRuns.set(SHA, [
      { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
      { name: 'e2e', status: 'in_progress', conclusion: null, app_id: 1 },
    ]);
    state.statuses.set(SHA, [
      { context: 'ci/legacy', state: 'success', updated_at: '2026-01-15T08:10:00Z' },
      { context: 'security/scan', state: 'error', updated_at: '2026-01-15T08:11:00Z' },
    ]);
    state.commits.set(12, [
      { author: 'copilot-swe-agent[bot]', committer: 'web-flow' },
      { author: 'octocat', committer: 'octocat' },
    ]);
    state.reviews.set(12, [
      {
        user: 'Copilot',
        userType: 'Bot',
        state: 'APPROVED',
        commit_id: SHA,
        submitted_at: '2026-01-15T08:39:00Z',
      },
      {
        user: 'maintainer',
        state: 'APPROVED',
        commit_id: SHA,
        submitted_at: '2026-01-15T08:40:00Z',
      },
    ]);
    state.permissions.set('maintainer', 'maintain');
    state.codeowners.set(
      '.github/CODEOWNERS',
      '* @acme/reviewers\n/src/auth/ @acme/security alice\n',
    );
    state.codeowners.set('CODEOWNERS', '* @someone-else\n');

    const { claim, receipt } = await evaluate(bot);
    expect(claim.action).toEqual(
      expect.objectContaining({
        changed_paths: ['src/auth/session.ts', 'infra/sessions.md', 'docs/sessions.md'],
        changed_paths_incomplete: false,
        labels: ['agent', 'area: auth'],
        author: 'copilot-swe-agent[bot]',
        committers: ['copilot-swe-agent[bot]', 'octocat', 'web-flow'],
        approvals: [
          { user: 'Copilot', kind: 'Bot' },
          { user: 'maintainer', kind: 'User', permission: 'maintain' },
        ],
        checks: [
          { name: 'build', status: 'completed', conclusion: 'success' },
          { name: 'ci/legacy', status: 'completed', conclusion: 'success' },
          { name: 'e2e', status: 'in_progress' },
          { name: 'security/scan', status: 'completed', conclusion: 'error' },
        ],
        code_owners: [
          { path: 'src/auth/session.ts', owners: ['@acme/security', 'alice'] },
          { path: 'infra/sessions.md', owners: ['@acme/reviewers'] },
          { path: 'docs/sessions.md', owners: ['@acme/reviewers'] },
        ],
      }),
    );
    // The receipt signs the claim it was issued for: its inputs hash covers these members.
    const verified = await request(t.app).post('/v1/verify').send(receipt);
    expect(verified.body.valid).toBe(true);
    // The first CODEOWNERS GitHub would use, read from the base branch only.
    expect(state.codeownersReads).toEqual(['main:.github/CODEOWNERS']);
    // No policy names a team: no membership is asked for.
    expect(state.teamLookups).toEqual([]);
  });

  it("reads CODEOWNERS from GitHub's locations in order: .github/, the root, docs/", async () => {
    state.codeowners.set('docs/CODEOWNERS', '*.md @acme/docs\n');
    const { claim } = await evaluate(bot);
    expect(state.codeownersReads).toEqual([
      'main:.github/CODEOWNERS',
      'main:CODEOWNERS',
      'main:docs/CODEOWNERS',
    ]);
    expect(claim.action.code_owners).toEqual([
      { path: 'infra/sessions.md', owners: ['@acme/docs'] },
      { path: 'docs/sessions.md', owners: ['@acme/docs'] },
    ]);
  });

  it('pages through the files 100 at a time', async () => {
    const files = Array.from({ length: 250 }, (_, i) => `src/f${String(i).padStart(3, '0')}.ts`);
    const { claim } = await evaluate({ ...bot, files });
    expect(claim.action.changed_paths).toEqual(files);
    expect(claim.action.changed_paths_incomplete).toBe(false);
    expect(state.filePages).toEqual(['100:1', '100:2', '100:3']);
    expect(claim.action.code_owners).toEqual([]);
  });

  it('more than 3,000 changed files: the 3,000 GitHub lists, marked incomplete', async () => {
    const files = Array.from({ length: 3412 }, (_, i) => `src/f${i}.ts`);
    const { claim } = await evaluate({ ...bot, files });
    expect(claim.action.changed_paths).toHaveLength(3000);
    expect(claim.action.changed_paths_incomplete).toBe(true);
    // 30 pages of 100, and no page past GitHub's 3,000 files.
    expect(state.filePages).toEqual(Array.from({ length: 30 }, (_, i) => `100:${i + 1}`));
  });

  it('a file list GitHub refuses to give: no paths, marked incomplete, and still a receipt', async () => {
    const { claim, done } = await evaluate({ ...bot, filesStatus: 422 });
    expect(claim.action.changed_paths).toEqual([]);
    expect(claim.action.changed_paths_incomplete).toBe(true);
    expect(done.body.status).toBe('completed');
  });
});
