import { createHash } from 'node:crypto';
import { Binary, type ClientSession, type Db } from 'mongodb';
import { toHex, utf8Bytes } from '../../core/encoding.js';
import { receiptHashText, type Receipt } from '../../core/receipt.js';
import {
  coordinateKey,
  coordinatesOf,
  hashesCompletedBy,
  leafHash,
  storedHashesFrom,
  type HashBytes,
  type HashCoordinate,
} from '../../core/tlog/merkle.js';
import type { LogTreeStore } from '../../ports/log-tree.js';
import { COLLECTIONS, type ReceiptDocument } from './documents.js';

const nativeHashBytes: HashBytes = (data) => createHash('sha256').update(data).digest();

/** One stored hash of the log's tree; `_id` is `<level>/<index>`, so each is written once. */
export interface TreeHashDocument {
  _id: string;
  level: number;
  index: number;
  hash: Binary;
}

const BACKFILL_PAGE = 1000;

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
    for (const doc of found) out.set(doc._id, doc.hash.buffer);
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
          if ((error as { code?: unknown }).code !== 11000) throw error;
        }
      }
      after = page[page.length - 1]!.sequence;
    }
  }
}
