import type { Database, Statement } from 'better-sqlite3';
import { foldTotals, foldVerdicts } from '../counters.js';
import {
  toAgentSummary,
  toRepositorySummary,
  type AgentStatsFields,
  type RepositoryStatsFields,
} from '../mappers.js';
import type { AdmissibilityStatus } from '../../core/evaluation.js';
import type { Verdict } from '../../core/policy.js';
import type {
  AgentSummary,
  LedgerQueries,
  LedgerTotals,
  NamePage,
  ReadScope,
  ReceiptFilter,
  RepositorySummary,
  SequencePage,
  StoredReceiptJson,
  TimelineRow,
  VerdictCounts,
} from '../../ports/ledger-queries.js';
import type { LedgerEntry } from '../../ports/ledger-store.js';
import type { Receipt } from '../../core/receipt.js';
import { ENTRY_COLUMNS, sqliteEntryReader, type ReceiptRow } from './receipt-rows.js';

/**
 * FTS5 query of free text: each word becomes a quoted prefix term, so no user input is read
 * as FTS syntax. Words are ANDed. Control characters separate words: FTS5 would end a quoted
 * term at a NUL.
 */
export function ftsQuery(text: string): string {
  return text
    .split(/[\s\p{Cc}]+/u)
    .filter((word) => /[\p{L}\p{N}]/u.test(word))
    .map((word) => `"${word.replaceAll('"', '""')}"*`)
    .join(' ');
}

export class SqliteLedgerQueries implements LedgerQueries {
  private readonly statements = new Map<string, Statement>();
  private readonly toEntry: (row: ReceiptRow) => LedgerEntry;

  constructor(private readonly db: Database) {
    this.toEntry = sqliteEntryReader(db);
  }

  // The search SQL has one shape per combination of filters; each is prepared once.
  private prepared<R>(sql: string): Statement<unknown[], R> {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement as Statement<unknown[], R>;
  }

  async search(filter: ReceiptFilter, page: SequencePage): Promise<Receipt[]> {
    return (await this.searchJson(filter, page)).map(
      (row) => JSON.parse(row.json.toString('utf8')) as Receipt,
    );
  }

  async searchJson(filter: ReceiptFilter, page: SequencePage): Promise<StoredReceiptJson[]> {
    const where: string[] = [];
    const params: Record<string, unknown> = { limit: page.limit };
    const q = filter.q === undefined ? '' : ftsQuery(filter.q);
    if (filter.q !== undefined) {
      if (!q) return [];
      where.push('receipts_fts MATCH @q');
      params.q = q;
    }
    const equal: [keyof ReceiptFilter, string][] = [
      ['scope', 'scope'],
      ['agent', 'agent'],
      ['repository', 'repository'],
      ['verdict', 'verdict'],
      ['status', 'admissibility'],
    ];
    for (const [key, column] of equal) {
      if (filter[key] !== undefined) {
        where.push(`receipts.${column} = @${key}`);
        params[key] = filter[key];
      }
    }
    // Spelled as the partial indexes of migration DEPLOYMENT_INDEXES are, with the literal
    // 'deployment' (a bound parameter would not let the planner use them).
    if (filter.action_type === 'deployment' || filter.environment !== undefined)
      where.push(`json_extract(receipts.receipt_json, '$.subject.action_type') = 'deployment'`);
    if (filter.environment !== undefined) {
      where.push(`json_extract(receipts.receipt_json, '$.subject.environment') = @environment`);
      params.environment = filter.environment;
    }
    if (filter.since !== undefined) {
      where.push('receipts.issued_at >= @since');
      params.since = filter.since;
    }
    if (filter.until !== undefined) {
      where.push('receipts.issued_at < @until');
      params.until = filter.until;
    }
    // A time bound alone looks unselective to the planner, which then walks every receipt in
    // sequence order and tests each; the time index reads only the receipts in range.
    const byTimeOnly = where.length > 0 && where.every((w) => w.startsWith('receipts.issued_at'));
    // With words, the FTS index drives in rowid (= sequence) order and stops at the page
    // size, instead of collecting every match before sorting.
    const order = q ? 'receipts_fts.rowid' : 'receipts.sequence';
    if (page.after !== undefined) {
      where.push(`${order} ${page.order === 'asc' ? '>' : '<'} @after`);
      params.after = page.after;
    }
    const from = q
      ? 'receipts_fts JOIN receipts ON receipts.sequence = receipts_fts.rowid'
      : `receipts${byTimeOnly ? ' INDEXED BY receipts_issued_at' : ''}`;
    // Only the receipt column: a listing never needs the stored claim or evaluation.
    const sql = `SELECT receipts.sequence AS sequence, receipts.receipt_id AS receiptId,
      CAST(receipts.receipt_json AS BLOB) AS json FROM ${from}
      ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY ${order} ${page.order === 'asc' ? 'ASC' : 'DESC'} LIMIT @limit`;
    return this.prepared<StoredReceiptJson>(sql).all(params);
  }

  async getMany(receiptIds: string[], scope?: ReadScope): Promise<LedgerEntry[]> {
    if (receiptIds.length === 0) return [];
    const marks = receiptIds.map(() => '?').join(', ');
    const scoped = scope === undefined ? '' : ' AND scope = ?';
    return this.prepared<ReceiptRow>(
      `SELECT ${ENTRY_COLUMNS} FROM receipts WHERE receipt_id IN (${marks})${scoped} ORDER BY sequence`,
    )
      .all(...receiptIds, ...(scope === undefined ? [] : [scope]))
      .map(this.toEntry);
  }

