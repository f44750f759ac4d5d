import { SvcError } from '../core/errors.js';
import type { ReadScope } from '../ports/ledger-queries.js';
import type { DispositionService } from '../services/dispositions.js';
import type { LedgerReadService } from '../services/ledger-reads.js';
import type { SessionService } from '../services/sessions.js';
import type { SigningKeyService } from '../services/signing-keys.js';
import type { TransparencyLog } from '../services/transparency-log.js';
import {
  DEPLOYMENT_PAGE_SIZE,
  DEPLOYMENTS_SCANNED,
  MERGE_SOURCES_READ,
  mergeSourcesOf,
  type DeploymentData,
  type DeploymentsData,
  type KeysData,
  type ListData,
  type ListFilter,
  type MergeEvidence,
  type OverviewData,
  type ReceiptData,
} from './data.js';

/** What the server's pages read: the services behind the JSON API, never the API over HTTP. */
export interface ExplorerSources {
  reads: LedgerReadService;
  sessions: Pick<SessionService, 'session'>;
  dispositions: Pick<DispositionService, 'dispositionOf'>;
  log: TransparencyLog;
  keys: SigningKeyService;
  logOrigin: string;
  witnesses: { name: string; verifierKey: string }[];
}

export const LIST_PAGE_SIZE = 50;
const SUMMARY_ROWS = 10;

/** The newest checkpoint as GET /v1/log/checkpoint serves it; null when none can be made. */
async function latestCheckpoint(log: TransparencyLog): Promise<string | null> {
  try {
    return (await log.served(await log.currentCheckpoint())).note;
  } catch {
    return null;
  }
}

export async function loadOverview(s: ExplorerSources, scope: ReadScope): Promise<OverviewData> {
  return {
    overview: await s.reads.overview(scope),
    timeline: await s.reads.timeline({ scope }),
    repositories: await s.reads.repositories({ limit: SUMMARY_ROWS }, scope),
    agents: await s.reads.agents({ limit: SUMMARY_ROWS }, scope),
    checkpoint: await latestCheckpoint(s.log),
  };
}

/** A page of the list; `query` is the search route's validated query. */
export async function loadList(
  s: ExplorerSources,
  filter: ListFilter,
  query: {
    q?: string;
    agent?: string;
    repo?: string;
    verdict?: 'ALLOWED' | 'BLOCKED' | 'ESCALATED';
    status?: 'ACCEPTED' | 'NON_DETERMINISTIC' | 'REJECTED';
    order: 'asc' | 'desc';
    after?: number;
  },
  scope: ReadScope,
): Promise<ListData> {
  const json = await s.reads.search(
    {
      scope,
      q: query.q,
      agent: query.agent,
      repository: query.repo,
      verdict: query.verdict,
      status: query.status,
    },
    { after: query.after, limit: LIST_PAGE_SIZE, order: query.order },
    { claims: true },
  );
  return { filter, page: json.parse() as ListData['page'] };
}

export async function loadReceipt(
  s: ExplorerSources,
  receiptId: string,
  scope: ReadScope,
): Promise<ReceiptData> {
  const response = await s.reads.receipt(receiptId, scope);
  const sequence = response.receipt.chain.sequence;
  const around = await s.reads.ledgerPage(
    { after: sequence > 2 ? sequence - 2 : undefined, limit: 3 },
    scope,
  );
  const at = (n: number) => {
    const r = around.receipts.find((x) => x.chain.sequence === n);
    return r ? { receipt_id: r.receipt_id, sequence: n } : null;
  };
  return {
    response,
    previous: at(sequence - 1),
    next: at(sequence + 1),
    head: around.head.sequence,
    disposition: await dispositionOf(s, response, scope),
    mergeReceipts: await mergeReceiptsOf(s, response, scope),
  };
}

/** A deployment receipt's merge receipts, each as this reader may read it. */
async function mergeReceiptsOf(
  s: ExplorerSources,
  response: ReceiptData['response'],
  scope: ReadScope,
): Promise<MergeEvidence[]> {
  const sources = mergeSourcesOf(response.claim).slice(0, MERGE_SOURCES_READ);
  return Promise.all(
    sources.map(async (source) => {
      if (source.receipt_id === null) return { ...source, receipt: null };
      try {
        const { receipt } = await s.reads.receipt(source.receipt_id, scope);
        return {
          ...source,
          receipt: { verdict: receipt.policy.verdict, admissibility: receipt.admissibility.status },
        };
      } catch (error) {
        if (error instanceof SvcError && error.code === 'not_found')
          return { ...source, receipt: null };
        throw error;
      }
    }),
  );
}

/** A page of one environment's deployment receipts, newest first, after `after`. */
export async function loadDeployment(
  s: ExplorerSources,
  target: { repository: string; environment: string; after?: number },
  scope: ReadScope,
): Promise<DeploymentData> {
  const json = await s.reads.search(
    {
      scope,
      repository: target.repository,
      action_type: 'deployment',
      environment: target.environment,
    },
    { after: target.after, limit: DEPLOYMENT_PAGE_SIZE, order: 'desc' },
    { claims: true },
  );
  return {
    repository: target.repository,
    environment: target.environment,
    page: json.parse() as DeploymentData['page'],
  };
}

/** The newest deployment receipts, for the index of environments. */
export async function loadDeployments(
  s: ExplorerSources,
  scope: ReadScope,
): Promise<DeploymentsData> {
  const json = await s.reads.search(
    { scope, action_type: 'deployment' },
    { limit: DEPLOYMENTS_SCANNED, order: 'desc' },
  );
  return { page: json.parse() as DeploymentsData['page'] };
}

/** The decision on an ESCALATED receipt, or null when it has none (yet) or is not one. */
async function dispositionOf(
  s: ExplorerSources,
  response: ReceiptData['response'],
  scope: ReadScope,
): Promise<ReceiptData['disposition']> {
  if (response.decision.verdict !== 'ESCALATED') return null;
  try {
    return (await s.dispositions.dispositionOf(
      response.receipt.receipt_id,
      scope,
    )) as ReceiptData['disposition'];
  } catch (error) {
    if (error instanceof SvcError && error.code === 'not_found') return null;
    throw error;
  }
}

export async function loadKeys(s: ExplorerSources): Promise<KeysData> {
  return {
    history: { origin: s.logOrigin, keys: await s.keys.list() },
    checkpoint: await latestCheckpoint(s.log),
    witnesses: s.witnesses,
  };
}
