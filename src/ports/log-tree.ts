import type { HashCoordinate } from '@svc/verify';

/** A signed checkpoint of the log as stored: the C2SP signed note and when it was made. */
export interface StoredCheckpoint {
  size: number;
  note: string;
  created_at: string;
}

/**
 * A witness's cosignature of a stored checkpoint (C2SP tlog-cosignature), verified against the
 * witness's configured key before it was stored.
 */
export interface StoredCosignature {
  size: number;
  /** The witness's key name. */
  witness: string;
  /** The signature line, newline included, as the witness wrote it. */
  line: string;
  /** The cosignature's own timestamp, in seconds since the epoch. */
  timestamp: number;
  created_at: string;
}

/**
 * The ledger's transparency log (contract §9) as the store keeps it: its origin, every
 * complete subtree's hash — written in the same transaction as the receipt whose leaf
 * completes it, so every receipt the ledger acknowledged is in the tree — and the signed
 * checkpoints made of it. Append-only, like the receipts.
 */
export interface LogTreeStore {
  /** The number of leaves: the ledger's head sequence. */
  size(): Promise<number>;
  /**
   * The leaf of a receipt, its chain.sequence - 1, or null for a receipt id the ledger does
   * not hold: one indexed lookup that reads no receipt.
   */
  leafIndexOf(receiptId: string): Promise<number | null>;
  /**
   * The stored hashes at these coordinates, keyed by `coordinateKey`, read in one query.
   * Rejects when one is missing: every coordinate a proof asks for lies inside the tree of
   * the size it was asked for, so a missing hash is a bug or a damaged store, never an answer.
   */
  hashes(coordinates: readonly HashCoordinate[]): Promise<Map<string, Uint8Array>>;
  /**
   * The log's origin, fixed once: the stored one, else the one the ledger's first
   * receipt-core-v2 receipt carries, else `candidate` — stored by the first caller, so every
   * process and instance agrees on it.
   */
  initOrigin(candidate: string): Promise<string>;
  /** Stores a checkpoint unless one of its size is stored; answers the stored one. */
  addCheckpoint(checkpoint: StoredCheckpoint): Promise<StoredCheckpoint>;
  latestCheckpoint(): Promise<StoredCheckpoint | null>;
  checkpointOfSize(size: number): Promise<StoredCheckpoint | null>;
  /**
   * Stores a witness's cosignature of the stored checkpoint of its size, unless that witness's
   * cosignature of that size is stored (append-only: the first one holds).
   */
  addCosignature(cosignature: StoredCosignature): Promise<void>;
  /** The stored cosignatures of the checkpoint of this size, by witness name. */
  cosignaturesOf(size: number): Promise<StoredCosignature[]>;
  /** The largest checkpoint size this witness cosigned, as stored; null when none. */
  lastCosignedSize(witness: string): Promise<number | null>;
}
