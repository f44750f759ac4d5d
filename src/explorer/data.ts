import type { z } from 'zod';
import type { evaluateResponseSchema } from '../api/schemas/claims.js';
import type {
  agentsSchema,
  diffSchema,
  ledgerPageSchema,
  overviewSchema,
  reposSchema,
  searchPageSchema,
  timelineSchema,
} from '../api/schemas/ledger.js';
import type { sessionDetailSchema } from '../api/schemas/sessions.js';
import type { keyHistoryResponseSchema } from '../api/schemas/verify.js';

// What each page renders, in the shapes of the JSON API: the server fills them from the
// services the routes call, the browser (private reads) from the routes themselves, and
// one renderer draws both.

export type Overview = z.input<typeof overviewSchema>;
export type Timeline = z.input<typeof timelineSchema>;
export type Repositories = z.input<typeof reposSchema>;
export type Agents = z.input<typeof agentsSchema>;
export type SearchPage = z.input<typeof searchPageSchema>;
export type LedgerPage = z.input<typeof ledgerPageSchema>;
export type PullRequestDiff = z.input<typeof diffSchema>;
export type KeyHistory = z.input<typeof keyHistoryResponseSchema>;
export type SessionDetail = z.input<typeof sessionDetailSchema>;
export type ReceiptResponse = z.output<typeof evaluateResponseSchema>;
export type ListedReceipt = SearchPage['receipts'][number];

export interface OverviewData {
  overview: Overview;
  timeline: Timeline;
  repositories: Repositories;
  agents: Agents;
  /** The newest checkpoint as served (a signed note), or null when none could be read. */
  checkpoint: string | null;
}

export const LIST_FILTERS = ['q', 'agent', 'repo', 'verdict', 'status', 'order', 'after'] as const;

/** The list page's filters, as the search route takes them (empty members left out). */
export type ListFilter = { [K in (typeof LIST_FILTERS)[number]]?: string };

/** One page of the list: its listing and the filters that asked for it. */
export interface ListData {
  filter: ListFilter;
  page: SearchPage;
}

export interface ReceiptData {
  response: ReceiptResponse;
  /** The receipts at sequence - 1 and + 1 when readable: links along the chain. */
  previous: { receipt_id: string; sequence: number } | null;
  next: { receipt_id: string; sequence: number } | null;
  /** The ledger's newest sequence, when known: "no next receipt" then reads as "the newest". */
  head?: number;
  /**
   * The human decision on this receipt when it is an ESCALATED one that has been decided
   * (GET /v1/receipts/:id/disposition); null otherwise.
   */
  disposition: ReceiptResponse | null;
}

export interface KeysData {
  history: KeyHistory;
  checkpoint: string | null;
  /** The configured witnesses: name and C2SP verifier key. */
  witnesses: { name: string; verifierKey: string }[];
}

/** The filters of a query string: the known members, non-empty, first value each. */
export function listFilterOf(search: URLSearchParams): ListFilter {
  const filter: ListFilter = {};
  for (const name of LIST_FILTERS) {
    const value = search.get(name)?.trim();
    if (value) filter[name] = value;
  }
  return filter;
}
