import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import type { ClaimInput } from '../../../src/core/claim-schema.js';
import type { Receipt } from '../../../src/core/receipt.js';
import type { LedgerQueries, ReceiptFilter } from '../../../src/ports/ledger-queries.js';
import type { LedgerEntry } from '../../../src/ports/ledger-store.js';
import { LedgerReadService } from '../../../src/services/ledger-reads.js';
import { migrate } from '../../../src/storage/sqlite/migrations.js';
import { SqliteLedger } from '../../../src/storage/sqlite/sqlite-ledger.js';
import { SqliteLedgerQueries } from '../../../src/storage/sqlite/sqlite-ledger-queries.js';
import { makeClaim, signClaim, type ClaimKind } from '../../contract/ledger-fixtures.js';
import { ManualClock, newServerKey } from '../../support/harness.js';

const N = 100_000;
const AGENTS = 250;
const REPOSITORIES = 60;
const START = Date.parse('2025-06-01T00:00:00.000Z');
const STEP_MS = 150_000; // one receipt every 2.5 minutes: 100,000 span about 174 days
const KINDS: ClaimKind[] = ['allowed', 'allowed', 'blocked', 'escalated', 'non_deterministic'];
const WORDS = ['cache', 'session', 'billing', 'search', 'upload', 'payments', 'login', 'docs'];
const RARE = 'zebracorn';

const agentOf = (i: number) =>
  i % 997 === 0 ? undefined : `agent-${String(i % AGENTS).padStart(3, '0')}`;
const repositoryOf = (i: number) => (i % 101 === 0 ? undefined : `org/repo-${i % REPOSITORIES}`);
// The submitter scope, as an API key's: private reads read one of them.
const scopeOf = (i: number) => `key:key-${i % 40}`;
const SCOPE = scopeOf(7);
const issuedAt = (i: number) => new Date(START + i * STEP_MS).toISOString();
const claimText = (i: number) =>
  i % 10_000 === 7
    ? `Rotate the ${RARE} credentials`
    : `Merge PR fixing ${WORDS[i % WORDS.length]}`;

/**
 * Real signed entries, one per kind, are the bases; entry i varies one of them in what the
 * read model indexes (ids, agent, repository, pull request, time, claim text). Signing every
 * one of 100,000 would take minutes, and neither query plans nor results depend on it.
 */
function entriesFrom(bases: LedgerEntry[]) {
  return (i: number, head: { sequence: number; receipt_hash: string | null }): LedgerEntry => {
    const base = bases[i % bases.length]!;
    const agent = agentOf(i);
    const repository = repositoryOf(i);
    const pullRequest = 1 + (i % 500);
    const action = {
      ...base.claim.action!,
      agent,
      repository,
      pull_request: pullRequest,
      agent_model: `model-${i % 3}`,
      commit: `c${i}`,
    };
    const claim: ClaimInput = {
      ...base.claim,
      claim_id: `claim-${i}`,
      claim: claimText(i),
      action,
    };
    const subject = { ...base.receipt.subject, agent, repository, pull_request: pullRequest };
    for (const k of ['agent', 'repository'] as const)
      if (subject[k] === undefined) delete subject[k];
    return {
      ...base,
      claim,
      apiKeyId: `key-${i % 40}`,
      receipt: {
        ...base.receipt,
        receipt_id: `dr-${String(i).padStart(8, '0')}`,
        claim_id: claim.claim_id,
        issued_at: issuedAt(i),
        subject,
        ...(base.receipt.position
          ? {
              position: {
                ...base.receipt.position,
                sequence: head.sequence + 1,
                previous_receipt_hash: head.receipt_hash,
              },
            }
          : {}),
        chain: {
          sequence: head.sequence + 1,
          previous_receipt_hash: head.receipt_hash,
          receipt_hash: `sha256:${(head.sequence + 1).toString(16).padStart(64, '0')}`,
        },
      },
    };
  };
}

interface Executed {
  sql: string;
  args: unknown[];
}

