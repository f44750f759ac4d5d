import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  afterAll,
  afterEach,
  beforeAll,
  beforeEach,
  describe,
  expect,
  it,
  jest,
} from '@jest/globals';
import Database from 'better-sqlite3';
import { receiptHash } from '@svc/verify';
import { referenceHash } from '../../unit/core/reference.js';
import type { LedgerEntry } from '../../../src/ports/ledger-store.js';
import type { Store } from '../../../src/ports/store.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { appendRequest, makeClaim, signClaim } from '../../contract/ledger-fixtures.js';
import { runNode } from '../../fixtures/run-node.js';
import { transpileTree, type TranspiledTree } from '../../fixtures/transpile-tree.js';
import { newServerKey } from '../../support/harness.js';

const serverKey = newServerKey();
let dir: string;
let file: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-sqlite-'));
  file = join(dir, 'ledger.db');
});
afterEach(() => {
  jest.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

async function appendOne(store: Store, name?: string): Promise<LedgerEntry> {
  const claim = makeClaim(name ? { claimId: name } : {});
  const result = await store.ledger.append(appendRequest(signClaim(claim, serverKey)));
  expect(result.status).toBe('appended');
  return result.entry;
}

function expectGapFreeChain(entries: LedgerEntry[]): void {
  entries.forEach((entry, i) => {
    expect(entry.receipt.chain).toEqual({
      sequence: i + 1,
      previous_receipt_hash: i === 0 ? null : entries[i - 1]!.receipt.chain.receipt_hash,
      receipt_hash: receiptHash(entry.receipt),
    });
  });
}

describe('SQLite ledger below the application', () => {
  let store: Store;
  let raw: Database.Database;

  beforeEach(async () => {
    store = openSqliteStore(file);
    await appendOne(store);
    await appendOne(store);
    // Another connection to the same file, as an operator's sqlite3 shell would be.
    raw = new Database(file);
  });
  afterEach(async () => {
    raw.close();
    await store.close();
  });

  const attempts: [string, string][] = [
    ['UPDATE', "UPDATE receipts SET receipt_hash = 'sha256:forged' WHERE sequence = 1"],
    ['DELETE of one receipt', 'DELETE FROM receipts WHERE sequence = 2'],
    ['DELETE of all receipts', 'DELETE FROM receipts'],
    [
      'INSERT OR REPLACE over an existing sequence',
      `INSERT OR REPLACE INTO receipts SELECT sequence, 'dr-forged', 'claim-forged', scope, inputs_hash,
         'sha256:forged', issued_at, verdict, admissibility, entity, agent, repository,
         pull_request, api_key_id, receipt_json, claim_json, evaluation_json
       FROM receipts WHERE sequence = 1`,
    ],
    [
      'REPLACE over an existing claim_id of the same submitter',
      `REPLACE INTO receipts SELECT 99, 'dr-forged', claim_id, scope, inputs_hash, 'sha256:forged',
         issued_at, verdict, admissibility, entity, agent, repository, pull_request, api_key_id,
         receipt_json, claim_json, evaluation_json
       FROM receipts WHERE sequence = 2`,
    ],
  ];

  it.each(attempts)('refuses a raw %s: receipts are append-only', async (_name, sql) => {
    const before = await store.ledger.list(0, 10);
    expect(() => raw.prepare(sql).run()).toThrow('receipts are append-only');
    expect(await store.ledger.list(0, 10)).toEqual(before);
    expect(await store.ledger.head()).toEqual({
      sequence: 2,
      receipt_hash: before[1]!.receipt.chain.receipt_hash,
    });
  });

  it('keeps the file in WAL mode', () => {
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
  });
});

it('the store connection syncs fully (synchronous = FULL), waits for locks and keeps statement journals in memory', async () => {
  // The setting is per connection, so it is read on the adapter's own connection.
  const pragma = jest.spyOn(Database.prototype, 'pragma');
  const store = openSqliteStore(file);
  const connection = pragma.mock.contexts[0] as Database.Database;
  pragma.mockRestore();
  try {
    expect(connection.pragma('synchronous', { simple: true })).toBe(2);
    expect(connection.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(connection.pragma('busy_timeout', { simple: true })).toBeGreaterThanOrEqual(1000);
    // 2 = MEMORY: an append's savepoint journal is not a temporary file per receipt.
    expect(connection.pragma('temp_store', { simple: true })).toBe(2);
  } finally {
    await store.close();
  }
});

it('reopening keeps the chain: appends continue from the stored head', async () => {
  let store = openSqliteStore(file);
  await appendOne(store);
  await appendOne(store);
  await store.close();
  store = openSqliteStore(file);
  try {
    await appendOne(store);
    expectGapFreeChain(await store.ledger.list(0, 10));
  } finally {
    await store.close();
  }
});

it('two connections in one process append in turn without gaps', async () => {
  const a = openSqliteStore(file);
  const b = openSqliteStore(file);
  try {
    await Promise.all(Array.from({ length: 20 }, (_, i) => appendOne(i % 2 ? a : b, `claim-${i}`)));
    const entries = await b.ledger.list(0, 100);
    expect(entries).toHaveLength(20);
    expectGapFreeChain(entries);
  } finally {
    await a.close();
    await b.close();
  }
});

describe('appends from several processes', () => {
  const WORKERS = 3;
  const PER_WORKER = 40;
  const worker = fileURLToPath(new URL('../../fixtures/ledger-append-worker.mjs', import.meta.url));
  let tree: TranspiledTree;

  beforeAll(() => {
    tree = transpileTree([
      'src/storage/sqlite/sqlite-store.ts',
      'src/secrets/server-key.ts',
      'test/contract/ledger-fixtures.ts',
    ]);
  });
  afterAll(() => tree?.cleanup());

  it('processes that create and append to one new file at once get unique, gap-free sequences', async () => {
    const startAt = String(Date.now() + 750);
    const names = Array.from({ length: WORKERS }, (_, i) => `worker${i}`);
    const runs = await Promise.all(
      names.map((name) => runNode(worker, [tree.dir, file, name, String(PER_WORKER), startAt])),
    );
    for (const run of runs) expect(run).toMatchObject({ code: 0, stderr: '' });

    const store = openSqliteStore(file);
    try {
      const entries = await store.ledger.list(0, 1000);
      expect(entries).toHaveLength(WORKERS * PER_WORKER);
      expectGapFreeChain(entries);
      // receipt-core-v2: each process signed inside its append, so every signed position is
      // the one the receipt is stored at, and the hash covers that signed core.
      for (const { receipt } of entries) {
        expect(receipt.signed_fields.contract).toBe('receipt-core-v2');
        expect(receipt.position).toEqual({
          log: 'svc/test',
          sequence: receipt.chain.sequence,
          previous_receipt_hash: receipt.chain.previous_receipt_hash,
        });
        const fields = receipt.signed_fields.fields as (keyof typeof receipt)[];
        const core = Object.fromEntries(fields.map((f) => [f, receipt[f]]));
        expect(receipt.chain.receipt_hash).toBe(
          referenceHash({ core, attestations: receipt.attestations }),
        );
      }
      expect(new Set(entries.map((e) => e.receipt.claim_id))).toEqual(
        new Set(
          names.flatMap((name) => Array.from({ length: PER_WORKER }, (_, i) => `${name}-${i}`)),
        ),
      );
      expect(await store.ledger.head()).toEqual({
        sequence: WORKERS * PER_WORKER,
        receipt_hash: entries.at(-1)!.receipt.chain.receipt_hash,
      });
    } finally {
      await store.close();
    }
  });
});
