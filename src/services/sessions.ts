import { SvcError } from '../core/errors.js';
import type { SessionRecord } from '../core/session-record.js';
import type { Receipt } from '../core/receipt.js';
import type { ReadScope } from '../ports/ledger-queries.js';
import type { SessionStore, SessionSummary } from '../ports/session-store.js';

/** A session as reads show it: the summary without the internal submitter scope. */
export type SessionView = Omit<SessionSummary, 'scope'>;

/** One receipt of a session as reads show it: its record, the call's facts, the receipt. */
export interface SessionRecordView extends SessionRecord {
  /** The stored claim's `action.tool` (harness, name, input_digest, redacted summary). */
  tool: unknown;
  /** An outcome's `action.git_head`: the commit the call left as HEAD (docs/AGENTS.md). */
  git_head: string | null;
  receipt: Receipt;
}

export interface SessionListQuery {
  agent?: string;
  repo?: string;
  harness?: string;
  covered?: boolean;
  limit: number;
  /** A page's `next_after`: the first_sequence of its last session. */
  after?: number;
}

const viewOf = ({ scope: _scope, ...rest }: SessionSummary): SessionView => rest;

/** Agent sessions (contract §12): their list and each one's receipts in ledger order. */
export class SessionService {
  constructor(private readonly deps: { sessions: SessionStore }) {}

  /**
   * Newest sessions first (by the sequence of their first receipt), with the filters given;
   * `next_after` continues the listing, as the ledger's other listings do.
   */
  async list(
    query: SessionListQuery,
    scope: ReadScope,
  ): Promise<{ sessions: SessionView[]; limit: number; next_after: number | null }> {
    const found = await this.deps.sessions.list(
      {
        ...(scope === undefined ? {} : { scope }),
        ...(query.agent === undefined ? {} : { agent: query.agent }),
        ...(query.repo === undefined ? {} : { repository: query.repo }),
        ...(query.harness === undefined ? {} : { harness: query.harness }),
        ...(query.covered === undefined ? {} : { covered: query.covered }),
      },
      { limit: query.limit, ...(query.after === undefined ? {} : { before: query.after }) },
    );
    return {
      sessions: found.map(viewOf),
      limit: query.limit,
      next_after: found.length === query.limit ? found.at(-1)!.first_sequence : null,
    };
  }

  /**
   * One session: its counts and coverage, and a page of its receipts in ledger order. 404
   * for a session the caller cannot read, as for a receipt.
   */
  async session(
    sessionId: string,
    page: { limit: number; after?: number },
    scope: ReadScope,
  ): Promise<{ session: SessionView; records: SessionRecordView[]; next_after: number | null }> {
    const summary = await this.deps.sessions.get(sessionId, scope);
    if (!summary)
      throw new SvcError('not_found', `No session ${JSON.stringify(sessionId)} in the ledger`);
    const rows = await this.deps.sessions.records(summary.scope, summary.session_id, page);
    return {
      session: viewOf(summary),
      records: rows.map(({ record, entry }) => ({
        ...record,
        tool: (entry.claim.action as { tool?: unknown } | undefined)?.tool ?? null,
        git_head: record.kind === 'outcome' ? (entry.claim.action?.git_head ?? null) : null,
        receipt: entry.receipt,
      })),
      next_after: rows.length === page.limit ? rows.at(-1)!.record.sequence : null,
    };
  }
}
