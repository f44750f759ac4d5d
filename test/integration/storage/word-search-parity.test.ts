import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { find } from 'mingo';
import type { LedgerEntry } from '../../../src/ports/ledger-store.js';
import type { Store } from '../../../src/ports/store.js';
import {
  indexedFields,
  receiptPhrases,
  receiptWords,
  searchQuery,
} from '../../../src/storage/mongo/receipt-query.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { newServerKey } from '../../support/harness.js';
import { appendRequest, makeClaim, signClaim } from '../../contract/ledger-fixtures.js';

// The MongoDB store's word search must answer what the SQLite store's FTS5 index answers.
// No MongoDB server runs everywhere, so its query is evaluated here by mingo (MongoDB's query
// language in JavaScript) over the fields the MongoDB store indexes, against FTS5 itself;
// test/contract/mongodb-queries-parity.test.ts asks a real server wherever one runs.
const ROWS: { claim: string; agent: string | null; repository: string | null }[] = [
  { claim: 'Merge PR #42 after CI passed', agent: 'acme', repository: 'other/we' },
  { claim: 'Deploy the café release to production', agent: 'coder-bot', repository: 'acme/web' },
  { claim: 'Ελληνικό όνομα για το deploy', agent: null, repository: 'acme/wellness' },
  { claim: 'किताब पढ़ो and merge', agent: 'hindi-bot', repository: null },
  { claim: '한국어 hotfix', agent: 'Café-Bot', repository: 'acme/web' },
  { claim: 'schema migration, then security patch', agent: 'agent-03', repository: 'acme/one' },
  { claim: 'Crème brûlée feature flag', agent: 'agent-11', repository: 'org-5/service-05' },
  { claim: 'CI/merge queue rotated', agent: 'queue-bot', repository: 'acme/ci' },
  { claim: 'Ο οδοστρωτήρας της οδός', agent: null, repository: null },
];

const QUERIES = [
  'acme/we',
  'acme/web',
  'ci/merge',
  'ci merge',
  'merge',
  'caf',
  'cafe',
  'café',
  'CAFÉ-bot',
  'ονομα',
  'όνομα',
  'ελλην',
  'οδος',
  'ΟΔΟΣ',
  'οδοστρωτηρας',
  'क',
  'कत',
  'किताब',
  '하',
  '한국어',
  'hotfix',
  'schema migration',
  'security patch',
  'feature flag',
  'creme brul',
  'org-5/service',
  'service-05',
  'agent-0',
  'acme/w deploy',
  'queue-bot/x',
  '#42',
  'pr 42',
];

describe('word search: the MongoDB query matches what FTS5 matches', () => {
  let store: Store;
  let entries: LedgerEntry[];

  beforeAll(async () => {
    store = openSqliteStore(':memory:');
    const key = newServerKey();
    for (const row of ROWS) {
      const claim = { ...makeClaim({ agent: row.agent, repository: row.repository }) };
      await store.ledger.append(appendRequest(signClaim({ ...claim, claim: row.claim }, key)));
    }
    entries = await store.ledger.list(0, 100);
    expect(entries).toHaveLength(ROWS.length);
  });
  afterAll(async () => {
    await store.close();
  });

  it.each(QUERIES)('%s', async (q) => {
    const page = { limit: 100, order: 'asc' as const };
    const sqlite = (await store.queries.search({ q }, page)).map((r) => r.chain.sequence);
    const documents = entries.map((entry) => ({
      sequence: entry.receipt.chain.sequence,
      words: receiptWords(indexedFields(entry)),
      phrases: receiptPhrases(indexedFields(entry)),
    }));
    const query = searchQuery({ q }, page);
    const mongo =
      query === null
        ? []
        : (
            find(documents, query.filter as Record<string, unknown>)
              .sort(query.sort as Record<string, 1 | -1>)
              .all() as { sequence: number }[]
          ).map((d) => d.sequence);
    expect(mongo).toEqual(sqlite);
  });

  it('still finds receipts stored before phrases were indexed, by their words', () => {
    const stored = [{ sequence: 1, words: receiptWords(['acme/web']) }];
    const query = searchQuery({ q: 'acme/we' }, { limit: 10, order: 'asc' })!;
    expect(find(stored, query.filter as Record<string, unknown>).all()).toHaveLength(1);
  });

  it('has queries that match and queries that do not, so neither side passes vacuously', async () => {
    const page = { limit: 100, order: 'asc' as const };
    const counts = await Promise.all(
      QUERIES.map(async (q) => (await store.queries.search({ q }, page)).length),
    );
    expect(counts.filter((n) => n === 0).length).toBeGreaterThanOrEqual(3);
    expect(counts.filter((n) => n > 0).length).toBeGreaterThanOrEqual(15);
  });
});
