import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { aggregate, find, updateOne } from 'mingo';
import type { Db } from 'mongodb';
import type { LedgerEntry } from '../../../src/ports/ledger-store.js';
import type { Store } from '../../../src/ports/store.js';
import {
  aggregateUpdates,
  type AggregateDocument,
  backfillScopedAggregates,
  SCOPED_AGGREGATES_MARKER,
} from '../../../src/storage/mongo/aggregates.js';
import { storedReceiptFields } from '../../../src/storage/mappers.js';
import { COLLECTIONS } from '../../../src/storage/mongo/documents.js';
import { MongoLedgerQueries } from '../../../src/storage/mongo/mongo-ledger-queries.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { appendRequest, makeClaim, signClaim } from '../../contract/ledger-fixtures.js';
import { newServerKey } from '../../support/harness.js';

type Doc = Record<string, unknown> & { _id: unknown };

/**
 * A stand-in for the collection methods the MongoDB read model and its aggregates use, with
 * MongoDB's query, update and aggregation semantics evaluated by mingo. It checks the
 * documents and expressions the code sends, not the server: the MongoDB contract suite and
 * the parity test cover that wherever MongoDB runs.
 */
function mingoDb(): Db & { docs(name: string): Doc[] } {
  const collections = new Map<string, Doc[]>();
  const docsOf = (name: string) => {
    let docs = collections.get(name);
    if (!docs) collections.set(name, (docs = []));
    return docs;
  };
  const cursor = (
    docs: Doc[],
    filter: Record<string, unknown>,
    options: { projection?: Record<string, unknown>; sort?: Record<string, 1 | -1> } = {},
  ) => {
    let sort = options.sort;
    let limit = 0;
    const self = {
      sort(by: Record<string, 1 | -1>) {
        sort = by;
        return self;
      },
      limit(n: number) {
        limit = n;
        return self;
      },
      async toArray() {
        let c = find(docs, filter, options.projection);
        if (sort) c = c.sort(sort);
        if (limit > 0) c = c.limit(limit);
        return structuredClone(c.all());
      },
    };
    return self;
  };
  const upsert = (
    docs: Doc[],
    filter: { _id: unknown },
    update: Record<string, Record<string, unknown>>,
  ) => {
    const { $setOnInsert, ...rest } = update;
    if (!find(docs, filter).all()[0]) docs.push({ _id: filter._id, ...$setOnInsert });
    updateOne(docs, filter, rest as Parameters<typeof updateOne>[2]);
  };
  return {
    docs: docsOf,
    collection(name: string) {
      const docs = docsOf(name);
      return {
        find: (filter: Record<string, unknown>, options?: { projection?: Doc }) =>
          cursor(docs, filter, options),
        async findOne(
          filter: Record<string, unknown>,
          options?: { projection?: Doc; sort?: Record<string, 1 | -1> },
        ) {
          return (await cursor(docs, filter, options).limit(1).toArray())[0] ?? null;
        },
        async insertOne(doc: Doc) {
          if (find(docs, { _id: doc._id }).all().length > 0)
            throw Object.assign(new Error('E11000 duplicate key'), { code: 11000 });
          docs.push(structuredClone(doc));
        },
        async updateOne(filter: { _id: unknown }, update: Record<string, Record<string, unknown>>) {
          upsert(docs, filter, update);
        },
        async bulkWrite(
          ops: {
            updateOne: {
              filter: { _id: unknown };
              update: Record<string, Record<string, unknown>>;
            };
          }[],
        ) {
          for (const op of ops) upsert(docs, op.updateOne.filter, op.updateOne.update);
        },
        async countDocuments(filter: Record<string, unknown> = {}) {
          return find(docs, filter).all().length;
        },
        aggregate: (pipeline: Record<string, unknown>[]) => ({
          toArray: async () => aggregate(docs, pipeline),
        }),
      };
    },
  } as unknown as Db & { docs(name: string): Doc[] };
}

const SCOPES = ['key:acct-1', 'key:acct-2', 'app:1:77'];
const KINDS = ['allowed', 'blocked', 'escalated', 'non_deterministic'] as const;

/** The receipt document the MongoDB ledger inserts, but its word-search helpers. */
const receiptDocument = (entry: LedgerEntry, scope: string) => ({
  _id: entry.receipt.chain.sequence,
  ...storedReceiptFields(entry, scope),
});

