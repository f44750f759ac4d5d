import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import {
  appWithGithub,
  closedNetwork,
  deliver,
  fakeGitHub,
  mergeGroupEvent,
  newRepoState,
  pullRequestEvent,
  statusEvent,
  type AppUnderTest,
  type PullRequestState,
  type RepoState,
} from './fake-github.js';

const SHA = 'a11ce5'.repeat(6) + 'beef';
const bot = (over: Partial<PullRequestState> = {}): PullRequestState => ({
  number: 40,
  author: 'copilot-swe-agent[bot]',
  authorType: 'Bot',
  headSha: SHA,
  assignees: ['octocat'],
  files: ['src/app.ts'],
  ...over,
});

// .github/svc.yml on the base branch, in the form docs/POLICIES.md documents.
const INFRA = `
rules:
  - name: infra
    if:
      paths: ['infra/**', '.github/workflows/**']
    require:
      approvals:
        count: 2
        from: { teams: ['acme/platform'] }
`;
const DOCS_ONLY = `
rules:
  - name: docs-only
    if:
      only_paths: ['docs/**', '**/*.md']
    require:
      checks: [build]
`;
const CODE_OWNERS = `
rules:
  - name: owners
    require:
      approvals:
        from: { code_owners: true }
`;
const CHECKS = `
rules:
  - name: ci
    require:
      checks: [build, deploy-check]
`;

