import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteJobQueue } from './sqlite-job-queue.js';
import type { Store } from '../../ports/store.js';
import { migrate } from './migrations.js';
import { SqliteApiKeys } from './sqlite-api-keys.js';
import { SqliteLedger } from './sqlite-ledger.js';
import { SqliteLedgerQueries } from './sqlite-ledger-queries.js';
import { SqlitePolicies } from './sqlite-policies.js';
import { SqliteWebhooks } from './sqlite-webhooks.js';

const BUSY_TIMEOUT_MS = 5000;

/**
 * Switching a new file to WAL needs a lock upgrade for which SQLite does not wait (it answers
 * SQLITE_BUSY at once rather than risk a deadlock), so processes that create the same file
 * at the same moment would fail to start. Retry for as long as any other lock is waited for.
 */
export function enableWal(db: Database.Database): void {
  // A wait, not domain time: the monotonic clock, which no clock change moves.
  const deadline = performance.now() + BUSY_TIMEOUT_MS;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || performance.now() > deadline)
        throw error;
      Atomics.wait(pause, 0, 0, 10);
    }
  }
}

// SQLite gives its -wal and -shm files the mode of the database file, so owner-only here
// keeps every file of the ledger owner-only.
export function createOwnerOnly(file: string): void {
  if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    if (existsSync(path)) chmodSync(path, 0o600);
  }
}

/**
 * Opens (creating if needed) the embedded store at `file`; ':memory:' for a throwaway one.
 * `readonly` opens an existing file without writing to it (inspection, tests).
 * `onGroupCommit` is told the number of appends of each group commit (tests, metrics).
 * `webhookScope` 'owner' sends each receiver only its own account's receipts (for ledgers
 * whose reads are not public); default 'all'.
 */
export function openSqliteStore(
  file: string,
  options: {
    readonly?: boolean;
    webhookScope?: 'all' | 'owner';
    onGroupCommit?: (appends: number) => void;
    /** How long an approval of a tool call lasts (SVC_AGENT_APPROVAL_TTL); default 1 h. */
    approvalTtlMs?: number;
  } = {},
): Store {
  const readonly = options.readonly === true;
  if (file !== ':memory:' && !readonly) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    createOwnerOnly(file);
  }
  const db = new Database(file, {
    timeout: BUSY_TIMEOUT_MS,
    readonly,
    fileMustExist: readonly,
  });
  if (!readonly) enableWal(db);
  // FULL, not NORMAL: in WAL mode NORMAL skips the fsync at commit, so a power loss can undo
  // transactions that already committed, and with them receipts whose response was sent.
  // FULL syncs the WAL before a commit returns, so no acknowledged receipt is lost.
  db.pragma('synchronous = FULL');
  // An append runs in a savepoint of its group commit, and SQLite keeps the pages a savepoint
  // changes in a statement journal, spilled past 64 KiB to a temporary file: one opened,
  // written page by page (about 40 writes a receipt) and closed for every receipt. In memory
  // it is bounded by one group commit's pages and costs no system call.
  db.pragma('temp_store = MEMORY');
  db.pragma('foreign_keys = ON');
  if (!readonly) migrate(db);
  const ping = db.prepare('SELECT 1');
  // One row, outside the ledger, holding the time of the last deep health check. It is
  // committed, not rolled back: only a commit writes to the WAL (and syncs it), so only a
  // commit finds out that the disk refuses writes or is full.
  const probe = db.prepare(
    'INSERT INTO health_probe (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at',
  );
  const queries = new SqliteLedgerQueries(db);
  const ledger = new SqliteLedger(
    db,
    queries,
    options.webhookScope,
    options.onGroupCommit,
    options.approvalTtlMs,
  );
  return {
    kind: 'sqlite',
    ledger,
    tree: ledger.tree,
    signingKeys: ledger.signingKeys,
    sessions: ledger.sessions,
    queries,
    policies: new SqlitePolicies(db),
    apiKeys: new SqliteApiKeys(db),
    webhooks: new SqliteWebhooks(db),
    openJobQueue: (options) => new SqliteJobQueue(db, options),
    async ping() {
      ping.get();
    },
    async probeWrite(at) {
      probe.run(at);
    },
    async close() {
      if (db.open) db.close();
    },
  };
}
