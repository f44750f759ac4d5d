import type { SessionRecord } from '../core/session-record.js';
import type { ReadScope, VerdictCounts } from './ledger-queries.js';
import type { LedgerEntry } from './ledger-store.js';

/**
 * An agent session (contract §12) as the ledger keeps it: the tool-call receipts of one
 * harness session id within one submitter scope, with counts kept in each append.
 */
export interface SessionSummary {
  /** The submitter scope the session belongs to: its decisions' (internal, never shown). */
  scope: string;
  session_id: string;
  harness: string;
  agent: string | null;
  repository: string | null;
  first_sequence: number;
  last_sequence: number;
  first_seen: string;
  last_seen: string;
  decisions: VerdictCounts;
  dispositions: number;
  outcomes: number;
  ran_without_allow: number;
  /** ALLOWED decisions without an outcome, counted where the harness reports outcomes. */
  missing_outcomes: number;
  covered: boolean;
  /** The latest session start event's time, or null when the harness sent none. */
  started_at: string | null;
  /** The latest session end event's time, unless the session started again after it. */
  ended_at: string | null;
  /** That end event's reason, as the harness gave it (`exit`, `clear`, `completed`, …). */
  end_reason: string | null;
}

/**
 * A harness's session start or end event, as recorded: when it came, and the harness's
 * source or reason. Not a receipt: it opens or closes the session's timeline, nothing more.
 */
export interface SessionEvent {
  scope: string;
  session_id: string;
  harness: string;
  kind: 'start' | 'end';
  at: string;
  reason: string | null;
  /** A start event's working directory as the harness reported it: the project directory. */
  cwd?: string | null;
}

/**
 * A session's latest start event, and its end event when that is the latest event of all (a
 * session resumed after it ended is open again).
 */
export interface SessionLifecycle {
  start: { at: string } | null;
  end: { at: string; reason: string | null } | null;
}

export interface SessionFilter {
  /** Only the sessions of this submitter scope (private reads). */
  scope?: string;
  agent?: string;
  repository?: string;
  harness?: string;
  covered?: boolean;
}

/** Newest sessions first: continue with those started before `before` (a first_sequence). */
export interface SessionPage {
  before?: number;
  limit: number;
}

/** A tool call in a session: the key of decisions, outcomes and approvals. */
export interface ToolCallKey {
  scope: string;
  sessionId: string;
  toolName: string;
  /** The input's digest, or else the harness's tool-use id, names the call. */
  inputDigest?: string;
  toolUseId?: string;
  /**
   * Instead of `toolName`: an MCP tool named by a harness that did not say its server, so any
   * `mcp__<server>__<this>` (found by input digest only).
   */
  mcpToolOfAnyServer?: string;
}

/** A disposition approving an escalated call, not used yet. */
export interface OpenApproval {
  receiptId: string;
  receiptHash: string;
  issuedAt: string;
}

/** A session that reported a commit as its repository's HEAD after one of its calls. */
export interface CommitReport {
  commit: string;
  scope: string;
  session_id: string;
}

/** The session reads and lookups; the rows they read are written by the ledger's appends. */
export interface SessionStore {
  list(filter: SessionFilter, page: SessionPage): Promise<SessionSummary[]>;
  /** Records a session start or end event (append-only, outside the ledger). */
  recordEvent(event: SessionEvent): Promise<void>;
  /**
   * The working directory of the session's latest start event in `scope` (its project
   * directory), or null when no start event gave one.
   */
  projectDirOf(scope: string, sessionId: string): Promise<string | null>;
  /**
   * The session with this id the reader can read. Sessions of two scopes may share an id
   * (harness ids are the harness's): the one started first is answered.
   */
  get(sessionId: string, scope: ReadScope): Promise<SessionSummary | null>;
  /** A session's receipts in ledger order, after a sequence, at most `limit`. */
  records(
    scope: string,
    sessionId: string,
    page: { after?: number; limit: number },
  ): Promise<{ record: SessionRecord; entry: LedgerEntry }[]>;
  /**
   * The sessions whose outcomes reported one of `commits` as `git_head`, once per commit and
   * session, in the order of the first such report; at most `limit`. Every scope: a commit id
   * names the same commit whoever reported it.
   */
  commitReports(commits: readonly string[], limit: number): Promise<CommitReport[]>;
  /** The most recent decision on the call (not a disposition or an outcome). */
  latestDecision(key: ToolCallKey): Promise<LedgerEntry | null>;
  /** The approving disposition of an escalated decision, if any. */
  approvalOf(decisionReceiptId: string): Promise<OpenApproval | null>;
  /**
   * The most recent approval of exactly this call (session, tool name and input digest) that
   * no decision has used and that was issued at or after `since`.
   */
  openApproval(
    key: ToolCallKey & { inputDigest: string },
    since: string,
  ): Promise<OpenApproval | null>;
}
