import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sign } from '@octokit/webhooks-methods';
import nock from 'nock';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import request from 'supertest';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import {
  API,
  appWithGithub,
  deliver,
  fakeGitHub,
  newRepoState,
  OWNER,
  pullRequestEvent,
  REPO,
  SECRET,
  type AppUnderTest,
  type PullRequestState,
  closedNetwork,
} from './fake-github.js';

const SHA = '5'.repeat(40);
const pr: PullRequestState = {
  number: 3,
  author: 'dependabot[bot]',
  authorType: 'Bot',
  headSha: SHA,
};

const expectError = (res: request.Response, status: number, code: string) => {
  expect({ status: res.status, code: res.body.code }).toEqual({ status, code });
  expect(Object.keys(res.body).sort()).toEqual(['code', 'error', 'request_id']);
};

describe('POST /v1/webhook/scm', () => {
  const apps: AppUnderTest[] = [];
  const open = (options?: Parameters<typeof appWithGithub>[0]) => {
    const t = appWithGithub(options);
    apps.push(t);
    return t;
  };
  closedNetwork();
  afterEach(async () => {
    for (const t of apps.splice(0)) await t.close();
  });

  it.each([
    ['missing', null],
    ['garbled', 'sha256=not-hex'],
    ['made with another secret', 'OTHER'],
    ['of another body', 'BODY'],
  ])('a %s signature is 401 unauthorized, and nothing is recorded', async (_name, signature) => {
    const t = open();
    const body = pullRequestEvent('opened', pr);
    const value =
      signature === 'OTHER'
        ? await sign('another-secret', JSON.stringify(body))
        : signature === 'BODY'
          ? await sign(SECRET, '{}')
          : signature;
    const res = await deliver(t, 'pull_request', body, { signature: value });
    expectError(res, 401, 'unauthorized');
    expect((await t.jobs.stats()).pending).toBe(0);
  });

  it('without WEBHOOK_SECRET every delivery is 401', async () => {
    const t = open({ secret: undefined });
    const res = await deliver(t, 'pull_request', pullRequestEvent('opened', pr));
    expectError(res, 401, 'unauthorized');
    expect(res.body.error).toContain('WEBHOOK_SECRET');
  });

  it('with a secret but no App credentials, a signed delivery is acknowledged, not processed', async () => {
    const t = open({ github: false });
    const res = await deliver(t, 'pull_request', pullRequestEvent('opened', pr));
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ accepted: true, status: 'not_configured' });
    expect((await t.jobs.stats()).pending).toBe(0);
    // The REST API works as ever.
    expect((await request(t.app).get('/health')).status).toBe(200);
  });

  it('a signed body that is not JSON is 400 malformed_json', async () => {
    const t = open();
    const text = '{"action": "opened",';
    const res = await request(t.app)
      .post('/v1/webhook/scm')
      .set('Content-Type', 'application/json')
      .set('X-GitHub-Event', 'pull_request')
      .set('X-GitHub-Delivery', 'bad-json')
      .set('X-Hub-Signature-256', await sign(SECRET, text))
      .send(text);
    expectError(res, 400, 'malformed_json');
  });

  it('a signed delivery without X-GitHub-Event or with a garbled delivery id is 400, recording nothing', async () => {
    const t = open();
    const text = JSON.stringify({ action: 'opened' });
    const signature = await sign(SECRET, text);
    const post = () =>
      request(t.app)
        .post('/v1/webhook/scm')
        .set('Content-Type', 'application/json')
        .set('X-Hub-Signature-256', signature);
    expectError(await post().set('X-GitHub-Delivery', 'd-1').send(text), 400, 'validation_failed');
    expectError(
      await post()
        .set('X-GitHub-Event', 'pull_request')
        .set('X-GitHub-Delivery', 'bad id!')
        .send(text),
      400,
      'validation_failed',
    );
    expect((await t.jobs.stats()).pending).toBe(0);
  });

  it('is not rate limited by address: GitHub delivers from few addresses', async () => {
    const t = open();
    state = newRepoState();
    for (let i = 0; i < 5; i++) {
      const res = await deliver(t, 'ping', { zen: 'Keep it logically awesome.', hook_id: i });
      expect(res.status).toBe(202);
    }
  });

  it('an unknown event and a payload missing what the handler needs are acknowledged and end quietly', async () => {
    const t = open();
    const github = fakeGitHub(newRepoState());
    expect((await deliver(t, 'ping', { zen: 'hi' })).status).toBe(202);
    const incomplete = { action: 'opened', pull_request: { number: 3 } };
    expect((await deliver(t, 'pull_request', incomplete)).status).toBe(202);
    expect(await t.jobs.runDue()).toBe(2);
    expect(await t.jobs.stats()).toMatchObject({ pending: 0, failed: 0 });
    expect(github.writes).toEqual([]);
  });

  it('a delivery without an installation is logged once at info, without an error or a stack', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino(
      { level: 'debug' },
      new Writable({
        write(chunk: Buffer, _encoding, callback) {
          for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
          callback();
        },
      }),
    );
    const t = open({ logger });
    const github = fakeGitHub(newRepoState());
    const payload: Record<string, unknown> = pullRequestEvent('opened', pr);
    delete payload.installation;
    for (let i = 0; i < 3; i++)
      expect((await deliver(t, 'pull_request', payload)).status).toBe(202);
    expect(await t.jobs.runDue()).toBe(3);
    expect(await t.jobs.stats()).toMatchObject({ pending: 0, failed: 0 });
    expect(github.writes).toEqual([]);
    expect(lines.filter((l) => (l.level as number) >= 40)).toEqual([]);
    expect(JSON.stringify(lines)).not.toContain('"stack"');
    const acknowledged = lines.filter((l) => l.msg === 'delivery acknowledged, not processed');
    expect(acknowledged).toHaveLength(3);
    for (const line of acknowledged)
      expect(line).toMatchObject({
        level: 30,
        event: 'pull_request',
        reason: expect.stringContaining('installation missing'),
      });
  });

  it('GET is 405 with Allow', async () => {
    const t = open();
    const res = await request(t.app).get('/v1/webhook/scm');
    expectError(res, 405, 'method_not_allowed');
    expect(res.headers.allow).toBe('POST, OPTIONS');
  });
});

