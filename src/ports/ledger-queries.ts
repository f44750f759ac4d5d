import type { AdmissibilityStatus } from '../core/evaluation.js';
import type { Verdict } from '../core/policy.js';
import type { Receipt } from '../core/receipt.js';
import type { LedgerEntry } from './ledger-store.js';

/**
 * Whose receipts a read covers: one submitter scope (`key:<account>`, `app:<app>:<installation>`),
 * or every receipt when undefined. Private reads pass the caller's own scope.
 */
export type ReadScope = string | undefined;

export interface ReceiptFilter {
  /** Only receipts written in this submitter scope. */
  scope?: string;
  /** Words matched as prefixes against claim text, entity, repository and agent. */
  q?: string;
  agent?: string;
  repository?: string;
  verdict?: Verdict;
  status?: AdmissibilityStatus;
  /**
   * Only deployment receipts (subject.action_type `deployment`): the one action type with an
   * index of its own, as the explorer's deployment pages read them.
   */
  action_type?: 'deployment';
  /** Only deployment receipts to this environment (subject.environment), exactly. */
  environment?: string;
  /** Inclusive lower bound on issued_at (ISO 8601). */
  since?: string;
  /** Exclusive upper bound on issued_at (ISO 8601). */
  until?: string;
}

/**
 * A stored receipt's JSON as UTF-8 bytes, with its chain sequence and id. Bytes, not text: a
 * listing sends them as they are, and decoding them into a string only to encode it again was
 * a large part of a search's CPU and of the memory its garbage held.
 */
export interface StoredReceiptJson {
  sequence: number;
  receiptId: string;
  json: Buffer;
}

export interface SequencePage {
  /** Continue after this sequence in the listing's order. */
  after?: number;
  limit: number;
  order: 'asc' | 'desc';
}

export interface NamePage {
  /** Continue after this name, in name order. */
  after?: string;
  limit: number;
}

export type VerdictCounts = Record<Verdict, number>;
export type AdmissibilityCounts = Record<AdmissibilityStatus, number>;

export interface TimelineRow {
  day: string;
  verdict: Verdict;
  count: number;
}

export interface RepositorySummary {
  repository: string;
  total: number;
  by_verdict: VerdictCounts;
  by_admissibility: AdmissibilityCounts;
  last_receipt: { receipt_id: string; sequence: number; issued_at: string };
}

export interface AgentSummary {
  agent: string;
  total: number;
  by_verdict: VerdictCounts;
  by_admissibility: AdmissibilityCounts;
  models: string[];
  first_seen: string;
  last_seen: string;
}

export interface LedgerTotals {
  total: number;
  by_verdict: VerdictCounts;
  by_admissibility: AdmissibilityCounts;
  agents: number;
  repositories: number;
}

/**
 * The ledger's read model. Every query is answered from indexes or from aggregates kept in
 * the same transaction as each append, so its cost does not grow with the ledger.
 */
export interface LedgerQueries {
  /** Receipts matching every given filter, in sequence order (either direction). */
  search(filter: ReceiptFilter, page: SequencePage): Promise<Receipt[]>;
  /**
   * The same receipts as `search`, as the JSON text the store keeps (JSON.stringify of the
   * receipt as issued): a listing sends it on without parsing and serializing it again.
   */
  searchJson(filter: ReceiptFilter, page: SequencePage): Promise<StoredReceiptJson[]>;
  /** The entries among the given receipt ids that exist (in the scope), in sequence order. */
  getMany(receiptIds: string[], scope?: ReadScope): Promise<LedgerEntry[]>;
  /** A pull request's receipts (in the scope) in sequence order, at most `limit`. */
  pullRequestHistory(
    repository: string,
    pullRequest: string,
    limit: number,
    scope?: ReadScope,
  ): Promise<LedgerEntry[]>;
  /**
   * A pull request's receipts written in one submitter scope, newest first, at most `limit`:
   * what a submitter itself decided, which no other key can crowd out.
   */
  pullRequestReceiptsOf(
    scope: string,
    repository: string,
    pullRequest: string,
    limit: number,
  ): Promise<LedgerEntry[]>;
  /**
   * Daily counts by verdict; days are UTC dates (YYYY-MM-DD), `until` exclusive. The summaries
   * below take a scope too: each scope has aggregates of its own, kept in the same append
   * transaction as the ledger-wide ones.
   */
  timeline(options: {
    repository?: string;
    since: string;
    until: string;
    scope?: ReadScope;
  }): Promise<TimelineRow[]>;
  repositories(page: NamePage, scope?: ReadScope): Promise<RepositorySummary[]>;
  agents(page: NamePage, scope?: ReadScope): Promise<AgentSummary[]>;
  totals(scope?: ReadScope): Promise<LedgerTotals>;
  /** Receipts issued at or after `since`, by verdict. */
  countSince(since: string, scope?: ReadScope): Promise<VerdictCounts & { total: number }>;
}
