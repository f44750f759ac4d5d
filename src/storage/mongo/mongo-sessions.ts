import { ObjectId, type ClientSession, type Db, type Filter, type IndexDescription } from 'mongodb';
import { isMcpToolOfAnyServer } from '../../core/agent/tool-summary.js';
import { SvcError } from '../../core/errors.js';
import type { SessionRecord } from '../../core/session-record.js';
import type { ReadScope } from '../../ports/ledger-queries.js';
import type { LedgerEntry } from '../../ports/ledger-store.js';
import type {
  CommitReport,
  OpenApproval,
  SessionFilter,
  SessionEvent,
  SessionLifecycle,
  SessionPage,
  SessionStore,
  SessionSummary,
  ToolCallKey,
} from '../../ports/session-store.js';
import {
  ANY_SERVER_CANDIDATES,
  approvalCited,
  approvalProblem,
  countsOf,
  lifecycleOf,
  sessionRowOf,
  summaryOf,
  type SessionCounts,
  type SessionRow,
  type StoredSessionEvent,
  type StoredSessionHead,
} from '../session-rows.js';
import { COLLECTIONS, ENTRY_PROJECTION, toEntry, type ReceiptDocument } from './documents.js';

/** A session record; `_id` is the receipt's sequence. */
export interface SessionRecordDocument extends SessionRow {
  _id: number;
  receipt_hash: string;
}

/** A session's counts, kept in each append's transaction. */
export type AgentSessionDocument = SessionCounts & StoredSessionHead;

/**
 * The index the open-approval lookup of every tool call reads: a call's dispositions only,
 * almost always none, so the lookup answers from one index probe however long the session.
 */
export const CALL_DISPOSITIONS_INDEX = 'call_dispositions';

/** The indexes of the session collections (mongo-store.ts creates them). */
export const SESSION_INDEXES: Record<string, IndexDescription[]> = {
  [COLLECTIONS.sessionRecords]: [
    { key: { receipt_id: 1 }, name: 'receipt_id_unique', unique: true },
    { key: { scope: 1, session_id: 1, _id: 1 }, name: 'session_sequence' },
    {
      key: { scope: 1, session_id: 1, tool_name: 1, input_digest: 1, _id: -1 },
      name: 'call_sequence',
    },
    {
      key: { scope: 1, session_id: 1, tool_name: 1, tool_use_id: 1, _id: -1 },
      name: 'tool_use_sequence',
    },
    // The open-approval lookup of every tool call reads a call's dispositions only.
    {
      key: { scope: 1, session_id: 1, tool_name: 1, input_digest: 1, _id: -1 },
      name: CALL_DISPOSITIONS_INDEX,
      partialFilterExpression: { kind: 'disposition' },
    },
    { key: { parent_receipt_id: 1 }, name: 'parent_receipt_id' },
    // The sessions that reported a commit (commitReports).
    {
      key: { git_head: 1, _id: 1 },
      name: 'git_head_sequence',
      partialFilterExpression: { git_head: { $type: 'string' } },
    },
    // An approval is used by one decision, whichever instance appends it.
    {
      key: { approval_receipt_id: 1 },
      name: 'approval_receipt_id_unique',
      unique: true,
      partialFilterExpression: { approval_receipt_id: { $type: 'string' } },
    },
    // A decision has at most one outcome.
    {
      key: { parent_receipt_id: 1, kind: 1 },
      name: 'one_outcome',
      unique: true,
      partialFilterExpression: { kind: 'outcome', parent_receipt_id: { $type: 'string' } },
    },
  ],
  [COLLECTIONS.agentSessions]: [
    { key: { scope: 1, session_id: 1 }, name: 'scope_session_unique', unique: true },
    { key: { first_sequence: -1 }, name: 'first_sequence' },
    { key: { session_id: 1, first_sequence: 1 }, name: 'session_first_sequence' },
    { key: { scope: 1, first_sequence: -1 }, name: 'scope_first_sequence' },
  ],
  // A session's latest event, and its latest start.
  [COLLECTIONS.sessionEvents]: [
    { key: { scope: 1, session_id: 1, _id: -1 }, name: 'session_arrival' },
  ],
};

