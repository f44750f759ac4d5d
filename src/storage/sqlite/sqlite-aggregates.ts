import type { Database, Statement } from 'better-sqlite3';
import type { LedgerEntry } from '../../ports/ledger-store.js';

/**
 * Keeps the read model's aggregates and word index current. Called inside the append
 * transaction, so a summary never disagrees with the ledger it summarizes.
 */
export class SqliteAggregates {
  private readonly totals: Statement;
  private readonly repository: Statement;
  private readonly agent: Statement;
  private readonly model: Statement;
  private readonly daily: Statement;
  private readonly words: Statement;
  private readonly scoped: {
    totals: Statement;
    repository: Statement;
    agent: Statement;
    model: Statement;
    daily: Statement;
  };

  constructor(db: Database) {
    this.totals = db.prepare(`
      INSERT INTO ledger_totals (verdict, admissibility, n) VALUES (?, ?, 1)
      ON CONFLICT (verdict, admissibility) DO UPDATE SET n = n + 1`);
    const counters = 'total, allowed, blocked, escalated, accepted, non_deterministic, rejected';
    const increments = [
      'allowed',
      'blocked',
      'escalated',
      'accepted',
      'non_deterministic',
      'rejected',
    ]
      .map((c) => `${c} = ${c} + excluded.${c}`)
      .join(', ');
    this.repository = db.prepare(`
      INSERT INTO repository_stats (repository, ${counters}, last_sequence, last_receipt_id, last_issued_at)
      VALUES (@key, 1, @allowed, @blocked, @escalated, @accepted, @non_deterministic, @rejected,
        @sequence, @receipt_id, @issued_at)
      ON CONFLICT (repository) DO UPDATE SET total = total + 1, ${increments},
        last_sequence = excluded.last_sequence, last_receipt_id = excluded.last_receipt_id,
        last_issued_at = excluded.last_issued_at`);
    this.agent = db.prepare(`
      INSERT INTO agent_stats (agent, ${counters}, first_seen, last_seen)
      VALUES (@key, 1, @allowed, @blocked, @escalated, @accepted, @non_deterministic, @rejected,
        @issued_at, @issued_at)
      ON CONFLICT (agent) DO UPDATE SET total = total + 1, ${increments}, last_seen = excluded.last_seen`);
    this.model = db.prepare(
      'INSERT INTO agent_models (agent, model) VALUES (?, ?) ON CONFLICT DO NOTHING',
    );
    this.daily = db.prepare(`
      INSERT INTO daily_counts (day, repository, verdict, n) VALUES (?, ?, ?, 1)
      ON CONFLICT (day, repository, verdict) DO UPDATE SET n = n + 1`);
    // The same aggregates per submitter scope, for private reads (migration scopedReads).
    this.scoped = {
      totals: db.prepare(`
        INSERT INTO scope_totals (scope, verdict, admissibility, n) VALUES (?, ?, ?, 1)
        ON CONFLICT (scope, verdict, admissibility) DO UPDATE SET n = n + 1`),
      repository: db.prepare(`
        INSERT INTO scope_repository_stats (scope, repository, ${counters}, last_sequence,
          last_receipt_id, last_issued_at)
        VALUES (@scope, @key, 1, @allowed, @blocked, @escalated, @accepted, @non_deterministic,
          @rejected, @sequence, @receipt_id, @issued_at)
        ON CONFLICT (scope, repository) DO UPDATE SET total = total + 1, ${increments},
          last_sequence = excluded.last_sequence, last_receipt_id = excluded.last_receipt_id,
          last_issued_at = excluded.last_issued_at`),
      agent: db.prepare(`
        INSERT INTO scope_agent_stats (scope, agent, ${counters}, first_seen, last_seen)
        VALUES (@scope, @key, 1, @allowed, @blocked, @escalated, @accepted, @non_deterministic,
          @rejected, @issued_at, @issued_at)
        ON CONFLICT (scope, agent) DO UPDATE SET total = total + 1, ${increments},
          last_seen = excluded.last_seen`),
      model: db.prepare(
        'INSERT INTO scope_agent_models (scope, agent, model) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
      ),
      daily: db.prepare(`
        INSERT INTO scope_daily_counts (scope, day, repository, verdict, n) VALUES (?, ?, ?, ?, 1)
        ON CONFLICT (scope, day, repository, verdict) DO UPDATE SET n = n + 1`),
    };
    this.words = db.prepare(
      'INSERT INTO receipts_fts (rowid, claim, entity, repository, agent) VALUES (?, ?, ?, ?, ?)',
    );
  }

  /** Records an appended entry, written in the submitter scope `scope`. */
  record(entry: LedgerEntry, scope: string): void {
    const { receipt, claim } = entry;
    const verdict = receipt.policy.verdict;
    const status = receipt.admissibility.status;
    const { agent, repository } = receipt.subject;
    const row = {
      allowed: Number(verdict === 'ALLOWED'),
      blocked: Number(verdict === 'BLOCKED'),
      escalated: Number(verdict === 'ESCALATED'),
      accepted: Number(status === 'ACCEPTED'),
      non_deterministic: Number(status === 'NON_DETERMINISTIC'),
      rejected: Number(status === 'REJECTED'),
      sequence: receipt.chain.sequence,
      receipt_id: receipt.receipt_id,
      issued_at: receipt.issued_at,
    };
    const day = receipt.issued_at.slice(0, 10);
    const model = claim.action?.agent_model;
    this.totals.run(verdict, status);
    this.scoped.totals.run(scope, verdict, status);
    if (repository !== undefined) {
      this.repository.run({ ...row, key: repository });
      this.scoped.repository.run({ ...row, scope, key: repository });
    }
    if (agent !== undefined) {
      this.agent.run({ ...row, key: agent });
      this.scoped.agent.run({ ...row, scope, key: agent });
      if (model) {
        this.model.run(agent, model);
        this.scoped.model.run(scope, agent, model);
      }
    }
    this.daily.run(day, repository ?? '', verdict);
    this.scoped.daily.run(scope, day, repository ?? '', verdict);
    this.words.run(
      receipt.chain.sequence,
      claim.claim,
      claim.entity,
      repository ?? null,
      agent ?? null,
    );
  }
}