/** Records the SQL and arguments of every statement run while `on` is true. */
function recordStatements(db: Database.Database) {
  const recorder = { on: false, executed: new Map<string, Executed>() };
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    const statement = prepare(sql);
    for (const method of ['all', 'get', 'run', 'iterate'] as const) {
      const original = statement[method].bind(statement) as (...args: unknown[]) => unknown;
      Object.defineProperty(statement, method, {
        value: (...args: unknown[]) => {
          if (recorder.on) {
            const key = `${statement.source}\n${JSON.stringify(args)}`;
            recorder.executed.set(key, { sql: statement.source, args });
          }
          return original(...args);
        },
      });
    }
    return statement;
  }) as typeof db.prepare;
  return recorder;
}

/**
 * The filter combinations of search: every subset of its seven general filters (the
 * deployment filters, read by the explorer's deployment pages, are read on their own below).
 */
function filterCombinations(
  values: Required<Omit<ReceiptFilter, 'scope' | 'action_type' | 'environment'>>,
): ReceiptFilter[] {
  const keys = Object.keys(values) as (keyof typeof values)[];
  return Array.from({ length: 1 << keys.length }, (_, mask) =>
    Object.fromEntries(keys.filter((_, bit) => mask & (1 << bit)).map((k) => [k, values[k]])),
  );
}

