import type { Database, Statement } from 'better-sqlite3';
import { isMcpToolOfAnyServer } from '../../core/agent/tool-summary.js';
import { SvcError } from '../../core/errors.js';
import type { ReadScope } from '../../ports/ledger-queries.js';
import type { LedgerEntry } from '../../ports/ledger-store.js';
import type {
  CommitReport,
  OpenApproval,
  SessionFilter,
  SessionPage,
  SessionStore,
  SessionEvent,
  SessionLifecycle,
  SessionSummary,
  ToolCallKey,
} from '../../ports/session-store.js';
import type { SessionRecord } from '../../core/session-record.js';
import {
  ANY_SERVER_CANDIDATES,
  approvalCited,
  approvalProblem,
  countsOf,
  lifecycleOf,
  sessionRowOf,
  summaryOf,
  type SessionRow,
  type StoredSessionEvent,
} from '../session-rows.js';
import { ENTRY_COLUMNS, sqliteEntryReader, type ReceiptRow } from './receipt-rows.js';

type StoredRow = Omit<SessionRow, 'ran_without_allow'> & { ran_without_allow: number };
type SessionTableRow = Omit<
  SessionSummary,
  'decisions' | 'dispositions' | 'outcomes' | 'ran_without_allow' | 'missing_outcomes' | 'covered'
> & {
  allowed: number;
  blocked: number;
  escalated: number;
  dispositions: number;
  outcomes: number;
  ran_without_allow: number;
  unanswered: number;
};

const ROW_COLUMNS = `sequence, receipt_id, scope, session_id, harness, kind, tool_name,
  input_digest, tool_use_id, verdict, parent_receipt_id, ran_without_allow, approval_receipt_id,
  issued_at, agent, repository, git_head`;

const fromStored = (row: StoredRow): SessionRow => ({
  ...row,
  ran_without_allow: row.ran_without_allow === 1,
});

const recordOf = (row: SessionRow): SessionRecord => ({
  receipt_id: row.receipt_id,
  sequence: row.sequence,
  issued_at: row.issued_at,
  kind: row.kind,
  verdict: row.verdict,
  tool_name: row.tool_name,
  input_digest: row.input_digest,
  parent_receipt_id: row.parent_receipt_id,
  ran_without_allow: row.ran_without_allow,
});

const toSummary = (row: SessionTableRow, lifecycle: SessionLifecycle): SessionSummary =>
  summaryOf(
    {
      ...row,
      counts: {
        allowed: row.allowed,
        blocked: row.blocked,
        escalated: row.escalated,
        dispositions: row.dispositions,
        outcomes: row.outcomes,
        ran_without_allow: row.ran_without_allow,
        unanswered: row.unanswered,
      },
    },
    lifecycle,
  );

// The same rule as summaryOf (and sessionCoverage), as SQL for the `covered` filter.
const COVERED_SQL = '(ran_without_allow = 0 AND (outcomes = 0 OR unanswered = 0))';

/** Agent sessions on SQLite: rows written by `record`, inside the ledger's append transaction. */
export class SqliteSessions implements SessionStore {
  private readonly rowByReceipt: Statement<[string], StoredRow>;
  private readonly usedBy: Statement<[string], { receipt_id: string }>;
  private readonly hashOf: Statement<[string], { receipt_hash: string }>;
  private readonly insertRow: Statement;
  private readonly upsertSession: Statement;
  private readonly anyDisposition: Statement<[string, string, string, string], { one: 1 }>;
  private readonly openApprovalRow: Statement<
    [string, string, string, string, string],
    { receipt_id: string; receipt_hash: string; issued_at: string }
  >;
  private readonly insertEvent: Statement;
  /** A session's latest event, and its latest start event. */
  private readonly lastEvent: Statement<[string, string], StoredSessionEvent>;
  private readonly lastStart: Statement<[string, string], StoredSessionEvent>;
  private readonly startCwd: Statement<[string, string], string | null>;
  private readonly statements = new Map<string, Statement>();
  private readonly toEntry: (row: ReceiptRow) => LedgerEntry;