describe('MongoDB per-scope aggregates (through mingo)', () => {
  const serverKey = newServerKey();
  let sqlite: Store;
  /** Aggregates written as appends write them. */
  const appended = mingoDb();
  /** The same receipts stored before scoped aggregates existed, then backfilled. */
  const backfilled = mingoDb();

  beforeAll(async () => {
    sqlite = openSqliteStore(':memory:');
    for (let i = 0; i < 40; i++) {
      const scope = SCOPES[i % SCOPES.length]!;
      const claim = makeClaim({
        kind: KINDS[i % KINDS.length]!,
        agent: i % 5 === 0 ? null : `agent-${i % 3}`,
        repository: i % 7 === 0 ? null : `org/repo-${i % 4}`,
      });
      const signed = signClaim(claim, serverKey, {
        apiKeyId: scope.startsWith('key:') ? scope.slice(4) : null,
        scope,
        issuedAt: new Date(Date.parse('2026-03-01T06:00:00.000Z') + i * 4 * 3600_000).toISOString(),
      });
      const { entry } = await sqlite.ledger.append(appendRequest(signed));
      const receipts = [appended, backfilled].map((db) =>
        db.collection<ReturnType<typeof receiptDocument>>(COLLECTIONS.receipts),
      );
      for (const c of receipts) await c.insertOne(receiptDocument(entry, scope));
      for (const u of [...aggregateUpdates(entry, null), ...aggregateUpdates(entry, scope)])
        await appended
          .collection<AggregateDocument>(u.collection)
          .updateOne(u.filter, u.update, { upsert: true });
    }
  });
  afterAll(() => sqlite.close());

  const scopedCollections = [
    COLLECTIONS.scopeTotals,
    COLLECTIONS.scopeRepositories,
    COLLECTIONS.scopeAgents,
    COLLECTIONS.scopeDaily,
  ];
  const byId = (docs: Doc[]) =>
    [...docs].sort((a, b) => String(a._id).localeCompare(String(b._id)));

  it('the ledger-wide aggregates keep their documents’ ids and fields', () => {
    const [sample] = appended.docs(COLLECTIONS.totals);
    expect(sample!._id).toMatch(
      /^(ALLOWED|BLOCKED|ESCALATED)\|(ACCEPTED|NON_DETERMINISTIC|REJECTED)$/,
    );
    expect(Object.keys(sample!).sort()).toEqual(['_id', 'admissibility', 'n', 'verdict']);
    expect(
      appended
        .docs(COLLECTIONS.repositories)
        .map((d) => d._id)
        .sort(),
    ).toEqual(['org/repo-0', 'org/repo-1', 'org/repo-2', 'org/repo-3']);
  });

  it('each scope’s reads answer what SQLite answers', async () => {
    const mongo = new MongoLedgerQueries(appended);
    for (const scope of [...SCOPES, 'key:nobody']) {
      const reads: [string, (q: MongoLedgerQueries | Store['queries']) => Promise<unknown>][] = [
        ['totals', (q) => q.totals(scope)],
        ['repositories', (q) => q.repositories({ limit: 100 }, scope)],
        ['repositories after', (q) => q.repositories({ limit: 1, after: 'org/repo-1' }, scope)],
        ['agents', (q) => q.agents({ limit: 100 }, scope)],
        ['agents after', (q) => q.agents({ limit: 1, after: 'agent-0' }, scope)],
        ['timeline', (q) => q.timeline({ since: '2026-03-01', until: '2026-03-10', scope })],
        [
          'timeline of a repository',
          (q) =>
            q.timeline({
              since: '2026-03-01',
              until: '2026-03-10',
              repository: 'org/repo-2',
              scope,
            }),
        ],
        ['countSince', (q) => q.countSince('2026-03-04T00:00:00.000Z', scope)],
      ];
      for (const [name, read] of reads) {
        expect({ scope, name, answer: await read(mongo) }).toEqual({
          scope,
          name,
          answer: await read(sqlite.queries),
        });
      }
    }
    // Without a scope, the whole ledger, as before.
    expect(await mongo.totals()).toEqual(await sqlite.queries.totals());
    expect(await mongo.agents({ limit: 100 })).toEqual(await sqlite.queries.agents({ limit: 100 }));
  });

  it('the backfill of receipts stored before writes exactly what appends write, once', async () => {
    await backfillScopedAggregates(backfilled, 7);
    for (const name of scopedCollections) {
      expect(backfilled.docs(name).length).toBeGreaterThan(0);
      expect({ name, docs: byId(backfilled.docs(name)) }).toEqual({
        name,
        docs: byId(appended.docs(name)),
      });
    }
    expect(backfilled.docs(COLLECTIONS.migrations)).toEqual([
      { _id: SCOPED_AGGREGATES_MARKER, through: 40, done: true },
    ]);
    // Receipts are read, never written; the ledger-wide aggregates are left alone.
    expect(backfilled.docs(COLLECTIONS.receipts)).toEqual(appended.docs(COLLECTIONS.receipts));
    expect(backfilled.docs(COLLECTIONS.totals)).toEqual([]);
    // A second start finds the marker and counts nothing twice.
    await backfillScopedAggregates(backfilled, 7);
    for (const name of scopedCollections)
      expect(byId(backfilled.docs(name))).toEqual(byId(appended.docs(name)));
  });

  it('a new database is marked filled at once', async () => {
    const empty = mingoDb();
    await backfillScopedAggregates(empty);
    expect(empty.docs(COLLECTIONS.migrations)).toEqual([
      { _id: SCOPED_AGGREGATES_MARKER, through: 0, done: true },
    ]);
    for (const name of scopedCollections) expect(empty.docs(name)).toEqual([]);
  });
});
