import { createHash } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';
import { utf8Bytes } from '../../core/encoding.js';
import { receiptHashText, type Receipt } from '../../core/receipt.js';
import {
  coordinateKey,
  hashesCompletedBy,
  leafHash,
  type HashBytes,
  type HashCoordinate,
} from '../../core/tlog/merkle.js';
import type { LogTreeStore } from '../../ports/log-tree.js';

export const nativeHashBytes: HashBytes = (data) => createHash('sha256').update(data).digest();

export const LOG_TREE_SCHEMA = `
  -- The ledger's Merkle tree (contract §9): the hash of every complete subtree of 2^level
  -- leaves starting at leaf idx × 2^level, written with the receipt that completes it.
  CREATE TABLE tlog_hashes (
    level INTEGER NOT NULL,
    idx   INTEGER NOT NULL,
    hash  BLOB NOT NULL,
    PRIMARY KEY (level, idx)
  ) STRICT, WITHOUT ROWID;
  CREATE TRIGGER tlog_hashes_no_update BEFORE UPDATE ON tlog_hashes
    BEGIN SELECT RAISE(ABORT, 'the log tree is append-only'); END;
  CREATE TRIGGER tlog_hashes_no_delete BEFORE DELETE ON tlog_hashes
    BEGIN SELECT RAISE(ABORT, 'the log tree is append-only'); END;
`;

/** Writes and reads the stored hashes; `record` runs inside the append's transaction. */
export class SqliteLogTree implements LogTreeStore {
  private readonly insert: Statement<[number, number, Uint8Array]>;
  private readonly read: Statement<[number, number], { hash: Buffer }>;
  private readonly headRow: Statement<[], { n: number | null }>;

  constructor(db: Database) {
    this.insert = db.prepare('INSERT INTO tlog_hashes (level, idx, hash) VALUES (?, ?, ?)');
    this.read = db.prepare('SELECT hash FROM tlog_hashes WHERE level = ? AND idx = ?');
    this.headRow = db.prepare('SELECT MAX(sequence) AS n FROM receipts');
  }

  /** Adds the receipt at `chain.sequence` as leaf sequence - 1, with the subtrees it completes. */
  record(receipt: Receipt): void {
    this.recordLeaf(receipt.chain.sequence - 1, receiptHashText(receipt));
  }

  recordLeaf(index: number, leafText: string): void {
    const leaf = leafHash(utf8Bytes(leafText), nativeHashBytes);
    for (const s of hashesCompletedBy(index, leaf, (l, i) => this.readOne(l, i), nativeHashBytes)) {
      this.insert.run(s.level, s.index, s.hash);
    }
  }

  private readOne(level: number, index: number): Uint8Array {
    const row = this.read.get(level, index);
    if (!row) throw new Error(`log tree: no stored hash at ${level}/${index}`);
    return row.hash;
  }

  async size(): Promise<number> {
    return this.headRow.get()?.n ?? 0;
  }

  async hashes(coordinates: readonly HashCoordinate[]): Promise<Map<string, Uint8Array>> {
    const out = new Map<string, Uint8Array>();
    for (const c of coordinates)
      out.set(coordinateKey(c.level, c.index), this.readOne(c.level, c.index));
    return out;
  }
}
