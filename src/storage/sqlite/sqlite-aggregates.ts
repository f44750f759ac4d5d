import type { Database, Statement } from 'better-sqlite3';
import type { LedgerEntry } from '../../ports/ledger-store.js';
import { COUNTERS, countersOf, noCounters, type CounterRow } from '../counters.js';

interface Upserts {
  totals: Statement;
  repository: Statement;
  agent: Statement;
  model: Statement;
  daily: Statement;
}

/** A row's key columns, with what the batch adds to it. */
interface Keyed<T> {
  key: string[];
  add: T;
}

/** A repository's or an agent's counters over a batch, with its first and last receipt. */
interface NameCounts {
  counts: CounterRow;
  first: LedgerEntry['receipt'];
  last: LedgerEntry['receipt'];
}

/**
 * What one batch adds to the aggregates, one entry per row it changes. `prefix` is the key
 * columns before the aggregate's own: none for the ledger's, the scope for a scope's.
 */
class BatchCounts {
  readonly totals = new Map<string, Keyed<number>>();
  readonly repositories = new Map<string, Keyed<NameCounts>>();
  readonly agents = new Map<string, Keyed<NameCounts>>();
  readonly models = new Map<string, Keyed<null>>();
  readonly daily = new Map<string, Keyed<number>>();

  add(entry: LedgerEntry, prefix: string[]): void {
    const { receipt, claim } = entry;
    const verdict = receipt.policy.verdict;
    const status = receipt.admissibility.status;
    const { agent, repository } = receipt.subject;
    const counts = countersOf(verdict, status);
    count(this.totals, [...prefix, verdict, status]);
    if (repository !== undefined) name(this.repositories, [...prefix, repository], counts, receipt);
    if (agent !== undefined) {
      name(this.agents, [...prefix, agent], counts, receipt);
      const model = claim.action?.agent_model;
      if (model) keyed(this.models, [...prefix, agent, model], () => null);
    }
    count(this.daily, [...prefix, receipt.issued_at.slice(0, 10), repository ?? '', verdict]);
  }
}

/** The map's entry for these key columns, made by `make` when it has none yet. */
function keyed<T>(map: Map<string, Keyed<T>>, key: string[], make: () => T): Keyed<T> {
  const id = JSON.stringify(key);
  let row = map.get(id);
  if (!row) map.set(id, (row = { key, add: make() }));
  return row;
}

function count(map: Map<string, Keyed<number>>, key: string[]): void {
  keyed(map, key, () => 0).add += 1;
}

function name(
  map: Map<string, Keyed<NameCounts>>,
  key: string[],
  counts: CounterRow,
  receipt: LedgerEntry['receipt'],
): void {
  const row = keyed(map, key, () => ({
    counts: noCounters(),
    first: receipt,
    last: receipt,
  }));
  for (const c of COUNTERS) row.add.counts[c] += counts[c];
  row.add.last = receipt;
}

/**
 * Keeps the read model's aggregates and word index current, inside the append transaction, so
 * a summary never disagrees with the ledger it summarizes. The word index is written with each
 * receipt; the counts of a group commit's receipts are summed first and written once per row
 * before it commits (one upsert per repository, agent, day… instead of one per receipt).
 */
export class SqliteAggregates {
  private readonly words: Statement;
  // The upserts of the ledger's aggregates, and of each submitter scope's.
  private readonly ledger: Upserts;
  private readonly scoped: Upserts;
  // The batch being gathered: the ledger's own counts, and those of each submitter scope.
  private global = new BatchCounts();
  private scopes = new BatchCounts();

