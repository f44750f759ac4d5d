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
  /** For a deployment receipt: the merge receipts it relied on (at most MERGE_SOURCES_READ). */
  mergeReceipts?: MergeEvidence[];
}

/** Deployment decisions of one page: newest first, with the escalations among them. */
export const DEPLOYMENT_PAGE_SIZE = 25;
/** The newest deployment receipts the environments index reads its pairs from. */
export const DEPLOYMENTS_SCANNED = 200;

/**
 * One repository's environment: a page of its deployment receipts, newest first, as the search
 * route answers it with `include=claims` (the decisions on its escalations beside them).
 */
export interface DeploymentData {
  repository: string;
  environment: string;
  page: SearchPage;
}

/** The newest deployment receipts, from which the index lists repository/environment pairs. */
export interface DeploymentsData {
  page: SearchPage;
}

/** A pull request a deployment relied on: its `merge-receipt:pr-N` source and that receipt. */
export interface MergeEvidence {
  source_id: string;
  pull_request: string;
  /** The merge receipt the source names, or null when the pull request had none. */
  receipt_id: string | null;
  /** Whether the deployment's claim took it as admissible evidence. */
  admissible: boolean;
  /** The merge receipt as this reader can read it; null when unknown or not readable. */
  receipt: { verdict: string; admissibility: string } | null;
}

const MERGE_SOURCE = /^merge-receipt:pr-(.{1,64})$/;
/** How many merge sources a receipt page looks up: a deployment brings a few pull requests. */
export const MERGE_SOURCES_READ = 20;

/**
 * The `merge-receipt:pr-N` sources of a deployment claim (github/deployment-claim.ts): the
 * pull request, and the receipt id its URI names (`…/v1/receipts/<id>`) when it has one.
 */
export function mergeSourcesOf(claim: ReceiptResponse['claim']): Omit<MergeEvidence, 'receipt'>[] {
  if ((claim.action as { action_type?: unknown } | undefined)?.action_type !== 'deployment')
    return [];
  return claim.sources.flatMap((s) => {
    const pr = MERGE_SOURCE.exec(s.id)?.[1];
    if (pr === undefined) return [];
    const id = /\/v1\/receipts\/([^/?#]{1,256})$/.exec(s.uri)?.[1];
    let receiptId: string | null = null;
    try {
      receiptId = id === undefined ? null : decodeURIComponent(id);
    } catch {
      // Not a receipt URL this service wrote: the pull request's own page.
    }
    return [
      {
        source_id: s.id,
        pull_request: pr,
        receipt_id: receiptId,
        admissible: s.admissibility?.state === 'ADMISSIBLE',
      },
    ];
  });
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
