import {
  toBase64,
  transitionStatementBytes,
  type KeyTransition,
  type KeyTransitionStatement,
} from '@svc/verify';

// The service's side of the signing-key history (contract §9): signing the statement that
// hands over to a new key, and folding the ledger into runs of keys. Reading and checking a
// history is the verifier's (@svc/verify).

/** Signs a statement with the previous key. */
export function signTransition(
  statement: KeyTransitionStatement,
  sign: (message: Uint8Array) => Uint8Array,
): KeyTransition {
  return { statement, signature: toBase64(sign(transitionStatementBytes(statement))) };
}

/** A run of consecutive receipts whose first attestation names the same key. */
export interface KeyRun {
  key_id: string;
  first_sequence: number;
  last_sequence: number;
  first_issued_at: string;
}

/** Adds a receipt, in sequence order, to the runs of keys: each store reads, this folds. */
export function extendKeyRuns(
  runs: KeyRun[],
  receipt: { key_id: string; sequence: number; issued_at: string },
): void {
  const last = runs[runs.length - 1];
  if (last && last.key_id === receipt.key_id) last.last_sequence = receipt.sequence;
  else
    runs.push({
      key_id: receipt.key_id,
      first_sequence: receipt.sequence,
      last_sequence: receipt.sequence,
      first_issued_at: receipt.issued_at,
    });
}
