import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import {
  APP_ID,
  appWithGithub,
  BASE_URL,
  deliver,
  fakeGitHub,
  INSTALLATION,
  newRepoState,
  pullRequestEvent,
  type AppUnderTest,
  type PullRequestState,
  type RepoState,
  closedNetwork,
} from './fake-github.js';

const SHA = 'c0ffee'.repeat(6) + 'abcd';
const bot: PullRequestState = {
  number: 12,
  author: 'copilot-swe-agent[bot]',
  authorType: 'Bot',
  headSha: SHA,
  title: 'Fix the session timeout',
  assignees: ['octocat'],
};

describe('GitHub App: a pull request becomes a signed check run', () => {
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

  const completed = () => github.writes.filter((w) => w.method === 'PATCH');

  it("the check run's start and completion times are the service clock's", async () => {
    state.pulls.set(12, bot);
    t.clock.advance(3 * 24 * 60 * 60 * 1000 + 1234);
    const now = new Date(t.clock.now()).toISOString();
    expect((await deliver(t, 'pull_request', pullRequestEvent('opened', bot))).status).toBe(202);
    expect(await t.jobs.runDue()).toBe(1);
    const [start, done] = github.writes;
    expect(start).toMatchObject({
      method: 'POST',
      body: { status: 'in_progress', started_at: now },
    });
    expect(done).toMatchObject({
      method: 'PATCH',
      body: { status: 'completed', completed_at: now },
    });
  });

  it('ALLOWED: CI green and a maintainer approved the latest push → success, with a receipt that verifies', async () => {
    state.pulls.set(12, bot);
    state.checkRuns.set(SHA, [
      { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
      // Our own earlier check run never counts as CI.
      { name: 'svc / admissibility', status: 'completed', conclusion: 'failure', app_id: APP_ID },
    ]);
    state.reviews.set(12, [
      {
        user: 'maintainer',
        state: 'APPROVED',
        commit_id: SHA,
        submitted_at: '2026-01-15T08:40:00Z',
      },
    ]);
    state.permissions.set('maintainer', 'maintain');

    const res = await deliver(t, 'pull_request', pullRequestEvent('opened', bot));
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ accepted: true, status: 'queued' });
    expect(github.writes).toEqual([]);

    expect(await t.jobs.runDue()).toBe(1);
    const [start, done] = github.writes;
    expect(start).toMatchObject({
      method: 'POST',
      body: { name: 'svc / admissibility', head_sha: SHA, status: 'in_progress' },
    });
    expect(done).toMatchObject({
      method: 'PATCH',
      id: start!.id,
      body: {
        status: 'completed',
        conclusion: 'success',
        actions: [
          { label: 'Re-evaluate', identifier: 're-evaluate', description: expect.any(String) },
        ],
      },
    });
    const receiptId = done!.body.external_id as string;
    expect(done!.body.details_url).toBe(`${BASE_URL}/explorer/receipts/${receiptId}`);
    const output = done!.body.output as { title: string; summary: string };
    expect(output.title).toMatch(/^ALLOWED · ACCEPTED/);
    for (const part of [
      'min_sources',
      'human_approval',
      receiptId,
      `(${BASE_URL}/explorer/receipts/${receiptId})`,
      'sha256:',
      '/v1/verify',
      'svc-verify',
    ])
      expect(output.summary).toContain(part);
    expect(output.summary.length).toBeLessThanOrEqual(65_535);

    const stored = await request(t.app).get(`/v1/receipts/${receiptId}`);
    expect(stored.status).toBe(200);
    const { receipt, claim } = stored.body;
    expect(receipt.submitter).toEqual({
      kind: 'github_app',
      app_id: APP_ID,
      installation_id: INSTALLATION,
    });
    // No .github/svc.yml: the default policy with the agent rule added, signed as an override.
    expect(receipt.policy).toMatchObject({ verdict: 'ALLOWED', name: 'default', overrides: true });
    expect(receipt.subject).toMatchObject({
      entity: 'acme/web',
      repository: 'acme/web',
      pull_request: 12,
      agent: 'copilot-swe-agent[bot]',
      commit: SHA,
      branch: 'main',
      action_type: 'merge',
      target_system: 'github',
    });
    expect(claim.action.human_operator).toBe('octocat');
    expect(claim.sources.map((s: { type: string }) => s.type)).toEqual([
      'scm',
      'ci',
      'code_review',
      'human_approval',
    ]);
    for (const source of claim.sources)
      expect(source.provenance).toMatchObject({ snapshot_id: SHA, collector: 'svc-github-app' });
    const verified = await request(t.app)
      .post(`/v1/verify?expect_submitter=github_app:${APP_ID}:${INSTALLATION}`)
      .send(receipt);
    expect(verified.body.valid).toBe(true);
    expect(
      verified.body.checks.find((c: { name: string }) => c.name === 'policy_binding').status,
    ).toBe('PASS');
  });

  it.each([
    ['no CI and no review: the pull request its only evidence', false, 'ci, human_approval'],
    ['CI green, no approval', true, 'human_approval'],
  ])(
    'no .github/svc.yml: an agent’s pull request is ESCALATED with %s',
    async (_label, green, missing) => {
      state.pulls.set(12, bot);
      if (green)
        state.checkRuns.set(SHA, [
          { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
        ]);
      await deliver(t, 'pull_request', pullRequestEvent('opened', bot));
      await t.jobs.runDue();
      const [done] = completed();
      expect(done!.body.conclusion).toBe('action_required');
      const stored = await request(t.app).get(`/v1/receipts/${done!.body.external_id as string}`);
      expect(stored.body.receipt.policy).toMatchObject({
        name: 'default',
        verdict: 'ESCALATED',
        overrides: true,
      });
      expect(stored.body.receipt.policy.checks).toContainEqual({
        rule: 'rule:agent-pr-needs-ci-and-approval',
        passed: false,
        reason: `applies; admissible source types missing: ${missing}`,
      });
    },
  );

  it('a repository with its own .github/svc.yml decides for itself: CI green alone is ALLOWED under default', async () => {
    state.pulls.set(12, bot);
    state.config.set('main', 'policy: default\n');
    state.checkRuns.set(SHA, [
      { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
    ]);
    await deliver(t, 'pull_request', pullRequestEvent('opened', bot));
    await t.jobs.runDue();
    expect(completed()[0]!.body.conclusion).toBe('success');
  });

  it('BLOCKED: failing CI → failure, naming the failed check', async () => {
    state.pulls.set(12, bot);
    state.checkRuns.set(SHA, [
      { name: 'unit tests', status: 'completed', conclusion: 'failure', app_id: 1 },
    ]);
    await deliver(t, 'pull_request', pullRequestEvent('opened', bot));
    await t.jobs.runDue();
    const [done] = completed();
    expect(done!.body.conclusion).toBe('failure');
    expect((done!.body.output as { summary: string }).summary.replace(/\\/g, '')).toContain(
      'CI failed (unit tests)',
    );
  });

  it('ESCALATED: a strict base-branch policy asks for a human → action_required', async () => {
    state.pulls.set(12, bot);
    state.config.set('main', 'policy: strict\n');
    state.checkRuns.set(SHA, [
      { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
    ]);
    await deliver(t, 'pull_request', pullRequestEvent('opened', bot));
    await t.jobs.runDue();
    const [done] = completed();
    expect(done!.body.conclusion).toBe('action_required');
    const receipt = (await request(t.app).get(`/v1/receipts/${done!.body.external_id}`)).body
      .receipt;
    expect(receipt.policy).toMatchObject({ name: 'strict', verdict: 'ESCALATED' });
  });
});