describe(`read model at ${N.toLocaleString('en')} receipts (slow: seeds a file-backed SQLite ledger, ~40 s)`, () => {
  let dir: string;
  let db: Database.Database;
  let queries: SqliteLedgerQueries;
  let ledger: SqliteLedger;
  let reads: LedgerReadService;
  /** A search page as a client reads it: the service answers JSON text. */
  const searchPage = async (...args: Parameters<LedgerReadService['search']>) =>
    (await reads.search(...args)).parse() as {
      receipts: Receipt[];
      next_after: number | null;
    };
  let recorder: ReturnType<typeof recordStatements>;
  const clock = new ManualClock(START + N * STEP_MS);

  const explain = (sql: string, args: unknown[]) =>
    db
      .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
      .all(...args)
      .map((row) => row.detail);

  /** The plans of the statements `run` executes that read `table`. */
  async function plansOf(run: () => Promise<unknown>, table = 'receipts') {
    recorder.executed.clear();
    recorder.on = true;
    try {
      await run();
    } finally {
      recorder.on = false;
    }
    return [...recorder.executed.values()]
      .filter((e) => new RegExp(`\\bFROM ${table}\\b`).test(e.sql))
      .map((e) => explain(e.sql, e.args));
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-plans-'));
    db = new Database(join(dir, 'ledger.db'));
    db.pragma('journal_mode = WAL');
    // Seeding only: durability of this throwaway file does not matter.
    db.pragma('synchronous = OFF');
    migrate(db);
    recorder = recordStatements(db);
    queries = new SqliteLedgerQueries(db);
    ledger = new SqliteLedger(db, queries);
    reads = new LedgerReadService({ ledger, queries: queries as LedgerQueries, clock });

    const serverKey = newServerKey();
    const bases = KINDS.map((kind) =>
      signClaim(makeClaim({ kind }), serverKey).entryAt({ sequence: 0, receipt_hash: null }),
    );
    const entryAt = entriesFrom(bases);
    // Through the adapter's own append: receipts, aggregates and word index in its
    // transactions, appends queued together committed together.
    const BATCH = 10_000;
    for (let start = 0; start < N; start += BATCH) {
      const appended = [];
      for (let i = start; i < Math.min(N, start + BATCH); i++) {
        appended.push(
          ledger.append({
            scope: scopeOf(i),
            claimId: `claim-${i}`,
            build: (head) => ({ entry: entryAt(i, head) }),
          }),
        );
      }
      // One expectation a batch: 100,000 of them were seconds of the seeding.
      const statuses = (await Promise.all(appended)).map((result) => result.status);
      expect(statuses.filter((status) => status !== 'appended')).toEqual([]);
    }
    // About 40 s alone; with another test file beside it on a shared two-core machine, several
    // times that.
  }, 480_000);

  afterAll(() => {
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds the seeded ledger', async () => {
    expect(await ledger.head()).toEqual({
      sequence: N,
      receipt_hash: `sha256:${N.toString(16).padStart(64, '0')}`,
    });
    const totals = await queries.totals();
    expect(totals.total).toBe(N);
    expect(totals.by_verdict).toEqual({ ALLOWED: 60_000, BLOCKED: 20_000, ESCALATED: 20_000 });
    expect(totals.by_admissibility).toEqual({
      ACCEPTED: 40_000,
      NON_DETERMINISTIC: 20_000,
      REJECTED: 40_000,
    });
    expect(totals.agents).toBe(AGENTS);
    expect(totals.repositories).toBe(REPOSITORIES);
  });

  it('answers every read of the API from indexes or aggregates: no plan scans receipts', async () => {
    recorder.on = true;
    const agent = 'agent-007';
    const repository = 'org/repo-7';
    const since = issuedAt(N - 2000);
    const until = issuedAt(N - 1000);
    const all = filterCombinations({
      q: RARE,
      agent,
      repository,
      verdict: 'BLOCKED',
      status: 'REJECTED',
      since,
      until,
    });
    for (const filter of all) {
      for (const order of ['asc', 'desc'] as const) {
        await reads.search(filter, { limit: 100, order });
        await reads.search(filter, { limit: 100, order, after: N / 2 });
      }
    }
    await reads.search({ q: RARE }, { limit: 100, order: 'desc' });
    // The explorer's deployment pages: every deployment, one environment's, each in a scope.
    for (const deployments of [
      { action_type: 'deployment' as const },
      { repository, action_type: 'deployment' as const, environment: 'production' },
    ]) {
      for (const scope of [undefined, SCOPE]) {
        await reads.search({ ...deployments, scope }, { limit: 100, order: 'desc' });
        await reads.search({ ...deployments, scope }, { limit: 100, order: 'desc', after: N / 2 });
      }
    }
    await reads.ledgerPage({ limit: 100 });
    await reads.ledgerPage({ limit: 1000, after: N - 10 });
    await reads.receipt('dr-00004242');
    await reads.compare(['dr-00000001', 'dr-00050000', 'dr-00099999', 'dr-none']);
    await reads.diff(repository, '8');
    await reads.timeline({});
    await reads.timeline({ repository, since: '2025-06-01', until: '2026-06-01' });
    await reads.repositories({ limit: 100 });
    await reads.repositories({ limit: 10, after: 'org/repo-3' });
    await reads.agents({ limit: 100 });
    await reads.agents({ limit: 10, after: 'agent-100' });
    await reads.overview();
    await ledger.stats();
    // Private reads: the same reads within one submitter scope.
    for (const filter of [{}, ...all.filter((f) => Object.keys(f).length <= 2)]) {
      for (const order of ['asc', 'desc'] as const) {
        await reads.search({ ...filter, scope: SCOPE }, { limit: 100, order });
        await reads.search({ ...filter, scope: SCOPE }, { limit: 100, order, after: N / 2 });
      }
    }
    await reads.ledgerPage({ limit: 100 }, SCOPE);
    await reads.receipt('dr-00004247', SCOPE);
    await reads.compare(['dr-00000007', 'dr-00050000', 'dr-none'], SCOPE);
    await reads.diff(repository, '8', SCOPE);
    await reads.timeline({ scope: SCOPE });
    await reads.timeline({ repository, since: '2025-06-01', until: '2026-06-01', scope: SCOPE });
    await reads.repositories({ limit: 100 }, SCOPE);
    await reads.repositories({ limit: 10, after: 'org/repo-3' }, SCOPE);
    await reads.agents({ limit: 100 }, SCOPE);
    await reads.agents({ limit: 10, after: 'agent-100' }, SCOPE);
    await reads.overview(SCOPE);
    await ledger.stats(SCOPE);
    await ledger.getByClaimId(scopeOf(4242), 'claim-4242');
    await ledger.receiptHashOf('dr-00004242');
    await ledger.countByApiKey('key-7');
    recorder.on = false;

    const executed = [...recorder.executed.values()];
    const shapes = new Set(executed.map((e) => e.sql));
    // 128 filter sets, 2 orders, with and without a cursor, and the other reads.
    expect(shapes.size).toBeGreaterThanOrEqual(128 * 4);

    const violations: string[] = [];
    for (const { sql, args } of executed) {
      const plan = explain(sql, args);
      // Walking the ledger in sequence order under a LIMIT, with no filter, reads only
      // the rows it returns: the newest receipt, or a page of an unfiltered listing.
      const orderedWalk =
        !/\bWHERE\b/.test(sql) && /ORDER BY (receipts\.)?sequence (ASC |DESC )?LIMIT/.test(sql);
      // An aggregate table listed whole is as long as its answer (agents, repositories).
      const listsAggregate =
        /^SELECT [^;]* FROM (agent_stats|repository_stats|ledger_totals)( ORDER BY \w+)?$/.test(
          sql.trim(),
        );
      for (const step of plan) {
        const scan = /^SCAN (\w+)/.exec(step);
        if (!scan) continue;
        const table = scan[1]!;
        // The word index drives in rowid order: reading it is reading the matches.
        if (table === 'receipts_fts' && /VIRTUAL TABLE INDEX \d+:\S*M/.test(step)) continue;
        if (table === 'receipts' && orderedWalk && step === 'SCAN receipts') continue;
        // A partial index holds only the receipts its filter matches: walking it in sequence
        // order under a LIMIT reads only the rows it returns.
        if (step === 'SCAN receipts USING INDEX receipts_deployments') continue;
        if (table !== 'receipts' && listsAggregate) continue;
        violations.push(`${step}\n  in: ${sql.replace(/\s+/g, ' ')}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('walks the index of the filter it is given', async () => {
    const page = { limit: 100, order: 'desc' as const };
    const cases: [() => Promise<unknown>, unknown[], string?][] = [
      [
        () => reads.search({ agent: 'agent-001' }, page),
        ['SEARCH receipts USING INDEX receipts_agent (agent=?)'],
      ],
      [
        () => reads.search({ agent: 'agent-001' }, { ...page, after: 500 }),
        ['SEARCH receipts USING INDEX receipts_agent (agent=? AND sequence<?)'],
      ],
      [
        () => reads.search({ repository: 'org/repo-1' }, page),
        ['SEARCH receipts USING INDEX receipts_repository (repository=?)'],
      ],
      [
        () => reads.search({ action_type: 'deployment' }, page),
        ['SCAN receipts USING INDEX receipts_deployments'],
      ],
      [
        () =>
          reads.search(
            { repository: 'org/repo-1', action_type: 'deployment', environment: 'production' },
            { ...page, after: 500 },
          ),
        [
          'SEARCH receipts USING INDEX receipts_deployment_environment (repository=? AND <expr>=? AND sequence<?)',
        ],
      ],
      [
        () => reads.search({ verdict: 'ESCALATED' }, page),
        ['SEARCH receipts USING INDEX receipts_verdict (verdict=?)'],
      ],
      [
        () => reads.search({ status: 'ACCEPTED' }, page),
        ['SEARCH receipts USING INDEX receipts_admissibility (admissibility=?)'],
      ],
      [
        () => reads.search({ since: issuedAt(N - 10) }, { ...page, order: 'asc' }),
        [
          'SEARCH receipts USING INDEX receipts_issued_at (issued_at>?)',
          'USE TEMP B-TREE FOR ORDER BY',
        ],
      ],
      [
        () => reads.search({ until: issuedAt(10) }, page),
        [
          'SEARCH receipts USING INDEX receipts_issued_at (issued_at<?)',
          'USE TEMP B-TREE FOR ORDER BY',
        ],
      ],
      [
        () => reads.search({ q: RARE }, page),
        [
          expect.stringMatching(/^SCAN receipts_fts VIRTUAL TABLE INDEX \d+:\S*M/),
          'SEARCH receipts USING INTEGER PRIMARY KEY (rowid=?)',
        ],
        'receipts_fts',
      ],
      [
        () => reads.diff('org/repo-1', '2'),
        ['SEARCH receipts USING INDEX receipts_pull_request (repository=? AND pull_request=?)'],
      ],
      [
        () => reads.receipt('dr-00000001'),
        ['SEARCH receipts USING INDEX sqlite_autoindex_receipts_1 (receipt_id=?)'],
      ],
      [
        () => reads.ledgerPage({ limit: 10, after: 5 }),
        ['SEARCH receipts USING INTEGER PRIMARY KEY (rowid>?)'],
      ],
      [
        () => reads.overview(),
        [
          'SEARCH receipts USING COVERING INDEX receipts_issued_at (issued_at>?)',
          'USE TEMP B-TREE FOR GROUP BY',
        ],
      ],
      [
        () => reads.timeline({ repository: 'org/repo-1' }),
        [
          expect.stringMatching(
            /^SEARCH daily_counts USING (COVERING )?INDEX daily_counts_repository \(repository=\? AND day>\? AND day<\?\)$/,
          ),
        ],
        'daily_counts',
      ],
    ];
    for (const [run, expected, table] of cases) {
      // Some also read the head: a one-row walk from the end of the ledger.
      const plans = (await plansOf(run, table)).filter((plan) => plan.join() !== 'SCAN receipts');
      expect(plans).toEqual([expected]);
    }
  });

  it('searches by agent, repository and verdict correctly at this size', async () => {
    const byAgent = await searchPage({ agent: 'agent-042' }, { limit: 1000, order: 'desc' });
    const expected = Array.from({ length: N }, (_, i) => i)
      .filter((i) => agentOf(i) === 'agent-042')
      .reverse();
    expect(byAgent.receipts).toHaveLength(expected.length);
    expect(byAgent.receipts.map((r) => r.chain.sequence)).toEqual(expected.map((i) => i + 1));
    expect(byAgent.next_after).toBeNull();

    // agent-042 and org/repo-42 meet at i = 42 (mod 1500): always the third base, BLOCKED.
    const combined = await searchPage(
      { agent: 'agent-042', repository: 'org/repo-42', verdict: 'BLOCKED' },
      { limit: 1000, order: 'asc' },
    );
    const matching = Array.from({ length: N }, (_, i) => i).filter(
      (i) => agentOf(i) === 'agent-042' && repositoryOf(i) === 'org/repo-42',
    );
    expect(matching.length).toBeGreaterThan(60);
    expect(combined.receipts.map((r) => r.chain.sequence)).toEqual(matching.map((i) => i + 1));
    for (const receipt of combined.receipts) {
      expect(receipt.subject).toMatchObject({ agent: 'agent-042', repository: 'org/repo-42' });
      expect(receipt.policy.verdict).toBe('BLOCKED');
    }
    const none = await searchPage(
      { agent: 'agent-042', repository: 'org/repo-42', verdict: 'ALLOWED' },
      { limit: 1000, order: 'asc' },
    );
    expect(none.receipts).toEqual([]);
    const rare = await searchPage({ q: RARE.slice(0, 5) }, { limit: 100, order: 'asc' });
    expect(rare.receipts.map((r) => r.chain.sequence)).toEqual(
      Array.from({ length: N / 10_000 }, (_, k) => k * 10_000 + 7 + 1),
    );
  });

  it('pages through a filter to the end, and its count matches the aggregates', async () => {
    let after: number | undefined;
    let count = 0;
    let pages = 0;
    do {
      const page = await searchPage(
        { repository: 'org/repo-13' },
        { limit: 1000, order: 'desc', after },
      );
      count += page.receipts.length;
      after = page.next_after ?? undefined;
      pages++;
    } while (after !== undefined);
    const repos = await reads.repositories({ limit: 1000 });
    const summary = repos.repositories.find((r) => r.repository === 'org/repo-13')!;
    expect(count).toBe(summary.total);
    expect(pages).toBe(Math.ceil(summary.total / 1000));
    const sum = repos.repositories.reduce((n, r) => n + r.total, 0);
    const withoutRepository = Array.from({ length: N }, (_, i) => i).filter(
      (i) => repositoryOf(i) === undefined,
    ).length;
    expect(sum + withoutRepository).toBe(N);
  });

  it('agrees between the overview, the timeline and the ledger', async () => {
    const overview = await reads.overview();
    expect(overview.receipts).toBe(N);
    // The clock stands one step after the last receipt: 24 hours hold 576 of them.
    expect(overview.last_24h.receipts).toBe((24 * 60 * 60 * 1000) / STEP_MS);
    const timeline = await reads.timeline({ since: '2025-06-01', until: '2025-11-30' });
    expect(timeline.days.reduce((n, d) => n + d.total, 0)).toBe(N);
    const agents = await reads.agents({ limit: 1000 });
    expect(agents.agents).toHaveLength(AGENTS);
    expect(agents.agents[7]!.models).toEqual(['model-0', 'model-1', 'model-2']);
  });
});
