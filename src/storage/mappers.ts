import type { AdmissibilityStatus } from '../core/evaluation.js';
import type { Verdict } from '../core/policy.js';
import type { OverrideMode } from '../core/policy-overrides.js';
import type { ApiKeyRecord, Reader, Tier } from '../ports/api-key-store.js';
import type { AgentSummary, RepositorySummary } from '../ports/ledger-queries.js';
import type { LedgerEntry } from '../ports/ledger-store.js';
import type { PolicyRecord } from '../ports/policy-store.js';
import type {
  DeliveryAttempt,
  DeliveryStatus,
  DeliveryWork,
  WebhookDelivery,
  WebhookEvent,
  WebhookReceiver,
} from '../ports/webhook-store.js';
import { admissibilityOf, verdictsOf, type CounterRow } from './counters.js';

// The stored forms that SQLite rows and MongoDB documents share: the same snake_case fields,
// mapped here once. What differs stays with each backend: a row's `id` is a document's `_id`
// (passed in as the identifier), and only documents carry index helpers (`active`, `words`).

/** A receipt as both stores keep it: the JSON texts that were appended. */
export interface ReceiptFields {
  receipt_json: string;
  claim_json: string;
  evaluation_json: string;
  api_key_id: string | null;
}

/** A receipt's stored fields in both stores: its indexed values and its JSON texts. */
export interface StoredReceiptFields extends ReceiptFields {
  sequence: number;
  receipt_id: string;
  claim_id: string;
  /** The submitter's idempotency scope: claim_id is unique per scope (contract §7). */
  scope: string;
  inputs_hash: string;
  receipt_hash: string;
  issued_at: string;
  verdict: Verdict;
  admissibility: AdmissibilityStatus;
  entity: string;
  agent: string | null;
  repository: string | null;
  pull_request: string | null;
}

/**
 * What an append stores of `entry` in `scope` (a document adds its search helpers). With
 * `configRef`, the stored evaluation names its policy config by that ref instead of holding
 * it (SQLite stores each config once: storage/sqlite/policy-configs.ts).
 */
export function storedReceiptFields(
  entry: LedgerEntry,
  scope: string,
  configRef?: string,
): StoredReceiptFields {
  const { receipt } = entry;
  return {
    sequence: receipt.chain.sequence,
    receipt_id: receipt.receipt_id,
    claim_id: receipt.claim_id,
    scope,
    inputs_hash: receipt.evidence.inputs_hash,
    receipt_hash: receipt.chain.receipt_hash,
    issued_at: receipt.issued_at,
    verdict: receipt.policy.verdict,
    admissibility: receipt.admissibility.status,
    entity: entry.claim.entity,
    agent: receipt.subject.agent ?? null,
    repository: receipt.subject.repository ?? null,
    pull_request:
      receipt.subject.pull_request === undefined ? null : String(receipt.subject.pull_request),
    api_key_id: entry.apiKeyId,
    receipt_json: JSON.stringify(receipt),
    claim_json: JSON.stringify(entry.claim),
    evaluation_json:
      configRef === undefined
        ? JSON.stringify(entry.evaluation)
        : JSON.stringify({ ...entry.evaluation, config: undefined, config_ref: configRef }),
  };
}

/**
 * The entries of stored fields. An evaluation stored with a `config_ref` gets its config back
 * from `configText`, as it was appended: the same members, in the same order.
 */
export function entryReader(
  configText?: (ref: string) => string,
): (fields: ReceiptFields) => LedgerEntry {
  return (fields) => {
    const stored = JSON.parse(fields.evaluation_json) as LedgerEntry['evaluation'] & {
      config_ref?: string;
    };
    let evaluation: LedgerEntry['evaluation'] = stored;
    if (stored.config_ref !== undefined) {
      if (!configText) throw new Error('ledger: a stored evaluation names its config by ref');
      const { config_ref: ref, ...rest } = stored;
      evaluation = { ...rest, config: JSON.parse(configText(ref)) };
    }
    return {
      receipt: JSON.parse(fields.receipt_json),
      claim: JSON.parse(fields.claim_json),
      evaluation,
      apiKeyId: fields.api_key_id,
    };
  };
}

/** The entry of fields whose evaluation holds its config (every MongoDB document's). */
export const toEntry = entryReader();

export interface ApiKeyFields {
  account_id: string;
  email: string;
  key_digest: string;
  tier: Tier;
  locked_policy: string | null;
  /** Absent on MongoDB keys stored before private reads had readers: 'own'. */
  reader?: Reader;
  /** Absent on keys stored before the reviewer capability existed: not a reviewer. */
  reviewer?: boolean;
  created_at: string;
  updated_at: string;
  revoked_at: string | null;
}

