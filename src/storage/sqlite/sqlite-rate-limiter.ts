import Database from 'better-sqlite3';
import type { Clock } from '../../ports/clock.js';
import type { LimitStatus, RateLimiter } from '../../ports/rate-limiter.js';
import { createOwnerOnly, enableWal } from './sqlite-store.js';

const HOUR_MS = 60 * 60 * 1000;

/**
 * The sliding-window log of SlidingWindowLimiter, kept in a SQLite file that every worker
 * process of one installation opens: a client's window is one window however many processes
 * serve it. Each count is an IMMEDIATE transaction, so two processes cannot both take the
 * last request of a budget.
 *
 * The file is separate from the ledger and written with `synchronous = OFF`: these counts
 * were process memory before, and losing the last ones in a power cut is harmless, while a
 * synced commit per request would cost a disk flush each.
 */
export class SqliteWindowLimiter implements RateLimiter {
  private readonly db: Database.Database;
  private readonly statements: {
    prune: Database.Statement<[string, number]>;
    window: Database.Statement<
      [string, number],
      { used: number; oldest: number | null; newest: number | null }
    >;
    insert: Database.Statement<[string, number]>;
    sweep: Database.Statement<[number]>;
  };
  private readonly countTx: (client: string, limit: number, now: number) => LimitStatus;
  private lastSweep = 0;

  constructor(
    file: string,
    private readonly clock: Clock,
    private readonly windowMs = HOUR_MS,
  ) {
    // Owner-only like the ledger: it names accounts and client addresses.
    if (file !== ':memory:') createOwnerOnly(file);
    this.db = new Database(file, { timeout: 5_000 });
    enableWal(this.db);
    this.db.pragma('synchronous = OFF');
    this.db.exec(`CREATE TABLE IF NOT EXISTS rate_hits (client TEXT NOT NULL, at INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS rate_hits_client_at ON rate_hits (client, at);
      CREATE INDEX IF NOT EXISTS rate_hits_at ON rate_hits (at);`);
    this.statements = {
      prune: this.db.prepare('DELETE FROM rate_hits WHERE client = ? AND at <= ?'),
      window: this.db.prepare(
        'SELECT count(*) AS used, min(at) AS oldest, max(at) AS newest FROM rate_hits WHERE client = ? AND at > ?',
      ),
      insert: this.db.prepare('INSERT INTO rate_hits (client, at) VALUES (?, ?)'),
      sweep: this.db.prepare('DELETE FROM rate_hits WHERE at <= ?'),
    };
    const count = this.db.transaction((client: string, limit: number, now: number) =>
      this.check(client, limit, now, true),
    );
    this.countTx = (client, limit, now) => count.immediate(client, limit, now);
  }

  consume(client: string, limit: number): LimitStatus {
    if (limit === Number.POSITIVE_INFINITY) return unlimited(limit);
    const now = this.clock.now();
    this.sweepIfDue(now);
    return this.countTx(client, limit, now);
  }

  peek(client: string, limit: number): LimitStatus {
    if (limit === Number.POSITIVE_INFINITY) return unlimited(limit);
    return this.check(client, limit, this.clock.now(), false);
  }

  close(): void {
    this.db.close();
  }

  private check(client: string, limit: number, now: number, count: boolean): LimitStatus {
    const cutoff = now - this.windowMs;
    if (count) this.statements.prune.run(client, cutoff);
    const window = this.statements.window.get(client, cutoff)!;
    let { used, newest } = window;
    if (count && used >= limit) {
      return {
        allowed: false,
        limit,
        remaining: 0,
        used,
        retryAfterSeconds: Math.max(1, Math.ceil((window.oldest! + this.windowMs - now) / 1000)),
        resetAt: newest! + this.windowMs,
      };
    }
    if (count) {
      this.statements.insert.run(client, now);
      used++;
      newest = now;
    }
    return {
      allowed: true,
      limit,
      remaining: Math.max(0, limit - used),
      used,
      resetAt: newest === null ? null : newest + this.windowMs,
    };
  }

  // Windows of clients that went quiet are dropped at most once a minute, by any process.
  private sweepIfDue(now: number): void {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    this.statements.sweep.run(now - this.windowMs);
  }
}

const unlimited = (limit: number): LimitStatus => ({
  allowed: true,
  limit,
  remaining: limit,
  used: 0,
  resetAt: null,
});
