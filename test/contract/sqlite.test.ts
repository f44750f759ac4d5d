import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from '@jest/globals';
import Database from 'better-sqlite3';
import { migrate } from '../../src/storage/sqlite/migrations.js';
import { SqliteApiKeys } from '../../src/storage/sqlite/sqlite-api-keys.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { SqliteWebhooks } from '../../src/storage/sqlite/sqlite-webhooks.js';
import { describeAccountsContract } from './accounts.contract.js';
import { describeStoreContract } from './ledger-store.contract.js';
import { describeLogTreeContract } from './log-tree.contract.js';
import { describeSigningKeyContract } from './signing-key-store.contract.js';
import { describeSessionContract } from './sessions.contract.js';

// A file, not ':memory:', so WAL, fsync and the file's own locking are what is tested.
const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const freshFile = () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-contract-sqlite-'));
  dirs.push(dir);
  return join(dir, 'ledger.db');
};
const openFresh = async () => openSqliteStore(freshFile());

describeStoreContract('SQLite', openFresh);
describeLogTreeContract('SQLite', openFresh);
describeSigningKeyContract('SQLite', openFresh);
describeSessionContract('SQLite', openFresh);
describeAccountsContract(
  'SQLite',
  async () => {
    // The adapters on a connection of the test's own, so that the trigger which refuses the
    // receivers' writes is added on the very connection whose transaction it must abort.
    const db = new Database(freshFile());
    migrate(db);
    return {
      apiKeys: new SqliteApiKeys(db),
      webhooks: new SqliteWebhooks(db),
      failReceiverWrites: async () => {
        db.exec(`CREATE TRIGGER refuse_receiver_writes BEFORE UPDATE ON webhook_receivers
          BEGIN SELECT RAISE(ABORT, 'receivers refused'); END`);
      },
      close: async () => void db.close(),
    };
  },
  true,
);