  constructor(
    private readonly db: Database,
    /** How long an approval of a tool call lasts (SVC_AGENT_APPROVAL_TTL). */
    private readonly approvalTtlMs: number,
  ) {
    this.toEntry = sqliteEntryReader(db);
    this.rowByReceipt = db.prepare(
      `SELECT ${ROW_COLUMNS} FROM session_records WHERE receipt_id = ?`,
    );
    this.usedBy = db.prepare(
      'SELECT receipt_id FROM session_records WHERE approval_receipt_id = ?',
    );
    this.hashOf = db.prepare('SELECT receipt_hash FROM receipts WHERE receipt_id = ?');
    this.insertEvent = db.prepare(
      `INSERT INTO session_events (scope, session_id, harness, kind, at, reason, cwd)
        VALUES (@scope, @session_id, @harness, @kind, @at, @reason, @cwd)`,
    );
    this.startCwd = db
      .prepare<[string, string], string | null>(
        `SELECT cwd FROM session_events WHERE scope = ? AND session_id = ? AND kind = 'start'
          ORDER BY id DESC LIMIT 1`,
      )
      .pluck();
    this.lastEvent = db.prepare(
      `SELECT kind, at, reason FROM session_events WHERE scope = ? AND session_id = ?
        ORDER BY id DESC LIMIT 1`,
    );
    this.lastStart = db.prepare(
      `SELECT kind, at, reason FROM session_events WHERE scope = ? AND session_id = ?
        AND kind = 'start' ORDER BY id DESC LIMIT 1`,
    );
    this.insertRow = db.prepare(
      `INSERT INTO session_records (${ROW_COLUMNS}) VALUES (@sequence, @receipt_id, @scope,
        @session_id, @harness, @kind, @tool_name, @input_digest, @tool_use_id, @verdict,
        @parent_receipt_id, @ran_without_allow, @approval_receipt_id, @issued_at, @agent,
        @repository, @git_head)`,
    );
    this.upsertSession = db.prepare(
      `INSERT INTO agent_sessions (scope, session_id, harness, agent, repository, first_sequence,
        last_sequence, first_seen, last_seen, allowed, blocked, escalated, dispositions, outcomes,
        ran_without_allow, unanswered)
       VALUES (@scope, @session_id, @harness, @agent, @repository, @sequence, @sequence,
        @issued_at, @issued_at, @allowed, @blocked, @escalated, @dispositions, @outcomes,
        @ran_without_allow, @unanswered)
       -- The harness, agent and repository are the first record's.
       ON CONFLICT (scope, session_id) DO UPDATE SET
        last_sequence = excluded.last_sequence, last_seen = excluded.last_seen,
        allowed = allowed + excluded.allowed, blocked = blocked + excluded.blocked,
        escalated = escalated + excluded.escalated,
        dispositions = dispositions + excluded.dispositions,
        outcomes = outcomes + excluded.outcomes,
        ran_without_allow = ran_without_allow + excluded.ran_without_allow,
        unanswered = unanswered + excluded.unanswered`,
    );
    // Asked before every tool call's decision, and almost always answered "none": a probe of
    // the call's dispositions (the partial index alone) decides that. Measured on SQLite
    // 3.54, the full lookup below costs 15-90 µs a call even on an empty table (its join and
    // its order by sequence: without them the same query costs 1-3 µs), the probe 1-3 µs.
    this.anyDisposition = db.prepare(
      `SELECT 1 AS one FROM session_records
        WHERE scope = ? AND session_id = ? AND tool_name = ? AND input_digest = ?
          AND kind = 'disposition' LIMIT 1`,
    );
    this.openApprovalRow = db.prepare(
      `SELECT s.receipt_id, r.receipt_hash, s.issued_at
        FROM session_records s JOIN receipts r ON r.sequence = s.sequence
        WHERE s.scope = ? AND s.session_id = ? AND s.tool_name = ? AND s.input_digest = ?
          AND s.kind = 'disposition' AND s.verdict = 'ALLOWED' AND s.issued_at >= ?
          AND NOT EXISTS (SELECT 1 FROM session_records u WHERE u.approval_receipt_id = s.receipt_id)
        ORDER BY s.sequence DESC LIMIT 1`,
    );
  }

