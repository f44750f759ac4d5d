import { afterEach, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import { ledgerState, signupAccount, type Json } from '../../support/api.js';

// A harness's event `cwd` is where the call runs (Codex's is the call's working directory):
// once a session start has given the project directory, a call that runs elsewhere is judged
// where it runs, against the project directory the session started in.

const fixture = (path: string): Json =>
  JSON.parse(
    readFileSync(new URL(`../../fixtures/hooks/${path}`, import.meta.url), 'utf8'),
  ) as Json;

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const PROJECT = '/home/dev/web';

async function codex(withStart: boolean) {
  t = buildTestApp({ config: { baseUrl: 'https://svc.example' } });
  const { apiKey } = await signupAccount(t);
  const app = t;
  const send = (body: Json) =>
    request(app.app).post('/v1/hooks/codex').set('X-API-Key', apiKey).send(body);
  const sessionId = `sess-run-dir-${withStart}`;
  if (withStart) {
    const started = await send({
      ...fixture('codex/session-start.json'),
      session_id: sessionId,
      cwd: PROJECT,
    });
    expect(started.status).toBe(200);
  }
  let n = 0;
  const call = async (cwd: string, command: string) => {
    const res = await send({
      ...fixture('codex/pre-tool-use.bash.json'),
      session_id: sessionId,
      cwd,
      tool_input: { command },
      tool_use_id: `call-${++n}`,
    });
    expect(res.status).toBe(200);
    const { entries } = await ledgerState(app);
    const last = entries.at(-1)!;
    const action = last.claim.action as {
      tool: { summary: { command?: string } };
      session: { cwd?: string };
    };
    return {
      verdict: last.receipt.policy.verdict,
      failed: last.evaluation.policy.rules.filter((r) => !r.passed).map((r) => r.rule),
      command: action.tool.summary.command,
      sessionCwd: action.session.cwd,
      answer: JSON.stringify(res.body),
    };
  };
  return { call, send, sessionId, app };
}

describe('Codex calls judged where they run', () => {
  it('a recursive delete in /tmp is blocked once the session started in the project', async () => {
    const { call } = await codex(true);
    const there = await call('/tmp', 'rm -rf build');
    expect(there).toMatchObject({
      verdict: 'BLOCKED',
      command: 'cd /tmp && rm -rf build',
      sessionCwd: PROJECT,
    });
    expect(there.failed).toContain('rule:recursive-delete-outside-project');
    expect(there.answer).toContain('deny');
    // The same command in a directory of the project is allowed, and shown where it ran.
    expect(await call(`${PROJECT}/packages/app`, 'rm -rf build')).toMatchObject({
      verdict: 'ALLOWED',
      command: 'cd packages/app && rm -rf build',
      sessionCwd: PROJECT,
    });
    // In the project directory itself, the command is as sent.
    expect(await call(PROJECT, 'rm -rf build')).toMatchObject({
      verdict: 'ALLOWED',
      command: 'rm -rf build',
      sessionCwd: PROJECT,
    });
  });

  it("without a session start, the event's cwd is the project directory", async () => {
    const { call } = await codex(false);
    expect(await call('/tmp', 'rm -rf build')).toMatchObject({
      verdict: 'ALLOWED',
      command: 'rm -rf build',
      sessionCwd: '/tmp',
    });
  });

  it('the captured Codex run: a delete in /tmp after the session started in the project', async () => {
    t = buildTestApp({ config: { baseUrl: 'https://svc.example' } });
    const { apiKey } = await signupAccount(t);
    const app = t;
    const send = (file: string) =>
      request(app.app)
        .post('/v1/hooks/codex')
        .set('X-API-Key', apiKey)
        .send(fixture(`codex/${file}.captured.json`));
    expect((await send('session-start.workdir')).status).toBe(200);
    const res = await send('pre-tool-use.bash-workdir');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
    const last = (await ledgerState(app)).entries.at(-1)!;
    expect(last.receipt.policy.verdict).toBe('BLOCKED');
    expect(last.claim.action).toMatchObject({
      tool: { summary: { command: 'cd /tmp && rm -rf svc-nonexistent-dir' } },
      session: { cwd: '/home/dev/project' },
    });
  });

  it('a start that comes after a call is seen by the next call', async () => {
    const { call, send, sessionId } = await codex(false);
    expect(await call('/tmp', 'rm -rf a')).toMatchObject({
      verdict: 'ALLOWED',
      sessionCwd: '/tmp',
    });
    const started = await send({
      ...fixture('codex/session-start.json'),
      session_id: sessionId,
      cwd: PROJECT,
    });
    expect(started.status).toBe(200);
    expect(await call('/tmp', 'rm -rf b')).toMatchObject({
      verdict: 'BLOCKED',
      sessionCwd: PROJECT,
    });
  });

  it('a start another process recorded is seen within 5 s', async () => {
    const { call, sessionId, app } = await codex(false);
    expect(await call('/tmp', 'rm -rf a')).toMatchObject({
      verdict: 'ALLOWED',
      sessionCwd: '/tmp',
    });
    // Another process sharing the store records the session's start.
    const [session] = await app.store.sessions.list({}, { limit: 1 });
    await app.store.sessions.recordEvent({
      scope: session!.scope,
      session_id: sessionId,
      harness: 'codex',
      kind: 'start',
      at: new Date(app.clock.now()).toISOString(),
      reason: 'startup',
      cwd: PROJECT,
    });
    expect(await call('/tmp', 'rm -rf b')).toMatchObject({
      verdict: 'ALLOWED',
      sessionCwd: '/tmp',
    });
    app.clock.advance(5_001);
    expect(await call('/tmp', 'rm -rf c')).toMatchObject({
      verdict: 'BLOCKED',
      sessionCwd: PROJECT,
    });
  });

  it('a start whose cwd is not absolute names no project: each call is judged as before', async () => {
    const { call, send, sessionId, app } = await codex(false);
    const started = await send({
      ...fixture('codex/session-start.json'),
      session_id: sessionId,
      cwd: 'relative/dir',
    });
    expect(started.status).toBe(200);
    const before = (await ledgerState(app)).entries.length;
    expect(await call(PROJECT, 'rm -rf build')).toMatchObject({
      verdict: 'ALLOWED',
      command: 'rm -rf build',
      sessionCwd: PROJECT,
    });
    expect((await ledgerState(app)).entries).toHaveLength(before + 1);
  });
});
