import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MongoClient } from 'mongodb';
import type { ClaimInput } from '../../src/core/claim-schema.js';
import type { LedgerQueries } from '../../src/ports/ledger-queries.js';
import type { LedgerStore } from '../../src/ports/ledger-store.js';
import type { Store } from '../../src/ports/store.js';
import { openMongoStore } from '../../src/storage/mongo/mongo-store.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { newServerKey } from '../support/harness.js';
import { appendRequest, makeClaim, signClaim, type ClaimKind } from './ledger-fixtures.js';

// Every read of the ledger answers on MongoDB exactly what it answers on SQLite: the same
// receipts are appended to both, then each query is asked of both.
// jest.config.js moves MONGODB_URI here, out of the environment of the processes tests start.
const uri = process.env.SVC_TEST_MONGODB_URI;

const TEXTS = [
  'Merge PR #42 after CI passed',
  'Deploy the café release to production',
  'Rotate credentials for the merge queue',
  'Merged hotfix, CI green',
];
const AGENTS = ['bot-a', 'bot-b', null, 'Café-bot'];
const REPOSITORIES = ['acme/one', 'acme/two', null];
const KINDS: ClaimKind[] = ['allowed', 'blocked', 'escalated', 'non_deterministic', 'allowed'];

function fixtureClaim(i: number): ClaimInput {
  const claim = makeClaim({
    kind: KINDS[i % KINDS.length]!,
    agent: AGENTS[i % AGENTS.length]!,
    repository: REPOSITORIES[i % REPOSITORIES.length]!,
  });
  return {
    ...claim,
    claim: TEXTS[i % TEXTS.length]!,
    action: {
      ...claim.action!,
      pull_request: i % 2 === 0 ? 42 : 7,
      agent_model: i % 3 === 0 ? 'model-x' : 'model-y',
    },
  };
}

const day = (d: number, h: number) => new Date(Date.UTC(2026, 2, 1 + d, h, 0, 0)).toISOString();

