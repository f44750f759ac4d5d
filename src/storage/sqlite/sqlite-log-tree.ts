import type { Database, Statement } from 'better-sqlite3';
import {
  coordinateKey,
  type HashCoordinate,
  hashesCompletedBy,
  leafHash,
  receiptHashText,
  utf8Bytes,
} from '@svc/verify';
import { nativeHashBytes, nativeSha256Hex } from '@svc/verify/node';
import type { Receipt } from '../../core/receipt.js';
import type { LogTreeStore, StoredCheckpoint, StoredCosignature } from '../../ports/log-tree.js';

/** Writes and reads the stored hashes; `record` runs inside the append's transaction. */
export class SqliteLogTree implements LogTreeStore {
  private readonly insert: Statement<[number, number, Uint8Array]>;
  private readonly read: Statement<[number, number], { hash: Buffer }>;
  private readonly readMany: Statement<[string], [number, number, Buffer]>;
  private readonly headRow: Statement<[], { n: number | null }>;
  private readonly sequenceOf: Statement<[string], number>;
  private readonly originRow: Statement<[], { value: string }>;
  private readonly insertOrigin: Statement<[string]>;
  private readonly insertCheckpoint: Statement<[number, string, string]>;
  private readonly checkpointRow: Statement<[number], StoredCheckpoint>;
  private readonly latestRow: Statement<[], StoredCheckpoint>;
  // Prepared on first use: only the checkpoint loop and the witnesses' cosigning read or
  // write cosignatures, not every process that appends.
  private cosignatureStatements?: {
    insert: Statement<[number, string, string, number, string]>;
    rows: Statement<[number], StoredCosignature>;
    last: Statement<[string], { size: number | null }>;
  };

  constructor(private readonly db: Database) {
    this.insert = db.prepare('INSERT INTO tlog_hashes (level, idx, hash) VALUES (?, ?, ?)');
    this.read = db.prepare('SELECT hash FROM tlog_hashes WHERE level = ? AND idx = ?');
    // All of a proof's hashes in one statement: the coordinates as one JSON array of
    // [level, index] pairs, each looked up on the primary key.
    this.readMany = db
      .prepare<[string], [number, number, Buffer]>(
        `SELECT level, idx, hash FROM tlog_hashes
         WHERE (level, idx) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?))`,
      )
      .raw(true);
    this.headRow = db.prepare('SELECT MAX(sequence) AS n FROM receipts');
    // The unique index on receipt_id holds the sequence (the rowid): the row is not read.
    this.sequenceOf = db
      .prepare<[string], number>('SELECT sequence FROM receipts WHERE receipt_id = ?')
      .pluck();
    this.originRow = db.prepare("SELECT value FROM ledger_meta WHERE key = 'origin'");
    // A ledger whose receipts carry an origin keeps it; else the candidate.
    this.insertOrigin = db.prepare(`
      INSERT INTO ledger_meta (key, value) VALUES ('origin', COALESCE((
        SELECT json_extract(receipt_json, '$.position.log') FROM receipts
        WHERE json_extract(receipt_json, '$.signed_fields.contract') = 'receipt-core-v2'
        ORDER BY sequence LIMIT 1), ?))
      ON CONFLICT DO NOTHING`);
    this.insertCheckpoint = db.prepare(
      'INSERT INTO checkpoints (size, note, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
    );
    this.checkpointRow = db.prepare(
      'SELECT size, note, created_at FROM checkpoints WHERE size = ?',
    );
    this.latestRow = db.prepare(
      'SELECT size, note, created_at FROM checkpoints ORDER BY size DESC LIMIT 1',
    );
  }

  private get cosignatures() {
    return (this.cosignatureStatements ??= {
      insert: this.db.prepare(
        `INSERT INTO cosignatures (size, witness, line, timestamp, created_at)
         VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      ),
      rows: this.db.prepare(
        `SELECT size, witness, line, timestamp, created_at FROM cosignatures WHERE size = ?
         ORDER BY witness`,
      ),
      last: this.db.prepare('SELECT MAX(size) AS size FROM cosignatures WHERE witness = ?'),
    });
  }

  /**
   * Adds the receipt at `chain.sequence` as leaf sequence - 1, with the subtrees it completes.
   * `hashText`, the builder's `receiptHashText(receipt)`, spares canonicalizing the receipt
   * again; it is used only if it hashes to chain.receipt_hash, so the leaf is always the
   * preimage of the hash the receipt carries.
   */
  record(receipt: Receipt, hashText?: string): void {
    if (
      hashText !== undefined &&
      `sha256:${nativeSha256Hex(hashText)}` !== receipt.chain.receipt_hash
    ) {
      throw new Error('log tree: the given hash text is not the preimage of chain.receipt_hash');
    }
    this.recordLeaf(receipt.chain.sequence - 1, hashText ?? receiptHashText(receipt));
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

  async leafIndexOf(receiptId: string): Promise<number | null> {
    const sequence = this.sequenceOf.get(receiptId);
    return sequence === undefined ? null : sequence - 1;
  }

  async hashes(coordinates: readonly HashCoordinate[]): Promise<Map<string, Uint8Array>> {
    const out = new Map<string, Uint8Array>();
    if (coordinates.length === 0) return out;
    let pairs = '';
    for (const c of coordinates) {
      if (!Number.isSafeInteger(c.level) || !Number.isSafeInteger(c.index)) {
        throw new TypeError(`log tree: not a coordinate: ${c.level}/${c.index}`);
      }
      pairs += `${pairs ? ',' : ''}[${c.level},${c.index}]`;
    }
    for (const [level, index, hash] of this.readMany.all(`[${pairs}]`)) {
      out.set(coordinateKey(level, index), hash);
    }
    const missing = coordinates.find((c) => !out.has(coordinateKey(c.level, c.index)));
    if (missing) throw new Error(`log tree: no stored hash at ${missing.level}/${missing.index}`);
    return out;
  }

  async initOrigin(candidate: string): Promise<string> {
    // The migration adopted the origin of an existing ledger's receipts; one stored since
    // holds, else the first receipt-core-v2 receipt's, else the candidate.
    // Read first: the insert's subquery reads receipts even when the row is there already
    // (ON CONFLICT is decided after it), seconds at a million receipts on every start.
    const kept = this.originRow.get();
    if (kept) return kept.value;
    this.insertOrigin.run(candidate);
    return this.originRow.get()!.value;
  }

  async addCheckpoint(checkpoint: StoredCheckpoint): Promise<StoredCheckpoint> {
    this.insertCheckpoint.run(checkpoint.size, checkpoint.note, checkpoint.created_at);
    return this.checkpointRow.get(checkpoint.size)!;
  }

  async latestCheckpoint(): Promise<StoredCheckpoint | null> {
    return this.latestRow.get() ?? null;
  }

  async checkpointOfSize(size: number): Promise<StoredCheckpoint | null> {
    return this.checkpointRow.get(size) ?? null;
  }

  async addCosignature(cosignature: StoredCosignature): Promise<void> {
    this.cosignatures.insert.run(
      cosignature.size,
      cosignature.witness,
      cosignature.line,
      cosignature.timestamp,
      cosignature.created_at,
    );
  }

  async cosignaturesOf(size: number): Promise<StoredCosignature[]> {
    return this.cosignatures.rows.all(size);
  }

  async lastCosignedSize(witness: string): Promise<number | null> {
    return this.cosignatures.last.get(witness)?.size ?? null;
  }
}
