import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import type { ClaimInput } from '../../../src/core/claim-schema.js';
import type { ReceiptFilter, SequencePage } from '../../../src/ports/ledger-queries.js';
import { migrate, SCHEMA_VERSION } from '../../../src/storage/sqlite/migrations.js';
import { SqliteLedger } from '../../../src/storage/sqlite/sqlite-ledger.js';
import { SqliteLedgerQueries } from '../../../src/storage/sqlite/sqlite-ledger-queries.js';
import { appendRequest, makeClaim, signClaim } from '../../contract/ledger-fixtures.js';
import { newServerKey } from '../../support/harness.js';

const serverKey = newServerKey();

const TEXTS = [
  'Merge PR #42 after CI passed',
  'Deploy the Café release über alles',
  'Internationalization of the checkout flow',
  'Hotfix for the schema migration',
];
const AGENTS = ['coder-bot', 'deploy-bot', null];
const REPOSITORIES = ['acme/web', 'acme/api', 'acme/internationalization-service', null];

function claimOf(i: number): ClaimInput {
  const claim = makeClaim({
    kind: i % 3 === 0 ? 'blocked' : 'allowed',
    agent: AGENTS[i % AGENTS.length]!,
    repository: REPOSITORIES[i % REPOSITORIES.length]!,
  });
  return { ...claim, claim: TEXTS[i % TEXTS.length]! };
}

const SEARCHES: [ReceiptFilter, SequencePage][] = [
  [{ q: 'merge' }, { limit: 100, order: 'desc' }],
  [{ q: 'm' }, { limit: 5, order: 'asc' }],
  [{ q: 'cafe UBER' }, { limit: 100, order: 'desc' }],
  // Longer than any prefix index: still answered.
  [{ q: 'internationalizatio' }, { limit: 100, order: 'desc' }],
  [{ q: 'internationalization-serv' }, { limit: 100, order: 'asc', after: 3 }],
  [
    { q: 'hotfix schema', agent: 'coder-bot' },
    { limit: 2, order: 'desc' },
  ],
  [{ q: 'deploy-b' }, { limit: 100, order: 'desc', after: 30 }],
  [
    { q: 'acme', verdict: 'BLOCKED' },
    { limit: 3, order: 'asc', after: 4 },
  ],
];

describe('SQLite schema upgrade', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-migrate-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  async function seed(db: Database.Database, from: number, to: number) {
    const ledger = new SqliteLedger(db, new SqliteLedgerQueries(db));
    for (let i = from; i < to; i++) {
      const result = await ledger.append(appendRequest(signClaim(claimOf(i), serverKey)));
      expect(result.status).toBe('appended');
    }
  }

  async function searches(db: Database.Database) {
    const queries = new SqliteLedgerQueries(db);
    const pages = [];
    for (const [filter, page] of SEARCHES) {
      pages.push((await queries.searchJson(filter, page)).map((row) => row.sequence));
    }
    return pages;
  }

  const ftsSql = (db: Database.Database) =>
    db
      .prepare<[], { sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'receipts_fts'")
      .get()!.sql;
  const receiptRows = (db: Database.Database) =>
    db.prepare('SELECT * FROM receipts ORDER BY sequence').all();

  it('rebuilds the word index of an existing ledger with prefix indexes; receipts and search results unchanged', async () => {
    const db = new Database(join(dir, 'old.db'));
    migrate(db, SCHEMA_VERSION - 1);
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION - 1);
    expect(ftsSql(db)).not.toMatch(/prefix/);
    await seed(db, 0, 40);
    const rowsBefore = receiptRows(db);
    const before = await searches(db);
    expect(before.every((page) => page.length > 0)).toBe(true);

    migrate(db);
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(ftsSql(db)).toMatch(/prefix = '1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16'/);
    expect(receiptRows(db)).toEqual(rowsBefore);
    expect(await searches(db)).toEqual(before);

    // A ledger created at this version answers the same.
    const fresh = new Database(join(dir, 'fresh.db'));
    migrate(fresh);
    await seed(fresh, 0, 40);
    expect(await searches(fresh)).toEqual(before);

    // Appends after the upgrade are indexed as before it.
    await seed(db, 40, 48);
    await seed(fresh, 40, 48);
    expect(await searches(db)).toEqual(await searches(fresh));
    // Running it again is a no-op.
    migrate(db);
    expect(await searches(db)).toEqual(await searches(fresh));
    db.close();
    fresh.close();
  });

  it('upgrades an empty ledger', () => {
    const db = new Database(':memory:');
    migrate(db, SCHEMA_VERSION - 1);
    migrate(db);
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(db.prepare('SELECT count(*) AS n FROM receipts_fts').get()).toEqual({ n: 0 });
    db.close();
  });
});
