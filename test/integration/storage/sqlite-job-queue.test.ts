import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import type { Job, JobQueue, JobQueueOptions } from '../../../src/ports/job-queue.js';
import type { Store } from '../../../src/ports/store.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { ManualClock } from '../../support/harness.js';

const MINUTE = 60_000;

let root: string;
let clock: ManualClock;
const stores: Store[] = [];
const queues: JobQueue[] = [];

function open(options: Partial<JobQueueOptions> = {}, file = join(root, 'ledger.db')) {
  const store = openSqliteStore(file);
  stores.push(store);
  const queue = store.openJobQueue({ clock, ...options });
  queues.push(queue);
  return queue;
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'svc-jobs-'));
  clock = new ManualClock();
});
afterEach(async () => {
  for (const q of queues.splice(0)) await q.stop();
  for (const s of stores.splice(0)) await s.close();
  rmSync(root, { recursive: true, force: true });
});

describe('the SQLite job queue', () => {
  it('runs an enqueued job once with its payload and records it done', async () => {
    const queue = open();
    const seen: Job[] = [];
    queue.handle('mail', async (job) => void seen.push(job));
    const { id, created } = await queue.enqueue('mail', { to: 'a', n: [1, null] });
    expect(created).toBe(true);

    expect(await queue.runDue()).toBe(1);
    expect(await queue.runDue()).toBe(0);
    expect(seen).toEqual([
      {
        id,
        name: 'mail',
        payload: { to: 'a', n: [1, null] },
        attempt: 1,
        runAt: clock.now(),
        createdAt: clock.now(),
      },
    ]);
    expect(await queue.get(id)).toMatchObject({ state: 'done', attempts: 1, lastError: null });
  });

  it('treats an existing dedupe key as a no-op and says so', async () => {
    const queue = open();
    let runs = 0;
    queue.handle('gh', async () => void runs++);
    const first = await queue.enqueue('gh', { v: 1 }, { dedupeKey: 'delivery-1' });
    const again = await queue.enqueue('gh', { v: 2 }, { dedupeKey: 'delivery-1' });
    expect(again).toEqual({ id: first.id, created: false });
    await queue.runDue();
    // Also after the first one finished: the key stays taken until the job is purged.
    expect(await queue.enqueue('gh', { v: 3 }, { dedupeKey: 'delivery-1' })).toEqual({
      id: first.id,
      created: false,
    });
    await queue.runDue();
    expect(runs).toBe(1);
    expect((await queue.get(first.id))?.payload).toEqual({ v: 1 });
  });

  it('does not run a job before its runAt', async () => {
    const queue = open();
    let runs = 0;
    queue.handle('later', async () => void runs++);
    await queue.enqueue('later', null, { runAt: clock.now() + 5 * MINUTE });
    expect(await queue.runDue()).toBe(0);
    clock.advance(5 * MINUTE - 1);
    expect(await queue.runDue()).toBe(0);
    clock.advance(1);
    expect(await queue.runDue()).toBe(1);
    expect(runs).toBe(1);
  });

  it('retries a throwing handler on its schedule, then records the failure', async () => {
    const queue = open({ retryDelaysMs: [MINUTE, 5 * MINUTE] });
    const attempts: number[] = [];
    queue.handle('flaky', async (job) => {
      attempts.push(job.attempt);
      throw new Error(`boom ${job.attempt}`);
    });
    const { id } = await queue.enqueue('flaky', {});
    await queue.runDue();
    expect(await queue.get(id)).toMatchObject({
      state: 'pending',
      runAt: clock.now() + MINUTE,
      lastError: 'boom 1',
    });
    clock.advance(MINUTE - 1);
    expect(await queue.runDue()).toBe(0);
    clock.advance(1);
    expect(await queue.runDue()).toBe(1);
    clock.advance(5 * MINUTE);
    expect(await queue.runDue()).toBe(1);
    clock.advance(60 * MINUTE);
    expect(await queue.runDue()).toBe(0);
    expect(attempts).toEqual([1, 2, 3]);
    expect(await queue.get(id)).toMatchObject({
      state: 'failed',
      attempts: 3,
      lastError: 'boom 3',
    });
    expect(await queue.stats('flaky')).toEqual({
      pending: 0,
      failed: 1,
      oldestPendingAgeMs: null,
    });
  });

  it('lets the handler choose the next attempt or a permanent failure', async () => {
    const queue = open();
    queue.handle('chooser', async (job) =>
      job.attempt === 1
        ? { outcome: 'retry', at: clock.now() + 42_000, error: 'not yet' }
        : { outcome: 'failed', error: 'gave up' },
    );
    const { id } = await queue.enqueue('chooser', {});
    await queue.runDue();
    expect(await queue.get(id)).toMatchObject({
      state: 'pending',
      runAt: clock.now() + 42_000,
      lastError: 'not yet',
    });
    clock.advance(42_000);
    await queue.runDue();
    expect(await queue.get(id)).toMatchObject({ state: 'failed', lastError: 'gave up' });
  });

  it('reports the pending count and the age of the oldest pending job', async () => {
    const queue = open();
    expect(await queue.stats()).toEqual({ pending: 0, failed: 0, oldestPendingAgeMs: null });
    await queue.enqueue('a', {});
    clock.advance(30_000);
    await queue.enqueue('b', {}, { runAt: clock.now() + MINUTE });
    clock.advance(10_000);
    expect(await queue.stats()).toEqual({ pending: 2, failed: 0, oldestPendingAgeMs: 40_000 });
    expect(await queue.stats('b')).toEqual({ pending: 1, failed: 0, oldestPendingAgeMs: 10_000 });
  });

  it('claims only the job names it has handlers for', async () => {
    const queue = open();
    queue.handle('mine', async () => undefined);
    const other = await queue.enqueue('theirs', {});
    await queue.enqueue('mine', {});
    expect(await queue.runDue()).toBe(1);
    expect(await queue.get(other.id)).toMatchObject({ state: 'pending', attempts: 0 });
  });

  it('hands a job whose worker died to another worker once the lease ran out', async () => {
    const file = join(root, 'ledger.db');
    const dying = open({ leaseMs: MINUTE }, file);
    let release!: () => void;
    const hung = new Promise<void>((resolve) => (release = resolve));
    dying.handle('work', () => hung);
    const { id } = await dying.enqueue('work', { n: 1 });
    // The first worker claims the job and never finishes it, as if its process was killed.
    const crashed = dying.runDue();

    const survivor = open({ leaseMs: MINUTE }, file);
    const runs: Job[] = [];
    survivor.handle('work', async (job) => void runs.push(job));
    expect(await survivor.runDue()).toBe(0);
    clock.advance(MINUTE);
    expect(await survivor.runDue()).toBe(1);
    expect(runs.map((j) => [j.id, j.attempt])).toEqual([[id, 2]]);
    expect(await survivor.get(id)).toMatchObject({ state: 'done', attempts: 2 });

    // The stale worker finishing late changes nothing: it no longer holds the lease.
    release();
    await crashed;
    expect(await survivor.get(id)).toMatchObject({ state: 'done', attempts: 2 });
  });

  it('runs every job exactly once with two workers polling one file', async () => {
    const file = join(root, 'ledger.db');
    const a = open({ pollIntervalMs: 5, concurrency: 3 }, file);
    const b = open({ pollIntervalMs: 5, concurrency: 3 }, file);
    const ran: string[] = [];
    const handler = async (job: Job) => {
      ran.push(job.id);
      await new Promise((resolve) => setTimeout(resolve, 1));
    };
    a.handle('n', handler);
    b.handle('n', handler);
    const ids = [];
    for (let i = 0; i < 60; i++) ids.push((await (i % 2 ? a : b).enqueue('n', { i })).id);
    a.start();
    b.start();
    const deadline = Date.now() + 10_000;
    while ((await a.stats()).pending > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await Promise.all([a.stop(), b.stop()]);
    expect([...ran].sort()).toEqual([...ids].sort());
  });

  it('stop() waits for the jobs that are running', async () => {
    const queue = open({ pollIntervalMs: 5 });
    let finished = false;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    queue.handle('slow', async () => {
      started();
      await new Promise((resolve) => setTimeout(resolve, 50));
      finished = true;
    });
    const { id } = await queue.enqueue('slow', {});
    queue.start();
    await running;
    await queue.stop();
    expect(finished).toBe(true);
    expect(await queue.get(id)).toMatchObject({ state: 'done' });
  });

  it('purges a backlog larger than one batch, and only the finished jobs', async () => {
    const file = join(root, 'ledger.db');
    const queue = open({ retentionMs: MINUTE }, file);
    const pending = await queue.enqueue('later', {});
    // Written directly: running 2500 jobs through the queue would take far longer.
    const db = new Database(file);
    try {
      const insert = db.prepare<[string, number]>(
        `INSERT INTO jobs (name, payload_json, state, run_at, created_at, finished_at)
         VALUES ('old', '{}', ?, 0, 0, ?)`,
      );
      db.transaction(() => {
        for (let i = 0; i < 2500; i++) insert.run(i % 2 ? 'done' : 'failed', i);
      })();
    } finally {
      db.close();
    }
    clock.advance(MINUTE);
    expect(await queue.purgeFinished()).toBe(2500);
    expect(await queue.get(pending.id)).toMatchObject({ state: 'pending' });
    expect(await queue.stats()).toEqual({
      pending: 1,
      failed: 0,
      oldestPendingAgeMs: MINUTE,
    });
  });

  it('keeps pending jobs across a reopen of the file', async () => {
    const file = join(root, 'ledger.db');
    const first = open({}, file);
    const { id } = await first.enqueue('persist', { keep: true });
    await first.stop();
    await stores[0]!.close();
    const second = open({}, file);
    const seen: unknown[] = [];
    second.handle('persist', async (job) => void seen.push(job.payload));
    expect(await second.runDue()).toBe(1);
    expect(seen).toEqual([{ keep: true }]);
    expect(await second.get(id)).toMatchObject({ state: 'done' });
  });
});
