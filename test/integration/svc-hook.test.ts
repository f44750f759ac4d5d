import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { answer } from '@svc/hook';
import { transpileTree } from '../fixtures/transpile-tree.js';
import type { TranspiledTree } from '../fixtures/transpile-tree.js';
import { freePort } from '../support/server-process.js';
import { fixtureText } from '../unit/hook/fixtures.js';
import { PRE_TOOL_OUTPUT } from '../unit/hook/output-schemas.js';
import { childEnvBase } from '../support/child-env.js';
import { ledgerState, signupAccount } from '../support/api.js';
import { buildTestApp, type TestApp } from '../support/harness.js';

// svc-hook as a harness runs it: a child process with the event on stdin, against a local
// svc stand-in. What it writes and how it exits is what the harness acts on.

let tree: TranspiledTree;
let server: Server;
let baseUrl: string;
let handler: (req: IncomingMessage, body: string, res: ServerResponse) => void;
const requests: Array<{ url: string; headers: IncomingMessage['headers']; body: string }> = [];

beforeAll(async () => {
  tree = transpileTree(['packages/hook/src/cli/svc-hook.ts']);
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      requests.push({ url: req.url ?? '', headers: req.headers, body });
      handler(req, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  tree.cleanup();
});

afterEach(() => {
  requests.length = 0;
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function svcHook(args: string[], stdin: string, env: Record<string, string> = {}): Promise<Run> {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [fileURLToPath(tree.url('packages/hook/src/cli/svc-hook.ts')), ...args],
    {
      env: { ...childEnvBase(), SVC_URL: baseUrl, SVC_API_KEY: 'svc_test_key', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  child.stdin.end(stdin);
  return new Promise((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: performance.now() - started })),
  );
}

function replyWith(body: unknown, exit: string | null, status = 200) {
  handler = (_req, _body, res) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (exit !== null) headers['x-svc-hook-exit'] = exit;
    res.writeHead(status, headers).end(typeof body === 'string' ? body : JSON.stringify(body));
  };
}

const RECEIPT = 'https://svc.example/receipts/01JD8Z6X7Q';
const claudeEvent = fixtureText('claude-code', 'pre-tool-use.bash');

describe('svc-hook passes svc’s answer through', () => {
  it('POSTs the event as the harness sent it, with the API key, and writes the allow', async () => {
    const allow = answer('claude-code', {
      verdict: 'ALLOWED',
      reasons: [],
      receipt_url: RECEIPT,
      can_ask: true,
    });
    replyWith(allow.body, '0');
    const run = await svcHook(['claude-code'], claudeEvent);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(allow.body);
    expect(run.stderr).toBe('');
    expect(requests).toHaveLength(1);
    expect(requests[0]!.url).toBe('/v1/hooks/claude-code');
    expect(requests[0]!.headers['x-api-key']).toBe('svc_test_key');
    expect(requests[0]!.headers['content-type']).toBe('application/json');
    expect(requests[0]!.body).toBe(claudeEvent);
  });

  it('writes a deny and exits with the status svc names, the reason on stderr', async () => {
    const deny = answer('cursor', {
      verdict: 'BLOCKED',
      reasons: ['rule:command denies npm install'],
      receipt_url: RECEIPT,
      can_ask: true,
      hook_event: 'beforeShellExecution',
    });
    replyWith(deny.body, '2');
    const run = await svcHook(['cursor'], fixtureText('cursor', 'before-shell-execution'));
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout)).toEqual(deny.body);
    expect(run.stderr).toContain('rule:command denies npm install');
    expect(PRE_TOOL_OUTPUT.cursor.safeParse(JSON.parse(run.stdout)).success).toBe(true);
  });

  it('writes an ask', async () => {
    const ask = answer('claude-code', {
      verdict: 'ESCALATED',
      reasons: ['rule:command asks before terraform apply'],
      receipt_url: RECEIPT,
      can_ask: true,
    });
    replyWith(ask.body, '0');
    const run = await svcHook(['claude-code'], claudeEvent);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(ask.body);
  });

  it('reads an answer sent in chunks', async () => {
    const deny = answer('gemini-cli', {
      verdict: 'BLOCKED',
      reasons: ['rule:paths denies .env'],
      receipt_url: RECEIPT,
      can_ask: false,
    });
    handler = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-svc-hook-exit': '0' });
      const text = JSON.stringify(deny.body);
      res.write(text.slice(0, 10));
      res.end(text.slice(10));
    };
    const run = await svcHook(['gemini-cli'], fixtureText('gemini-cli', 'before-tool'));
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(deny.body);
  });

  it('does not wait for a server that keeps the connection open after its answer', async () => {
    const body = JSON.stringify(
      answer('copilot', { verdict: 'ALLOWED', reasons: [], can_ask: false }).body,
    );
    const raw = createNetServer((socket) => {
      socket.once('data', () =>
        socket.write(
          `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-svc-hook-exit: 0\r\n` +
            `content-length: ${Buffer.byteLength(body)}\r\nconnection: keep-alive\r\n\r\n${body}`,
        ),
      );
    });
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    try {
      const port = (raw.address() as AddressInfo).port;
      const run = await svcHook(
        ['copilot', '--timeout', '5000'],
        fixtureText('copilot', 'pre-tool-use'),
        {
          SVC_URL: `http://127.0.0.1:${port}`,
        },
      );
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual(JSON.parse(body));
      expect(run.ms).toBeLessThan(4000);
    } finally {
      raw.close();
    }
  });

  it('sends the configured event and policy as query parameters', async () => {
    replyWith({}, '0');
    const run = await svcHook(
      ['copilot', '--event', 'preToolUse', '--policy', 'agent'],
      fixtureText('copilot', 'pre-tool-use'),
    );
    expect(run.code).toBe(0);
    expect(requests[0]!.url).toBe('/v1/hooks/copilot?event=preToolUse&policy=agent');
  });

  it('sends ?wait= with --wait or SVC_HOOK_WAIT, and waits that much longer for the answer', async () => {
    handler = (_req, _body, res) => {
      // Later than --timeout alone allows, within the timeout and the wait.
      setTimeout(() => {
        res.setHeader('X-Svc-Hook-Exit', '0');
        res.setHeader('Content-Type', 'application/json');
        res.end('{}');
      }, 600);
    };
    const event = fixtureText('codex', 'pre-tool-use.bash');
    const waited = await svcHook(['codex', '--timeout', '300', '--wait', '2'], event);
    expect(waited.code).toBe(0);
    expect(requests[0]!.url).toBe('/v1/hooks/codex?wait=2');
    const env = await svcHook(['codex'], event, { SVC_HOOK_WAIT: '120' });
    expect(env.code).toBe(0);
    expect(requests[1]!.url).toBe('/v1/hooks/codex?wait=120');
    const bad = await svcHook(['codex', '--wait', '301'], event);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('the wait must be 1 to 300 seconds, not "301"');
    // After the call a bad setting gates nothing: a non-blocking error.
    const after = await svcHook(['codex', '--wait', '0'], fixtureText('codex', 'post-tool-use'));
    expect(after.code).toBe(1);
    expect(after.stderr).toContain('was not recorded: the wait must be 1 to 300 seconds');
    expect(requests).toHaveLength(2);
  });

  it('sends ?ask=false with --no-ask', async () => {
    replyWith({}, '0');
    const run = await svcHook(
      ['claude-code', '--no-ask'],
      fixtureText('claude-code', 'pre-tool-use.bash'),
    );
    expect(run.code).toBe(0);
    expect(requests[0]!.url).toBe('/v1/hooks/claude-code?ask=false');
  });
});

