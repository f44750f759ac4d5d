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
    this.words = db.prepare(
      'INSERT INTO receipts_fts (rowid, claim, entity, repository, agent) VALUES (?, ?, ?, ?, ?)',
    );
  }

  record(entry: LedgerEntry): void {
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
    this.totals.run(verdict, status);
    if (repository !== undefined) this.repository.run({ ...row, key: repository });
    if (agent !== undefined) {
      this.agent.run({ ...row, key: agent });
      const model = claim.action?.agent_model;
      if (model) this.model.run(agent, model);
    }
    this.daily.run(receipt.issued_at.slice(0, 10), repository ?? '', verdict);
    this.words.run(
      receipt.chain.sequence,
      claim.claim,
      claim.entity,
      repository ?? null,
      agent ?? null,
    );
  }
}
