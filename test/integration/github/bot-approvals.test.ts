import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import {
  appWithGithub,
  deliver,
  fakeGitHub,
  mergeGroupEvent,
  newRepoState,
  pullRequestEvent,
  reviewEvent,
  type AppUnderTest,
  type PullRequestState,
  type RepoState,
  closedNetwork,
} from './fake-github.js';

const SHA = 'c0ffee'.repeat(6) + 'abcd';
const GROUP = '7'.repeat(40);
const agentPr: PullRequestState = {
  number: 12,
  author: 'copilot-swe-agent[bot]',
  authorType: 'Bot',
  headSha: SHA,
  assignees: ['octocat'],
};

interface Stored {
  receipt: { policy: { verdict: string; name: string } };
  claim: { sources: { type: string; content: string }[] };
}

describe('GitHub App: a bot approval is no human approval', () => {
  let t: AppUnderTest;
  let state: RepoState;
  let github: ReturnType<typeof fakeGitHub>;

  closedNetwork();
  beforeEach(() => {
    state = newRepoState();
    state.pulls.set(12, agentPr);
    // A policy that requires a human approval before an agent's change may merge.
    state.config.set('main', 'policy: strict\n');
    for (const sha of [SHA, GROUP])
      state.checkRuns.set(sha, [
        { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
      ]);
    // Copilot code review approves as login "Copilot", type Bot; even with write access (as
    // a repository may grant it) its approval must not count.
    state.reviews.set(12, [
      {
        user: 'Copilot',
        userType: 'Bot',
        state: 'APPROVED',
        commit_id: SHA,
        submitted_at: '2026-01-15T08:40:00Z',
      },
    ]);
    state.permissions.set('Copilot', 'write');
    state.permissions.set('maintainer', 'maintain');
    state.permissionLookups = [];
    github = fakeGitHub(state);
    t = appWithGithub();
  });
  afterEach(() => t.close());

  const last = () => github.writes.at(-1)!.body as { conclusion: string; external_id: string };
  const stored = async () =>
    (await request(t.app).get(`/v1/receipts/${last().external_id}`)).body as Stored;
  const run = async (event: string, payload: object) => {
    expect((await deliver(t, event, payload)).status).toBe(202);
    expect(await t.jobs.runDue()).toBe(1);
  };

  it("Copilot's approval leaves the pull request waiting for a person; a maintainer's then allows it", async () => {
    await run('pull_request_review', reviewEvent('submitted', agentPr, 'Copilot', 'Bot'));
    expect(last().conclusion).toBe('action_required');
    let { receipt, claim } = await stored();
    expect(receipt.policy).toMatchObject({ name: 'strict', verdict: 'ESCALATED' });
    expect(claim.sources.map((s) => s.type)).not.toContain('human_approval');
    expect(claim.sources.find((s) => s.type === 'code_review')?.content).toContain('Copilot (bot)');
    // Whatever a bot's permission, it is not asked for.
    expect(state.permissionLookups).toEqual([]);

    state.reviews.get(12)!.push({
      user: 'maintainer',
      state: 'APPROVED',
      commit_id: SHA,
      submitted_at: '2026-01-15T09:00:00Z',
    });
    await run('pull_request_review', reviewEvent('submitted', agentPr, 'maintainer'));
    expect(last().conclusion).toBe('success');
    ({ receipt, claim } = await stored());
    expect(receipt.policy.verdict).toBe('ALLOWED');
    const approval = claim.sources.find((s) => s.type === 'human_approval');
    expect(approval?.content).toContain('by maintainer (maintain)');
    expect(approval?.content).not.toContain('Copilot');
    expect(state.permissionLookups).toEqual(['maintainer']);
  });

  it('a merge group counts approvals the same way: a member approved only by Copilot carries none over', async () => {
    await run('pull_request', pullRequestEvent('opened', agentPr));
    expect(last().conclusion).toBe('action_required');
    await run('merge_group', mergeGroupEvent(GROUP, [12]));
    expect(last().conclusion).toBe('failure');
    let { claim } = await stored();
    expect(claim.sources.map((s) => s.type)).toEqual(['policy_check', 'ci']);

    // A person approves the member: its new receipt carries the approval into the group.
    state.reviews.get(12)!.push({
      user: 'maintainer',
      state: 'APPROVED',
      commit_id: SHA,
      submitted_at: '2026-01-15T09:00:00Z',
    });
    await run('pull_request_review', reviewEvent('submitted', agentPr, 'maintainer'));
    expect(last().conclusion).toBe('success');
    await run('merge_group', mergeGroupEvent(GROUP, [12]));
    expect(last().conclusion).toBe('success');
    ({ claim } = await stored());
    expect(claim.sources.map((s) => s.type)).toEqual(['policy_check', 'human_approval', 'ci']);
  });
});