export const toApiKeyRecord = (keyId: string, fields: ApiKeyFields): ApiKeyRecord => ({
  id: fields.account_id,
  keyId,
  email: fields.email,
  keyDigest: fields.key_digest,
  tier: fields.tier,
  lockedPolicy: fields.locked_policy,
  reader: fields.reader ?? 'own',
  reviewer: fields.reviewer === true,
  createdAt: fields.created_at,
  updatedAt: fields.updated_at,
  revokedAt: fields.revoked_at,
});

/** The stored fields of a key, but its id (a row's `key_id`, a document's `_id`). */
export const apiKeyFields = (record: ApiKeyRecord): Required<ApiKeyFields> => ({
  account_id: record.id,
  email: record.email,
  key_digest: record.keyDigest,
  tier: record.tier,
  locked_policy: record.lockedPolicy,
  reader: record.reader,
  reviewer: record.reviewer,
  created_at: record.createdAt,
  updated_at: record.updatedAt,
  revoked_at: record.revokedAt,
});

export interface PolicyFields {
  name: string;
  description: string | null;
  /** JSON text, as the receipt's. */
  config_json: string;
  overrides: OverrideMode;
  created_at: string;
}

/** `owner`: the account, or null for the shared namespace (each store spells that its way). */
export const toPolicyRecord = (owner: string | null, fields: PolicyFields): PolicyRecord => ({
  owner,
  name: fields.name,
  description: fields.description,
  config: JSON.parse(fields.config_json),
  overrides: fields.overrides,
  createdAt: fields.created_at,
});

export interface ReceiverFields {
  owner: string;
  url: string;
  event: string;
  secret_sealed: string;
  status: 'active' | 'disabled' | 'deleted';
  created_at: string;
  disabled_at: string | null;
  disabled_reason: string | null;
}

export const toWebhookReceiver = (id: string, fields: ReceiverFields): WebhookReceiver => ({
  id,
  owner: fields.owner,
  url: fields.url,
  event: fields.event as WebhookEvent,
  secretSealed: fields.secret_sealed,
  // A deleted receiver is never handed out as such: see toDeliveryWork.
  status: fields.status === 'active' ? 'active' : 'disabled',
  createdAt: fields.created_at,
  disabledAt: fields.disabled_at,
  disabledReason: fields.disabled_reason,
});

export interface DeliveryFields {
  receiver_id: string;
  receipt_id: string;
  event: string;
  status: DeliveryStatus;
  attempts: number;
  created_at: string;
  finished_at: string | null;
}

export const toWebhookDelivery = (id: string, fields: DeliveryFields): WebhookDelivery => ({
  id,
  receiverId: fields.receiver_id,
  receiptId: fields.receipt_id,
  event: fields.event as WebhookEvent,
  status: fields.status,
  attempts: fields.attempts,
  createdAt: fields.created_at,
  finishedAt: fields.finished_at,
});

/**
 * One delivery's work from its stored fields and its receiver's. A deleted receiver is handed
 * out as none: its delivery is closed unsent.
 */
export const toDeliveryWork = (
  delivery: DeliveryFields & { id: string },
  receiver: (ReceiverFields & { id: string }) | null | undefined,
  receiptJson: string,
): DeliveryWork => ({
  delivery: toWebhookDelivery(delivery.id, delivery),
  receiver:
    receiver && receiver.status !== 'deleted' ? toWebhookReceiver(receiver.id, receiver) : null,
  receiptJson,
});

export interface AttemptFields {
  delivery_id: string;
  attempt: number;
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  next_attempt_at: string | null;
}

export const toDeliveryAttempt = (fields: AttemptFields): DeliveryAttempt => ({
  deliveryId: fields.delivery_id,
  attempt: fields.attempt,
  at: fields.at,
  statusCode: fields.status_code,
  error: fields.error,
  durationMs: fields.duration_ms,
  nextAttemptAt: fields.next_attempt_at,
});

/** A repository's counters and last receipt, as both stores' aggregates keep them. */
export interface RepositoryStatsFields extends CounterRow {
  last_sequence: number;
  last_receipt_id: string;
  last_issued_at: string;
}

export const toRepositorySummary = (
  repository: string,
  fields: RepositoryStatsFields,
): RepositorySummary => ({
  repository,
  total: fields.total,
  by_verdict: verdictsOf(fields),
  by_admissibility: admissibilityOf(fields),
  last_receipt: {
    receipt_id: fields.last_receipt_id,
    sequence: fields.last_sequence,
    issued_at: fields.last_issued_at,
  },
});

export interface AgentStatsFields extends CounterRow {
  first_seen: string;
  last_seen: string;
}

/** `models`: the agent's models in the order the store answers them (sorted by UTF-8 bytes). */
export const toAgentSummary = (
  agent: string,
  fields: AgentStatsFields,
  models: string[],
): AgentSummary => ({
  agent,
  total: fields.total,
  by_verdict: verdictsOf(fields),
  by_admissibility: admissibilityOf(fields),
  models,
  first_seen: fields.first_seen,
  last_seen: fields.last_seen,
});
