import type { HashCoordinate } from '../core/tlog/merkle.js';

/**
 * The ledger's Merkle tree (contract §9) as the store keeps it: every complete subtree's hash,
 * written in the same transaction as the receipt whose leaf completes it, so every receipt
 * the ledger acknowledged is in the tree. Append-only, like the receipts.
 */
export interface LogTreeStore {
  /** The number of leaves: the ledger's head sequence. */
  size(): Promise<number>;
  /**
   * The stored hashes at these coordinates, keyed by `coordinateKey`. Rejects when one is
   * missing: every coordinate a proof asks for lies inside the tree of the size it was asked
   * for, so a missing hash is a bug or a damaged store, never an answer.
   */
  hashes(coordinates: readonly HashCoordinate[]): Promise<Map<string, Uint8Array>>;
}
