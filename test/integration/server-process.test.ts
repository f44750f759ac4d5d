import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { transpileTree, type TranspiledTree } from '../fixtures/transpile-tree.js';
import {
  freePort,
  rawPost,
  startServerProcess,
  until,
  type ServerProcess,
} from '../support/server-process.js';

// The process entry as it runs in production, with one process (SVC_WORKERS=1); the same
// with several workers is in workers.test.ts.
let tree: TranspiledTree;
const dataDirs: string[] = [];
const running: ServerProcess[] = [];

beforeAll(() => {
  tree = transpileTree(['src/server.ts']);
});

afterEach(() => {
  for (const server of running.splice(0)) server.kill();
});

afterAll(() => {
  tree.cleanup();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

async function start(env: Record<string, string> = {}): Promise<ServerProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-process-'));
  dataDirs.push(dataDir);
  const server = startServerProcess(tree, await freePort(), {
    SVC_DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    // Short, so that slow clients are cut off within the test's patience.
    SVC_HEADERS_TIMEOUT: '1',
    SVC_REQUEST_TIMEOUT: '2',
    ...env,
  });
  running.push(server);
  await until('the server answering', async () =>
    (await fetch(`${server.url}/health`)).ok ? true : null,
  );
  return server;
}

const signupBody = (email: string) => JSON.stringify({ email });

describe('slow clients', () => {
  it('cuts off a client that trickles its body, with 408, after the request timeout', async () => {
    const server = await start();
    // 40 bytes at one every 200 ms would take 8 s; the request timeout is 2 s.
    const { answer } = rawPost(server.port, '/v1/signup', signupBody('slow-body@example.com'), {
      trickleMs: 200,
      close: true,
    });
    const got = await answer;
    expect(got.status).toBe(408);
    expect(got.elapsedMs).toBeGreaterThanOrEqual(1_900);
    expect(got.elapsedMs).toBeLessThan(4_000);
    // Nothing was stored for it: the address is still free.
    const res = await fetch(`${server.url}/v1/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: signupBody('slow-body@example.com'),
    });
    expect(res.status).toBe(201);
  }, 30_000);

  it('by default, answers a client that pauses for a second before its body', async () => {
    // Empty variables count as unset: the defaults (10 s and 30 s).
    const server = await start({ SVC_HEADERS_TIMEOUT: '', SVC_REQUEST_TIMEOUT: '' });
    const request = rawPost(server.port, '/v1/signup', signupBody('pause@example.com'), {
      hold: true,
      close: true,
    });
    await request.sent;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    request.finish();
    expect((await request.answer).status).toBe(201);
  }, 30_000);

  it('cuts off a connection that sends no request, after the headers timeout', async () => {
    const server = await start();
    const started = Date.now();
    const closed = await new Promise<string>((resolve) => {
      const socket = connect(server.port, '127.0.0.1');
      let text = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      socket.on('error', () => undefined);
      socket.once('close', () => resolve(text));
    });
    expect(closed).toMatch(/^HTTP\/1\.1 408 /);
    expect(Date.now() - started).toBeLessThan(3_000);
  }, 30_000);

  it('refuses a headers timeout longer than the request timeout', async () => {
    const server = startServerProcess(tree, await freePort(), {
      SVC_DATA_DIR: join(tmpdir(), 'svc-never-created'),
      SVC_HEADERS_TIMEOUT: '20',
      SVC_REQUEST_TIMEOUT: '10',
    });
    running.push(server);
    expect(await server.exited).toBe(1);
    expect(server.stderr()).toMatch(/SVC_HEADERS_TIMEOUT must not exceed SVC_REQUEST_TIMEOUT/);
  }, 30_000);
});

describe('a port in use', () => {
  let holder: Server;
  let port: number;
  beforeAll(async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    port = (holder.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => holder.close(() => resolve())));

  it.each(['1', '2'])(
    'with SVC_WORKERS=%s, says which address is taken and exits 1',
    async (workers) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'svc-busy-'));
      dataDirs.push(dataDir);
      const server = startServerProcess(tree, port, {
        SVC_DATA_DIR: dataDir,
        SVC_WORKERS: workers,
        LOG_LEVEL: 'warn',
      });
      running.push(server);
      expect(await server.exited).toBe(1);
      expect(server.stderr()).toContain(
        `svc: cannot listen on 127.0.0.1:${port}: the port is in use`,
      );
      expect(server.stderr()).not.toMatch(/TypeError|\n\s+at /);
    },
    30_000,
  );
});

describe('SIGTERM', () => {
  it('lets requests in flight finish with their answers, refuses new connections, exits 0', async () => {
    const server = await start();
    const inFlight = [1, 2, 3].map((i) =>
      rawPost(server.port, '/v1/signup', signupBody(`drain-${i}@example.com`), {
        hold: true,
        expectContinue: true,
      }),
    );
    // 100 Continue: the server read each head and waits for the body.
    await Promise.all(inFlight.map((r) => r.sent));
    server.child.kill('SIGTERM');
    await until('the listener closed', () =>
      rawPost(server.port, '/health', '{}', { close: true }).answer.then((a) =>
        a.error === 'ECONNREFUSED' ? true : null,
      ),
    );
    for (const request of inFlight) request.finish();
    const answers = await Promise.all(inFlight.map((r) => r.answer));
    for (const answer of answers) {
      expect(answer.error).toBeUndefined();
      expect(answer.status).toBe(201);
      // The connection was kept alive by the client; the draining server closed it.
      expect(answer.headers.connection).toBe('close');
      expect(JSON.parse(answer.body)).toHaveProperty('key_id');
    }
    expect(await server.exited).toBe(0);
  }, 30_000);

  it('cuts off a client still sending its request a request timeout later, then exits 0', async () => {
    const server = await start();
    // 40 bytes at one every 300 ms would take 12 s.
    const slow = rawPost(server.port, '/v1/signup', signupBody('slow-drain@example.com'), {
      trickleMs: 300,
    });
    await slow.sent;
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stopped = Date.now();
    server.child.kill('SIGTERM');
    const answer = await slow.answer;
    expect(answer.status).toBeNull();
    expect(await server.exited).toBe(0);
    // The request timeout (2 s) once more, not the 12 s the client wanted.
    expect(Date.now() - stopped).toBeGreaterThanOrEqual(1_900);
    expect(Date.now() - stopped).toBeLessThan(5_000);
  }, 30_000);
});