// The same rule as summaryOf (and sessionCoverage), as filters for `covered`.
const COVERED: Filter<AgentSessionDocument> = {
  ran_without_allow: 0,
  $or: [{ outcomes: 0 }, { unanswered: 0 }],
};
const NOT_COVERED: Filter<AgentSessionDocument> = {
  $or: [{ ran_without_allow: { $gt: 0 } }, { outcomes: { $gt: 0 }, unanswered: { $gt: 0 } }],
};

const toSummary = (doc: AgentSessionDocument, lifecycle: SessionLifecycle): SessionSummary =>
  summaryOf(
    {
      ...doc,
      counts: {
        allowed: doc.allowed,
        blocked: doc.blocked,
        escalated: doc.escalated,
        dispositions: doc.dispositions,
        outcomes: doc.outcomes,
        ran_without_allow: doc.ran_without_allow,
        unanswered: doc.unanswered,
      },
    },
    lifecycle,
  );

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

/** The decisions on a tool call (the key of SessionStore.latestDecision); null: none can be. */
export function decisionFilter(key: ToolCallKey): Filter<SessionRecordDocument> | null {
  const byDigest = key.inputDigest !== undefined;
  if (!byDigest && key.toolUseId === undefined) return null;
  return {
    scope: key.scope,
    session_id: key.sessionId,
    // Any server: every MCP tool (latestDecision reads the tool from each name).
    tool_name:
      key.mcpToolOfAnyServer !== undefined && byDigest ? { $regex: '^mcp__' } : key.toolName,
    kind: 'decision',
    ...(byDigest ? { input_digest: key.inputDigest! } : { tool_use_id: key.toolUseId! }),
  };
}

const sessionKey = (s: { scope: string; session_id: string }) => `${s.scope}\n${s.session_id}`;
const NO_EVENTS: SessionLifecycle = { start: null, end: null };

const approvalOfDoc = (doc: SessionRecordDocument | null): OpenApproval | null =>
  doc
    ? { receiptId: doc.receipt_id, receiptHash: doc.receipt_hash, issuedAt: doc.issued_at }
    : null;

/** Agent sessions on MongoDB: documents written by `record`, in the ledger's append transaction. */
export class MongoSessions implements SessionStore {
  constructor(
    private readonly db: Db,
    /** How long an approval of a tool call lasts (SVC_AGENT_APPROVAL_TTL). */
    private readonly approvalTtlMs: number,
  ) {}

  private get rows() {
    return this.db.collection<SessionRecordDocument>(COLLECTIONS.sessionRecords);
  }

  private get sessions() {
    return this.db.collection<AgentSessionDocument>(COLLECTIONS.agentSessions);
  }

  private get events() {
    return this.db.collection<SessionEvent & { _id: ObjectId }>(COLLECTIONS.sessionEvents);
  }

  async recordEvent(event: SessionEvent): Promise<void> {
    // An ObjectId made here, in arrival order: it breaks a tie of `at` within a millisecond.
    await this.events.insertOne({ _id: new ObjectId(), ...event, cwd: event.cwd ?? null });
  }

  async projectDirOf(scope: string, sessionId: string): Promise<string | null> {
    // The session_arrival index: the latest start of this session, in arrival order.
    const start = await this.events.findOne(
      { scope, session_id: sessionId, kind: 'start' },
      { sort: { _id: -1 }, projection: { cwd: 1 } },
    );
    return start?.cwd ?? null;
  }