/** A git repository in a new temporary directory, with one empty commit. */
function gitRepo(prefix: string): { dir: string; git: (...args: string[]) => string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();
  git('init', '-q');
  git(
    '-c',
    'user.name=t',
    '-c',
    'user.email=t@example.com',
    'commit',
    '-q',
    '--allow-empty',
    '-m',
    'one',
  );
  return { dir, git };
}

describe('svc-hook reports the HEAD a call left', () => {
  let repo: string;
  let head: string;
  beforeAll(() => {
    const made = gitRepo('svc-hook-git-');
    repo = made.dir;
    head = made.git('rev-parse', 'HEAD');
  });
  afterAll(() => rmSync(repo, { recursive: true, force: true }));

  const inRepo = (name: string, cwd: string) =>
    JSON.stringify({ ...(JSON.parse(fixtureText('claude-code', name)) as object), cwd });

  it('sends git_head with a post-tool event whose cwd is a repository', async () => {
    replyWith({}, '0');
    const run = await svcHook(['claude-code'], inRepo('post-tool-use.write', repo));
    expect(run.code).toBe(0);
    expect(head).toMatch(/^[0-9a-f]{40}$/);
    expect(requests[0]!.url).toBe(`/v1/hooks/claude-code?git_head=${head}`);
  });

  it('sends none before a call, or where there is no repository', async () => {
    replyWith({}, '0');
    await svcHook(['claude-code'], inRepo('pre-tool-use.bash', repo));
    await svcHook(['claude-code'], inRepo('post-tool-use.write', tmpdir()));
    expect(requests.map((r) => r.url)).toEqual(['/v1/hooks/claude-code', '/v1/hooks/claude-code']);
  });
});

