import { Binary, type ClientSession, type Db } from 'mongodb';
import {
  coordinateKey,
  coordinatesOf,
  type HashCoordinate,
  hashesCompletedBy,
  leafHash,
  receiptHashText,
  storedHashesFrom,
  toHex,
  utf8Bytes,
} from '@svc/verify';
import { nativeHashBytes } from '@svc/verify/node';
import type { Receipt } from '../../core/receipt.js';
import type { LogTreeStore, StoredCheckpoint, StoredCosignature } from '../../ports/log-tree.js';
import { COLLECTIONS, type ReceiptDocument } from './documents.js';

/** One stored hash of the log's tree; `_id` is `<level>/<index>`, so each is written once. */
export interface TreeHashDocument {
  _id: string;
  level: number;
  index: number;
  hash: Binary;
}

interface MetaDocument {
  _id: 'origin';
  value: string;
}

interface CheckpointDocument {
  _id: number;
  note: string;
  created_at: string;
}

/** A witness's cosignature; `_id` is `<size> <witness>` (a key name holds no space). */
interface CosignatureDocument {
  _id: string;
  size: number;
  witness: string;
  line: string;
  timestamp: number;
  created_at: string;
}

const BACKFILL_PAGE = 1000;
const asStored = (doc: CheckpointDocument): StoredCheckpoint => ({
  size: doc._id,
  note: doc.note,
  created_at: doc.created_at,
});
const isDuplicate = (error: unknown) => (error as { code?: unknown }).code === 11000;

/**
 * The ledger's Merkle tree on MongoDB: the hashes a receipt completes are inserted in the
 * receipt's append transaction (`record`), so a receipt and its leaf commit together.
 */
export class MongoLogTree implements LogTreeStore {
  constructor(private readonly db: Db) {}

  private get hashesCollection() {
    return this.db.collection<TreeHashDocument>(COLLECTIONS.treeHashes);
  }

  /** Adds the receipt as leaf sequence - 1, with the subtrees it completes. */
  async record(receipt: Receipt, session?: ClientSession): Promise<void> {
    await this.recordLeaf(receipt.chain.sequence - 1, receiptHashText(receipt), session);
  }

  private async recordLeaf(index: number, leafText: string, session?: ClientSession) {
    const leaf = leafHash(utf8Bytes(leafText), nativeHashBytes);
    const complete = (read: Parameters<typeof hashesCompletedBy>[2]) =>
      hashesCompletedBy(index, leaf, read, nativeHashBytes);
    const siblings = await this.read(coordinatesOf(complete), session);
    const documents = complete(storedHashesFrom(siblings)).map((s) => ({
      _id: coordinateKey(s.level, s.index),
      level: s.level,
      index: s.index,
      hash: new Binary(s.hash),
    }));
    await this.hashesCollection.insertMany(documents, { session, ordered: true });
  }

  private async read(
    coordinates: readonly HashCoordinate[],
    session?: ClientSession,
  ): Promise<Map<string, Uint8Array>> {
    const out = new Map<string, Uint8Array>();
    if (coordinates.length === 0) return out;
    const keys = coordinates.map((c) => coordinateKey(c.level, c.index));
    const found = await this.hashesCollection
      .find({ _id: { $in: keys } }, { session, projection: { hash: 1 } })
      .toArray();
    // value() is the documented accessor of a Binary's bytes (`buffer` may hold spare room).
    for (const doc of found) out.set(doc._id, doc.hash.value());
    const missing = keys.find((k) => !out.has(k));
    if (missing) throw new Error(`log tree: no stored hash at ${missing}`);
    return out;
  }

  async size(): Promise<number> {
    const head = await this.db
      .collection<ReceiptDocument>(COLLECTIONS.receipts)
      .find({}, { projection: { sequence: 1 }, sort: { sequence: -1 }, limit: 1 })
      .next();
    return head?.sequence ?? 0;
  }

  async leafIndexOf(receiptId: string): Promise<number | null> {
    // On the unique receipt_id index; only the sequence is read back.
    const doc = await this.db
      .collection<ReceiptDocument>(COLLECTIONS.receipts)
      .findOne({ receipt_id: receiptId }, { projection: { _id: 0, sequence: 1 } });
    return doc ? doc.sequence - 1 : null;
  }

  /** One `find` with `$in` on `_id` for all the coordinates. */
  hashes(coordinates: readonly HashCoordinate[]): Promise<Map<string, Uint8Array>> {
    return this.read(coordinates);
  }

