import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Receipt } from '../../src/core/receipt.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { transpileTree, type TranspiledTree } from '../fixtures/transpile-tree.js';
import { validClaim } from '../support/harness.js';

// SVC_WORKERS=2: the process entry as it runs in production, two HTTP workers on one port
// and one data directory.
let tree: TranspiledTree;
let dataDir: string;
let primary: ChildProcess;
let url: string;
let stderr = '';

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The pids of a process's children, from /proc (Linux). */
function childrenOf(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
    readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number),
  );
}

async function until<T>(what: string, probe: () => Promise<T | null> | T | null): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      const value = await probe();
      if (value !== null) return value;
    } catch {
      // Not yet.
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// A new connection per request: the primary hands connections to the workers in turn, so
// consecutive requests are served by alternating workers.
const call = (path: string, init: RequestInit = {}) =>
  fetch(`${url}${path}`, {
    ...init,
    headers: { connection: 'close', 'content-type': 'application/json', ...init.headers },
  });

beforeAll(async () => {
  tree = transpileTree(['src/server.ts']);
  dataDir = mkdtempSync(join(tmpdir(), 'svc-workers-'));
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  primary = spawn(process.execPath, [fileURLToPath(tree.url('src/server.ts'))], {
    env: {
      PATH: process.env.PATH ?? '',
      SVC_WORKERS: '2',
      SVC_DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      SVC_ANON_LIMIT_PER_HOUR: 'unlimited',
      SVC_SIGNUP_LIMIT_PER_HOUR: 'unlimited',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  primary.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  await until('two workers answering', async () =>
    childrenOf(primary.pid!).length === 2 && (await call('/health')).ok ? true : null,
  );
}, 60_000);

afterAll(async () => {
  if (primary.exitCode === null && primary.signalCode === null) {
    primary.kill('SIGKILL');
    for (const pid of childrenOf(primary.pid!)) process.kill(pid, 'SIGKILL');
  }
  tree.cleanup();
  rmSync(dataDir, { recursive: true, force: true });
});

async function signup(email: string): Promise<string> {
  const res = await call('/v1/signup', { method: 'POST', body: JSON.stringify({ email }) });
  expect(res.status).toBe(201);
  return ((await res.json()) as { api_key: string }).api_key;
}

describe('SVC_WORKERS=2', () => {
  it('two workers append to one gap-free chain', async () => {
    const email = 'chain@example.com';
    const key = await signup(email);
    // A second connection to the database, as an operator's CLI would open it.
    const store = openSqliteStore(join(dataDir, 'ledger.db'));
    await store.apiKeys.setTier(email, 'enterprise', new Date().toISOString());
    await store.close();
    const responses = await Promise.all(
      Array.from({ length: 40 }, () =>
        call('/v1/evaluate', {
          method: 'POST',
          headers: { 'x-api-key': key },
          body: JSON.stringify(validClaim()),
        }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(responses.map(() => 200));

    const reader = openSqliteStore(join(dataDir, 'ledger.db'), { readonly: true });
    const receipts: Receipt[] = await reader.queries.search({}, { limit: 1000, order: 'asc' });
    await reader.close();
    expect(receipts).toHaveLength(40);
    receipts.forEach((receipt, i) => {
      expect(receipt.chain.sequence).toBe(i + 1);
      expect(receipt.chain.previous_receipt_hash).toBe(
        i === 0 ? null : receipts[i - 1]!.chain.receipt_hash,
      );
    });
  }, 60_000);

  it('a free key gets exactly 100 requests an hour across both workers', async () => {
    const key = await signup('free@example.com');
    const statuses: number[] = [];
    for (let i = 0; i < 110; i++) {
      statuses.push((await call('/v1/account', { headers: { 'x-api-key': key } })).status);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(100);
    expect(statuses.slice(100)).toEqual(Array(10).fill(429));
  }, 60_000);

  it('replaces a worker that dies', async () => {
    const [victim, survivor] = childrenOf(primary.pid!);
    process.kill(victim!, 'SIGKILL');
    const replaced = await until('a replacement worker', () => {
      const now = childrenOf(primary.pid!);
      return now.length === 2 && !now.includes(victim!) ? now : null;
    });
    expect(replaced).toContain(survivor);
    for (let i = 0; i < 4; i++) expect((await call('/health')).status).toBe(200);
  }, 60_000);

  it('stops every worker and exits 0 on SIGTERM', async () => {
    const workers = childrenOf(primary.pid!);
    const exited = new Promise<number | null>((resolve) => primary.once('exit', resolve));
    primary.kill('SIGTERM');
    expect(await exited).toBe(0);
    for (const pid of workers) expect(() => process.kill(pid, 0)).toThrow();
  }, 60_000);
});