describe("svc-hook names the session's repository", () => {
  let repo: string;
  let tree: string;
  beforeAll(() => {
    const made = gitRepo('svc-hook-origin-');
    repo = made.dir;
    const git = made.git;
    git('remote', 'add', 'origin', 'git@github.com:acme/web.git');
    // A linked worktree: its .git is a file, and the remote is in the common config.
    tree = `${repo}-tree`;
    git('worktree', 'add', '-q', '--detach', tree);
  });
  afterAll(() => {
    rmSync(repo, { recursive: true, force: true });
    rmSync(tree, { recursive: true, force: true });
  });
  const at = (cwd: string, name = 'pre-tool-use.bash') =>
    JSON.stringify({ ...(JSON.parse(fixtureText('claude-code', name)) as object), cwd });
  const repositoryOf = (url: string) =>
    new URL(url, 'http://svc.local').searchParams.get('repository');

  it('reads it from the origin remote of the repository the call runs in', async () => {
    replyWith({}, '0');
    mkdirSync(join(repo, 'src', 'deep'), { recursive: true });
    await svcHook(['claude-code'], at(repo));
    await svcHook(['claude-code'], at(join(repo, 'src', 'deep')));
    await svcHook(['claude-code'], at(tree));
    await svcHook(['claude-code'], at(tmpdir()));
    await svcHook(['claude-code'], at(repo, 'session-start'));
    expect(requests.map((r) => repositoryOf(r.url))).toEqual([
      'acme/web',
      'acme/web',
      'acme/web',
      null,
      null,
    ]);
  });

  it('takes SVC_REPOSITORY or --repository instead, and refuses a malformed one', async () => {
    replyWith({}, '0');
    await svcHook(['claude-code'], at(repo), { SVC_REPOSITORY: 'group/sub/app' });
    await svcHook(['claude-code', '--repository', 'acme/api'], at(tmpdir()));
    expect(requests.map((r) => repositoryOf(r.url))).toEqual(['group/sub/app', 'acme/api']);
    const bad = await svcHook(['claude-code', '--repository', 'acme web'], at(repo));
    expect(bad.code).toBe(2);
    expect(bad.stdout).toContain('"permissionDecision":"deny"');
    expect(bad.stderr).toContain('the repository must be a path such as owner/name');
    // Copilot never blocks on a failing hook: the deny must be its answer.
    const copilot = await svcHook(['copilot'], fixtureText('copilot', 'pre-tool-use'), {
      SVC_REPOSITORY: 'https://github.com/acme/web',
    });
    expect(copilot.code).toBe(0);
    expect(JSON.parse(copilot.stdout)).toMatchObject({ permissionDecision: 'deny' });
    const long = await svcHook(
      ['claude-code', '--repository', `acme/${'w'.repeat(260)}`],
      at(repo),
    );
    expect(long.stderr).toContain('at most 256 characters');
    expect(requests).toHaveLength(2);
  });
});

