import { GIT_COMMIT } from '../core/agent/session-facts-schema.js';
import { approvalOf, type ApprovalRef } from '../core/approval.js';
import { callHasOutcomeEvent } from '../core/session-coverage.js';
import { sessionRecordOf, type SessionRecord } from '../core/session-record.js';
import type { LedgerEntry } from '../ports/ledger-store.js';
import type { SessionLifecycle, SessionSummary } from '../ports/session-store.js';

// What both stores write for a tool-call receipt in its append (contract §12): one session
// record, the session's counts, and the approval a decision uses. Derived here once, so the
// SQLite and MongoDB adapters cannot disagree on what a session holds.

/**
 * How many of a session's latest MCP decisions with one input an outcome that names no server
 * reads, newest first: the call it reports was decided just before it.
 */
export const ANY_SERVER_CANDIDATES = 32;

/** A session record as stored, with the keys the lookups need. */
export interface SessionRow extends SessionRecord {
  /** The session's scope: the decisions', also for a disposition another account recorded. */
  scope: string;
  session_id: string;
  harness: string;
  tool_use_id: string | null;
  agent: string | null;
  repository: string | null;
  /** The approval (a disposition's receipt id) a decision used; at most one decision each. */
  approval_receipt_id: string | null;
  /** An outcome's `action.git_head`: the repository's HEAD after the call; null otherwise. */
  git_head: string | null;
}

/** An outcome claim's `action.git_head`, read as data (stored claims are not re-validated). */
function gitHeadOf(entry: LedgerEntry): string | null {
  const head = (entry.claim.action as { git_head?: unknown } | undefined)?.git_head;
  return typeof head === 'string' && GIT_COMMIT.test(head) ? head : null;
}

/**
 * The session row of an appended entry, or null when it is not a tool-call receipt.
 * `parentScope` is the scope of the parent's session row (a disposition's or an outcome's);
 * the appending scope otherwise.
 */
export function sessionRowOf(
  entry: LedgerEntry,
  appendScope: string,
  parentScope: string | null,
): SessionRow | null {
  const found = sessionRecordOf(entry);
  if (!found) return null;
  const { call, record } = found;
  const action = entry.claim.action;
  const approval = record.kind === 'decision' ? approvalOf(entry.claim) : null;
  return {
    ...record,
    scope: parentScope ?? appendScope,
    session_id: call.sessionId,
    harness: call.harness,
    tool_use_id: call.toolUseId ?? null,
    agent: action?.agent ?? null,
    repository: action?.repository ?? null,
    approval_receipt_id: approval?.receiptId ?? null,
    git_head: record.kind === 'outcome' ? gitHeadOf(entry) : null,
  };
}

/** The approval a decision row cites, with the hash it claims. */
export const approvalCited = (entry: LedgerEntry): ApprovalRef | null => approvalOf(entry.claim);

/**
 * Why a decision may not use the approval it cites, or null when it may: the approval must be
 * an approving disposition of this very call (scope, session, tool name and input digest),
 * with the hash the claim signs, issued at most `ttlMs` before the decision, and unused.
 */
export function approvalProblem(input: {
  row: SessionRow;
  cited: ApprovalRef;
  disposition: { row: SessionRow; receiptHash: string } | null;
  usedBy: string | null;
  ttlMs: number;
}): string | null {
  const { row, cited, disposition } = input;
  const id = cited.receiptId;
  if (!disposition || disposition.row.kind !== 'disposition')
    return `the ledger holds no disposition ${id} of a tool call`;
  const d = disposition.row;
  if (d.verdict !== 'ALLOWED') return `disposition ${id} rejected the call`;
  if (disposition.receiptHash !== cited.receiptHash)
    return `disposition ${id} has receipt hash ${disposition.receiptHash}, not the one cited`;
  if (d.scope !== row.scope || d.session_id !== row.session_id)
    return `disposition ${id} approved a call of another session`;
  if (d.tool_name !== row.tool_name || d.input_digest !== row.input_digest)
    return `disposition ${id} approved another tool or another input`;
  if (input.usedBy !== null) return `approval ${id} was used already, by ${input.usedBy}`;
  const age = Date.parse(row.issued_at) - Date.parse(d.issued_at);
  if (!(age >= 0 && age <= input.ttlMs))
    return `approval ${id} has expired (it lasts ${input.ttlMs / 1000} s)`;
  return null;
}

