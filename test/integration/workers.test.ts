import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Receipt } from '../../src/core/receipt.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { transpileTree, type TranspiledTree } from '../fixtures/transpile-tree.js';
import { keyOfPem, nobleVerifies } from '../support/receipts.js';
import { validClaim } from '../support/claims.js';
import { childrenOf, freePort, rawPost } from '../support/server-process.js';
import { childEnvBase } from '../support/child-env.js';

// SVC_WORKERS=2: the process entry as it runs in production, two processes serving HTTP on
// one port and one data directory: the supervisor (the ledger's writer) and one forked worker.
let tree: TranspiledTree;
let dataDir: string;
let primary: ChildProcess;
let url: string;
let stderr = '';
let stdout = '';

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

const logLines = () =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

// A new connection per request: the primary hands connections to itself and the worker in
// turn, so consecutive requests are served by alternating processes.
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
      ...childEnvBase(),
      SVC_WORKERS: '2',
      SVC_DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'info',
      SVC_ANON_LIMIT_PER_HOUR: 'unlimited',
      SVC_SIGNUP_LIMIT_PER_HOUR: 'unlimited',
      // Short, so that slow clients are cut off within the test's patience.
      SVC_HEADERS_TIMEOUT: '2',
      SVC_REQUEST_TIMEOUT: '3',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  primary.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  primary.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  await until('two workers listening', async () =>
    childrenOf(primary.pid!).length === 1 &&
    new Set(logLines().flatMap((l) => (l.msg === 'svc listening' ? [l.pid] : []))).size === 2 &&
    (await call('/health')).ok
      ? true
      : null,
  );
  // The supervisor hands connections to a worker once its ready message is read, which can
  // come after the worker's "svc listening" line: until a request of each process is logged.
  await until('a request served by each process', async () => {
    await call('/health');
    return new Set(logLines().flatMap((l) => (l.req ? [l.worker] : []))).size === 2 ? true : null;
  });
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

/** A signup key the operator then makes a reviewer, as `svc keys set-reviewer` does. */
async function reviewerSignup(email: string): Promise<string> {
  const key = await signup(email);
  const store = openSqliteStore(join(dataDir, 'ledger.db'));
  try {
    expect((await store.apiKeys.setReviewer(email, true, new Date().toISOString()))?.reviewer).toBe(
      true,
    );
  } finally {
    await store.close();
  }
  return key;
}

async function ledgerSize(): Promise<number> {
  const reader = openSqliteStore(join(dataDir, 'ledger.db'), { readonly: true });
  try {
    return (await reader.ledger.head()).sequence;
  } finally {
    await reader.close();
  }
}

/**
 * The whole ledger is one chain: sequences from 1 without a gap, each receipt linked to the
 * one before, its signed position equal to its chain place, and its signature valid under
 * the published key (checked with @noble/ed25519, not the signer's node:crypto).
 */
