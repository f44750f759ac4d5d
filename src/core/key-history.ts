import {
  revocationStatementBytes,
  toBase64,
  transitionStatementBytes,
  type KeyRevocation,
  type KeyRevocationStatement,
  type KeyTransition,
  type KeyTransitionStatement,
} from '@svc/verify';

// The service's side of the signing-key history (contract §9): signing the statements that
// hand over to a new key and that revoke one, and folding the ledger into runs of keys. Reading and checking a
// history is the verifier's (@svc/verify).

/** Signs a statement with the previous key. */
export function signTransition(
  statement: KeyTransitionStatement,
  sign: (message: Uint8Array) => Uint8Array,
): KeyTransition {
  return { statement, signature: toBase64(sign(transitionStatementBytes(statement))) };
}

/** Signs a revocation statement with the key it names as signer. */
export function signRevocation(
  statement: KeyRevocationStatement,
  sign: (message: Uint8Array) => Uint8Array,
): KeyRevocation {
  return { statement, signature: toBase64(sign(revocationStatementBytes(statement))) };
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
