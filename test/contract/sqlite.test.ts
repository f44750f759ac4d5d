import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from '@jest/globals';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { describeStoreContract } from './ledger-store.contract.js';
import { describeLogTreeContract } from './log-tree.contract.js';
import { describeSigningKeyContract } from './signing-key-store.contract.js';

// A file, not ':memory:', so WAL, fsync and the file's own locking are what is tested.
const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const openFresh = async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-contract-sqlite-'));
  dirs.push(dir);
  return openSqliteStore(join(dir, 'ledger.db'));
};

describeStoreContract('SQLite', openFresh);
describeLogTreeContract('SQLite', openFresh);
describeSigningKeyContract('SQLite', openFresh);
