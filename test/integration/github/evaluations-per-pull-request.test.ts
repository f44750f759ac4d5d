import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import request from 'supertest';
import { ClaimService } from '../../../src/services/claims.js';
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

const SHA = 'c0ffee'.repeat(6) + 'd00d';
const bot = (files: string[]): PullRequestState => ({
  number: 52,
  author: 'copilot-swe-agent[bot]',
  authorType: 'Bot',
  headSha: SHA,
  files,
});

// A rule that names a team: the App must learn the approvers' memberships before it evaluates.
const teamRule = (count: number) => `
rules:
  - name: infra
    if:
      paths: ['infra/**']
    require:
      approvals:
        count: ${count}
        from: { teams: ['acme/platform'] }
`;

/**
 * How often the App evaluates a claim for one pull request: every evaluation goes through
 * ClaimService, signed (`evaluate`) or not (`simulate`). Learning which teams a policy names
 * reads the policy, so it takes no evaluation of its own.
 */
describe('GitHub App: one evaluation per gating of a pull request', () => {
  let t: AppUnderTest;
  let state: RepoState;
  let github: ReturnType<typeof fakeGitHub>;
  let evaluations: () => { signed: number; simulated: number };

  closedNetwork();
  beforeEach(() => {
    state = newRepoState();
    github = fakeGitHub(state);
    t = appWithGithub();
    state.checkRuns.set(SHA, [
      { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
    ]);
    state.teams.set('acme/platform', ['alice']);
    state.reviews.set(52, [
      { user: 'alice', state: 'APPROVED', commit_id: SHA, submitted_at: '2026-01-15T08:40:00Z' },
    ]);
    state.permissions.set('alice', 'write');
    // Spies call through: the App evaluates as ever, and each call is counted.
    const signed = jest.spyOn(ClaimService.prototype, 'evaluate');
    const simulated = jest.spyOn(ClaimService.prototype, 'simulate');
    evaluations = () => ({
      signed: signed.mock.calls.length,
      simulated: simulated.mock.calls.length,
    });
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await t.close();
  });

  const gate = async (pr: PullRequestState) => {
    state.pulls.set(pr.number, pr);
    await deliver(t, 'pull_request', pullRequestEvent('opened', pr));
    expect(await t.jobs.runDue()).toBe(1);
    const done = github.writes.filter((w) => w.method === 'PATCH').at(-1)!;
    const { receipt, claim } = (await request(t.app).get(`/v1/receipts/${done.body.external_id}`))
      .body;
    return { receipt, claim, summary: (done.body.output as { summary: string }).summary };
  };

  it('a policy that names teams: the memberships are looked up, and the claim evaluated once', async () => {
    state.config.set('main', teamRule(1));
    const { receipt, claim } = await gate(bot(['infra/main.tf']));
    expect(evaluations()).toEqual({ signed: 1, simulated: 0 });
    expect(state.teamLookups).toEqual(['acme/platform:alice']);
    expect(claim.action.approvals).toEqual([
      { user: 'alice', kind: 'User', permission: 'write', teams: ['acme/platform'] },
    ]);
    expect(receipt.policy.verdict).toBe('ALLOWED');
  });

  it('a repository without .github/svc.yml: one evaluation, no team looked up', async () => {
    const { receipt } = await gate(bot(['src/app.ts']));
    expect(evaluations()).toEqual({ signed: 1, simulated: 0 });
    expect(state.teamLookups).toEqual([]);
    expect(receipt.policy.name).toBe('default');
  });

  it('a pull request that changes .github/svc.yml: its base gating and its preview, once each', async () => {
    state.config.set('main', 'policy: default\n');
    state.config.set(SHA, teamRule(2));
    const { receipt, claim, summary } = await gate(bot(['.github/svc.yml', 'infra/main.tf']));
    expect(evaluations()).toEqual({ signed: 1, simulated: 1 });
    // The proposed file's team is looked up for its preview only.
    expect(state.teamLookups).toEqual(['acme/platform:alice']);
    expect(claim.action.approvals).toEqual([{ user: 'alice', kind: 'User', permission: 'write' }]);
    expect(receipt.policy.name).toBe('default');
    expect(summary.replace(/\\/g, '')).toContain(
      '| ❌ | `rule:infra` | applies; 1 approval from acme/platform (alice), 2 required |',
    );
  });
});
