import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import type { ClaimInput } from '../../../src/core/claim-schema.js';
import type { ReceiptFilter, SequencePage } from '../../../src/ports/ledger-queries.js';
import { migrate, SCHEMA_VERSION, VERSION_AFTER } from '../../../src/storage/sqlite/migrations.js';
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

  /**
   * Receipts i in [from, to) in a ledger of an earlier schema, which this build's ledger
   * cannot write: appended to a scratch ledger of this schema, then copied over with their
   * words, as an earlier build indexed them.
   */
  async function seedEarlier(db: Database.Database, from: number, to: number) {
    const scratch = join(dir, `scratch-${from}.db`);
    const current = new Database(scratch);
    migrate(current);
    await seed(current, from, to);
    current.close();
    db.exec(`ATTACH DATABASE '${scratch}' AS scratch`);
    db.exec(`INSERT INTO receipts SELECT * FROM scratch.receipts;
      INSERT INTO receipts_fts (rowid, claim, entity, repository, agent)
      SELECT sequence, json_extract(claim_json, '$.claim'), entity, repository, agent
      FROM scratch.receipts ORDER BY sequence;`);
    db.exec('DETACH DATABASE scratch');
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
    migrate(db, VERSION_AFTER.prefixIndexes - 1);
    expect(db.pragma('user_version', { simple: true })).toBe(VERSION_AFTER.prefixIndexes - 1);
    expect(ftsSql(db)).not.toMatch(/prefix/);
    await seedEarlier(db, 0, 40);
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

  it('fills the per-scope aggregates of an existing ledger exactly as appends fill them', async () => {
    // A ledger written by this build: its scoped aggregates are what appends record.
    const fresh = new Database(join(dir, 'fresh.db'));
    migrate(fresh);
    const ledger = new SqliteLedger(fresh, new SqliteLedgerQueries(fresh));
    const scopes = [
      ['acct-1', null],
      ['acct-2', null],
      [null, 'app:1:77'],
    ] as const;
    const kinds = ['allowed', 'blocked', 'escalated', 'non_deterministic'] as const;
    for (let i = 0; i < 36; i++) {
      const [apiKeyId, scope] = scopes[i % scopes.length]!;
      const claim = makeClaim({
        kind: kinds[i % kinds.length]!,
        agent: AGENTS[i % AGENTS.length]!,
        repository: REPOSITORIES[(i >> 1) % REPOSITORIES.length]!,
      });
      const signed = signClaim(claim, serverKey, {
        apiKeyId,
        ...(scope ? { scope } : {}),
        issuedAt: new Date(Date.parse('2026-01-10T08:00:00.000Z') + i * 5 * 3600_000).toISOString(),
      });
      expect((await ledger.append(appendRequest(signed))).status).toBe('appended');
    }
    // The same receipts in a ledger of the schema before, upgraded.
    const old = new Database(join(dir, 'old.db'));
    migrate(old, VERSION_AFTER.scopedReads - 1);
    old.exec(`ATTACH DATABASE '${join(dir, 'fresh.db')}' AS fresh`);
    old.exec('INSERT INTO receipts SELECT * FROM fresh.receipts');
    old.exec('DETACH DATABASE fresh');
    old
      .prepare(
        `INSERT INTO api_keys (key_id, account_id, email, key_digest, tier, locked_policy,
          created_at, updated_at, revoked_at) VALUES ('kid_1', 'acct-1', 'a@example.com', 'd', 'free',
          NULL, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', NULL)`,
      )
      .run();
    const receiptsBefore = receiptRows(old);
    migrate(old);
    expect(old.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(receiptRows(old)).toEqual(receiptsBefore);
    // Keys stored before read only their own account's receipts.
    expect(old.prepare('SELECT reader FROM api_keys').all()).toEqual([{ reader: 'own' }]);
    for (const [table, order] of [
      ['scope_totals', 'scope, verdict, admissibility'],
      ['scope_repository_stats', 'scope, repository'],
      ['scope_agent_stats', 'scope, agent'],
      ['scope_agent_models', 'scope, agent, model'],
      ['scope_daily_counts', 'scope, day, repository, verdict'],
    ]) {
      const rows = (db: Database.Database) =>
        db.prepare(`SELECT * FROM ${table} ORDER BY ${order}`).all();
      expect(rows(old).length).toBeGreaterThan(0);
      expect({ table, rows: rows(old) }).toEqual({ table, rows: rows(fresh) });
    }
    // And the reads agree, scope by scope.
    const [a, b] = [new SqliteLedgerQueries(old), new SqliteLedgerQueries(fresh)];
    for (const scope of ['key:acct-1', 'key:acct-2', 'app:1:77']) {
      expect(await a.totals(scope)).toEqual(await b.totals(scope));
      expect((await a.totals(scope)).total).toBe(12);
      expect(await a.agents({ limit: 10 }, scope)).toEqual(await b.agents({ limit: 10 }, scope));
      const range = { since: '2026-01-01', until: '2026-02-01', scope };
      expect(await a.timeline(range)).toEqual(await b.timeline(range));
    }
    old.close();
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