  constructor(db: Database) {
    const counters = COUNTERS.join(', ');
    const increments = COUNTERS.map((c) => `${c} = ${c} + excluded.${c}`).join(', ');
    const values = COUNTERS.map(() => '?').join(', ');
    this.ledger = {
      totals: db.prepare(`
      INSERT INTO ledger_totals (verdict, admissibility, n) VALUES (?, ?, ?)
      ON CONFLICT (verdict, admissibility) DO UPDATE SET n = n + excluded.n`),
      repository: db.prepare(`
      INSERT INTO repository_stats (repository, ${counters}, last_sequence, last_receipt_id, last_issued_at)
      VALUES (?, ${values}, ?, ?, ?)
      ON CONFLICT (repository) DO UPDATE SET ${increments},
        last_sequence = excluded.last_sequence, last_receipt_id = excluded.last_receipt_id,
        last_issued_at = excluded.last_issued_at`),
      agent: db.prepare(`
      INSERT INTO agent_stats (agent, ${counters}, first_seen, last_seen)
      VALUES (?, ${values}, ?, ?)
      ON CONFLICT (agent) DO UPDATE SET ${increments}, last_seen = excluded.last_seen`),
      model: db.prepare(
        'INSERT INTO agent_models (agent, model) VALUES (?, ?) ON CONFLICT DO NOTHING',
      ),
      daily: db.prepare(`
      INSERT INTO daily_counts (day, repository, verdict, n) VALUES (?, ?, ?, ?)
      ON CONFLICT (day, repository, verdict) DO UPDATE SET n = n + excluded.n`),
    };
    // The same aggregates per submitter scope, for private reads (migration scopedReads).
    this.scoped = {
      totals: db.prepare(`
        INSERT INTO scope_totals (scope, verdict, admissibility, n) VALUES (?, ?, ?, ?)
        ON CONFLICT (scope, verdict, admissibility) DO UPDATE SET n = n + excluded.n`),
      repository: db.prepare(`
        INSERT INTO scope_repository_stats (scope, repository, ${counters}, last_sequence,
          last_receipt_id, last_issued_at)
        VALUES (?, ?, ${values}, ?, ?, ?)
        ON CONFLICT (scope, repository) DO UPDATE SET ${increments},
          last_sequence = excluded.last_sequence, last_receipt_id = excluded.last_receipt_id,
          last_issued_at = excluded.last_issued_at`),
      agent: db.prepare(`
        INSERT INTO scope_agent_stats (scope, agent, ${counters}, first_seen, last_seen)
        VALUES (?, ?, ${values}, ?, ?)
        ON CONFLICT (scope, agent) DO UPDATE SET ${increments}, last_seen = excluded.last_seen`),
      model: db.prepare(
        'INSERT INTO scope_agent_models (scope, agent, model) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
      ),
      daily: db.prepare(`
        INSERT INTO scope_daily_counts (scope, day, repository, verdict, n) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (scope, day, repository, verdict) DO UPDATE SET n = n + excluded.n`),
    };
    this.words = db.prepare(
      'INSERT INTO receipts_fts (rowid, claim, entity, repository, agent) VALUES (?, ?, ?, ?, ?)',
    );
  }

  /** Indexes an appended entry's words: inside the append's own savepoint. */
  index(entry: LedgerEntry): void {
    const { receipt, claim } = entry;
    this.words.run(
      receipt.chain.sequence,
      claim.claim,
      claim.entity,
      receipt.subject.repository ?? null,
      receipt.subject.agent ?? null,
    );
  }

  /**
   * Counts an appended entry, written in the submitter scope `scope`, into the batch: only once
   * its append succeeded, so a rolled-back append is never counted.
   */
  count(entry: LedgerEntry, scope: string): void {
    this.global.add(entry, []);
    this.scopes.add(entry, [scope]);
  }

  /** Writes the batch's counts: inside the batch's transaction, before it commits. */
  flush(): void {
    const { global, scopes } = this;
    this.global = new BatchCounts();
    this.scopes = new BatchCounts();
    const counters = ({ counts }: NameCounts) => COUNTERS.map((c) => counts[c]);
    const last = ({ last }: NameCounts) => [last.chain.sequence, last.receipt_id, last.issued_at];
    const seen = ({ first, last }: NameCounts) => [first.issued_at, last.issued_at];
    for (const [batch, s] of [
      [global, this.ledger],
      [scopes, this.scoped],
    ] as const) {
      for (const { key, add } of batch.totals.values()) s.totals.run(...key, add);
      for (const { key, add } of batch.repositories.values())
        s.repository.run(...key, ...counters(add), ...last(add));
      for (const { key, add } of batch.agents.values())
        s.agent.run(...key, ...counters(add), ...seen(add));
      for (const { key } of batch.models.values()) s.model.run(...key);
      for (const { key, add } of batch.daily.values()) s.daily.run(...key, add);
    }
  }
}