async function expectOneSignedChain(count?: number): Promise<void> {
  const reader = openSqliteStore(join(dataDir, 'ledger.db'), { readonly: true });
  const receipts: Receipt[] = await reader.queries.search({}, { limit: 1000, order: 'asc' });
  await reader.close();
  if (count !== undefined) expect(receipts).toHaveLength(count);
  const { raw } = keyOfPem(await (await call('/v1/keys/server')).text());
  for (const [i, receipt] of receipts.entries()) {
    expect(receipt.chain.sequence).toBe(i + 1);
    const previous = i === 0 ? null : receipts[i - 1]!.chain.receipt_hash;
    expect(receipt.chain.previous_receipt_hash).toBe(previous);
    const position = (receipt as unknown as { position: Record<string, unknown> }).position;
    expect(position).toMatchObject({ sequence: i + 1, previous_receipt_hash: previous });
    expect(await nobleVerifies(receipt as never, raw)).toBe(true);
  }
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

    // Both processes evaluated: the supervisor (worker 0) appended its own drafts, and the
    // forked worker's reached it, the one writer. A worker's log lines reach the supervisor's
    // output on their own schedule, after its answers: they are waited for.
    const evaluatedBy = () =>
      new Set(
        logLines().flatMap((l) =>
          (l.req as { url?: string } | undefined)?.url === '/v1/evaluate' ? [l.worker] : [],
        ),
      );
    await until('an evaluation logged by each process', () =>
      evaluatedBy().size >= 2 ? true : null,
    ).catch(() => undefined); // on a timeout, the expectation below shows which is missing
    expect(evaluatedBy()).toEqual(new Set([0, 1]));
    await expectOneSignedChain(40);
  }, 60_000);

  it('records a disposition through the workers: sealed by the writer, one per parent', async () => {
    const agent = await signup('escalating@example.com');
    const reviewers = [
      await reviewerSignup('reviewer-a@example.com'),
      await reviewerSignup('reviewer-b@example.com'),
    ];
    const evaluated = await call('/v1/evaluate', {
      method: 'POST',
      headers: { 'x-api-key': agent },
      body: JSON.stringify(
        validClaim({ action: { action_type: 'access_change', target_system: 'vault' } }),
      ),
    });
    const parent = ((await evaluated.json()) as { receipt: Receipt }).receipt;
    expect(parent.policy.verdict).toBe('ESCALATED');
    // One decision from each reviewer at once, each on its own connection (so its own worker).
    const answers = await Promise.all(
      reviewers.map((key, i) =>
        call(`/v1/receipts/${parent.receipt_id}/disposition`, {
          method: 'POST',
          headers: { 'x-api-key': key },
          body: JSON.stringify({
            decision: i === 0 ? 'approve' : 'reject',
            reviewer: { id: `reviewer-${i}` },
            reason: 'decided',
          }),
        }),
      ),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409]);
    const written = ((await answers.find((r) => r.status === 201)!.json()) as { receipt: Receipt })
      .receipt;
    const read = await call(`/v1/receipts/${parent.receipt_id}/disposition`);
    expect(((await read.json()) as { receipt: Receipt }).receipt).toEqual(written);
    const verified = (await (
      await call('/v1/verify', { method: 'POST', body: JSON.stringify(written) })
    ).json()) as { valid: boolean; checks: { name: string; status: string }[] };
    expect(verified.valid).toBe(true);
    expect(verified.checks.find((c) => c.name === 'parent_link')?.status).toBe('PASS');
    await expectOneSignedChain();
  }, 60_000);

  it('keeps one gap-free signed chain when a worker is killed mid-request', async () => {
    const key = await signup('killed@example.com');
    const store = openSqliteStore(join(dataDir, 'ledger.db'));
    await store.apiKeys.setTier('killed@example.com', 'enterprise', new Date().toISOString());
    await store.close();
    const before = await ledgerSize();
    const [victim] = childrenOf(primary.pid!);
    const evaluations = Array.from({ length: 60 }, (_, i) =>
      call('/v1/evaluate', {
        method: 'POST',
        headers: { 'x-api-key': key },
        body: JSON.stringify(validClaim({ claim_id: `killed-${i}` })),
        // A connection the killed worker held closes with it, unanswered; one still on its way
        // to it stays open: the client's own timeout ends it, as a real client's would.
        signal: AbortSignal.timeout(5_000),
      }).then(
        async (res) => (res.status === 200 ? 200 : `${res.status} ${await res.text()}`),
        () => 'lost' as const,
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    process.kill(victim!, 'SIGKILL');
    const outcomes = await Promise.all(evaluations);
    // Every request was answered 200 or lost with its worker; none failed otherwise.
    expect(outcomes.filter((o) => o !== 200 && o !== 'lost')).toEqual([]);
    await until('a replacement worker', () => {
      const now = childrenOf(primary.pid!);
      return now.length === 1 && !now.includes(victim!) ? now : null;
    });
    // The service goes on appending to the same chain after the loss.
    const after = await until('an evaluation after the loss', () =>
      call('/v1/evaluate', {
        method: 'POST',
        headers: { 'x-api-key': key },
        body: JSON.stringify(validClaim({ claim_id: 'killed-after' })),
        signal: AbortSignal.timeout(5_000),
      }),
    );
    expect(after.status).toBe(200);
    const answered = outcomes.filter((o) => o === 200).length;
    // A request lost after its append still left a whole receipt: at least the answered ones.
    expect((await ledgerSize()) - before).toBeGreaterThanOrEqual(answered + 1);
    await expectOneSignedChain();
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
    const [victim] = childrenOf(primary.pid!);
    process.kill(victim!, 'SIGKILL');
    const replaced = await until('a replacement worker', () => {
      const now = childrenOf(primary.pid!);
      return now.length === 1 && !now.includes(victim!) ? now : null;
    });
    // Both processes serve again: the supervisor and the replacement.
    await until('the replacement serving', () => {
      const lines = logLines();
      return lines.some((l) => l.pid === replaced[0] && l.msg === 'svc listening') ? true : null;
    });
    for (let i = 0; i < 4; i++) expect((await call('/health')).status).toBe(200);
  }, 60_000);

  it('cuts off a client that trickles its body, with 408, after the request timeout', async () => {
    const port = Number(new URL(url).port);
    // Two connections, so that each worker gets one.
    const answers = await Promise.all(
      [1, 2].map(
        (i) =>
          rawPost(port, '/v1/signup', JSON.stringify({ email: `slow-${i}@example.com` }), {
            trickleMs: 250,
            close: true,
          }).answer,
      ),
    );
    for (const answer of answers) {
      expect(answer.status).toBe(408);
      expect(answer.elapsedMs).toBeGreaterThanOrEqual(2_900);
      expect(answer.elapsedMs).toBeLessThan(5_000);
    }
  }, 60_000);

  it('names the process and the worker on every log line, the supervisor as worker 0', async () => {
    await until('a request line from each worker', () => {
      const workers = new Set(logLines().flatMap((l) => (l.req ? [l.worker] : [])));
      return workers.size >= 2 ? true : null;
    });
    const lines = logLines();
    const pidOf = new Map<unknown, unknown>();
    for (const line of lines) {
      expect(typeof line.pid).toBe('number');
      expect(typeof line.worker).toBe('number');
      if (line.worker === 0) expect(line.pid).toBe(primary.pid);
      else expect(line.pid).not.toBe(primary.pid);
      // One process per worker number (a replacement gets a new number).
      expect(pidOf.get(line.worker) ?? line.pid).toBe(line.pid);
      pidOf.set(line.worker, line.pid);
    }
    expect(lines.filter((l) => l.worker === 0).map((l) => l.msg)).toEqual(
      expect.arrayContaining(['svc workers starting', 'worker died; starting another']),
    );
  }, 60_000);

  it('on SIGTERM, answers every request in flight on every worker, then exits 0', async () => {
    const workers = [primary.pid!, ...childrenOf(primary.pid!)];
    const port = Number(new URL(url).port);
    // Four requests whose bodies come late: the supervisor hands connections to itself and
    // the worker in turn, two each. Each is in flight once its worker answered 100 Continue; their ids
    // find them in the request log.
    const inFlight = [1, 2, 3, 4].map((i) =>
      rawPost(port, '/v1/signup', JSON.stringify({ email: `drain-${i}@example.com` }), {
        hold: true,
        expectContinue: true,
        headers: { 'X-Request-Id': `drain-${i}` },
      }),
    );
    await Promise.all(inFlight.map((r) => r.sent));
    const exited = new Promise<number | null>((resolve) => primary.once('exit', resolve));
    primary.kill('SIGTERM');
    // New connections are refused once every worker has stopped listening, while the four
    // requests are still waiting for their bodies.
    await until('the listener closed', () =>
      rawPost(port, '/health', '{}', { close: true }).answer.then((a) =>
        a.error === 'ECONNREFUSED' ? true : null,
      ),
    );
    // A worker drains once the supervisor's SIGTERM reaches it: the bodies come after that.
    await until('every worker draining', () =>
      logLines().filter((l) => l.msg === 'shutting down' && Number(l.worker) > 0).length >=
      workers.length - 1
        ? true
        : null,
    );
    for (const request of inFlight) request.finish();
    const answers = await Promise.all(inFlight.map((r) => r.answer));
    for (const answer of answers) {
      expect(answer.error).toBeUndefined();
      expect(answer.status).toBe(201);
      expect(answer.headers.connection).toBe('close');
      expect(JSON.parse(answer.body)).toHaveProperty('key_id');
    }
    expect(await exited).toBe(0);
    for (const pid of workers) expect(() => process.kill(pid, 0)).toThrow();
    // Both workers were draining: each answered some of the four.
    const served = logLines().filter((l) =>
      String((l.req as { id?: unknown } | undefined)?.id).startsWith('drain-'),
    );
    expect(served.map((l) => (l.res as { status: number }).status)).toEqual([201, 201, 201, 201]);
    expect(new Set(served.map((l) => l.pid))).toEqual(new Set(workers));
  }, 60_000);
});
