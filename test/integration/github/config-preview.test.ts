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

const SHA = 'feed'.repeat(10);
const HEADING = 'What the proposed .github/svc.yml would decide';
const bot: PullRequestState = {
  number: 31,
  author: 'copilot-swe-agent[bot]',
  authorType: 'Bot',
  headSha: SHA,
  files: ['.github/svc.yml', 'src/app.ts'],
};

describe('GitHub App: a pull request that changes .github/svc.yml', () => {
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

  const ledgerSize = async () => (await t.store.ledger.head())?.sequence ?? 0;

  const evaluate = async (pr: PullRequestState) => {
    state.pulls.set(pr.number, pr);
    const before = await ledgerSize();
    await deliver(t, 'pull_request', pullRequestEvent('opened', pr));
    expect(await t.jobs.runDue()).toBe(1);
    const done = github.writes.filter((w) => w.method === 'PATCH').at(-1)!;
    const output = done.body.output as { title: string; summary: string };
    const { receipt } = (await request(t.app).get(`/v1/receipts/${done.body.external_id}`)).body;
    // Only the base branch's evaluation is written: the preview is simulated.
    expect((await ledgerSize()) - before).toBe(1);
    return { done, summary: output.summary.replace(/\\/g, ''), receipt };
  };

  it("the base branch decides; the proposed file's verdict is shown, and said to loosen the gate", async () => {
    state.config.set('main', 'policy: strict\n');
    state.config.set(SHA, 'policy: permissive\n');
    const { done, summary, receipt } = await evaluate(bot);
    expect(done.body.conclusion).toBe('action_required');
    expect(receipt.policy).toMatchObject({ name: 'strict', verdict: 'ESCALATED' });
    expect(summary).toContain(`### ${HEADING}`);
    expect(summary).toContain('**ALLOWED · ACCEPTED** under policy **permissive**');
    expect(summary).toContain('This change loosens the gate');
    expect(summary).toContain('would be ALLOWED instead of ESCALATED');
    expect(summary).toContain('no receipt records it');
  });

  it('a stricter proposed file: its failing rules, and no warning', async () => {
    // A repository whose .github/svc.yml names the default policy: no file at all would
    // also ask agents' pull requests for a human approval (docs/GITHUB_APP.md).
    state.config.set('main', 'policy: default\n');
    state.config.set(SHA, 'policy: strict\n');
    const { done, summary, receipt } = await evaluate(bot);
    expect(done.body.conclusion).toBe('success');
    expect(receipt.policy).toMatchObject({ name: 'default', verdict: 'ALLOWED' });
    expect(summary).toContain('**ESCALATED · REJECTED** under policy **strict**');
    expect(summary).toMatch(/\| ❌ \| `require_human_approval` \|/);
    expect(summary).not.toContain('loosens');
  });

  it('an invalid proposed file is reported as such', async () => {
    // A repository whose .github/svc.yml names the default policy: no file at all would
    // also ask agents' pull requests for a human approval (docs/GITHUB_APP.md).
    state.config.set('main', 'policy: default\n');
    state.config.set(SHA, 'policyConfig:\n  minConfidence: 7\n');
    const { done, summary } = await evaluate(bot);
    expect(done.body.conclusion).toBe('success');
    expect(summary).toContain('**Invalid configuration**');
    expect(summary).toContain('policyConfig.minConfidence');
  });

  it('a proposed file that no longer gates agents loosens the gate', async () => {
    state.config.set('main', 'policy: strict\n');
    state.config.set(SHA, "agents: ['someone-else']\n");
    const { summary } = await evaluate(bot);
    expect(summary).toContain('**Not gated**');
    expect(summary).toContain('would be not gated instead of ESCALATED');
  });

  it('a pull request that leaves the file alone gets no preview', async () => {
    state.config.set(SHA, 'policy: strict\n');
    const { summary } = await evaluate({ ...bot, files: ['src/app.ts'] });
    expect(summary).not.toContain(HEADING);
  });
});
