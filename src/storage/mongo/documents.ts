import type { AdmissibilityStatus } from '../../core/evaluation.js';
import type { Verdict } from '../../core/policy.js';
import type { CounterRow } from '../counters.js';
import type {
  ApiKeyFields,
  AttemptFields,
  DeliveryFields,
  PolicyFields,
  ReceiverFields,
  StoredReceiptFields,
} from '../mappers.js';

/** Collection names, in one place: indexes, the ledger's transaction and the readers share them. */
export const COLLECTIONS = {
  receipts: 'receipts',
  totals: 'ledger_totals',
  repositories: 'repository_stats',
  agents: 'agent_stats',
  daily: 'daily_counts',
  // The same aggregates per submitter scope, for private reads (aggregates.ts).
  scopeTotals: 'scope_totals',
  scopeRepositories: 'scope_repository_stats',
  scopeAgents: 'scope_agent_stats',
  scopeDaily: 'scope_daily_counts',
  migrations: 'migrations',
  apiKeys: 'api_keys',
  policies: 'policies',
  receivers: 'webhook_receivers',
  receiverOwners: 'webhook_receiver_owners',
  deliveries: 'webhook_deliveries',
  attempts: 'webhook_attempts',
  jobs: 'agendaJobs',
  healthProbe: 'health_probe',
  rateWindows: 'rate_windows',
  treeHashes: 'tlog_hashes',
  dispositions: 'dispositions',
  ledgerMeta: 'ledger_meta',
  checkpoints: 'checkpoints',
  cosignatures: 'cosignatures',
  signingKeys: 'signing_keys',
  sessionRecords: 'session_records',
  agentSessions: 'agent_sessions',
  sessionEvents: 'session_events',
} as const;

/**
 * One receipt. The receipt, claim and evaluation are kept as the JSON text that was appended
 * (as the SQLite store does), so what is read back is byte for byte what was written — BSON
 * would turn an `undefined` member into null and cannot tell 1 from 1.0. The other fields are
 * copies for the indexes.
 */
export interface ReceiptDocument extends StoredReceiptFields {
  /** Lower-cased, diacritic-free words of claim text, entity, repository and agent. */
  words: string[];
  /** The same four fields' words in order, one string per field (receipt-query.ts). */
  phrases: string[];
  /** A deployment receipt's environment, only on deployment receipts (receipt-query.ts). */
  deployment_environment?: string;
}

export const ENTRY_PROJECTION = {
  _id: 0,
  receipt_json: 1,
  claim_json: 1,
  evaluation_json: 1,
  api_key_id: 1,
} as const;

export type EntryFields = Pick<
  ReceiptDocument,
  'receipt_json' | 'claim_json' | 'evaluation_json' | 'api_key_id'
>;

// The mapping is the stores' shared one.
export { toEntry } from '../mappers.js';

export interface TotalsDocument {
  _id: string;
  verdict: Verdict;
  admissibility: AdmissibilityStatus;
  n: number;
}

export interface RepositoryStatsDocument extends CounterRow {
  _id: string;
  last_sequence: number;
  last_receipt_id: string;
  last_issued_at: string;
}

export interface AgentStatsDocument extends CounterRow {
  _id: string;
  first_seen: string;
  last_seen: string;
  models: string[];
}

export interface DailyCountDocument {
  _id: string;
  day: string;
  /** '' for receipts without a repository, as in the SQLite store. */
  repository: string;
  verdict: Verdict;
  n: number;
}

/** A scoped aggregate document: `_id` is JSON of [scope, ...the ledger-wide key]. */
export interface Scoped {
  scope: string;
}

export interface ApiKeyDocument extends ApiKeyFields {
  /** The key id. */
  _id: string;
  /**
   * Present (true) only while the key is not revoked: the partial unique index on email
   * filters on it, because a partial index cannot filter on `revoked_at: null`.
   */
  active?: true;
}

export interface PolicyDocument extends PolicyFields {
  /** null: the shared namespace. */
  owner: string | null;
}

export interface ReceiverDocument extends ReceiverFields {
  _id: string;
}

export interface DeliveryDocument extends DeliveryFields {
  _id: string;
  /**
   * The receipt's sequence: breaks ties of created_at in a receiver's listing (a receiver
   * has at most one delivery per receipt).
   */
  sequence: number;
}

export type AttemptDocument = AttemptFields;

/**
 * The fields of the unique index a duplicate-key error names, or null for any other error.
 * Servers name them in `keyPattern`; without it, the index's name (which, for this store's
 * indexes, spells out its fields) stands in.
 */
export function duplicateKeyFields(error: unknown): string[] | null {
  if (typeof error !== 'object' || error === null) return null;
  const { code, keyPattern, message } = error as {
    code?: unknown;
    keyPattern?: unknown;
    message?: unknown;
  };
  if (code !== 11000 && code !== 11001) return null;
  if (keyPattern && typeof keyPattern === 'object') return Object.keys(keyPattern);
  // "E11000 duplicate key error collection: svc.receipts index: scope_claim_id_unique dup key"
  const index = typeof message === 'string' ? /index: (\S+)/.exec(message)?.[1] : undefined;
  return index ? [index] : [];
}

/** Whether `error` is a duplicate key on a unique index over `field`. */
export function isDuplicateOn(error: unknown, field: string): boolean {
  const fields = duplicateKeyFields(error);
  return fields !== null && fields.some((f) => f === field || f.includes(field));
}

/**
 * The link of a disposition to its parent (contract §11), written in the disposition's append
 * transaction; the unique index on `parent_receipt_id` allows one per parent.
 */
export interface DispositionDocument {
  /** The disposition's sequence. */
  _id: number;
  parent_receipt_id: string;
  /** The parent's submitter scope: decisions are counted for the scope that escalated. */
  parent_scope: string;
  receipt_id: string;
  decision: 'approve' | 'reject';
}

/** A client's rate-limit window (mongo-rate-limiter.ts); `_id` is the client. */
export interface RateWindowDocument {
  _id: string;
  /** Times (ms since the epoch) of the accepted requests in the window, oldest first. */
  times: number[];
  /** Whether the update that returned this document accepted its request. */
  accepted?: boolean;
  /** When the newest request leaves the window; a TTL index removes the document then. */
  expires_at?: Date;
}
