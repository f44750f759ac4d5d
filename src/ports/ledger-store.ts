import type { ClaimInput } from '../core/claim-schema.js';
import type { StoredRuleResult } from '../core/disposition.js';
import type { Evaluation } from '../core/evaluation.js';
import type { ChainHead, Receipt } from '../core/receipt.js';

/** A receipt as the ledger keeps it, with what is needed to answer evaluate again unchanged. */
export interface LedgerEntry {
  receipt: Receipt;
  /** The ClaimInput exactly as it was evaluated. */
  claim: ClaimInput;
  /**
   * Outcome parts of the evaluate response that the receipt does not carry in full; a
   * disposition's rules are its one `human_disposition` rule.
   */
  evaluation: Pick<Evaluation, 'replay'> & {
    policy: StoredOutcome;
    config: Evaluation['config'];
  };
  /** The account of the API key that asked for the receipt, when one did. */
  apiKeyId: string | null;
}

/** A policy outcome as stored: the rules of a policy, or a disposition's decision. */
export type StoredOutcome = Omit<Evaluation['policy'], 'rules'> & { rules: StoredRuleResult[] };

export interface AppendRequest {
  /**
   * The submitter's idempotency scope: a claim_id is unique within it (contract §7), so two
   * submitters using the same claim_id get independent receipts.
   */
  scope: string;
  claimId: string;
  /**
   * A disposition's parent receipt id (contract §11): a parent has at most one disposition,
   * so when the ledger holds one already the append answers `exists` with it, whatever its
   * scope, and writes nothing. Each store guards this with a unique index on the parent.
   */
  parentReceiptId?: string;
  /**
   * Builds the entry for the given head. Keeps no state between calls: a store may call it
   * again after losing a race for the head, and uses only its last result.
   */
  build(head: ChainHead): BuiltEntry;
}

export interface BuiltEntry {
  entry: LedgerEntry;
  /**
   * `receiptHashText(entry.receipt)` (the preimage of chain.receipt_hash and the receipt's leaf
   * in the log's tree) when the builder already has it, so the store does not canonicalize the
   * receipt a second time. A store may ignore it; one that uses it checks it against
   * chain.receipt_hash first.
   */
  receiptHashText?: string;
}

export type AppendResult =
  | { status: 'appended'; entry: LedgerEntry }
  /**
   * The scope already holds the claim_id, or the parent its disposition (possibly written by
   * a concurrent request).
   */
  | { status: 'exists'; entry: LedgerEntry };

export interface LedgerStats {
  total: number;
  by_verdict: { ALLOWED: number; BLOCKED: number; ESCALATED: number };
  by_admissibility: { ACCEPTED: number; NON_DETERMINISTIC: number; REJECTED: number };
  agents: string[];
  repositories: string[];
}

/** See `LedgerStore.verificationHashes`. */
export interface VerificationHashes {
  receiptHash: string | null;
  sequence: number | null;
  previousHash: string | null;
}

/**
 * The append-only ledger. There is deliberately no method that updates or deletes a receipt.
 * Every backend passes test/contract/ledger-store.contract.ts.
 */
export interface LedgerStore {
  /** Atomic: the receipt, its chain position and what the store keeps with it, or nothing. */
  append(request: AppendRequest): Promise<AppendResult>;
  head(): Promise<ChainHead>;
  getByReceiptId(receiptId: string): Promise<LedgerEntry | null>;
  getByClaimId(scope: string, claimId: string): Promise<LedgerEntry | null>;
  /** The dispositions of the given parent receipt ids that the ledger holds, in sequence order. */
  dispositionsOf(parentReceiptIds: string[]): Promise<LedgerEntry[]>;
  /**
   * Decisions on escalated receipts, by decision: of the whole ledger, or on the escalations of
   * one submitter scope (whoever decided them).
   */
  dispositionCounts(scope?: string): Promise<{ approve: number; reject: number }>;
  /** The stored `chain.receipt_hash` of a receipt, or null when the ledger does not hold it. */
  receiptHashOf(receiptId: string): Promise<string | null>;
  /** The stored `chain.receipt_hash` at a sequence, or null when the ledger has none there. */
  receiptHashAt(sequence: number): Promise<string | null>;
  /**
   * What a verification compares a receipt with, in one read: the stored hash and sequence of
   * `receiptId`, and the stored hash at `previousSequence`; each null when the ledger holds
   * none (or none was asked for).
   */
  verificationHashes(
    receiptId: string | null,
    previousSequence: number | null,
  ): Promise<VerificationHashes>;
  /** Entries with sequence > after, in sequence order. */
  list(after: number, limit: number): Promise<LedgerEntry[]>;
  /** Totals and names seen, of the whole ledger or of one submitter scope. */
  stats(scope?: string): Promise<LedgerStats>;
  countByApiKey(apiKeyId: string): Promise<number>;
}