describe('GitHub App: conditional rules of .github/svc.yml, end to end', () => {
  let t: AppUnderTest;
  let state: RepoState;
  let github: ReturnType<typeof fakeGitHub>;

  closedNetwork();
  beforeEach(() => {
    state = newRepoState();
    github = fakeGitHub(state);
    t = appWithGithub();
    state.checkRuns.set(SHA, [
      { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
    ]);
  });
  afterEach(() => t.close());

  const approve = (...users: string[]) => {
    state.reviews.set(
      40,
      users.map((user, i) => ({
        user,
        state: 'APPROVED',
        commit_id: SHA,
        submitted_at: `2026-01-15T08:4${i}:00Z`,
      })),
    );
    for (const user of users) state.permissions.set(user, 'write');
  };

  /** The verdict the App gave, the conclusion of its check and the receipt's rule entry. */
  const evaluate = async (pr: PullRequestState, rule: string) => {
    state.pulls.set(pr.number, pr);
    await deliver(t, 'pull_request', pullRequestEvent('opened', pr));
    expect(await t.jobs.runDue()).toBe(1);
    const done = github.writes.filter((w) => w.method === 'PATCH').at(-1)!;
    const { receipt, claim } = (await request(t.app).get(`/v1/receipts/${done.body.external_id}`))
      .body;
    // The check run lists every rule as the evaluation gave it: | ✅ | `rule:<name>` | reason |
    const summary = (done.body.output as { summary: string }).summary.replace(/\\/g, '');
    const row = summary.split('\n').find((line) => line.includes(`| \`rule:${rule}\` |`));
    expect(row).toBeDefined();
    const entry = { passed: row!.startsWith('| ✅'), reason: row!.split(' | ')[2]! };
    return { verdict: receipt.policy.verdict, conclusion: done.body.conclusion, entry, claim };
  };

  describe('path globs and team approvals', () => {
    beforeEach(() => {
      state.config.set('main', INFRA);
      state.teams.set('acme/platform', ['alice', 'bob']);
    });

    it('a change to infra/ with one platform approval is BLOCKED', async () => {
      approve('alice', 'carol');
      const result = await evaluate(bot({ files: ['infra/main.tf', 'src/app.ts'] }), 'infra');
      expect(result).toMatchObject({ verdict: 'BLOCKED', conclusion: 'failure' });
      expect(result.entry.passed).toBe(false);
      expect(result.claim.action.approvals).toEqual([
        { user: 'alice', kind: 'User', permission: 'write', teams: ['acme/platform'] },
        { user: 'carol', kind: 'User', permission: 'write', teams: [] },
      ]);
      expect([...state.teamLookups].sort()).toEqual(['acme/platform:alice', 'acme/platform:carol']);
    });

    it('two platform approvals allow it', async () => {
      approve('alice', 'bob');
      const result = await evaluate(bot({ files: ['.github/workflows/ci.yml'] }), 'infra');
      expect(result).toMatchObject({ verdict: 'ALLOWED', conclusion: 'success' });
      expect(result.entry.passed).toBe(true);
    });

    it('a change elsewhere: the rule does not apply', async () => {
      const result = await evaluate(bot({ files: ['src/app.ts'] }), 'infra');
      expect(result).toMatchObject({ verdict: 'ALLOWED', conclusion: 'success' });
      expect(result.entry.reason).toMatch(/^does not apply/);
    });

    it('more than 3,000 files: the paths are incomplete, so the rule applies', async () => {
      const files = Array.from({ length: 3100 }, (_, i) => `src/f${i}.ts`);
      const result = await evaluate(bot({ files }), 'infra');
      expect(result.claim.action.changed_paths_incomplete).toBe(true);
      expect(result).toMatchObject({ verdict: 'BLOCKED', conclusion: 'failure' });
    });
  });

  it("a shared policy's rules name teams: the App looks the memberships up for it", async () => {
    await t.store.policies.insert({
      owner: null,
      name: 'platform-gate',
      description: null,
      config: {
        rules: [
          {
            name: 'infra',
            if: { paths: ['infra/**'] },
            require: { approvals: { count: 1, from: { teams: ['acme/platform'] } } },
            on_fail: 'block',
          },
        ],
      },
      overrides: 'tighten',
      createdAt: '2026-01-01T00:00:00Z',
    });
    state.config.set('main', 'policy: platform-gate\n');
    state.teams.set('acme/platform', ['alice']);
    approve('alice');
    const result = await evaluate(bot({ files: ['infra/main.tf'] }), 'infra');
    expect(result).toMatchObject({ verdict: 'ALLOWED', conclusion: 'success' });
    expect(state.teamLookups).toEqual(['acme/platform:alice']);
  });

  describe('docs-only changes need green CI', () => {
    beforeEach(() => {
      state.config.set('main', DOCS_ONLY);
    });

    it('docs only and build green: ALLOWED', async () => {
      const result = await evaluate(bot({ files: ['docs/a.md', 'README.md'] }), 'docs-only');
      expect(result).toMatchObject({ verdict: 'ALLOWED' });
      expect(result.entry.passed).toBe(true);
      expect(result.entry.reason).toMatch(/^applies/);
    });

    it('docs only with build still running: BLOCKED', async () => {
      state.checkRuns.set(SHA, [
        { name: 'build', status: 'in_progress', conclusion: null, app_id: 1 },
      ]);
      const result = await evaluate(bot({ files: ['docs/a.md'] }), 'docs-only');
      expect(result).toMatchObject({ verdict: 'BLOCKED' });
      expect(result.entry.reason).toContain('build (in_progress)');
    });

    it('docs and code: the rule does not apply', async () => {
      const result = await evaluate(bot({ files: ['docs/a.md', 'src/app.ts'] }), 'docs-only');
      expect(result.entry.reason).toMatch(/^does not apply/);
    });
  });

  describe('code owners', () => {
    beforeEach(() => {
      state.config.set('main', CODE_OWNERS);
      state.codeowners.set('.github/CODEOWNERS', '* @acme/reviewers\n/src/auth/ @acme/security\n');
      state.teams.set('acme/security', ['sam']);
      state.teams.set('acme/reviewers', ['rita']);
    });

    it("each changed path approved by one of its owners' teams: ALLOWED", async () => {
      approve('sam', 'rita');
      const result = await evaluate(
        bot({ files: ['src/auth/session.ts', 'src/app.ts'] }),
        'owners',
      );
      expect(result).toMatchObject({ verdict: 'ALLOWED' });
      expect(result.claim.action.code_owners).toEqual([
        { path: 'src/auth/session.ts', owners: ['@acme/security'] },
        { path: 'src/app.ts', owners: ['@acme/reviewers'] },
      ]);
    });

    it('a path whose owners did not approve: BLOCKED', async () => {
      approve('rita');
      const result = await evaluate(
        bot({ files: ['src/auth/session.ts', 'src/app.ts'] }),
        'owners',
      );
      expect(result).toMatchObject({ verdict: 'BLOCKED' });
      expect(result.entry.passed).toBe(false);
    });
  });

  describe('required checks', () => {
    beforeEach(() => {
      state.config.set('main', CHECKS);
    });

    it.each([
      ['missing', [], 'deploy-check (missing)'],
      [
        'pending',
        [{ context: 'deploy-check', state: 'pending', updated_at: '2026-01-15T08:10:00Z' }],
        'deploy-check (pending)',
      ],
      [
        'failed',
        [{ context: 'deploy-check', state: 'failure', updated_at: '2026-01-15T08:10:00Z' }],
        'deploy-check (failure)',
      ],
    ])('a required check %s: BLOCKED', async (_, statuses, reason) => {
      state.statuses.set(SHA, statuses);
      const result = await evaluate(bot(), 'ci');
      expect(result).toMatchObject({ verdict: 'BLOCKED', conclusion: 'failure' });
      expect(result.entry.reason).toContain(reason);
      expect(state.teamLookups).toEqual([]);
    });

    it('every required check green: ALLOWED', async () => {
      state.statuses.set(SHA, [
        { context: 'deploy-check', state: 'success', updated_at: '2026-01-15T08:10:00Z' },
      ]);
      const result = await evaluate(bot(), 'ci');
      expect(result).toMatchObject({ verdict: 'ALLOWED', conclusion: 'success' });
    });
  });

  describe('labels and assignees re-gate the pull request', () => {
    const SECURITY = `
rules:
  - name: security
    if:
      labels: [security]
    require:
      approvals:
        count: 1
`;
    /** Delivers one pull_request event and returns the check run's conclusion after it. */
    const redeliver = async (action: string, pr: PullRequestState) => {
      state.pulls.set(pr.number, pr);
      const before = github.writes.filter((w) => w.method === 'PATCH').length;
      await deliver(t, 'pull_request', pullRequestEvent(action, pr));
      expect(await t.jobs.runDue()).toBe(1);
      const patches = github.writes.filter((w) => w.method === 'PATCH');
      expect(patches.length).toBeGreaterThan(before);
      return patches.at(-1)!.body.conclusion;
    };

    beforeEach(() => {
      state.config.set('main', SECURITY);
    });

    it('adding a label that a rule reads re-evaluates at once, and removing it again', async () => {
      expect(await evaluate(bot({ assignees: [] }), 'security')).toMatchObject({
        verdict: 'ALLOWED',
      });
      expect(await redeliver('labeled', bot({ assignees: [], labels: ['Security'] }))).toBe(
        'failure',
      );
      expect(await redeliver('unlabeled', bot({ assignees: [], labels: [] }))).toBe('success');
    });

    it("assigning the approver re-evaluates: an assignee's approval does not count", async () => {
      approve('carol');
      const labelled = bot({ assignees: [], labels: ['security'] });
      expect(await evaluate(labelled, 'security')).toMatchObject({ verdict: 'ALLOWED' });
      expect(await redeliver('assigned', { ...labelled, assignees: ['carol'] })).toBe('failure');
      expect(await redeliver('unassigned', labelled)).toBe('success');
    });
  });

  it("a merge group: each member judged under its own rules, the group on its members' receipts", async () => {
    state.config.set('main', INFRA);
    state.teams.set('acme/platform', ['alice', 'bob']);
    approve('alice', 'bob');
    const member = await evaluate(bot({ files: ['infra/main.tf'] }), 'infra');
    expect(member).toMatchObject({ verdict: 'ALLOWED' });
    const GROUP = 'abcdef'.repeat(6) + '1234';
    state.checkRuns.set(GROUP, [
      { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
    ]);
    await deliver(t, 'merge_group', mergeGroupEvent(GROUP, [40]));
    expect(await t.jobs.runDue()).toBe(1);
    const done = github.writes.filter((w) => w.method === 'PATCH').at(-1)!;
    expect(done.body.conclusion).toBe('success');
    const { receipt, claim } = (await request(t.app).get(`/v1/receipts/${done.body.external_id}`))
      .body;
    expect(receipt.policy.verdict).toBe('ALLOWED');
    // The group's claim does not merge its members' facts: the path rule does not apply to it.
    expect(claim.action).not.toHaveProperty('changed_paths');
    const summary = (done.body.output as { summary: string }).summary.replace(/\\/g, '');
    expect(summary).toMatch(/\| ✅ \| `rule:infra` \| does not apply/);
  });

  it('a merge group whose merged result reports the required checks: ALLOWED', async () => {
    state.config.set('main', CHECKS);
    state.statuses.set(SHA, [
      { context: 'deploy-check', state: 'success', updated_at: '2026-01-15T08:10:00Z' },
    ]);
    expect(await evaluate(bot(), 'ci')).toMatchObject({ verdict: 'ALLOWED' });
    const GROUP = 'abcdef'.repeat(6) + '5678';
    state.checkRuns.set(GROUP, [
      { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
    ]);
    state.statuses.set(GROUP, [
      { context: 'deploy-check', state: 'pending', updated_at: '2026-01-15T09:10:00Z' },
    ]);
    await deliver(t, 'merge_group', mergeGroupEvent(GROUP, [40]));
    await t.jobs.runDue();
    let done = github.writes.filter((w) => w.method === 'PATCH').at(-1)!;
    expect(done.body.conclusion).toBe('failure');
    expect((done.body.output as { summary: string }).summary.replace(/\\/g, '')).toContain(
      'deploy-check (pending)',
    );
    // The group's CI completes: evaluated again, on the merged result's checks.
    state.statuses.set(GROUP, [
      { context: 'deploy-check', state: 'success', updated_at: '2026-01-15T09:20:00Z' },
    ]);
    await deliver(
      t,
      'status',
      statusEvent(GROUP, ['gh-readonly-queue/main/pr-40-' + 'a'.repeat(40)]),
    );
    await t.jobs.runDue();
    done = github.writes.filter((w) => w.method === 'PATCH').at(-1)!;
    expect(done.body.conclusion).toBe('success');
  });

  describe('a pull request that changes .github/svc.yml', () => {
    it('dropping a rule: the base rule decides, and the preview says the change loosens the gate', async () => {
      state.config.set('main', INFRA);
      state.config.set(SHA, 'policy: default\n');
      const result = await evaluate(bot({ files: ['.github/svc.yml', 'infra/main.tf'] }), 'infra');
      expect(result).toMatchObject({ verdict: 'BLOCKED', conclusion: 'failure' });
      const done = github.writes.filter((w) => w.method === 'PATCH').at(-1)!;
      const summary = (done.body.output as { summary: string }).summary.replace(/\\/g, '');
      expect(summary).toContain('**ALLOWED · ACCEPTED** under policy **default**');
      expect(summary).toContain('would be ALLOWED instead of BLOCKED');
    });

    it("a proposed rule that names teams: looked up for the preview, not put in the base's claim", async () => {
      state.config.set(SHA, INFRA);
      state.teams.set('acme/platform', ['alice']);
      approve('alice', 'bob');
      const pr = bot({ files: ['.github/svc.yml', 'infra/main.tf'] });
      state.pulls.set(pr.number, pr);
      await deliver(t, 'pull_request', pullRequestEvent('opened', pr));
      expect(await t.jobs.runDue()).toBe(1);
      expect([...state.teamLookups].sort()).toEqual(['acme/platform:alice', 'acme/platform:bob']);
      const done = github.writes.filter((w) => w.method === 'PATCH').at(-1)!;
      expect(done.body.conclusion).toBe('success');
      const { claim } = (await request(t.app).get(`/v1/receipts/${done.body.external_id}`)).body;
      expect(claim.action.approvals).toEqual([
        { user: 'alice', kind: 'User', permission: 'write' },
        { user: 'bob', kind: 'User', permission: 'write' },
      ]);
      const summary = (done.body.output as { summary: string }).summary.replace(/\\/g, '');
      expect(summary).toContain('**BLOCKED · REJECTED** under policy **default**');
      expect(summary).toContain(
        '| ❌ | `rule:infra` | applies; 1 approval from acme/platform (alice), 2 required |',
      );
    });
  });
});