  private prepared<R>(sql: string): Statement<unknown[], R> {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement as Statement<unknown[], R>;
  }

  private row(receiptId: string | null): SessionRow | null {
    if (receiptId === null) return null;
    const row = this.rowByReceipt.get(receiptId);
    return row ? fromStored(row) : null;
  }

  /**
   * Writes a tool-call receipt's session row and counts; called in the append's transaction
   * after the receipt's insert, so a refusal (an approval that may not be used) rolls the
   * whole append back.
   */
  record(entry: LedgerEntry, scope: string): void {
    const link =
      entry.receipt.outcome?.parent_receipt_id ?? entry.receipt.disposition?.parent_receipt_id;
    const parent = this.row(link ?? null);
    const row = sessionRowOf(entry, scope, parent?.scope ?? null);
    if (!row) return;
    const cited = row.kind === 'decision' ? approvalCited(entry) : null;
    if (cited) {
      const disposition = this.row(cited.receiptId);
      const problem = approvalProblem({
        row,
        cited,
        disposition: disposition && {
          row: disposition,
          receiptHash: this.hashOf.get(cited.receiptId)!.receipt_hash,
        },
        usedBy: this.usedBy.get(cited.receiptId)?.receipt_id ?? null,
        ttlMs: this.approvalTtlMs,
      });
      if (problem) throw new SvcError('approval_refused', problem);
    }
    this.insertRow.run({ ...row, ran_without_allow: row.ran_without_allow ? 1 : 0 });
    this.upsertSession.run({ ...row, ...countsOf(row, parent) });
  }

  async list(filter: SessionFilter, page: SessionPage): Promise<SessionSummary[]> {
    const where: string[] = [];
    const params: Record<string, unknown> = { limit: page.limit };
    for (const key of ['scope', 'agent', 'repository', 'harness'] as const) {
      if (filter[key] !== undefined) {
        where.push(`${key} = @${key}`);
        params[key] = filter[key];
      }
    }
    if (filter.covered !== undefined) where.push(`${filter.covered ? '' : 'NOT '}${COVERED_SQL}`);
    if (page.before !== undefined) {
      where.push('first_sequence < @before');
      params.before = page.before;
    }
    const sql = `SELECT * FROM agent_sessions ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY first_sequence DESC LIMIT @limit`;
    return this.prepared<SessionTableRow>(sql)
      .all(params)
      .map((row) => toSummary(row, this.lifecycleOf(row)));
  }

  async recordEvent(event: SessionEvent): Promise<void> {
    this.insertEvent.run({ ...event, cwd: event.cwd ?? null });
  }

  async projectDirOf(scope: string, sessionId: string): Promise<string | null> {
    return this.startCwd.get(scope, sessionId) ?? null;
  }

  private lifecycleOf(row: { scope: string; session_id: string }): SessionLifecycle {
    // Event ids are in arrival order; the latest start is asked for only when it is not the latest.
    const latest = this.lastEvent.get(row.scope, row.session_id);
    const start = latest?.kind === 'start' ? latest : this.lastStart.get(row.scope, row.session_id);
    return lifecycleOf(latest, start);
  }

  async get(sessionId: string, scope: ReadScope): Promise<SessionSummary | null> {
    const row =
      scope === undefined
        ? this.prepared<SessionTableRow>(
            'SELECT * FROM agent_sessions WHERE session_id = ? ORDER BY first_sequence LIMIT 1',
          ).get(sessionId)
        : this.prepared<SessionTableRow>(
            'SELECT * FROM agent_sessions WHERE scope = ? AND session_id = ?',
          ).get(scope, sessionId);
    return row ? toSummary(row, this.lifecycleOf(row)) : null;
  }

