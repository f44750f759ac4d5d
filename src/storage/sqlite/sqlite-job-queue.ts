import { randomUUID } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';
import type { Clock } from '../../ports/clock.js';
import type {
  EnqueueOptions,
  EnqueueResult,
  JobHandler,
  JobPayload,
  JobQueue,
  JobQueueOptions,
  JobRecord,
  JobState,
  JobStats,
  JsonValue,
} from '../../ports/job-queue.js';
import { prepareJobInsert, type NewJobRow } from './job-rows.js';
import { PURGE_BATCH, PurgeSchedule } from '../job-retention.js';
import {
  asStoredJobHandler,
  jobQueueSettings,
  recordedOutcome,
  runHandler,
  type JobQueueSettings,
} from '../job-runs.js';

interface JobRow {
  id: number;
  name: string;
  payload_json: string;
  dedupe_key: string | null;
  state: JobState;
  run_at: number;
  attempts: number;
  last_error: string | null;
  created_at: number;
  finished_at: number | null;
}

/**
 * The embedded job queue, in the ledger's SQLite file. Several processes may share the file:
 * a job is claimed in an IMMEDIATE transaction (the write lock is taken before the due job is
 * read, so two workers cannot claim the same one) by giving it a lease; when the lease runs
 * out before the job finished (its process died), any worker takes it over.
 */
export class SqliteJobQueue implements JobQueue {
  private readonly clock: Clock;
  private readonly options: JobQueueSettings;
  /** Identifies this worker's leases. */
  private readonly owner = randomUUID();
  private readonly handlers = new Map<string, JobHandler>();
  private readonly running = new Set<Promise<void>>();
  private readonly enqueueTx: (row: NewJobRow) => EnqueueResult;
  private readonly byId: Statement<[number], JobRow>;
  private readonly claimTx: (names: string[]) => JobRow | null;
  private readonly finishDone: Statement<[number, number, string]>;
  private readonly finishRetry: Statement<[number, string | null, number, string]>;
  private readonly finishFailed: Statement<[number, string | null, number, string]>;
  private readonly pendingStats: Statement<
    [{ name: string | null }],
    { n: number; oldest: number | null }
  >;
  private readonly failedCount: Statement<[{ name: string | null }], { n: number }>;
  private readonly purgeBatch: Statement<[number]>;
  private readonly purges: PurgeSchedule;
  private timer: NodeJS.Timeout | undefined;
  private started = false;

  constructor(
    private readonly db: Database,
    options: JobQueueOptions,
  ) {
    this.clock = options.clock;
    this.options = jobQueueSettings(options);
    const insert = prepareJobInsert(db);
    const byDedupeKey = db.prepare<[string], { id: number }>(
      'SELECT id FROM jobs WHERE dedupe_key = ?',
    );
    // Under one write lock: a purge in another process between the insert that found the key
    // taken and the read of its job would leave no job to answer with.
    const enqueue = db.transaction((row: NewJobRow): EnqueueResult => {
      const { changes, lastInsertRowid } = insert.run(row);
      if (changes === 1) return { id: String(lastInsertRowid), created: true };
      return { id: String(byDedupeKey.get(row.dedupe_key!)!.id), created: false };
    });
    this.enqueueTx = (row) => enqueue.immediate(row);
    this.byId = db.prepare('SELECT * FROM jobs WHERE id = ?');
    const dueWhere = `
      WHERE state = 'pending' AND run_at <= @now
        AND (lease_until IS NULL OR lease_until <= @now)
        AND name IN (SELECT value FROM json_each(@names))`;
    const due = db.prepare<[{ now: number; names: string }], JobRow>(
      `SELECT * FROM jobs ${dueWhere} ORDER BY run_at, id LIMIT 1`,
    );
    const anyDue = db.prepare<[{ now: number; names: string }], { one: number }>(
      `SELECT 1 AS one FROM jobs ${dueWhere} LIMIT 1`,
    );
    const lease = db.prepare<[string, number, number]>(
      'UPDATE jobs SET lease_owner = ?, lease_until = ?, attempts = attempts + 1 WHERE id = ?',
    );
    const claim = db.transaction((names: string[]) => {
      const now = this.clock.now();
      const row = due.get({ now, names: JSON.stringify(names) });
      if (!row) return null;
      lease.run(this.owner, now + this.options.leaseMs, row.id);
      return { ...row, attempts: row.attempts + 1 };
    });
    // An idle poll only reads: the write lock, which appends need too, is taken only when a
    // job is due (and the claim then reads again under it).
    this.claimTx = (names) =>
      anyDue.get({ now: this.clock.now(), names: JSON.stringify(names) })
        ? claim.immediate(names)
        : null;
    // Every finish is conditional on still holding the lease: a worker that overran its lease
    // must not overwrite what the worker that took the job over decided.
    this.finishDone = db.prepare(`
      UPDATE jobs SET state = 'done', finished_at = ?, last_error = NULL,
        lease_owner = NULL, lease_until = NULL
      WHERE id = ? AND lease_owner = ?`);
    this.finishRetry = db.prepare(`
      UPDATE jobs SET run_at = ?, last_error = ?, lease_owner = NULL, lease_until = NULL
      WHERE id = ? AND lease_owner = ? AND state = 'pending'`);
    this.finishFailed = db.prepare(`
      UPDATE jobs SET state = 'failed', finished_at = ?, last_error = ?,
        lease_owner = NULL, lease_until = NULL
      WHERE id = ? AND lease_owner = ?`);
    this.pendingStats = db.prepare(`
      SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM jobs
      WHERE state = 'pending' AND (@name IS NULL OR name = @name)`);
    this.failedCount = db.prepare(
      `SELECT COUNT(*) AS n FROM jobs WHERE state = 'failed' AND (@name IS NULL OR name = @name)`,
    );
    // finished_at < ? uses the partial index jobs_finished; the state test keeps a pending job
    // safe whatever its columns say.
    this.purgeBatch = db.prepare(`
      DELETE FROM jobs WHERE id IN (
        SELECT id FROM jobs WHERE finished_at < ? AND state <> 'pending' LIMIT ${PURGE_BATCH})`);
    // A busy or closing database: the next interval tries again.
    this.purges = new PurgeSchedule(
      this.clock,
      () => this.purgeFinished(),
      () => undefined,
    );
  }