let state = newRepoState();

describe('GitHub App: failures of GitHub and of the process', () => {
  closedNetwork();

  it('a GitHub 5xx is retried with backoff, then evaluated; nothing crashes', async () => {
    const t = appWithGithub();
    try {
      state = newRepoState();
      // A repository whose .github/svc.yml names the default policy: no file at all would
      // also ask agents' pull requests for a human approval (docs/GITHUB_APP.md).
      state.config.set('main', 'policy: default\n');
      state.pulls.set(3, pr);
      // The first look-up of the pull request fails; everything after works.
      nock(API).get(`/repos/${OWNER}/${REPO}/pulls/3`).reply(502, { message: 'Bad Gateway' });
      const github = fakeGitHub(state);
      await deliver(t, 'pull_request', pullRequestEvent('opened', pr));
      expect(await t.jobs.runDue()).toBe(1);
      expect(github.writes).toEqual([]);
      const [job] = await pendingJobs(t);
      expect(job).toMatchObject({ state: 'pending', attempts: 1 });
      expect(job!.lastError).toContain('Bad Gateway');
      expect(job!.runAt - t.clock.now()).toBeGreaterThanOrEqual(30_000);

      t.clock.advance(60 * 60 * 1000);
      expect(await t.jobs.runDue()).toBe(1);
      expect(github.writes.at(-1)!.body.conclusion).toBe('success');
    } finally {
      await t.close();
    }
  });

  it('a secondary rate limit is retried no sooner than its retry-after', async () => {
    const t = appWithGithub();
    try {
      state = newRepoState();
      state.pulls.set(3, pr);
      nock(API)
        .get(`/repos/${OWNER}/${REPO}/pulls/3`)
        .reply(
          403,
          { message: 'You have exceeded a secondary rate limit' },
          { 'retry-after': '600' },
        );
      fakeGitHub(state);
      await deliver(t, 'pull_request', pullRequestEvent('opened', pr));
      await t.jobs.runDue();
      const [job] = await pendingJobs(t);
      expect(job!.runAt - t.clock.now()).toBeGreaterThanOrEqual(600_000);
    } finally {
      await t.close();
    }
  });

  it('a deleted repository (404) ends the job without a crash or retry', async () => {
    const t = appWithGithub();
    try {
      state = newRepoState();
      const github = fakeGitHub(state);
      await deliver(t, 'pull_request', pullRequestEvent('opened', pr));
      await t.jobs.runDue();
      expect(await t.jobs.stats()).toMatchObject({ pending: 0 });
      expect(github.writes).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it('when GitHub keeps failing, the last attempt ends the check with the reason', async () => {
    const t = appWithGithub();
    try {
      state = newRepoState();
      state.pulls.set(3, pr);
      nock(API)
        .persist()
        .get(new RegExp(`/repos/${OWNER}/${REPO}/commits/${SHA}/check-runs\\?(?!.*app_id)`))
        .reply(503, { message: 'Service Unavailable' });
      const github = fakeGitHub(state);
      await deliver(t, 'pull_request', pullRequestEvent('opened', pr));
      for (let i = 0; i < 5; i++) {
        await t.jobs.runDue();
        t.clock.advance(3 * 60 * 60 * 1000);
      }
      const last = github.writes.filter((w) => w.method === 'PATCH').at(-1);
      expect(last?.body).toMatchObject({
        status: 'completed',
        conclusion: 'failure',
        output: { title: 'svc could not evaluate this commit' },
      });
      expect((last!.body.output as { summary: string }).summary).toContain('Service Unavailable');
      // No check run is left in progress: every one created was completed.
      const created = github.writes.filter((w) => w.method === 'POST').map((w) => w.id);
      const done = new Set(github.writes.filter((w) => w.method === 'PATCH').map((w) => w.id));
      // Each retry carried on with the check the first run opened.
      expect(created).toHaveLength(1);
      expect(created.every((id) => done.has(id))).toBe(true);
    } finally {
      await t.close();
    }
  });

  it('a delivery acknowledged just before a crash is evaluated after restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-gh-'));
    try {
      const file = join(dir, 'ledger.db');
      const before = appWithGithub({ store: openSqliteStore(file) });
      const ack = await deliver(before, 'pull_request', pullRequestEvent('opened', pr));
      expect(ack.status).toBe(202);
      // The process dies before its worker ran the job.
      await before.close();

      state = newRepoState();
      state.pulls.set(3, pr);
      const github = fakeGitHub(state);
      const after = appWithGithub({ store: openSqliteStore(file) });
      try {
        expect(await after.jobs.runDue()).toBe(1);
        const done = github.writes.filter((w) => w.method === 'PATCH');
        expect(done).toHaveLength(1);
        const receiptId = done[0]!.body.external_id as string;
        const { receipt } = (await request(after.app).get(`/v1/receipts/${receiptId}`)).body;
        expect((await request(after.app).post('/v1/verify').send(receipt)).body.valid).toBe(true);
      } finally {
        await after.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

async function pendingJobs(t: AppUnderTest) {
  const jobs = [];
  for (let id = 1; id < 20; id++) {
    const job = await t.jobs.get(String(id));
    if (job && job.state === 'pending') jobs.push(job);
  }
  return jobs;
}
