import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import type { ClaimInput } from '../../../src/core/claim-schema.js';
import type { ReceiptFilter, SequencePage } from '../../../src/ports/ledger-queries.js';
import { migrate, SCHEMA_VERSION } from '../../../src/storage/sqlite/migrations.js';
import { filterToken } from '../../../src/storage/sqlite/word-index.js';
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
  [
    { q: 'acme', repository: 'acme/api', agent: 'deploy-bot' },
    { limit: 100, order: 'asc' },
  ],
  [
    { q: 'merge', repository: 'acme/web' },
    { limit: 100, order: 'desc', after: 20 },
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

  async function searches(db: Database.Database, which = SEARCHES) {
    const queries = new SqliteLedgerQueries(db);
    const pages = [];
    for (const [filter, page] of which) {
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

  /**
   * The ledger the previous build leaves: the receipts of `from`, and its word index as that
   * build's append wrote it.
   */
  function previousLedger(file: string, from: string): Database.Database {
    const db = new Database(file);
    migrate(db, SCHEMA_VERSION - 1);
    db.prepare('ATTACH ? AS current').run(from);
    db.exec('INSERT INTO receipts SELECT * FROM current.receipts ORDER BY sequence');
    db.exec('DETACH current');
    const insert = db.prepare(
      'INSERT INTO receipts_fts (rowid, claim, entity, repository, agent) VALUES (?, ?, ?, ?, ?)',
    );
    const rows = db
      .prepare<
        [],
        {
          sequence: number;
          claim_json: string;
          entity: string;
          repository: string | null;
          agent: string | null;
        }
      >('SELECT sequence, claim_json, entity, repository, agent FROM receipts ORDER BY sequence')
      .all();
    for (const row of rows) {
      const { claim } = JSON.parse(row.claim_json) as { claim: string };
      insert.run(row.sequence, claim, row.entity, row.repository, row.agent);
    }
    return db;
  }

  it('rebuilds the word index of an existing ledger; receipts unchanged, search answers as on a new ledger', async () => {
    const fresh = new Database(join(dir, 'fresh.db'));
    migrate(fresh);
    await seed(fresh, 0, 40);
    const expected = await searches(fresh);
    expect(expected.every((page) => page.length > 0)).toBe(true);

    const db = previousLedger(join(dir, 'old.db'), join(dir, 'fresh.db'));
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION - 1);
    expect(ftsSql(db)).not.toMatch(/prefix|filters/);
    const rowsBefore = receiptRows(db);
    expect(rowsBefore).toHaveLength(40);
    // Words without an agent or repository filter are answered by the old index too.
    expect(await searches(db, SEARCHES.slice(0, 5))).toEqual(expected.slice(0, 5));

    migrate(db);
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(ftsSql(db)).toMatch(/filters,.* prefix = '1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16'/s);
    expect(receiptRows(db)).toEqual(rowsBefore);
    expect(await searches(db)).toEqual(expected);

    // Appends after the upgrade are indexed as on the new ledger.
    await seed(db, 40, 48);
    await seed(fresh, 40, 48);
    expect(await searches(db)).toEqual(await searches(fresh));
    // Running it again is a no-op.
    migrate(db);
    expect(await searches(db)).toEqual(await searches(fresh));
    db.close();
    fresh.close();
  });

  it('matches words only in the word columns, never a filter token', async () => {
    const db = new Database(join(dir, 'ledger.db'));
    migrate(db);
    await seed(db, 0, 4);
    const queries = new SqliteLedgerQueries(db);
    const token = filterToken('agent', 'coder-bot');
    expect(await queries.searchJson({ agent: 'coder-bot' }, { limit: 10, order: 'asc' })).toEqual([
      expect.objectContaining({ sequence: 1 }),
      expect.objectContaining({ sequence: 4 }),
    ]);
    // A filter token, or its beginning, is no word; 'a' and 'r' begin words of the text.
    const expected: [string, number[]][] = [
      [token, []],
      [token.slice(0, 5), []],
      [filterToken('repository', 'acme/web'), []],
      ['a', [1, 2, 3, 4]],
      ['r', [2]],
    ];
    for (const [q, sequences] of expected) {
      const found = await queries.searchJson({ q }, { limit: 10, order: 'asc' });
      expect({ q, found: found.map((row) => row.sequence) }).toEqual({ q, found: sequences });
    }
    db.close();
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
