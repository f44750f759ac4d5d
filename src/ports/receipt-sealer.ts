import type { ClaimInput } from '../core/claim-schema.js';
import type { ReceiptDraft } from '../core/receipt.js';
import type { AppendResult, LedgerEntry } from './ledger-store.js';

/**
 * An evaluated claim, ready to be signed at the ledger's head and appended. Plain data, so
 * that a worker process can hand it to the one process that writes (src/cluster).
 */
export interface SealRequest {
  scope: string;
  claimId: string;
  /** A disposition's parent: at most one disposition per parent (AppendRequest). */
  parentReceiptId?: string;
  draft: ReceiptDraft;
  claim: ClaimInput;
  evaluation: LedgerEntry['evaluation'];
  apiKeyId: string | null;
}

/**
 * Signs a draft at the ledger's head and appends it, atomically: receipt-core-v2 signs the
 * position, so signing and appending cannot be separated.
 */
export interface ReceiptSealer {
  seal(request: SealRequest): Promise<AppendResult>;
}