  /**
   * Builds the tree of receipts appended before the tree existed, in sequence order, at
   * start. Idempotent and safe with several instances starting together: every hash has one
   * value and one `_id`, so a duplicate insert is the same hash another instance wrote.
   */
  async backfill(): Promise<void> {
    const lastLeaf = await this.hashesCollection
      .find({ level: 0 }, { projection: { index: 1 }, sort: { index: -1 }, limit: 1 })
      .next();
    let after = lastLeaf ? lastLeaf.index + 1 : 0;
    const receipts = this.db.collection<ReceiptDocument>(COLLECTIONS.receipts);
    for (;;) {
      const page = await receipts
        .find(
          { sequence: { $gt: after } },
          {
            projection: { sequence: 1, receipt_hash: 1, receipt_json: 1 },
            sort: { sequence: 1 },
            limit: BACKFILL_PAGE,
          },
        )
        .toArray();
      if (page.length === 0) return;
      for (const doc of page) {
        const text = receiptHashText(JSON.parse(doc.receipt_json) as Receipt);
        if (`sha256:${toHex(nativeHashBytes(utf8Bytes(text)))}` !== doc.receipt_hash) {
          throw new Error(`receipt ${doc.sequence} does not hash to its stored receipt_hash`);
        }
        try {
          await this.recordLeaf(doc.sequence - 1, text);
        } catch (error) {
          if (!isDuplicate(error)) throw error;
        }
      }
      after = page[page.length - 1]!.sequence;
    }
  }

  private get meta() {
    return this.db.collection<MetaDocument>(COLLECTIONS.ledgerMeta);
  }

  private get checkpoints() {
    return this.db.collection<CheckpointDocument>(COLLECTIONS.checkpoints);
  }

  async initOrigin(candidate: string): Promise<string> {
    const stored = await this.meta.findOne({ _id: 'origin' });
    if (stored) return stored.value;
    // An existing ledger keeps the origin of its first receipt-core-v2 receipt.
    let value = candidate;
    const cursor = this.db
      .collection<ReceiptDocument>(COLLECTIONS.receipts)
      .find({}, { projection: { receipt_json: 1 }, sort: { sequence: 1 } });
    for await (const doc of cursor) {
      const receipt = JSON.parse(doc.receipt_json) as {
        signed_fields?: { contract?: string };
        position?: { log?: string };
      };
      if (receipt.signed_fields?.contract === 'receipt-core-v2' && receipt.position?.log) {
        value = receipt.position.log;
        break;
      }
    }
    await cursor.close();
    try {
      await this.meta.insertOne({ _id: 'origin', value });
    } catch (error) {
      // Another instance stored it first: its value holds.
      if (!isDuplicate(error)) throw error;
    }
    return (await this.meta.findOne({ _id: 'origin' }))!.value;
  }

  async addCheckpoint(checkpoint: StoredCheckpoint): Promise<StoredCheckpoint> {
    try {
      await this.checkpoints.insertOne({
        _id: checkpoint.size,
        note: checkpoint.note,
        created_at: checkpoint.created_at,
      });
    } catch (error) {
      if (!isDuplicate(error)) throw error;
    }
    return asStored((await this.checkpoints.findOne({ _id: checkpoint.size }))!);
  }

  async latestCheckpoint(): Promise<StoredCheckpoint | null> {
    const doc = await this.checkpoints.find({}, { sort: { _id: -1 }, limit: 1 }).next();
    return doc ? asStored(doc) : null;
  }

  async checkpointOfSize(size: number): Promise<StoredCheckpoint | null> {
    const doc = await this.checkpoints.findOne({ _id: size });
    return doc ? asStored(doc) : null;
  }

  private get cosignatures() {
    return this.db.collection<CosignatureDocument>(COLLECTIONS.cosignatures);
  }

  async addCosignature(cosignature: StoredCosignature): Promise<void> {
    try {
      // Append-only: an insert, never an upsert; the first cosignature of a size holds.
      await this.cosignatures.insertOne({
        _id: `${cosignature.size} ${cosignature.witness}`,
        size: cosignature.size,
        witness: cosignature.witness,
        line: cosignature.line,
        timestamp: cosignature.timestamp,
        created_at: cosignature.created_at,
      });
    } catch (error) {
      if (!isDuplicate(error)) throw error;
    }
  }

  async cosignaturesOf(size: number): Promise<StoredCosignature[]> {
    const docs = await this.cosignatures.find({ size }, { sort: { witness: 1 } }).toArray();
    return docs.map((doc) => ({
      size: doc.size,
      witness: doc.witness,
      line: doc.line,
      timestamp: doc.timestamp,
      created_at: doc.created_at,
    }));
  }

  async lastCosignedSize(witness: string): Promise<number | null> {
    const doc = await this.cosignatures
      .find({ witness }, { projection: { size: 1 }, sort: { size: -1 }, limit: 1 })
      .next();
    return doc ? doc.size : null;
  }
}
