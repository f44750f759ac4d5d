import Database from 'better-sqlite3';
import type { Clock } from '../../ports/clock.js';
import {
  HOUR_MS,
  allowedStatus,
  refusedStatus,
  unlimitedStatus,
  type LimitStatus,
  type RateLimiter,
} from '../../ports/rate-limiter.js';
import { createOwnerOnly, enableWal } from './sqlite-store.js';

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
  private readonly statements: ReturnType<typeof prepare>;
  private readonly countTx: (client: string, limit: number, now: number) => LimitStatus;
  private readonly sweepTx: (cutoff: number) => void;
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
    // Each accepted request is a row of rate_hits; rate_windows keeps each client's count and
    // newest request, so a check costs index lookups, not a count over a window of up to
    // 10,000 requests (a pilot key's).
    this.db.exec(`CREATE TABLE IF NOT EXISTS rate_hits (client TEXT NOT NULL, at INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS rate_hits_client_at ON rate_hits (client, at);
      CREATE TABLE IF NOT EXISTS rate_windows (
        client TEXT PRIMARY KEY, used INTEGER NOT NULL, newest INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS rate_windows_newest ON rate_windows (newest);`);
    this.statements = prepare(this.db);
    const count = this.db.transaction((client: string, limit: number, now: number) =>
      this.count(client, limit, now),
    );
    this.countTx = (client, limit, now) => count.immediate(client, limit, now);
    const sweep = this.db.transaction((cutoff: number) => {
      this.statements.sweepHits.run(cutoff);
      this.statements.sweepWindows.run(cutoff);
    });
    this.sweepTx = (cutoff) => sweep.immediate(cutoff);
  }

  consume(client: string, limit: number): LimitStatus {
    if (limit === Number.POSITIVE_INFINITY) return unlimitedStatus(limit);
    const now = this.clock.now();
    this.sweepIfDue(now);
    return this.countTx(client, limit, now);
  }

  peek(client: string, limit: number): LimitStatus {
    if (limit === Number.POSITIVE_INFINITY) return unlimitedStatus(limit);
    const now = this.clock.now();
    const cutoff = now - this.windowMs;
    const window = this.statements.window.get(client);
    // Requests that left the window but are not pruned yet (pruning happens on a count).
    const expired = window ? this.statements.expired.get(client, cutoff)!.n : 0;
    const used = window ? window.used - expired : 0;
    return allowedStatus(limit, used, used > 0 ? window!.newest + this.windowMs : null);
  }

  close(): void {
    this.db.close();
  }

  private count(client: string, limit: number, now: number): LimitStatus {
    const s = this.statements;
    const cutoff = now - this.windowMs;
    const removed = s.prune.run(client, cutoff).changes;
    const window = s.window.get(client);
    const used = window ? window.used - removed : 0;
    if (used >= limit) {
      if (removed > 0) s.setUsed.run(used, client);
      const oldest = s.oldest.get(client)!.at;
      return refusedStatus({ limit, used, oldest, newest: window!.newest }, now, this.windowMs);
    }
    s.insert.run(client, now);
    s.upsert.run(client, used + 1, now);
    return allowedStatus(limit, used + 1, now + this.windowMs);
  }

  // Clients whose newest request left the window are dropped at most once a minute, by any
  // process; an active client's old requests go on its next count.
  private sweepIfDue(now: number): void {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    this.sweepTx(now - this.windowMs);
  }
}

function prepare(db: Database.Database) {
  return {
    prune: db.prepare<[string, number]>('DELETE FROM rate_hits WHERE client = ? AND at <= ?'),
    expired: db.prepare<[string, number], { n: number }>(
      'SELECT count(*) AS n FROM rate_hits WHERE client = ? AND at <= ?',
    ),
    window: db.prepare<[string], { used: number; newest: number }>(
      'SELECT used, newest FROM rate_windows WHERE client = ?',
    ),
    oldest: db.prepare<[string], { at: number }>(
      'SELECT at FROM rate_hits WHERE client = ? ORDER BY at LIMIT 1',
    ),
    insert: db.prepare<[string, number]>('INSERT INTO rate_hits (client, at) VALUES (?, ?)'),
    upsert: db.prepare<[string, number, number]>(
      `INSERT INTO rate_windows (client, used, newest) VALUES (?, ?, ?)
       ON CONFLICT (client) DO UPDATE SET used = excluded.used, newest = excluded.newest`,
    ),
    setUsed: db.prepare<[number, string]>('UPDATE rate_windows SET used = ? WHERE client = ?'),
    sweepHits: db.prepare<[number]>(
      'DELETE FROM rate_hits WHERE client IN (SELECT client FROM rate_windows WHERE newest <= ?)',
    ),
    sweepWindows: db.prepare<[number]>('DELETE FROM rate_windows WHERE newest <= ?'),
  };
}
