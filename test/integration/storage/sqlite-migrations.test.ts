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
   * Receipts in a ledger at an earlier schema version: appended by this build to a ledger of
   * its own, then copied row for row (the receipts table itself is unchanged since), so the
   * earlier version's triggers index them as that version did.
   */
  async function seedAt(db: Database.Database, from: number, to: number) {
    const source = join(dir, `source-${from}.db`);
    const current = new Database(source);
    migrate(current);
    await seed(current, from, to);
    current.close();
    db.prepare('ATTACH DATABASE ? AS source').run(source);
    db.exec('INSERT INTO receipts SELECT * FROM source.receipts');
    // The word index is contentless: indexed again from the rows, as the append indexes them.
    db.exec(`INSERT INTO receipts_fts (rowid, claim, entity, repository, agent)
      SELECT sequence, json_extract(claim_json, '$.claim'), entity, repository, agent
      FROM source.receipts`);
    db.exec('DETACH DATABASE source');
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
    expect(ftsSql(db)).not.toMatch(/prefix/);
    await seedAt(db, 0, 40);
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
    // Nor do they decide escalations: the operator grants the reviewer capability.
    expect(old.prepare('SELECT reviewer FROM api_keys').all()).toEqual([{ reviewer: 0 }]);
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

  it('builds the log tree of an existing ledger, equal to the tree of one that had it from the start', async () => {
    const fresh = new Database(join(dir, 'fresh.db'));
    migrate(fresh);
    await seed(fresh, 0, 37);
    // The same receipts in a ledger from before the tree: copied rows, the tree left out.
    const db = new Database(join(dir, 'old.db'));
    migrate(db, VERSION_AFTER.logTree - 1);
    db.prepare('ATTACH DATABASE ? AS source').run(join(dir, 'fresh.db'));
    db.exec('INSERT INTO receipts SELECT * FROM source.receipts');
    db.exec('DETACH DATABASE source');
    expect(
      db.prepare("SELECT name FROM sqlite_master WHERE name = 'tlog_hashes'").get(),
    ).toBeUndefined();

    migrate(db);
    const hashes = (d: Database.Database) =>
      d.prepare('SELECT level, idx, hash FROM tlog_hashes ORDER BY level, idx').all();
    expect(hashes(db)).toHaveLength(37 + 18 + 9 + 4 + 2 + 1);
    expect(hashes(db)).toEqual(hashes(fresh));
    // Appends after the upgrade extend the same tree: the same receipts, sealed at the same
    // heads, in both.
    for (let i = 37; i < 41; i++) {
      const signed = signClaim(claimOf(i), serverKey);
      for (const d of [db, fresh]) {
        const result = await new SqliteLedger(d, new SqliteLedgerQueries(d)).append(
          appendRequest(signed),
        );
        expect(result.status).toBe('appended');
      }
    }
    expect(hashes(db)).toHaveLength(41 + 20 + 10 + 5 + 2 + 1);
    expect(hashes(db)).toEqual(hashes(fresh));
    expect(() => db.exec('DELETE FROM tlog_hashes')).toThrow(/append-only/);
    expect(() => db.exec("UPDATE tlog_hashes SET hash = x'00'")).toThrow(/append-only/);
    db.close();
    fresh.close();
  });

  it('refuses to build the tree over a receipt that does not hash to its stored hash', () => {
    const db = new Database(':memory:');
    migrate(db, VERSION_AFTER.logTree - 1);
    return (async () => {
      await seedAt(db, 0, 3);
      db.exec('DROP TRIGGER IF EXISTS receipts_no_update');
      db.exec(
        'UPDATE receipts SET receipt_json = replace(receipt_json, \'"ALLOWED"\', \'"BLOCKED"\') WHERE sequence = 2',
      );
      expect(() => migrate(db)).toThrow(/receipt 2 does not hash to its stored receipt_hash/);
      expect(db.pragma('user_version', { simple: true })).toBe(VERSION_AFTER.logTree - 1);
      db.close();
    })();
  });

  it("adds an append-only cosignatures table beside a ledger's stored checkpoints", async () => {
    const db = new Database(':memory:');
    migrate(db, VERSION_AFTER.cosignatures - 1);
    db.prepare("INSERT INTO checkpoints VALUES (4, 'note\n', 'then')").run();
    migrate(db);
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    const insert = db.prepare('INSERT INTO cosignatures VALUES (?, ?, ?, ?, ?)');
    insert.run(4, 'w.example/a', '— w.example/a AAA=\n', 1_700_000_000, 'now');
    expect(db.prepare('SELECT size, witness FROM cosignatures').all()).toEqual([
      { size: 4, witness: 'w.example/a' },
    ]);
    // Only of a stored checkpoint; never changed nor deleted.
    db.pragma('foreign_keys = ON');
    expect(() => insert.run(5, 'w.example/a', 'x', 1, 'now')).toThrow(/FOREIGN KEY/);
    expect(() => db.prepare("UPDATE cosignatures SET line = 'y'").run()).toThrow(/append-only/);
    expect(() => db.prepare('DELETE FROM cosignatures').run()).toThrow(/append-only/);
    db.close();
  });

  it('adds an append-only dispositions table that holds one disposition per parent receipt', () => {
    const db = new Database(':memory:');
    migrate(db, VERSION_AFTER.dispositions - 1);
    migrate(db);
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    db.pragma('foreign_keys = ON');
    const receipt = db.prepare(
      `INSERT INTO receipts (sequence, receipt_id, claim_id, scope, inputs_hash, receipt_hash,
        issued_at, verdict, admissibility, entity, receipt_json, claim_json, evaluation_json)
       VALUES (?, ?, ?, 's', 'h', 'h', 'now', 'ESCALATED', 'REJECTED', 'e', '{}', '{}', '{}')`,
    );
    for (const n of [1, 2, 3]) receipt.run(n, `dr-${n}`, `c-${n}`);
    const insert = db.prepare('INSERT INTO dispositions VALUES (?, ?, ?, ?)');
    insert.run('dr-1', 2, 's', 'approve');
    expect(() => insert.run('dr-1', 3, 's', 'reject')).toThrow(/UNIQUE/);
    expect(() => insert.run('dr-9', 3, 's', 'reject')).toThrow(/FOREIGN KEY/);
    expect(() => insert.run('dr-2', 3, 's', 'maybe')).toThrow(/CHECK/);
    expect(() => db.prepare("UPDATE dispositions SET decision = 'reject'").run()).toThrow(
      /append-only/,
    );
    expect(() => db.prepare('DELETE FROM dispositions').run()).toThrow(/append-only/);
    db.close();
  });

  it('drops the outbox table, which nothing wrote, and leaves the receipts as they were', async () => {
    const db = new Database(':memory:');
    migrate(db, VERSION_AFTER.dropOutbox - 1);
    await seedAt(db, 0, 5);
    const named = (name: string) =>
      db.prepare('SELECT name FROM sqlite_master WHERE name = ?').get(name);
    expect(named('outbox')).toEqual({ name: 'outbox' });
    const before = receiptRows(db);
    expect(before).toHaveLength(5);

    migrate(db);
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(named('outbox')).toBeUndefined();
    expect(named('outbox_pending')).toBeUndefined();
    expect(receiptRows(db)).toEqual(before);
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
