import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Store } from '../../ports/store.js';
import { migrate } from './migrations.js';
import { SqliteApiKeys } from './sqlite-api-keys.js';
import { SqliteLedger } from './sqlite-ledger.js';

/** Opens (creating if needed) the embedded store at `file`; ':memory:' for a throwaway one. */
export function openSqliteStore(file: string): Store {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  // FULL, not NORMAL: in WAL mode NORMAL skips the fsync at commit, so a power loss can undo
  // transactions that already committed, and with them receipts whose response was sent.
  // FULL syncs the WAL before a commit returns, so no acknowledged receipt is lost.
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  migrate(db);
  const ping = db.prepare('SELECT 1');
  return {
    kind: 'sqlite',
    ledger: new SqliteLedger(db),
    apiKeys: new SqliteApiKeys(db),
    async ping() {
      ping.get();
    },
    async close() {
      if (db.open) db.close();
    },
  };
}
