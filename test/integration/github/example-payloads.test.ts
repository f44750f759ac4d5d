import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import examples from '@octokit/webhooks-examples' with { type: 'json' };
import request from 'supertest';
import {
  appWithGithub,
  deliver,
  fakeGitHub,
  INSTALLATION,
  newRepoState,
  OWNER,
  REPO,
  type AppUnderTest,
  type RepoState,
  closedNetwork,
} from './fake-github.js';
import { startReceiver } from '../../support/webhook-receiver.js';

type Example = Record<string, unknown> & { action?: string };

/** A payload GitHub documents, moved to the test repository and installation. */
function example(event: string, action: string | undefined, patch: (p: Example) => void): Example {
  const found = (examples as unknown as { name: string; examples: Example[] }[])
    .find((e) => e.name === event)!
    .examples.find((e) => action === undefined || e.action === action);
  const payload = structuredClone(found!);
  const repository = payload.repository as Record<string, unknown>;
  repository.name = REPO;
  repository.full_name = `${OWNER}/${REPO}`;
  (repository.owner as Record<string, unknown>).login = OWNER;
  payload.installation = { id: INSTALLATION, node_id: 'x' };
  patch(payload);
  return payload;
}

describe('GitHub App on documented payloads (@octokit/webhooks-examples)', () => {
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

  it('pull_request.opened by a bot: evaluated, and the receipt verifies', async () => {
    const payload = example('pull_request', 'opened', (p) => {
      const pr = p.pull_request as Record<string, unknown>;
      // A repository whose .github/svc.yml names the default policy: no file at all would
      // also ask agents' pull requests for a human approval (docs/GITHUB_APP.md).
      state.config.set((pr.base as { ref: string }).ref, 'policy: default\n');
      (pr.user as Record<string, unknown>).login = 'copilot-swe-agent[bot]';
      state.pulls.set(pr.number as number, {
        number: pr.number as number,
        author: 'copilot-swe-agent[bot]',
        authorType: 'Bot',
        headSha: (pr.head as { sha: string }).sha,
        baseRef: (pr.base as { ref: string }).ref,
      });
      state.checkRuns.set((pr.head as { sha: string }).sha, [
        { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
      ]);
    });
    expect((await deliver(t, 'pull_request', payload)).status).toBe(202);
    await t.jobs.runDue();
    const done = github.writes.filter((w) => w.method === 'PATCH');
    expect(done).toHaveLength(1);
    expect(done[0]!.body.conclusion).toBe('success');
    const { receipt } = (await request(t.app).get(`/v1/receipts/${done[0]!.body.external_id}`))
      .body;
    expect((await request(t.app).post('/v1/verify').send(receipt)).body.valid).toBe(true);
  });

  it('check_suite.completed of another app re-evaluates the pull requests it lists', async () => {
    const payload = example('check_suite', 'completed', (p) => {
      const suite = p.check_suite as { head_sha: string; pull_requests: { number: number }[] };
      for (const { number } of suite.pull_requests) {
        state.pulls.set(number, {
          number,
          author: 'renovate[bot]',
          authorType: 'Bot',
          headSha: suite.head_sha,
        });
      }
    });
    expect((await deliver(t, 'check_suite', payload)).status).toBe(202);
    await t.jobs.runDue();
    expect(github.writes.filter((w) => w.method === 'PATCH').length).toBeGreaterThanOrEqual(1);
  });

  it('merge_group.checks_requested puts a check on the group head', async () => {
    const payload = example('merge_group', 'checks_requested', () => undefined);
    const group = payload.merge_group as { head_sha: string; head_ref: string };
    const number = Number(/pr-(\d+)-/.exec(group.head_ref)![1]);
    state.pulls.set(number, {
      number,
      author: 'renovate[bot]',
      authorType: 'Bot',
      headSha: 'd'.repeat(40),
    });
    expect((await deliver(t, 'merge_group', payload)).status).toBe(202);
    await t.jobs.runDue();
    expect(github.writes[0]!.body.head_sha).toBe(group.head_sha);
    expect(github.writes.at(-1)!.body.conclusion).toBe('failure');
  });
});

describe('GitHub App receipts reach outbound webhook receivers', () => {
  closedNetwork();

  it('emits receipt.created for a receipt the App wrote, exactly as evaluate does', async () => {
    const receiver = await startReceiver();
    const t = appWithGithub({ allowPrivateWebhookUrls: true });
    try {
      const state = newRepoState();
      const sha = '6'.repeat(40);
      state.pulls.set(5, { number: 5, author: 'renovate[bot]', authorType: 'Bot', headSha: sha });
      const github = fakeGitHub(state);
      const key = (await request(t.app).post('/v1/signup').send({ email: 'hooks@example.com' }))
        .body.api_key as string;
      const registered = await request(t.app)
        .post('/v1/webhooks/outbound')
        .set('X-API-Key', key)
        .send({ url: receiver.url, event: 'receipt.created' });
      expect(registered.status).toBe(201);

      await deliver(t, 'pull_request', {
        action: 'opened',
        number: 5,
        pull_request: { number: 5 },
        sender: { login: 'renovate[bot]', type: 'Bot' },
        repository: { name: REPO, full_name: `${OWNER}/${REPO}`, owner: { login: OWNER } },
        installation: { id: INSTALLATION },
      });
      await t.jobs.runDue(); // the GitHub delivery: evaluates, appends, fans out
      await t.jobs.runDue(); // the outbound delivery
      const receiptId = github.writes.at(-1)!.body.external_id as string;
      const { receipt } = (await request(t.app).get(`/v1/receipts/${receiptId}`)).body;
      expect(receiver.received).toHaveLength(1);
      expect(receiver.received[0]!.headers['x-svc-event']).toBe('receipt.created');
      expect(JSON.parse(receiver.received[0]!.body)).toEqual(receipt);
    } finally {
      await t.close();
      await receiver.close();
    }
  });
});
