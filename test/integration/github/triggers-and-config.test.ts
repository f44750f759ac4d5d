import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import {
  APP_ID,
  appWithGithub,
  checkSuiteEvent,
  deliver,
  fakeGitHub,
  mergeGroupEvent,
  newRepoState,
  ourCheckRunEvent,
  pullRequestEvent,
  reviewEvent,
  statusEvent,
  type AppUnderTest,
  type PullRequestState,
  type RepoState,
  closedNetwork,
} from './fake-github.js';

const SHA = 'a1b2c3d4'.repeat(5);
const agentPr: PullRequestState = {
  number: 7,
  author: 'renovate[bot]',
  authorType: 'Bot',
  headSha: SHA,
};
const humanPr: PullRequestState = { number: 8, author: 'alice', headSha: 'f'.repeat(40) };

describe('GitHub App: who is gated, configuration, and what re-evaluates', () => {
  let t: AppUnderTest;
  let state: RepoState;
  let github: ReturnType<typeof fakeGitHub>;

  closedNetwork();
  beforeEach(() => {
    state = newRepoState();
    state.pulls.set(7, agentPr);
    state.pulls.set(8, humanPr);
    github = fakeGitHub(state);
    t = appWithGithub();
  });
  afterEach(() => t.close());

  const completed = () => github.writes.filter((w) => w.method === 'PATCH');
  const lastOutput = () =>
    completed().at(-1)!.body as {
      conclusion: string;
      external_id?: string;
      output: { title: string; summary: string };
    };
  const run = async (event: string, payload: object) => {
    const res = await deliver(t, event, payload);
    expect(res.status).toBe(202);
    await t.jobs.runDue();
  };
  const receiptOf = async (id: string) =>
    (await request(t.app).get(`/v1/receipts/${id}`)).body as {
      receipt: { receipt_id: string; policy: { verdict: string }; chain: { sequence: number } };
      claim: { sources: { type: string; content: string }[] };
    };
  const ledgerSize = async () => (await t.store.ledger.head()).sequence;

  it('a human-authored pull request gets a neutral check and no receipt, unless gate_humans', async () => {
    await run('pull_request', pullRequestEvent('opened', humanPr));
    expect(lastOutput()).toMatchObject({
      conclusion: 'neutral',
      output: { title: 'Not gated: opened by a human' },
    });
    expect(lastOutput().external_id).toBeUndefined();
    expect(await ledgerSize()).toBe(0);

    state.config.set('main', 'gate_humans: true\n');
    await run('pull_request', pullRequestEvent('synchronize', humanPr));
    expect(lastOutput().external_id).toMatch(/^dr-/);
    expect(await ledgerSize()).toBe(1);
  });

  it('agents are matched by the configured globs', async () => {
    state.config.set('main', 'agents: ["alice", "copilot-*"]\n');
    await run('pull_request', pullRequestEvent('opened', humanPr));
    expect(lastOutput().external_id).toMatch(/^dr-/);
    const { claim } = await receiptOf(lastOutput().external_id!);
    expect(claim.sources[0]!.content).toContain('by alice');
  });

  it('an invalid config fails the check naming the member, and evaluates nothing', async () => {
    state.config.set('main', 'policy: strict\ngate_humans: "yes"\ncheck_name: svc-gate\n');
    await run('pull_request', pullRequestEvent('opened', agentPr));
    expect(github.writes[0]!.body.name).toBe('svc / admissibility');
    expect(lastOutput()).toMatchObject({
      conclusion: 'failure',
      output: { title: 'Invalid .github/svc.yml' },
    });
    expect(lastOutput().output.summary).toContain('gate_humans: Invalid input: expected boolean');
    expect(await ledgerSize()).toBe(0);
  });

  it('reads the config from the base branch only: a head-branch file that loosens the gate is ignored', async () => {
    state.config.set('main', 'policy: strict\n');
    state.config.set('feature-7', 'policyConfig: { minSources: 0 }\ngate_humans: true\n');
    await run('pull_request', pullRequestEvent('opened', agentPr));
    const { receipt } = await receiptOf(lastOutput().external_id!);
    expect(receipt).toMatchObject({ policy: { name: 'strict', overrides: false } });
  });

  it("falls back to the owner's .github repository, and honours check_name", async () => {
    state.orgConfig = 'check_name: "org / gate"\n';
    await run('pull_request', pullRequestEvent('opened', agentPr));
    expect(github.writes[0]!.body.name).toBe('org / gate');
  });

  it('drafts are skipped unless configured', async () => {
    const draft = { ...agentPr, draft: true };
    state.pulls.set(7, draft);
    await run('pull_request', pullRequestEvent('opened', draft));
    expect(github.writes).toEqual([]);
    state.config.set('main', 'drafts: true\n');
    await run('pull_request', pullRequestEvent('ready_for_review', draft));
    expect(lastOutput().external_id).toMatch(/^dr-/);
  });

  it('pending CI blocks and says so; CI completing re-evaluates to a new, allowing receipt', async () => {
    // A repository whose .github/svc.yml names the default policy: no file at all would
    // also ask agents' pull requests for a human approval (docs/GITHUB_APP.md).
    state.config.set('main', 'policy: default\n');
    state.checkRuns.set(SHA, [
      { name: 'build', status: 'in_progress', conclusion: null, app_id: 1 },
    ]);
    await run('pull_request', pullRequestEvent('opened', agentPr));
    expect(lastOutput().conclusion).toBe('failure');
    expect(lastOutput().output.summary.replace(/\\/g, '')).toContain('CI is still pending (build)');
    const first = lastOutput().external_id!;

    state.checkRuns.set(SHA, [
      { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
    ]);
    await run('check_suite', checkSuiteEvent(SHA, { numbers: [7] }));
    expect(lastOutput().conclusion).toBe('success');
    expect(lastOutput().external_id).not.toBe(first);
    expect(await ledgerSize()).toBe(2);
  });

  it('our own check suite completing does not re-evaluate', async () => {
    await run('check_suite', checkSuiteEvent(SHA, { numbers: [7], appId: APP_ID }));
    expect(github.writes).toEqual([]);
  });

  it('a redelivery is recognised, and the same evidence gives the same receipt', async () => {
    const payload = pullRequestEvent('opened', agentPr);
    const first = await deliver(t, 'pull_request', payload, { id: 'same-delivery' });
    const again = await deliver(t, 'pull_request', payload, { id: 'same-delivery' });
    expect(first.body.status).toBe('queued');
    expect(again.body.status).toBe('duplicate');
    expect(await t.jobs.runDue()).toBe(1);
    const receiptId = lastOutput().external_id;
    // A new delivery of unchanged evidence (e.g. "Redeliver" with a new id) is idempotent.
    await run('pull_request', pullRequestEvent('reopened', agentPr));
    expect(lastOutput().external_id).toBe(receiptId);
    expect(await ledgerSize()).toBe(1);
  });

  it.each([
    ['pull_request_review', () => reviewEvent('submitted', agentPr, 'maintainer')],
    ['pull_request_review', () => reviewEvent('dismissed', agentPr, 'maintainer')],
    [
      'check_run',
      () => ({
        ...ourCheckRunEvent('rerequested', SHA, [7]),
        check_run: { ...ourCheckRunEvent('rerequested', SHA, [7]).check_run, app: { id: 1 } },
        action: 'completed',
      }),
    ],
    ['status', () => statusEvent(SHA)],
    ['check_run', () => ourCheckRunEvent('rerequested', SHA, [7])],
    ['check_run', () => ourCheckRunEvent('requested_action', SHA, [7])],
    [
      'check_suite',
      () => ({ ...checkSuiteEvent(SHA, { numbers: [7], appId: APP_ID }), action: 'rerequested' }),
    ],
  ])('%s re-evaluates the pull request', async (event, payload) => {
    await run(event, payload());
    expect(completed()).toHaveLength(1);
    expect(lastOutput().external_id).toMatch(/^dr-/);
  });

  it('a requested action other than Re-evaluate does nothing', async () => {
    await run('check_run', ourCheckRunEvent('requested_action', SHA, [7], 'something-else'));
    expect(github.writes).toEqual([]);
  });

  it("separation of duties: approvals by the author, by the agent's operator or without write access do not count", async () => {
    const operated = { ...agentPr, assignees: ['octocat'] };
    state.pulls.set(7, operated);
    state.permissions.set('octocat', 'admin');
    state.permissions.set('reader', 'read');
    state.permissions.set('renovate[bot]', 'write');
    state.reviews.set(7, [
      { user: 'octocat', state: 'APPROVED', commit_id: SHA, submitted_at: '2026-01-15T08:00:00Z' },
      { user: 'reader', state: 'APPROVED', commit_id: SHA, submitted_at: '2026-01-15T08:01:00Z' },
      {
        user: 'renovate[bot]',
        state: 'APPROVED',
        commit_id: SHA,
        submitted_at: '2026-01-15T08:02:00Z',
      },
      // A maintainer's approval of an earlier push is not current.
      {
        user: 'maintainer',
        state: 'APPROVED',
        commit_id: 'e'.repeat(40),
        submitted_at: '2026-01-15T07:00:00Z',
      },
    ]);
    state.permissions.set('maintainer', 'maintain');
    await run('pull_request', pullRequestEvent('opened', operated));
    let { claim } = await receiptOf(lastOutput().external_id!);
    expect(claim.sources.map((s) => s.type)).not.toContain('human_approval');

    state.reviews.get(7)!.push({
      user: 'maintainer',
      state: 'APPROVED',
      commit_id: SHA,
      submitted_at: '2026-01-15T09:00:00Z',
    });
    await run('pull_request_review', reviewEvent('submitted', operated, 'maintainer'));
    ({ claim } = await receiptOf(lastOutput().external_id!));
    const approval = claim.sources.find((s) => s.type === 'human_approval');
    expect(approval?.content).toContain('maintainer (maintain)');
    expect(approval?.content).not.toContain('octocat');
  });

  it('changes requested on the latest push block', async () => {
    state.reviews.set(7, [
      {
        user: 'maintainer',
        state: 'CHANGES_REQUESTED',
        commit_id: SHA,
        submitted_at: '2026-01-15T08:00:00Z',
      },
    ]);
    await run('pull_request', pullRequestEvent('opened', agentPr));
    expect(lastOutput().conclusion).toBe('failure');
    expect(lastOutput().output.summary.replace(/\\/g, '')).toContain(
      'changes requested by maintainer',
    );
  });

  it("a merge group is evaluated on its own head: the PRs' receipts plus the group's CI", async () => {
    // A repository whose .github/svc.yml names the default policy: no file at all would
    // also ask agents' pull requests for a human approval (docs/GITHUB_APP.md).
    state.config.set('main', 'policy: default\n');
    state.checkRuns.set(SHA, [
      { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
    ]);
    await run('pull_request', pullRequestEvent('opened', agentPr));
    const prReceipt = lastOutput().external_id!;
    expect(lastOutput().conclusion).toBe('success');

    const group = '9'.repeat(40);
    state.checkRuns.set(group, [
      { name: 'build', status: 'in_progress', conclusion: null, app_id: 1 },
    ]);
    await run('merge_group', mergeGroupEvent(group, [7]));
    const start = github.writes.filter((w) => w.method === 'POST').at(-1)!;
    expect(start.body.head_sha).toBe(group);
    expect(lastOutput().conclusion).toBe('failure');
    let { claim } = await receiptOf(lastOutput().external_id!);
    expect(claim.sources.map((s) => s.type)).toEqual(['policy_check', 'ci']);
    expect(claim.sources[0]!.content).toContain(prReceipt);
    expect(lastOutput().output.summary.replace(/\\/g, '')).toContain('CI is still pending');

    // CI on the merged result completes: the group is evaluated again and may merge.
    state.checkRuns.set(group, [
      { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
    ]);
    await run(
      'check_suite',
      checkSuiteEvent(group, { branch: `gh-readonly-queue/main/pr-7-${'a'.repeat(40)}` }),
    );
    expect(lastOutput().conclusion).toBe('success');
    ({ claim } = await receiptOf(lastOutput().external_id!));
    expect(claim.sources[1]!.content).toContain('1 passed');
  });

  it('a merge group whose pull request has no allowing receipt fails', async () => {
    await run('merge_group', mergeGroupEvent('8'.repeat(40), [7]));
    expect(lastOutput().conclusion).toBe('failure');
    expect(lastOutput().output.summary.replace(/\\/g, '')).toContain('not evaluated by svc');
  });

  it('receipts of the App appear in search, repos, agents and the pull request diff', async () => {
    await run('pull_request', pullRequestEvent('opened', agentPr));
    state.pulls.set(7, { ...agentPr, headSha: 'b'.repeat(40) });
    await run('pull_request', pullRequestEvent('synchronize', state.pulls.get(7)!));
    const search = await request(t.app).get('/v1/receipts/search').query({ repo: 'acme/web' });
    expect(search.body.receipts ?? search.body.results ?? search.body.items).toHaveLength(2);
    const repos = await request(t.app).get('/v1/repos');
    expect(JSON.stringify(repos.body)).toContain('acme/web');
    const agents = await request(t.app).get('/v1/agents');
    expect(JSON.stringify(agents.body)).toContain('renovate[bot]');
    const diff = await request(t.app)
      .get('/v1/receipts/diff')
      .query({ repository: 'acme/web', pr: 7 });
    expect(diff.status).toBe(200);
    expect(JSON.stringify(diff.body)).toContain('b'.repeat(12));
  });
});

describe('GitHub App: what an author cannot steer', () => {
  closedNetwork();
  let t: AppUnderTest;
  let state: RepoState;
  let github: ReturnType<typeof fakeGitHub>;
  beforeEach(() => {
    state = newRepoState();
    state.pulls.set(7, agentPr);
    github = fakeGitHub(state);
    t = appWithGithub();
  });
  afterEach(() => t.close());
  const last = () => github.writes.filter((w) => w.method === 'PATCH').at(-1)!.body;
  const run = async (event: string, payload: object) => {
    expect((await deliver(t, event, payload)).status).toBe(202);
    await t.jobs.runDue();
  };

  it('a branch named like a merge queue does not make a merge group', async () => {
    // A repository whose .github/svc.yml names the default policy: no file at all would
    // also ask agents' pull requests for a human approval (docs/GITHUB_APP.md).
    state.config.set('main', 'policy: default\n');
    // A fork's pull request from `gh-readonly-queue/nowhere/pr-7-0`, after PR 7 was allowed.
    state.checkRuns.set(SHA, [
      { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
    ]);
    await run('pull_request', pullRequestEvent('opened', agentPr));
    expect(last().conclusion).toBe('success');
    const attacker = 'e'.repeat(40);
    state.pulls.set(9, { number: 9, author: 'mallory', headSha: attacker });
    state.checkRuns.set(attacker, [
      { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
    ]);
    state.config.set('main', 'gate_humans: true\npolicy: strict\n');
    const before = github.writes.length;
    await run(
      'check_suite',
      checkSuiteEvent(attacker, { branch: 'gh-readonly-queue/nowhere/pr-7-0' }),
    );
    const writes = github.writes.slice(before);
    // Evaluated as what it is, pull request #9 under the base branch's strict policy.
    expect(writes[0]!.body.head_sha).toBe(attacker);
    expect(last().conclusion).not.toBe('success');
    const { claim } = (await request(t.app).get(`/v1/receipts/${last().external_id}`)).body;
    expect(claim.action.pull_request).toBe(9);
    expect(claim.policy).toBe('strict');
  });

  it('a failing run is not hidden by a later run of the same name in another suite', async () => {
    state.checkRuns.set(SHA, [
      {
        name: 'build',
        status: 'completed',
        conclusion: 'failure',
        app_id: 1,
        suite: 1,
        completed_at: '2026-01-15T08:00:00Z',
      },
      {
        name: 'build',
        status: 'completed',
        conclusion: 'success',
        app_id: 1,
        suite: 2,
        completed_at: '2026-01-15T08:05:00Z',
      },
    ]);
    await run('pull_request', pullRequestEvent('opened', agentPr));
    expect(last().conclusion).toBe('failure');
    expect((last().output as { summary: string }).summary.replace(/\\/g, '')).toContain(
      'CI failed (build)',
    );
  });

  it('a re-run in the same suite replaces the earlier run', async () => {
    // A repository whose .github/svc.yml names the default policy: no file at all would
    // also ask agents' pull requests for a human approval (docs/GITHUB_APP.md).
    state.config.set('main', 'policy: default\n');
    state.checkRuns.set(SHA, [
      {
        name: 'build',
        status: 'completed',
        conclusion: 'failure',
        app_id: 1,
        suite: 1,
        completed_at: '2026-01-15T08:00:00Z',
      },
      {
        name: 'build',
        status: 'completed',
        conclusion: 'success',
        app_id: 1,
        suite: 1,
        completed_at: '2026-01-15T08:05:00Z',
      },
    ]);
    await run('pull_request', pullRequestEvent('opened', agentPr));
    expect(last().conclusion).toBe('success');
  });

  it('an approval by someone who pushed to the pull request does not count, whatever the event', async () => {
    state.config.set('main', 'policy: strict\n');
    state.permissions.set('hank', 'maintain');
    state.commits.set(7, [
      { author: 'renovate[bot]', committer: 'renovate[bot]' },
      { author: 'hank', committer: 'hank' },
    ]);
    state.reviews.set(7, [
      { user: 'hank', state: 'APPROVED', commit_id: SHA, submitted_at: '2026-01-15T09:00:00Z' },
    ]);
    await run('pull_request_review', reviewEvent('submitted', agentPr, 'hank'));
    const { claim } = (await request(t.app).get(`/v1/receipts/${last().external_id}`)).body;
    expect(claim.sources.map((s: { type: string }) => s.type)).not.toContain('human_approval');
  });

  it("changing the base branch re-evaluates under the new base's config", async () => {
    state.config.set('main', 'policy: strict\n');
    await run('pull_request', {
      ...pullRequestEvent('edited', agentPr),
      changes: { base: { ref: { from: 'loose' } } },
    });
    const { receipt } = (await request(t.app).get(`/v1/receipts/${last().external_id}`)).body;
    expect(receipt.policy.name).toBe('strict');
    // A title edit changes nothing the gate looks at.
    const before = github.writes.length;
    await run('pull_request', {
      ...pullRequestEvent('edited', agentPr),
      changes: { title: { from: 'x' } },
    });
    expect(github.writes.length).toBe(before);
  });

  it("a repository config that extends the organisation's keeps what it extends", async () => {
    state.config.set('main', '_extends: .github\ncheck_name: "repo / gate"\n');
    state.orgConfig = 'policy: strict\n';
    await run('pull_request', pullRequestEvent('opened', agentPr));
    expect(github.writes[0]!.body.name).toBe('repo / gate');
    const { receipt } = (await request(t.app).get(`/v1/receipts/${last().external_id}`)).body;
    expect(receipt.policy.name).toBe('strict');
  });
});

describe('GitHub App: the check-run summary', () => {
  closedNetwork();
  it('escapes what the pull request author wrote: no forged links, images or HTML', async () => {
    const state = newRepoState();
    const evil = {
      ...agentPr,
      title: 'Fix [ALLOWED](https://evil.example) ![x](https://evil.example/x.png) <img src=x>',
    };
    state.pulls.set(7, evil);
    const github = fakeGitHub(state);
    const t = appWithGithub();
    try {
      await deliver(t, 'pull_request', pullRequestEvent('opened', evil));
      await t.jobs.runDue();
      const summary = (github.writes.at(-1)!.body.output as { summary: string }).summary;
      expect(summary).not.toContain('[ALLOWED](https://evil.example)');
      expect(summary).not.toContain('![x](');
      expect(summary).not.toMatch(/(^|[^\\])<img/);
      expect(summary).toContain('\\[ALLOWED\\]\\(https://evil.example\\)');
    } finally {
      await t.close();
    }
  });
});

describe('GitHub App: merge groups under a policy that requires approval', () => {
  closedNetwork();
  it("carries each member's approval over, so an approved group may merge", async () => {
    const state = newRepoState();
    state.pulls.set(7, agentPr);
    state.config.set('main', 'policy: strict\n');
    state.checkRuns.set(SHA, [
      { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
    ]);
    state.permissions.set('maintainer', 'maintain');
    state.reviews.set(7, [
      {
        user: 'maintainer',
        state: 'APPROVED',
        commit_id: SHA,
        submitted_at: '2026-01-15T09:00:00Z',
      },
    ]);
    const github = fakeGitHub(state);
    const t = appWithGithub();
    try {
      await deliver(t, 'pull_request', pullRequestEvent('opened', agentPr));
      await t.jobs.runDue();
      expect(github.writes.at(-1)!.body.conclusion).toBe('success');
      const group = '7'.repeat(40);
      state.checkRuns.set(group, [
        { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
      ]);
      await deliver(t, 'merge_group', mergeGroupEvent(group, [7]));
      await t.jobs.runDue();
      const done = github.writes.at(-1)!.body;
      expect(done.conclusion).toBe('success');
      const { claim, receipt } = (await request(t.app).get(`/v1/receipts/${done.external_id}`))
        .body;
      expect(receipt.policy.name).toBe('strict');
      expect(claim.sources.map((s: { type: string }) => s.type)).toEqual([
        'policy_check',
        'human_approval',
        'ci',
      ]);
    } finally {
      await t.close();
    }
  });
});