  async enqueue<N extends string>(
    name: N,
    payload: JobPayload<N>,
    options: EnqueueOptions = {},
  ): Promise<EnqueueResult> {
    const now = this.clock.now();
    return this.enqueueTx({
      name,
      payload_json: JSON.stringify(payload),
      dedupe_key: options.dedupeKey ?? null,
      run_at: options.runAt ?? now,
      created_at: now,
    });
  }

  handle<N extends string>(name: N, handler: JobHandler<N>): void {
    if (this.handlers.has(name)) throw new TypeError(`a handler for "${name}" is registered`);
    this.handlers.set(name, asStoredJobHandler(handler));
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.started = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.allSettled([...this.running, this.purges.settled()]);
  }

  async runDue(limit = 1000): Promise<number> {
    let ran = 0;
    while (ran < limit) {
      const row = this.claim();
      if (!row) break;
      await this.run(row);
      ran++;
    }
    return ran;
  }

  async stats(name?: string): Promise<JobStats> {
    const pending = this.pendingStats.get({ name: name ?? null })!;
    return {
      pending: pending.n,
      failed: this.failedCount.get({ name: name ?? null })!.n,
      oldestPendingAgeMs:
        pending.oldest === null ? null : Math.max(0, this.clock.now() - pending.oldest),
    };
  }

  async get(id: string): Promise<JobRecord | null> {
    const row = /^\d+$/.test(id) ? this.byId.get(Number(id)) : undefined;
    if (!row) return null;
    return {
      id: String(row.id),
      name: row.name,
      payload: JSON.parse(row.payload_json) as JsonValue,
      state: row.state,
      attempts: row.attempts,
      runAt: row.run_at,
      createdAt: row.created_at,
      finishedAt: row.finished_at,
      lastError: row.last_error,
      dedupeKey: row.dedupe_key,
    };
  }

  async purgeFinished(): Promise<number> {
    const cutoff = this.clock.now() - this.options.retentionMs;
    let deleted = 0;
    while (this.db.open) {
      const { changes } = this.purgeBatch.run(cutoff);
      deleted += changes;
      if (changes < PURGE_BATCH) break;
      // The lock is free between statements; let this process's requests and jobs use it.
      await new Promise((resolve) => setImmediate(resolve));
    }
    return deleted;
  }

  private claim(): JobRow | null {
    if (this.handlers.size === 0 || !this.db.open) return null;
    return this.claimTx([...this.handlers.keys()]);
  }

  private schedule(delayMs: number): void {
    if (!this.started) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.poll(), delayMs);
  }

  /** Fills free slots with due jobs; polls again after a job finishes or after the interval. */
  private poll(): void {
    if (!this.started) return;
    if (this.db.open) this.purges.poke();
    try {
      while (this.running.size < this.options.concurrency) {
        const row = this.claim();
        if (!row) break;
        const run: Promise<void> = this.run(row)
          // A finish that could not be written (busy or closing database) leaves the lease to
          // expire, and the job runs again: at-least-once, never lost.
          .catch(() => undefined)
          .finally(() => {
            this.running.delete(run);
            this.schedule(0);
          });
        this.running.add(run);
      }
    } catch {
      // A busy or closing database: try again at the next interval.
    }
    this.schedule(this.options.pollIntervalMs);
  }

  private async run(row: JobRow): Promise<void> {
    const result = await runHandler(
      () =>
        this.handlers.get(row.name)!({
          id: String(row.id),
          name: row.name,
          payload: JSON.parse(row.payload_json) as JsonValue,
          attempt: row.attempts,
          runAt: row.run_at,
          createdAt: row.created_at,
        }),
      row.attempts,
      this.options.retryDelaysMs,
      () => this.clock.now(),
    );
    if (!this.db.open) return;
    const outcome = recordedOutcome(result, this.clock.now());
    switch (outcome.state) {
      case 'done':
        this.finishDone.run(outcome.finishedAt, row.id, this.owner);
        break;
      case 'pending':
        this.finishRetry.run(outcome.runAt, outcome.lastError, row.id, this.owner);
        break;
      case 'failed':
        this.finishFailed.run(outcome.finishedAt, outcome.lastError, row.id, this.owner);
        break;
    }
  }
}