  /**
   * The lifecycles of these sessions, by scope and session id, in two queries however many:
   * each session's latest event (arrival order, the ObjectId made in recordEvent, as SQLite's
   * row id), and its latest start.
   */
  private async lifecyclesOf(
    docs: readonly { scope: string; session_id: string }[],
  ): Promise<Map<string, SessionLifecycle>> {
    const lifecycles = new Map<string, SessionLifecycle>();
    if (docs.length === 0) return lifecycles;
    const pairs = docs.map(({ scope, session_id }) => ({ scope, session_id }));
    const latest = (kind?: 'start') =>
      this.events
        .aggregate<{ _id: { scope: string; session_id: string } } & StoredSessionEvent>([
          { $match: { $or: pairs, ...(kind && { kind }) } },
          { $sort: { _id: -1 } },
          {
            $group: {
              _id: { scope: '$scope', session_id: '$session_id' },
              kind: { $first: '$kind' },
              at: { $first: '$at' },
              reason: { $first: '$reason' },
            },
          },
        ])
        .toArray();
    const [events, starts] = await Promise.all([latest(), latest('start')]);
    const startOf = new Map(starts.map((e) => [sessionKey(e._id), e]));
    for (const e of events)
      lifecycles.set(sessionKey(e._id), lifecycleOf(e, startOf.get(sessionKey(e._id))));
    return lifecycles;
  }

  /**
   * Writes a tool-call receipt's session record and counts in the append's transaction; a
   * refused approval aborts the transaction, and a concurrent second use of one approval fails
   * on the unique index.
   */
  async record(entry: LedgerEntry, scope: string, session: ClientSession): Promise<void> {
    const link =
      entry.receipt.outcome?.parent_receipt_id ?? entry.receipt.disposition?.parent_receipt_id;
    const parent = link ? await this.rows.findOne({ receipt_id: link }, { session }) : null;
    const row = sessionRowOf(entry, scope, parent?.scope ?? null);
    if (!row) return;
    const cited = row.kind === 'decision' ? approvalCited(entry) : null;
    if (cited) {
      const disposition = await this.rows.findOne({ receipt_id: cited.receiptId }, { session });
      const user = await this.rows.findOne(
        { approval_receipt_id: cited.receiptId },
        { session, projection: { receipt_id: 1 } },
      );
      const problem = approvalProblem({
        row,
        cited,
        disposition: disposition && { row: disposition, receiptHash: disposition.receipt_hash },
        usedBy: user?.receipt_id ?? null,
        ttlMs: this.approvalTtlMs,
      });
      if (problem) throw new SvcError('approval_refused', problem);
    }
    await this.rows.insertOne(
      { ...row, _id: row.sequence, receipt_hash: entry.receipt.chain.receipt_hash },
      { session },
    );
    const counts = countsOf(row, parent);
    await this.sessions.updateOne(
      { scope: row.scope, session_id: row.session_id },
      {
        $setOnInsert: {
          harness: row.harness,
          agent: row.agent,
          repository: row.repository,
          first_sequence: row.sequence,
          first_seen: row.issued_at,
        },
        $set: { last_sequence: row.sequence, last_seen: row.issued_at },
        $inc: { ...counts },
      },
      { upsert: true, session },
    );
  }

  async list(filter: SessionFilter, page: SessionPage): Promise<SessionSummary[]> {
    const query: Filter<AgentSessionDocument> = {};
    for (const key of ['scope', 'agent', 'repository', 'harness'] as const)
      if (filter[key] !== undefined) query[key] = filter[key];
    if (page.before !== undefined) query.first_sequence = { $lt: page.before };
    const where =
      filter.covered === undefined
        ? query
        : { $and: [query, filter.covered ? COVERED : NOT_COVERED] };
    const docs = await this.sessions
      .find(where, { projection: { _id: 0 } })
      .sort({ first_sequence: -1 })
      .limit(page.limit)
      .toArray();
    const lifecycles = await this.lifecyclesOf(docs);
    return docs.map((doc) => toSummary(doc, lifecycles.get(sessionKey(doc)) ?? NO_EVENTS));
  }

  async get(sessionId: string, scope: ReadScope): Promise<SessionSummary | null> {
    const doc = await this.sessions.findOne(
      { session_id: sessionId, ...(scope === undefined ? {} : { scope }) },
      { projection: { _id: 0 }, sort: { first_sequence: 1 } },
    );
    if (!doc) return null;
    const lifecycles = await this.lifecyclesOf([doc]);
    return toSummary(doc, lifecycles.get(sessionKey(doc)) ?? NO_EVENTS);
  }

