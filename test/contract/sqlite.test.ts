import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from '@jest/globals';
import Database from 'better-sqlite3';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { describeAccountsContract } from './accounts.contract.js';
import { describeStoreContract } from './ledger-store.contract.js';
import { describeLogTreeContract } from './log-tree.contract.js';
import { describeSigningKeyContract } from './signing-key-store.contract.js';

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
describeAccountsContract(
  'SQLite',
  async () => {
    const file = freshFile();
    const store = openSqliteStore(file);
    return {
      apiKeys: store.apiKeys,
      webhooks: store.webhooks,
      // Another connection adds a trigger that aborts every change of a receiver.
      failReceiverWrites: async () => {
        const db = new Database(file);
        try {
          db.exec(`CREATE TRIGGER refuse_receiver_writes BEFORE UPDATE ON webhook_receivers
            BEGIN SELECT RAISE(ABORT, 'receivers refused'); END`);
        } finally {
          db.close();
        }
      },
      close: () => store.close(),
    };
  },
  true,
);
