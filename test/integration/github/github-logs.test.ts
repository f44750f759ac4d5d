import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { sign } from '@octokit/webhooks-methods';
import nock from 'nock';
import { pino } from 'pino';
import request from 'supertest';
import {
  API,
  appWithGithub,
  deliver,
  fakeGitHub,
  INSTALLATION,
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
// Something only the delivery's payload holds, in a payload of about 200 KB.
const MARKER = 'payload-only-text-7f3a';
const bulkyEvent = () => {
  const event = pullRequestEvent('opened', pr);
  return {
    ...event,
    pull_request: { ...event.pull_request, body: `${MARKER} ${'x'.repeat(200_000)}` },
  };
};

type Line = Record<string, unknown> & { level: number; msg: string };
const WARN = 40;
const ERROR = 50;

describe('logs of the GitHub path', () => {
  let lines: Line[];
  let raw: string[];
  const apps: AppUnderTest[] = [];
  const open = (options: Parameters<typeof appWithGithub>[0] = {}) => {
    const logger = pino(
      { level: 'debug' },
      {
        write: (line: string) => {
          raw.push(line);
          lines.push(JSON.parse(line) as Line);
        },
      },
    );
    const t = appWithGithub({ ...options, logger });
    apps.push(t);
    return t;
  };
  const withMessage = (msg: string) => lines.filter((l) => l.msg === msg);

  closedNetwork();
  beforeEach(() => {
    lines = [];
    raw = [];
  });
  afterEach(async () => {
    for (const t of apps.splice(0)) await t.close();
  });

  it('a rejected delivery says why at warn, without the secret, the signature or the body', async () => {
    const t = open();
    const body = bulkyEvent();
    const text = JSON.stringify(body);
    await deliver(t, 'pull_request', body, { id: 'no-signature', signature: null });
    await deliver(t, 'pull_request', body, {
      id: 'wrong-signature',
      signature: await sign('another-secret', text),
    });
    const notJson = `{"action": "opened", "note": "${MARKER}"`;
    await request(t.app)
      .post('/v1/webhook/scm')
      .set('Content-Type', 'application/json')
      .set('X-GitHub-Event', 'pull_request')
      .set('X-GitHub-Delivery', 'not-json')
      .set('X-Hub-Signature-256', await sign(SECRET, notJson))
      .send(notJson);
    const unconfigured = open({ secret: undefined });
    await deliver(unconfigured, 'pull_request', body, { id: 'no-secret' });

    const rejected = withMessage('webhook delivery rejected');
    expect(rejected.map((l) => [l.level, l.delivery, l.event, l.code, l.reason])).toEqual([
      [WARN, 'no-signature', 'pull_request', 'unauthorized', 'no X-Hub-Signature-256 header'],
      [
        WARN,
        'wrong-signature',
        'pull_request',
        'unauthorized',
        'X-Hub-Signature-256 does not match the body and the webhook secret',
      ],
      [
        WARN,
        'not-json',
        'pull_request',
        'malformed_json',
        'the signed body is not acceptable JSON',
      ],
      [
        WARN,
        'no-secret',
        'pull_request',
        'unauthorized',
        'no webhook secret configured (WEBHOOK_SECRET)',
      ],
    ]);
    for (const l of rejected) expect(typeof l.request_id).toBe('string');
    const all = raw.join('');
    expect([SECRET, MARKER, 'sha256='].filter((text) => all.includes(text))).toEqual([]);
  });

  it('a failed job logs bounded fields of its delivery, never the payload', async () => {
    const t = open();
    // The repository is gone: GitHub answers 404 to everything.
    const state = newRepoState();
    fakeGitHub(state);
    await deliver(t, 'pull_request', bulkyEvent(), { id: 'gone-repo' });
    expect(await t.jobs.runDue()).toBe(1);

    const [ended] = withMessage('delivery ended: GitHub refused it for good');
    expect(ended).toMatchObject({
      level: WARN,
      delivery: 'gone-repo',
      event: 'pull_request',
      action: 'opened',
      repository: `${OWNER}/${REPO}`,
      installation: INSTALLATION,
      pull_request: 3,
      status: 404,
      attempt: 1,
    });
    expect(ended!.error).toMatch(/Not Found/);
    // Probot logs the handler's error too; neither line carries the delivery.
    expect(lines.filter((l) => l.level >= ERROR).length).toBeGreaterThan(0);
    // Booleans: a failure must not print a 200 KB line.
    expect(raw.filter((line) => line.includes(MARKER)).length).toBe(0);
    expect(Math.max(...raw.map((line) => line.length))).toBeLessThan(4096);
  });

  it('a retried job logs each attempt: its number, when it runs next and why', async () => {
    const t = open();
    const state = newRepoState();
    // A repository whose .github/svc.yml names the default policy: no file at all would
    // also ask agents' pull requests for a human approval (docs/GITHUB_APP.md).
    state.config.set('main', 'policy: default\n');
    state.pulls.set(3, pr);
    nock(API)
      .get(`/repos/${OWNER}/${REPO}/pulls/3`)
      .times(2)
      .reply(502, { message: 'Bad Gateway' });
    const github = fakeGitHub(state);
    await deliver(t, 'pull_request', bulkyEvent(), { id: 'flaky' });

    for (const attempt of [1, 2]) {
      expect(await t.jobs.runDue()).toBe(1);
      const retried = withMessage('delivery will be retried');
      expect(retried).toHaveLength(attempt);
      const line = retried.at(-1)!;
      expect(line).toMatchObject({
        level: WARN,
        delivery: 'flaky',
        event: 'pull_request',
        action: 'opened',
        repository: `${OWNER}/${REPO}`,
        installation: INSTALLATION,
        pull_request: 3,
        attempt,
        max_attempts: 5,
        status: 502,
      });
      expect(line.error).toMatch(/Bad Gateway/);
      const next = Date.parse(line.next_run_at as string);
      expect(next - t.clock.now()).toBeGreaterThanOrEqual(30_000 * 2 ** (attempt - 1));
      t.clock.advance(next - t.clock.now());
    }
    expect(await t.jobs.runDue()).toBe(1);
    expect(github.writes.at(-1)!.body.conclusion).toBe('success');
    expect(withMessage('delivery will be retried')).toHaveLength(2);
    expect(raw.filter((line) => line.includes(MARKER)).length).toBe(0);
  });
});