/** Increments of a session's counts for one appended row. */
export interface SessionCounts {
  allowed: number;
  blocked: number;
  escalated: number;
  dispositions: number;
  outcomes: number;
  ran_without_allow: number;
  /** ALLOWED decisions without an outcome (whether or not the harness reports outcomes). */
  unanswered: number;
}

/** An ALLOWED decision on a call that its harness reports after. */
const awaitsOutcome = (row: SessionRow): boolean =>
  row.verdict === 'ALLOWED' && callHasOutcomeEvent(row.harness, row.tool_name);

/**
 * What one row adds to its session's counts. `parent` is an outcome's decision row: an
 * outcome answers an ALLOWED decision (one outcome per decision, a unique index in each store).
 */
export function countsOf(row: SessionRow, parent: SessionRow | null): SessionCounts {
  const zero: SessionCounts = {
    allowed: 0,
    blocked: 0,
    escalated: 0,
    dispositions: 0,
    outcomes: 0,
    ran_without_allow: 0,
    unanswered: 0,
  };
  if (row.kind === 'disposition') return { ...zero, dispositions: 1 };
  if (row.kind === 'outcome')
    return {
      ...zero,
      outcomes: 1,
      ran_without_allow: row.ran_without_allow ? 1 : 0,
      unanswered: parent?.kind === 'decision' && awaitsOutcome(parent) ? -1 : 0,
    };
  const verdict = row.verdict.toLowerCase() as 'allowed' | 'blocked' | 'escalated';
  return { ...zero, [verdict]: 1, unanswered: awaitsOutcome(row) ? 1 : 0 };
}

/** What both stores keep of a session besides its counts: the first record's facts, the span. */
export type StoredSessionHead = Pick<
  SessionSummary,
  | 'scope'
  | 'session_id'
  | 'harness'
  | 'agent'
  | 'repository'
  | 'first_sequence'
  | 'last_sequence'
  | 'first_seen'
  | 'last_seen'
>;

/** A session start or end event as both stores read it back. */
export interface StoredSessionEvent {
  kind: 'start' | 'end';
  at: string;
  reason: string | null;
}

/**
 * A session's lifecycle from its latest event (arrival order) and its latest start event: it
 * is open unless the latest event of all is an end.
 */
export function lifecycleOf(
  latest: StoredSessionEvent | undefined,
  latestStart: StoredSessionEvent | undefined,
): SessionLifecycle {
  return {
    start: latestStart ? { at: latestStart.at } : null,
    end: latest?.kind === 'end' ? { at: latest.at, reason: latest.reason ?? null } : null,
  };
}

/** The stored counts of a session as its summary (the same rule as sessionCoverage). */
export function summaryOf(
  stored: StoredSessionHead & { counts: SessionCounts },
  lifecycle: SessionLifecycle = { start: null, end: null },
): SessionSummary {
  const { counts } = stored;
  const { start, end } = lifecycle;
  const missing = counts.outcomes > 0 ? counts.unanswered : 0;
  return {
    scope: stored.scope,
    session_id: stored.session_id,
    harness: stored.harness,
    agent: stored.agent,
    repository: stored.repository,
    first_sequence: stored.first_sequence,
    last_sequence: stored.last_sequence,
    first_seen: stored.first_seen,
    last_seen: stored.last_seen,
    decisions: { ALLOWED: counts.allowed, BLOCKED: counts.blocked, ESCALATED: counts.escalated },
    dispositions: counts.dispositions,
    outcomes: counts.outcomes,
    ran_without_allow: counts.ran_without_allow,
    missing_outcomes: missing,
    covered: counts.ran_without_allow === 0 && missing === 0,
    started_at: start?.at ?? null,
    ended_at: end?.at ?? null,
    end_reason: end?.reason ?? null,
  };
}
