import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import type { LedgerEntry } from '../../../src/ports/ledger-store.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { newServerKey } from '../../support/harness.js';
import { appendRequest, makeClaim, signClaim } from '../../contract/ledger-fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-configs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SQLite: each policy config stored once', () => {
  it('stores a config once however many receipts name it, and reads each receipt back whole', async () => {
    const file = join(dir, 'ledger.db');
    const store = openSqliteStore(file);
    const key = newServerKey();
    let appended: LedgerEntry[];
    try {
      // Four under the default config, two under a claim's own policyConfig (the blocked kind).
      const kinds = ['allowed', 'escalated', 'blocked', 'allowed', 'blocked', 'allowed'] as const;
      const results = await Promise.all(
        kinds.map((kind) =>
          store.ledger.append(appendRequest(signClaim(makeClaim({ kind }), key))),
        ),
      );
      appended = results.map((r) => {
        if (r.status !== 'appended') throw new Error(`not appended: ${r.status}`);
        return r.entry;
      });
      // A later group commit of a config already stored adds no row.
      const later = await store.ledger.append(appendRequest(signClaim(makeClaim(), key)));
      if (later.status !== 'appended') throw new Error('not appended');
      appended.push(later.entry);

      const raw = new Database(file, { readonly: true });
      try {
        const configs = raw
          .prepare<[], { config_ref: string; config_json: string }>('SELECT * FROM policy_configs')
          .all();
        const distinct = new Set(appended.map((e) => JSON.stringify(e.evaluation.config)));
        expect(distinct.size).toBe(2);
        expect(configs).toHaveLength(2);
        expect(new Set(configs.map((c) => c.config_json))).toEqual(distinct);
        for (const row of raw
          .prepare<[], { evaluation_json: string }>('SELECT evaluation_json FROM receipts')
          .all()) {
          const stored = JSON.parse(row.evaluation_json) as Record<string, unknown>;
          expect(stored).not.toHaveProperty('config');
          expect(configs.map((c) => c.config_ref)).toContain(stored['config_ref']);
        }
      } finally {
        raw.close();
      }

      // Every read path gives the entries as appended, config included.
      expect(await store.ledger.list(0, 100)).toEqual(appended);
      for (const entry of appended) {
        expect(await store.ledger.getByReceiptId(entry.receipt.receipt_id)).toEqual(entry);
      }
      const ids = appended.map((e) => e.receipt.receipt_id);
      expect(
        (await store.queries.getMany(ids)).sort(
          (a, b) => a.receipt.chain.sequence - b.receipt.chain.sequence,
        ),
      ).toEqual(appended);
    } finally {
      await store.close();
    }
    // And from another connection, with nothing cached.
    const reopened = openSqliteStore(file, { readonly: true });
    try {
      expect(await reopened.ledger.list(0, 100)).toEqual(appended);
    } finally {
      await reopened.close();
    }
  });

  it('keeps stored configs append-only', async () => {
    const file = join(dir, 'append-only.db');
    await openSqliteStore(file).close();
    const raw = new Database(file);
    try {
      raw.prepare("INSERT INTO policy_configs VALUES ('sha256:x', '{}')").run();
      expect(() => raw.prepare("UPDATE policy_configs SET config_json = '[]'").run()).toThrow(
        /append-only/,
      );
      expect(() => raw.prepare('DELETE FROM policy_configs').run()).toThrow(/append-only/);
    } finally {
      raw.close();
    }
  });
});