  async records(
    scope: string,
    sessionId: string,
    page: { after?: number; limit: number },
  ): Promise<{ record: SessionRecord; entry: LedgerEntry }[]> {
    const rows = this.prepared<StoredRow & ReceiptRow>(
      `SELECT ${ROW_COLUMNS.replace(/(\w+)/g, 's.$1')}, ${ENTRY_COLUMNS.replace(/(\w+)/g, 'r.$1')}
        FROM session_records s JOIN receipts r ON r.sequence = s.sequence
        WHERE s.scope = ? AND s.session_id = ? AND s.sequence > ? ORDER BY s.sequence LIMIT ?`,
    ).all(scope, sessionId, page.after ?? 0, page.limit);
    return rows.map((row) => ({ record: recordOf(fromStored(row)), entry: this.toEntry(row) }));
  }

  async commitReports(commits: readonly string[], limit: number): Promise<CommitReport[]> {
    if (commits.length === 0 || limit <= 0) return [];
    return this.prepared<CommitReport>(
      // One statement for any number of commits: the list travels as one JSON parameter.
      `SELECT git_head AS "commit", scope, session_id FROM session_records
        WHERE git_head IN (SELECT value FROM json_each(?))
        GROUP BY git_head, scope, session_id ORDER BY MIN(sequence) LIMIT ?`,
    ).all(JSON.stringify(commits), limit);
  }

  async latestDecision(key: ToolCallKey): Promise<LedgerEntry | null> {
    const byDigest = key.inputDigest !== undefined;
    if (!byDigest && key.toolUseId === undefined) return null;
    const select = `SELECT ${ENTRY_COLUMNS.replace(/(\w+)/g, 'r.$1')}, s.tool_name AS call_tool
        FROM session_records s JOIN receipts r ON r.sequence = s.sequence
        WHERE s.scope = ? AND s.session_id = ? AND s.kind = 'decision'`;
    const anyServer = key.mcpToolOfAnyServer;
    const row =
      anyServer !== undefined && byDigest
        ? // The session's latest MCP calls with this input; the tool is read from each name
          // (isMcpToolOfAnyServer), as the MongoDB store reads it.
          this.prepared<ReceiptRow & { call_tool: string }>(
            `${select} AND s.input_digest = ? AND substr(s.tool_name, 1, 5) = 'mcp__'
              ORDER BY s.sequence DESC LIMIT ${ANY_SERVER_CANDIDATES}`,
          )
            .all(key.scope, key.sessionId, key.inputDigest)
            .find((r) => isMcpToolOfAnyServer(r.call_tool, anyServer))
        : this.prepared<ReceiptRow>(
            `${select} AND s.tool_name = ? AND s.${byDigest ? 'input_digest' : 'tool_use_id'} = ?
              ORDER BY s.sequence DESC LIMIT 1`,
          ).get(key.scope, key.sessionId, key.toolName, byDigest ? key.inputDigest : key.toolUseId);
    return row ? this.toEntry(row) : null;
  }

  async approvalOf(decisionReceiptId: string): Promise<OpenApproval | null> {
    const row = this.prepared<{ receipt_id: string; receipt_hash: string; issued_at: string }>(
      `SELECT s.receipt_id, r.receipt_hash, s.issued_at
        FROM session_records s JOIN receipts r ON r.sequence = s.sequence
        WHERE s.parent_receipt_id = ? AND s.kind = 'disposition' AND s.verdict = 'ALLOWED'`,
    ).get(decisionReceiptId);
    return row
      ? { receiptId: row.receipt_id, receiptHash: row.receipt_hash, issuedAt: row.issued_at }
      : null;
  }

  async openApproval(
    key: ToolCallKey & { inputDigest: string },
    since: string,
  ): Promise<OpenApproval | null> {
    const call = [key.scope, key.sessionId, key.toolName, key.inputDigest] as const;
    if (!this.anyDisposition.get(...call)) return null;
    const row = this.openApprovalRow.get(...call, since);
    return row
      ? { receiptId: row.receipt_id, receiptHash: row.receipt_hash, issuedAt: row.issued_at }
      : null;
  }
}
