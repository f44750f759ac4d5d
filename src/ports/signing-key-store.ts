import type { KeyRevocation, SigningKeyRecord } from '@svc/verify';
import type { KeyRun } from '../core/key-history.js';

/** What a key change sees, read inside the store's transaction. */
export interface SigningKeyState {
  /** The history, by first_sequence. */
  history: SigningKeyRecord[];
  /** The ledger's head sequence (0 when empty). */
  head: number;
  /**
   * The key_ids of the receipts' first attestations in sequence order, one run per key:
   * what an empty history adopts from a ledger signed before the history existed.
   */
  receiptKeyRuns(): KeyRun[];
}

/** The writes a key change makes; each is one of the transitions the store allows. */
export interface SigningKeyChange {
  insert?: SigningKeyRecord[];
  /** current (or revoked while current) → its last_sequence and retired_at are set once. */
  retire?: { key_id: string; last_sequence: number; retired_at: string };
  /** current or retired → revoked from a sequence, once, with the signed statement. */
  revoke?: {
    key_id: string;
    revoked_from_sequence: number;
    revoked_at: string;
    revocation: KeyRevocation;
  };
}

/**
 * The ledger's signing-key history (contract §9). Keys are never deleted and their identity,
 * start and transition statement never change; only the transitions above are written, and
 * each `change` runs in one transaction with the ledger's head, so a rotation's boundary is the
 * head no append can move meanwhile (appends refuse a receipt signed by a key not current).
 */
export interface SigningKeyStore {
  list(): Promise<SigningKeyRecord[]>;
  /**
   * Runs `decide` on the state read inside one transaction and writes what it returns. `decide`
   * keeps no state: a store may run it again after a conflict. Answers the history after.
   */
  change(decide: (state: SigningKeyState) => SigningKeyChange): Promise<SigningKeyRecord[]>;
}