describe('svc-hook fails closed', () => {
  /** The denial the harness acts on: its documented shape, the problem named, blocking. */
  function expectDenial(run: Run, harness: 'claude-code' | 'copilot' | 'codex', problem: RegExp) {
    const body = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(PRE_TOOL_OUTPUT[harness].safeParse(body).success).toBe(true);
    const decision = (harness === 'copilot' ? body : body['hookSpecificOutput']) as Record<
      string,
      unknown
    >;
    expect(decision['permissionDecision']).toBe('deny');
    expect(decision['permissionDecisionReason']).toMatch(problem);
    expect(run.stderr).toMatch(problem);
    // Copilot never blocks on a non-zero exit; the others block on 2, whatever stdout holds.
    expect(run.code).toBe(harness === 'copilot' ? 0 : 2);
  }

  it('when svc cannot be reached', async () => {
    const port = await freePort();
    const run = await svcHook(['claude-code'], claudeEvent, {
      SVC_URL: `http://127.0.0.1:${port}`,
    });
    expectDenial(
      run,
      'claude-code',
      new RegExp(`svc cannot be reached at http://127.0.0.1:${port}: ECONNREFUSED`),
    );
  });

  it('when svc answers 5xx, naming its error and request id', async () => {
    replyWith({ error: 'store unavailable', code: 'internal', request_id: 'req-1' }, null, 503);
    const run = await svcHook(['copilot'], fixtureText('copilot', 'pre-tool-use'));
    expectDenial(
      run,
      'copilot',
      /svc answered HTTP 503: store unavailable, internal, request req-1/,
    );
  });

  it('when svc answers 4xx', async () => {
    replyWith({ error: 'invalid API key', code: 'unauthorized', request_id: 'req-2' }, null, 401);
    const run = await svcHook(['codex'], fixtureText('codex', 'pre-tool-use.bash'));
    expectDenial(run, 'codex', /svc answered HTTP 401: invalid API key/);
  });

  it('when the answer is not JSON', async () => {
    replyWith('<html>gateway</html>', '0');
    const run = await svcHook(['claude-code'], claudeEvent);
    expectDenial(run, 'claude-code', /svc's answer is not JSON \(HTTP 200\)/);
  });

  it('when the answer is not the harness’s answer', async () => {
    replyWith(
      { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'maybe' } },
      '0',
    );
    const run = await svcHook(['claude-code'], claudeEvent);
    expectDenial(run, 'claude-code', /svc's answer is not a claude-code hook answer/);
  });

  it('when the answer names no exit status, or a bad one', async () => {
    for (const exit of [null, 'two', '300']) {
      replyWith({ permissionDecision: 'allow', permissionDecisionReason: 'ok' }, exit);
      const run = await svcHook(['copilot'], fixtureText('copilot', 'pre-tool-use'));
      expectDenial(run, 'copilot', /svc's answer has no valid X-Svc-Hook-Exit header/);
    }
  });

  it('when svc does not answer in time', async () => {
    handler = () => {
      /* never answers */
    };
    const run = await svcHook(
      ['codex', '--timeout', '300'],
      fixtureText('codex', 'pre-tool-use.bash'),
    );
    expectDenial(run, 'codex', /svc did not answer within 300 ms/);
    expect(run.ms).toBeLessThan(5000);
  });

  it('takes the timeout from SVC_HOOK_TIMEOUT_MS, and refuses a bad one', async () => {
    handler = () => {};
    const timed = await svcHook(['claude-code'], claudeEvent, { SVC_HOOK_TIMEOUT_MS: '250' });
    expectDenial(timed, 'claude-code', /svc did not answer within 250 ms/);
    const bad = await svcHook(['claude-code'], claudeEvent, { SVC_HOOK_TIMEOUT_MS: '1e3' });
    expectDenial(bad, 'claude-code', /the timeout must be 1 to 600000 ms, not "1e3"/);
  });

  it('when the key or the URL is not set, or the event is not JSON', async () => {
    const noKey = await svcHook(['claude-code'], claudeEvent, { SVC_API_KEY: '' });
    expectDenial(noKey, 'claude-code', /SVC_API_KEY is not set/);
    const noUrl = await svcHook(['claude-code'], claudeEvent, { SVC_URL: '' });
    expectDenial(noUrl, 'claude-code', /SVC_URL is not set/);
    const badUrl = await svcHook(['claude-code'], claudeEvent, { SVC_URL: 'ftp://svc.example' });
    expectDenial(badUrl, 'claude-code', /SVC_URL must be an http or https URL, not ftp:/);
    const notJson = await svcHook(['claude-code'], 'not json');
    expectDenial(notJson, 'claude-code', /the hook event on standard input is not JSON/);
    expect(requests).toHaveLength(0);
  });

  it('after a call or at a session edge, a failure is a non-blocking error, not a deny', async () => {
    const port = await freePort();
    const events: [string, string, string][] = [
      ['claude-code', 'post-tool-use.write', 'PostToolUse'],
      ['claude-code', 'session-end', 'SessionEnd'],
      ['cursor', 'after-shell-execution', 'afterShellExecution'],
      ['gemini-cli', 'after-tool', 'AfterTool'],
    ];
    for (const [harness, file, name] of events) {
      const run = await svcHook([harness], fixtureText(harness, file), {
        SVC_URL: `http://127.0.0.1:${port}`,
      });
      expect(run.code).toBe(1);
      expect(JSON.parse(run.stdout)).toEqual({});
      expect(run.stderr).toMatch(
        new RegExp(`svc-hook: the ${name} was not recorded: svc cannot be reached`),
      );
      expect(run.stdout).not.toContain('deny');
    }
    replyWith({ error: 'boom' }, null, 500);
    const failed = await svcHook(['codex'], fixtureText('codex', 'post-tool-use'));
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/the PostToolUse was not recorded: svc answered HTTP 500: boom/);
  });

  it('a post-tool or session event it cannot read is a non-blocking error too; a pre-tool one is denied', async () => {
    const before = requests.length;
    // Copilot's documentation prints these without the sessionId the CLI sends.
    const post = await svcHook(
      ['copilot', '--event', 'postToolUse'],
      fixtureText('copilot', 'post-tool-use.docs'),
    );
    expect(post.code).toBe(1);
    expect(JSON.parse(post.stdout)).toEqual({});
    expect(post.stderr).toMatch(
      /svc-hook: the postToolUse was not recorded: copilot hook event: sessionId/,
    );
    const noSession = (file: string) => {
      const event = JSON.parse(fixtureText('claude-code', file)) as Record<string, unknown>;
      delete event['session_id'];
      return JSON.stringify(event);
    };
    const end = await svcHook(['claude-code'], noSession('session-end'));
    expect(end.code).toBe(1);
    expect(end.stderr).toMatch(
      /svc-hook: the SessionEnd was not recorded: claude-code hook event: /,
    );
    expect(end.stdout).not.toContain('PreToolUse');
    // Nothing was sent for either: svc could not read them either.
    expect(requests).toHaveLength(before);
    // A pre-tool event that cannot be read, or an event under a name no harness uses, denies.
    replyWith(
      { error: 'session_id must be a non-empty string', code: 'validation_failed' },
      null,
      400,
    );
    expectDenial(
      await svcHook(['claude-code'], noSession('pre-tool-use.bash')),
      'claude-code',
      /svc answered HTTP 400/,
    );
    // A configured event name the harness does not have denies, as a bad setting does.
    expectDenial(
      await svcHook(['copilot', '--event', 'pretooluse'], fixtureText('copilot', 'pre-tool-use')),
      'copilot',
      /--event "pretooluse" is no event svc reads from copilot/,
    );
    const strange = {
      ...JSON.parse(noSession('post-tool-use.write')),
      hook_event_name: 'constructor',
    };
    expectDenial(
      await svcHook(['claude-code'], JSON.stringify(strange)),
      'claude-code',
      /HTTP 400/,
    );
  });

  it('exits 2 with its usage for a harness it does not know', async () => {
    const run = await svcHook(['vim'], claudeEvent);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('svc-hook: unknown harness "vim"');
    expect(run.stderr).toContain('Usage: svc-hook <harness>');
  });
});

describe('svc-hook fails open only when configured', () => {
  it('with SVC_HOOK_FAIL_OPEN=true, svc unreachable lets the call through with a warning', async () => {
    const port = await freePort();
    const run = await svcHook(['claude-code'], claudeEvent, {
      SVC_URL: `http://127.0.0.1:${port}`,
      SVC_HOOK_FAIL_OPEN: 'true',
    });
    expect(run.code).toBe(0);
    const body = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(body['hookSpecificOutput']).toBeUndefined();
    expect(body['systemMessage']).toMatch(/WARNING: allowed without a decision.*ECONNREFUSED/);
    expect(run.stderr).toMatch(/WARNING: allowed without a decision/);
  });

  it('with --fail-open, a 5xx lets a Copilot call through', async () => {
    replyWith({ error: 'boom' }, null, 500);
    const run = await svcHook(['copilot', '--fail-open'], fixtureText('copilot', 'pre-tool-use'));
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({});
    expect(run.stderr).toMatch(/WARNING: .*svc answered HTTP 500: boom/);
  });

  it('any other value of SVC_HOOK_FAIL_OPEN still fails closed', async () => {
    replyWith({ error: 'boom' }, null, 500);
    for (const value of ['1', 'yes', 'TRUE']) {
      const run = await svcHook(['claude-code'], claudeEvent, { SVC_HOOK_FAIL_OPEN: value });
      expect(run.code).toBe(2);
      expect(run.stdout).toContain('"permissionDecision":"deny"');
    }
  });

  it('prints its help', async () => {
    const run = await svcHook(['--help'], '');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('SVC_HOOK_FAIL_OPEN');
    expect(run.stdout).toContain('X-Svc-Hook-Exit');
  });
});

describe('svc-hook against svc itself', () => {
  let app: TestApp;
  let live: Server;
  let url: string;
  let key: string;
  beforeAll(async () => {
    app = buildTestApp();
    key = (await signupAccount(app)).apiKey;
    live = createServer(app.app);
    await new Promise<void>((resolve) => live.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(live.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    live.closeAllConnections();
    await new Promise((resolve) => live.close(resolve));
    await app.close();
  });

  const event = (command: string, id: string) =>
    JSON.stringify({
      ...(JSON.parse(fixtureText('claude-code', 'pre-tool-use.bash')) as object),
      tool_input: { command },
      tool_use_id: id,
    });

  it('has each call decided, receipted and answered as Claude Code reads it', async () => {
    const env = { SVC_URL: url, SVC_API_KEY: key };
    const allowed = await svcHook(['claude-code'], event('npm test', 'toolu_live_1'), env);
    expect(allowed.code).toBe(0);
    expect(PRE_TOOL_OUTPUT['claude-code'].parse(JSON.parse(allowed.stdout))).toMatchObject({
      hookSpecificOutput: { permissionDecision: 'allow' },
    });
    const denied = await svcHook(
      ['claude-code'],
      event('git push --force origin main', 'toolu_live_2'),
      env,
    );
    expect(PRE_TOOL_OUTPUT['claude-code'].parse(JSON.parse(denied.stdout))).toMatchObject({
      hookSpecificOutput: {
        permissionDecision: 'deny',
        permissionDecisionReason: expect.stringContaining('A force push to main'),
      },
    });
    const { entries } = await ledgerState(app);
    expect(entries.map((e) => e.receipt.policy.verdict)).toEqual(['ALLOWED', 'BLOCKED']);
    expect(denied.stdout).toContain(entries[1]!.receipt.receipt_id);
  });

  it('is refused with a clear deny when the key is not svc’s, and nothing is recorded', async () => {
    const before = await ledgerState(app);
    const run = await svcHook(['claude-code'], event('npm test', 'toolu_live_3'), {
      SVC_URL: url,
      SVC_API_KEY: 'sk_svc_not_a_key',
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/401/);
    expect(await ledgerState(app)).toEqual(before);
  });
});
