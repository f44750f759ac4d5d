/**
 * In-process cost of each search-text query of the bench on a seeded ledger:
 *   node dist/bench/search-probe.js <dataDir> [size] [runs]
 * Seeds <dataDir> to `size` receipts (default 100,000) unless it holds them already, then
 * times SqliteLedgerQueries.searchJson per query with process.cpuUsage and prints each plan.
 */
import { join } from 'node:path';
import { loadavg } from 'node:os';
import Database from 'better-sqlite3';
import type { ReceiptFilter } from '../src/ports/ledger-queries.js';
import { openSqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import { SqliteLedgerQueries } from '../src/storage/sqlite/sqlite-ledger-queries.js';
import { seedLedger } from './seed.js';

const [dataDir, sizeArg = '100000', runsArg = '300'] = process.argv.slice(2);
if (!dataDir) throw new Error('usage: search-probe <dataDir> [size] [runs]');
const size = Number(sizeArg);
const runs = Number(runsArg);

const seeded = await seedLedger(dataDir, size);
if (seeded.appended > 0) console.log(`seeded ${seeded.from} → ${seeded.to} in ${seeded.seconds} s`);
// Opening through the store applies any pending migration.
await openSqliteStore(join(dataDir, 'ledger.db')).close();

const db = new Database(join(dataDir, 'ledger.db'), { readonly: true });
const queries = new SqliteLedgerQueries(db);
const filters: ReceiptFilter[] = [
  { q: 'hotfix' },
  { q: 'schema migration' },
  { q: 'security patch', verdict: 'ALLOWED' },
  { q: 'feature flag', agent: 'agent-03' },
  { agent: 'agent-03' },
  { repository: 'org-5/service-05', verdict: 'BLOCKED' },
];
const page = { limit: 100, order: 'desc' as const };

// Plans: the statements a search runs, with their arguments.
const prepare = db.prepare.bind(db);
const ran: { sql: string; args: unknown[] }[] = [];
db.prepare = ((sql: string) => {
  const statement = prepare(sql);
  const all = statement.all.bind(statement) as (...args: unknown[]) => unknown[];
  Object.defineProperty(statement, 'all', {
    value: (...args: unknown[]) => {
      ran.push({ sql, args });
      return all(...args);
    },
  });
  return statement;
}) as typeof db.prepare;
const explain = (sql: string, args: unknown[]) =>
  prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
    .all(...args)
    .map((row) => row.detail)
    .join('; ');
const loads = () =>
  `load average ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')}`;

console.log(loads());
for (const filter of filters) {
  ran.length = 0;
  const first = await queries.searchJson(filter, page);
  const second = await queries.searchJson(filter, { ...page, after: first.at(-1)?.sequence });
  const plans = new Set(ran.map(({ sql, args }) => explain(sql, args)));
  const sql = ran[0]!.sql.replace(/\s+/g, ' ');
  for (let i = 0; i < 20; i++) await queries.searchJson(filter, page);
  const start = process.cpuUsage();
  for (let i = 0; i < runs; i++) await queries.searchJson(filter, page);
  const used = process.cpuUsage(start);
  const us = (used.user + used.system) / runs;
  console.log(
    `${JSON.stringify(filter)}: ${us.toFixed(0)} µs/query, ${first.length} rows ` +
      `(${first[0]?.sequence}…${first.at(-1)?.sequence}), next page ${second.length} rows ` +
      `(${second[0]?.sequence}…${second.at(-1)?.sequence})\n  ${sql}`,
  );
  for (const plan of plans) console.log(`  plan: ${plan}`);
}
console.log(loads());
db.close();