(uri ? describe : describe.skip)(
  uri
    ? 'LedgerQueries on MongoDB answer as on SQLite'
    : 'LedgerQueries on MongoDB answer as on SQLite (skipped: MONGODB_URI is not set)',
  () => {
    const serverKey = newServerKey();
    const database = `svc_parity_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
    let dir: string;
    let sqlite: Store;
    let mongo: Store;
    const ids: string[] = [];

    beforeAll(async () => {
      if (!uri) return;
      dir = mkdtempSync(join(tmpdir(), 'svc-parity-'));
      sqlite = openSqliteStore(join(dir, 'ledger.db'));
      mongo = await openMongoStore(uri, { database });
      for (let i = 0; i < 30; i++) {
        const signed = signClaim(fixtureClaim(i), serverKey, {
          issuedAt: day(i % 4, i % 24),
          apiKeyId: i % 5 === 0 ? 'key-1' : null,
        });
        // The same signed claim at the same head: byte-identical receipts in both stores.
        const a = await sqlite.ledger.append(appendRequest(signed));
        const b = await mongo.ledger.append(appendRequest(signed));
        expect(b).toEqual(a);
        ids.push(a.entry.receipt.receipt_id);
      }
    }, 120_000);

    afterAll(async () => {
      if (!uri) return;
      await sqlite?.close();
      await mongo?.close();
      const admin = await new MongoClient(uri).connect();
      await admin.db(database).dropDatabase();
      await admin.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const queryCases: [string, (q: LedgerQueries) => Promise<unknown>][] = [
      ['search, everything, ascending', (q) => q.search({}, { limit: 100, order: 'asc' })],
      ['search, a page after a cursor', (q) => q.search({}, { limit: 5, order: 'asc', after: 7 })],
      [
        'search, descending after a cursor',
        (q) => q.search({}, { limit: 4, order: 'desc', after: 20 }),
      ],
      ...[
        'merg',
        'MERGE ci',
        'cafe',
        'Café',
        'acme/on',
        'bot',
        'deploy production',
        'zzz',
        ' -- ',
      ].map((text): [string, (q: LedgerQueries) => Promise<unknown>] => [
        `search q=${JSON.stringify(text)}`,
        (q) => q.search({ q: text }, { limit: 100, order: 'desc' }),
      ]),
      [
        'search as stored JSON text',
        (q) => q.searchJson({ q: 'merg' }, { limit: 10, order: 'desc' }),
      ],
      ['search by agent', (q) => q.search({ agent: 'bot-a' }, { limit: 100, order: 'asc' })],
      [
        'search by repository',
        (q) => q.search({ repository: 'acme/two' }, { limit: 100, order: 'asc' }),
      ],
      ['search by verdict', (q) => q.search({ verdict: 'BLOCKED' }, { limit: 100, order: 'asc' })],
      [
        'search by status',
        (q) => q.search({ status: 'NON_DETERMINISTIC' }, { limit: 100, order: 'asc' }),
      ],
      [
        'search by time range',
        (q) => q.search({ since: day(1, 0), until: day(3, 0) }, { limit: 100, order: 'desc' }),
      ],
      [
        'search combining q, filters, range and a cursor',
        (q) =>
          q.search(
            { q: 'merg', repository: 'acme/one', verdict: 'ALLOWED', since: day(0, 0) },
            { limit: 3, order: 'desc', after: 25 },
          ),
      ],
      ['getMany', (q) => q.getMany([ids[9]!, ids[2]!, 'dr-unknown', ids[17]!])],
      ['getMany of nothing', (q) => q.getMany([])],
      ['pull request history', (q) => q.pullRequestHistory('acme/one', '42', 100)],
      ['pull request history, limited', (q) => q.pullRequestHistory('acme/two', '7', 2)],
      [
        "a submitter's receipts of a pull request",
        (q) => q.pullRequestReceiptsOf('key:key-1', 'acme/one', '42', 100),
      ],
      [
        "a submitter's receipts of a pull request, limited",
        (q) => q.pullRequestReceiptsOf('test', 'acme/one', '42', 2),
      ],
      ['timeline', (q) => q.timeline({ since: '2026-03-01', until: '2026-03-05' })],
      [
        'timeline of a repository',
        (q) => q.timeline({ repository: 'acme/one', since: '2026-03-02', until: '2026-03-04' }),
      ],
      ['repositories', (q) => q.repositories({ limit: 100 })],
      ['repositories after a name', (q) => q.repositories({ limit: 1, after: 'acme/one' })],
      ['agents', (q) => q.agents({ limit: 100 })],
      ['agents after a name', (q) => q.agents({ limit: 1, after: 'bot-a' })],
      ['totals', (q) => q.totals()],
      ['countSince', (q) => q.countSince(day(2, 0))],
      // Private reads: the same reads within one submitter scope.
      ...['key:key-1', 'test', 'key:nobody'].flatMap(
        (scope): [string, (q: LedgerQueries) => Promise<unknown>][] => [
          [`${scope}: search`, (q) => q.search({ scope }, { limit: 100, order: 'asc' })],
          [
            `${scope}: search with words and a filter`,
            (q) => q.search({ scope, q: 'merg', verdict: 'ALLOWED' }, { limit: 3, order: 'desc' }),
          ],
          [`${scope}: getMany`, (q) => q.getMany([ids[0]!, ids[1]!, ids[5]!, ids[10]!], scope)],
          [
            `${scope}: pull request history`,
            (q) => q.pullRequestHistory('acme/one', '42', 100, scope),
          ],
          [
            `${scope}: timeline`,
            (q) => q.timeline({ since: '2026-03-01', until: '2026-03-05', scope }),
          ],
          [
            `${scope}: timeline of a repository`,
            (q) =>
              q.timeline({
                repository: 'acme/one',
                since: '2026-03-01',
                until: '2026-03-05',
                scope,
              }),
          ],
          [`${scope}: repositories`, (q) => q.repositories({ limit: 100 }, scope)],
          [
            `${scope}: repositories after a name`,
            (q) => q.repositories({ limit: 1, after: 'acme/one' }, scope),
          ],
          [`${scope}: agents`, (q) => q.agents({ limit: 100 }, scope)],
          [`${scope}: agents after a name`, (q) => q.agents({ limit: 1, after: 'bot-a' }, scope)],
          [`${scope}: totals`, (q) => q.totals(scope)],
          [`${scope}: countSince`, (q) => q.countSince(day(2, 0), scope)],
        ],
      ),
    ];

    it.each(queryCases)('%s', async (_name, query) => {
      expect(await query(mongo.queries)).toEqual(await query(sqlite.queries));
    });

    const ledgerCases: [string, (l: LedgerStore) => Promise<unknown>][] = [
      ['ledger list', (l) => l.list(0, 100)],
      ['ledger stats', (l) => l.stats()],
      ['ledger stats of a scope', (l) => l.stats('key:key-1')],
      ['ledger stats of another scope', (l) => l.stats('test')],
      ['ledger head', (l) => l.head()],
      ['receipts per API key', (l) => l.countByApiKey('key-1')],
    ];

    it.each(ledgerCases)('%s', async (_name, read) => {
      expect(await read(mongo.ledger)).toEqual(await read(sqlite.ledger));
    });
  },
);