  async records(
    scope: string,
    sessionId: string,
    page: { after?: number; limit: number },
  ): Promise<{ record: SessionRecord; entry: LedgerEntry }[]> {
    const rows = await this.rows
      .find({ scope, session_id: sessionId, _id: { $gt: page.after ?? 0 } })
      .sort({ _id: 1 })
      .limit(page.limit)
      .toArray();
    return this.withEntries(rows);
  }

  private async withEntries(
    rows: SessionRecordDocument[],
  ): Promise<{ record: SessionRecord; entry: LedgerEntry }[]> {
    if (rows.length === 0) return [];
    const receipts = await this.db
      .collection<ReceiptDocument>(COLLECTIONS.receipts)
      .find(
        { sequence: { $in: rows.map((r) => r._id) } },
        { projection: { ...ENTRY_PROJECTION, sequence: 1 } },
      )
      .toArray();
    const bySequence = new Map(receipts.map((r) => [r.sequence, r]));
    return rows.flatMap((row) => {
      const receipt = bySequence.get(row._id);
      return receipt ? [{ record: recordOf(row), entry: toEntry(receipt) }] : [];
    });
  }

  async commitReports(commits: readonly string[], limit: number): Promise<CommitReport[]> {
    if (commits.length === 0 || limit <= 0) return [];
    const groups = await this.rows
      .aggregate<{ _id: { commit: string; scope: string; session_id: string }; first: number }>([
        { $match: { git_head: { $in: [...commits] } } },
        {
          $group: {
            _id: { commit: '$git_head', scope: '$scope', session_id: '$session_id' },
            first: { $min: '$_id' },
          },
        },
        { $sort: { first: 1 } },
        { $limit: limit },
      ])
      .toArray();
    return groups.map((g) => ({ ...g._id }));
  }

  async latestDecision(key: ToolCallKey): Promise<LedgerEntry | null> {
    const filter = decisionFilter(key);
    if (!filter) return null;
    const anyServer = key.mcpToolOfAnyServer;
    const row =
      anyServer !== undefined && key.inputDigest !== undefined
        ? // The tool is read from each name, as the SQLite store reads it.
          (
            await this.rows.find(filter).sort({ _id: -1 }).limit(ANY_SERVER_CANDIDATES).toArray()
          ).find((r) => isMcpToolOfAnyServer(r.tool_name, anyServer))
        : await this.rows.findOne(filter, { sort: { _id: -1 } });
    if (!row) return null;
    const [found] = await this.withEntries([row]);
    return found?.entry ?? null;
  }

  async approvalOf(decisionReceiptId: string): Promise<OpenApproval | null> {
    return approvalOfDoc(
      await this.rows.findOne({
        parent_receipt_id: decisionReceiptId,
        kind: 'disposition',
        verdict: 'ALLOWED',
      }),
    );
  }

  async openApproval(
    key: ToolCallKey & { inputDigest: string },
    since: string,
  ): Promise<OpenApproval | null> {
    const candidates = await this.rows
      .find(
        {
          scope: key.scope,
          session_id: key.sessionId,
          tool_name: key.toolName,
          input_digest: key.inputDigest,
          kind: 'disposition',
          verdict: 'ALLOWED',
          issued_at: { $gte: since },
        },
        // Named, not left to the planner: call_sequence has the same keys over every record
        // of the call, which a planner may pick, and then reads each of them.
        { sort: { _id: -1 }, limit: 16, hint: CALL_DISPOSITIONS_INDEX },
      )
      .toArray();
    for (const candidate of candidates) {
      const used = await this.rows.findOne(
        { approval_receipt_id: candidate.receipt_id },
        { projection: { _id: 1 } },
      );
      if (!used) return approvalOfDoc(candidate);
    }
    return null;
  }
}
