import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import { establishLogOrigin } from '../../../src/services/log-origin.js';
import { migrate, VERSION_AFTER } from '../../../src/storage/sqlite/migrations.js';
import { SqliteLedger } from '../../../src/storage/sqlite/sqlite-ledger.js';
import { SqliteLedgerQueries } from '../../../src/storage/sqlite/sqlite-ledger-queries.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { appendRequest, makeClaim, signClaim } from '../../contract/ledger-fixtures.js';
import { runNode } from '../../fixtures/run-node.js';
import { transpileTree, type TranspiledTree } from '../../fixtures/transpile-tree.js';
import { newServerKey } from '../../support/harness.js';
import { childEnvBase } from '../../support/child-env.js';

describe('the ledger keeps its origin', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-origin-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('fixes the first origin, whatever the key or base URL later derive', async () => {
    const file = join(dir, 'ledger.db');
    const first = openSqliteStore(file);
    expect(
      await establishLogOrigin(first.tree, { setting: undefined, candidate: 'svc/aaaa' }),
    ).toBe('svc/aaaa');
    await first.close();
    const second = openSqliteStore(file);
    // A new signing key or SVC_BASE_URL derives another candidate: the stored origin holds.
    expect(
      await establishLogOrigin(second.tree, {
        setting: undefined,
        candidate: 'new.example/ledger',
      }),
    ).toBe('svc/aaaa');
    expect(await establishLogOrigin(second.tree, { setting: 'svc/aaaa', candidate: 'x' })).toBe(
      'svc/aaaa',
    );
    await expect(
      establishLogOrigin(second.tree, { setting: 'other.example/ledger', candidate: 'x' }),
    ).rejects.toThrow(
      'SVC_LOG_ORIGIN is "other.example/ledger", but this ledger\'s origin is "svc/aaaa"',
    );
    await second.close();
  });

  it('adopts the origin an upgraded ledger’s receipts carry', async () => {
    const file = join(dir, 'ledger.db');
    const source = new Database(join(dir, 'source.db'));
    migrate(source);
    const ledger = new SqliteLedger(source, new SqliteLedgerQueries(source));
    const key = newServerKey();
    for (const contract of ['v1', 'v2', 'v2'] as const) {
      const signed = signClaim(makeClaim(), key, { contract, log: 'old.example/ledger' });
      await ledger.append(appendRequest(signed));
    }
    source.close();
    const old = new Database(file);
    migrate(old, VERSION_AFTER.logTree - 1);
    old.prepare('ATTACH DATABASE ? AS source').run(join(dir, 'source.db'));
    old.exec('INSERT INTO receipts SELECT * FROM source.receipts');
    old.exec('DETACH DATABASE source');
    old.close();

    const store = openSqliteStore(file);
    expect(
      await establishLogOrigin(store.tree, {
        setting: undefined,
        candidate: 'svc/0123456789abcdef',
      }),
    ).toBe('old.example/ledger');
    expect(await store.tree.size()).toBe(3);
    await store.close();
  });
});

describe('the server refuses an SVC_LOG_ORIGIN its ledger does not carry', () => {
  let tree: TranspiledTree;
  let dataDir: string;
  beforeAll(() => {
    tree = transpileTree(['src/server.ts']);
  });
  afterAll(() => tree?.cleanup());
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-origin-server-'));
  });
  afterEach(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('exits 1 naming both origins', async () => {
    const store = openSqliteStore(join(dataDir, 'ledger.db'));
    await establishLogOrigin(store.tree, { setting: undefined, candidate: 'first.example/ledger' });
    await store.close();
    const script = fileURLToPath(tree.url('src/server.ts'));
    const env = {
      ...childEnvBase(),
      SVC_DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      SVC_LOG_ORIGIN: 'second.example/ledger',
    };
    const run = await runNode(script, [], 20_000, env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'svc: cannot start: SVC_LOG_ORIGIN is "second.example/ledger", but this ledger\'s origin is "first.example/ledger"',
    );
  });
});