  async pullRequestHistory(
    repository: string,
    pullRequest: string,
    limit: number,
    scope?: ReadScope,
  ): Promise<LedgerEntry[]> {
    if (scope !== undefined) {
      return this.prepared<ReceiptRow>(
        `SELECT ${ENTRY_COLUMNS} FROM receipts WHERE repository = ? AND pull_request = ? AND scope = ? ORDER BY sequence LIMIT ?`,
      )
        .all(repository, pullRequest, scope, limit)
        .map(this.toEntry);
    }
    return this.prepared<ReceiptRow>(
      `SELECT ${ENTRY_COLUMNS} FROM receipts WHERE repository = ? AND pull_request = ? ORDER BY sequence LIMIT ?`,
    )
      .all(repository, pullRequest, limit)
      .map(this.toEntry);
  }

  async pullRequestReceiptsOf(
    scope: string,
    repository: string,
    pullRequest: string,
    limit: number,
  ): Promise<LedgerEntry[]> {
    return this.prepared<ReceiptRow>(
      `SELECT ${ENTRY_COLUMNS} FROM receipts WHERE repository = ? AND pull_request = ? AND scope = ? ORDER BY sequence DESC LIMIT ?`,
    )
      .all(repository, pullRequest, scope, limit)
      .map(this.toEntry);
  }

  async timeline(options: {
    repository?: string;
    since: string;
    until: string;
    scope?: ReadScope;
  }): Promise<TimelineRow[]> {
    const byRepository = options.repository !== undefined;
    const scoped = options.scope !== undefined;
    const sql = `SELECT day, verdict, SUM(n) AS count
      FROM ${scoped ? 'scope_daily_counts' : 'daily_counts'}
      WHERE ${scoped ? 'scope = @scope AND ' : ''}${byRepository ? 'repository = @repository AND ' : ''}day >= @since AND day < @until
      GROUP BY day, verdict ORDER BY day, verdict`;
    const { repository, since, until, scope } = options;
    return this.prepared<TimelineRow>(sql).all({
      since,
      until,
      ...(byRepository ? { repository } : {}),
      ...(scoped ? { scope } : {}),
    });
  }

  async repositories(page: NamePage, scope?: ReadScope): Promise<RepositorySummary[]> {
    const rows = this.prepared<RepositoryStatsFields & { repository: string }>(
      scope === undefined
        ? 'SELECT * FROM repository_stats WHERE repository > @after ORDER BY repository LIMIT @limit'
        : 'SELECT * FROM scope_repository_stats WHERE scope = @scope AND repository > @after ORDER BY repository LIMIT @limit',
    ).all({
      after: page.after ?? '',
      limit: page.limit,
      ...(scope === undefined ? {} : { scope }),
    });
    return rows.map((r) => toRepositorySummary(r.repository, r));
  }

  async agents(page: NamePage, scope?: ReadScope): Promise<AgentSummary[]> {
    const scoped = scope === undefined ? {} : { scope };
    const rows = this.prepared<AgentStatsFields & { agent: string }>(
      scope === undefined
        ? 'SELECT * FROM agent_stats WHERE agent > @after ORDER BY agent LIMIT @limit'
        : 'SELECT * FROM scope_agent_stats WHERE scope = @scope AND agent > @after ORDER BY agent LIMIT @limit',
    ).all({ after: page.after ?? '', limit: page.limit, ...scoped });
    if (rows.length === 0) return [];
    const models = new Map<string, string[]>();
    const modelRows = this.prepared<{ agent: string; model: string }>(
      scope === undefined
        ? 'SELECT agent, model FROM agent_models WHERE agent >= @first AND agent <= @last ORDER BY agent, model'
        : 'SELECT agent, model FROM scope_agent_models WHERE scope = @scope AND agent >= @first AND agent <= @last ORDER BY agent, model',
    ).all({ first: rows[0]!.agent, last: rows[rows.length - 1]!.agent, ...scoped });
    for (const { agent, model } of modelRows)
      models.set(agent, [...(models.get(agent) ?? []), model]);
    return rows.map((r) => toAgentSummary(r.agent, r, models.get(r.agent) ?? []));
  }

  async totals(scope?: ReadScope): Promise<LedgerTotals> {
    type TotalsRow = { verdict: Verdict; admissibility: AdmissibilityStatus; n: number };
    if (scope !== undefined) {
      const rows = this.prepared<TotalsRow>(
        'SELECT verdict, admissibility, n FROM scope_totals WHERE scope = ?',
      ).all(scope);
      const count = (table: string) =>
        this.prepared<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE scope = ?`).get(
          scope,
        )!.n;
      return {
        ...foldTotals(rows),
        agents: count('scope_agent_stats'),
        repositories: count('scope_repository_stats'),
      };
    }
    const rows = this.prepared<TotalsRow>(
      'SELECT verdict, admissibility, n FROM ledger_totals',
    ).all();
    const count = (table: string) =>
      this.prepared<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`).get()!.n;
    return {
      ...foldTotals(rows),
      agents: count('agent_stats'),
      repositories: count('repository_stats'),
    };
  }

  async countSince(since: string, scope?: ReadScope): Promise<VerdictCounts & { total: number }> {
    const rows =
      scope === undefined
        ? this.prepared<{ verdict: Verdict; n: number }>(
            // Left to itself the planner reads the whole verdict index to skip sorting three groups.
            'SELECT verdict, COUNT(*) AS n FROM receipts INDEXED BY receipts_issued_at WHERE issued_at >= ? GROUP BY verdict',
          ).all(since)
        : this.prepared<{ verdict: Verdict; n: number }>(
            'SELECT verdict, COUNT(*) AS n FROM receipts INDEXED BY receipts_scope_issued_at WHERE scope = ? AND issued_at >= ? GROUP BY verdict',
          ).all(scope, since);
    return foldVerdicts(rows);
  }
}
