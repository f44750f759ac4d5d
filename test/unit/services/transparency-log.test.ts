import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import {
  coordinatesOf,
  fromBase64,
  type HashBytes,
  inclusionProof,
  parseCheckpointText,
  parseNote,
  receiptHashText,
  storedHashesFrom,
  toBase64,
  verifyConsistency,
  verifyInclusion,
} from '@svc/verify';
import type { Receipt } from '../../../src/core/receipt.js';
import type { Store } from '../../../src/ports/store.js';
import { TransparencyLog } from '../../../src/services/transparency-log.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { appendRequest, makeClaim, signClaim } from '../../contract/ledger-fixtures.js';
import { ManualClock, newServerKey } from '../../support/harness.js';

// What an inclusion proof costs the store and the CPU: the receipt's leaf from an index, the
// stored hashes in one batch, each node hashed once, the final checkpoint served from memory.

const ORIGIN = 'svc.example/proofs';
const serverKey = newServerKey();
const sha256: HashBytes = (data) => createHash('sha256').update(data).digest();

describe('TransparencyLog inclusion proofs', () => {
  let store: Store;
  let receipts: Receipt[];
  let hashCalls: number;
  const countingHash: HashBytes = (data) => {
    hashCalls += 1;
    return sha256(data);
  };
  const openLog = (witnesses?: string[]) =>
    new TransparencyLog({
      tree: store.tree,
      ledger: store.ledger,
      hash: countingHash,
      serverKey,
      clock: new ManualClock(),
      origin: ORIGIN,
      witnesses,
    });

  beforeEach(async () => {
    store = openSqliteStore(':memory:');
    receipts = [];
    // 13 leaves: a right edge of partial subtrees (8 + 4 + 1), so a proof hashes some nodes.
    for (let i = 0; i < 13; i++) {
      const signed = signClaim(makeClaim(), serverKey, { log: ORIGIN });
      receipts.push((await store.ledger.append(appendRequest(signed))).entry.receipt);
    }
    hashCalls = 0;
  });
  afterEach(() => store.close());

  it('reads the leaf index and one batch of stored hashes, and no receipt', async () => {
    const log = openLog();
    await log.makeCheckpoint();
    const getByReceiptId = jest.spyOn(store.ledger, 'getByReceiptId');
    const list = jest.spyOn(store.ledger, 'list');
    const hashes = jest.spyOn(store.tree, 'hashes');
    const leafIndexOf = jest.spyOn(store.tree, 'leafIndexOf');
    const receipt = receipts[2]!;
    const answer = await log.inclusion(receipt.receipt_id);
    expect(leafIndexOf).toHaveBeenCalledTimes(1);
    expect(hashes).toHaveBeenCalledTimes(1);
    expect(getByReceiptId).not.toHaveBeenCalled();
    expect(list).not.toHaveBeenCalled();
    // The answer proves the receipt against the signed checkpoint.
    const root = parseCheckpointText(parseNote(answer.checkpoint!)!.text)!.root;
    const leaf = sha256(Buffer.concat([Buffer.of(0), Buffer.from(receiptHashText(receipt))]));
    expect(answer.leaf_index).toBe(2);
    expect(answer.tree_size).toBe(13);
    expect(Buffer.from(fromBase64(answer.leaf_hash)!)).toEqual(Buffer.from(leaf));
    const proof = answer.inclusion.map((p) => fromBase64(p)!);
    expect(verifyInclusion(2, 13, leaf, proof, root)).toBe(true);
  });

  it('hashes each node of a proof once: neither the receipt nor a dry run is hashed', async () => {
    const log = openLog();
    await log.makeCheckpoint();
    for (const index of [0, 5, 8, 11, 12]) {
      // The node hashes one computation of the proof makes, over the same stored hashes.
      const compute = (read: Parameters<typeof inclusionProof>[2], hash?: HashBytes) =>
        inclusionProof(index, 13, read, hash);
      const read = storedHashesFrom(await store.tree.hashes(coordinatesOf(compute)));
      let once = 0;
      const expected = compute(read, (data) => {
        once += 1;
        return sha256(data);
      });
      hashCalls = 0;
      const answer = await log.inclusion(receipts[index]!.receipt_id);
      expect(answer.inclusion).toEqual(expected.map(toBase64));
      expect(hashCalls).toBe(once);
    }
  });

  it('answers 404 not_found for a receipt id the ledger does not hold', async () => {
    const log = openLog();
    await log.makeCheckpoint();
    await expect(log.inclusion('rcpt_unknown')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('reads the cosignatures of a final checkpoint once, and of one awaiting a witness every time', async () => {
    const cosignaturesOf = jest.spyOn(store.tree, 'cosignaturesOf');
    const final = openLog();
    await final.makeCheckpoint();
    const first = await final.inclusion(receipts[0]!.receipt_id);
    const second = await final.inclusion(receipts[1]!.receipt_id);
    expect(second.checkpoint).toBe(first.checkpoint);
    expect(cosignaturesOf).toHaveBeenCalledTimes(1);

    // With a witness that has not cosigned yet, a cosignature stored meanwhile is served.
    cosignaturesOf.mockClear();
    const pending = openLog(['w.example/one']);
    const before = await pending.inclusion(receipts[0]!.receipt_id);
    const line = '— w.example/one AAAAAQ==\n';
    await store.tree.addCosignature({
      size: 13,
      witness: 'w.example/one',
      line,
      timestamp: 1_700_000_000,
      created_at: '2026-01-01T00:00:00.000Z',
    });
    const after = await pending.inclusion(receipts[0]!.receipt_id);
    expect(before.checkpoint).not.toContain(line);
    expect(after.checkpoint).toBe(`${before.checkpoint}${line}`);
    expect(cosignaturesOf).toHaveBeenCalledTimes(2);
    // Now final: served from memory from here on.
    await pending.inclusion(receipts[3]!.receipt_id);
    expect(cosignaturesOf).toHaveBeenCalledTimes(2);
  });

  it('serves a newer checkpoint once one is made', async () => {
    const log = openLog();
    await log.makeCheckpoint();
    const old = await log.inclusion(receipts[0]!.receipt_id);
    const signed = signClaim(makeClaim(), serverKey, { log: ORIGIN });
    await store.ledger.append(appendRequest(signed));
    const now = await log.inclusion(receipts[0]!.receipt_id);
    expect(old.tree_size).toBe(13);
    expect(now.tree_size).toBe(14);
    expect(now.checkpoint).not.toBe(old.checkpoint);
    expect(parseCheckpointText(parseNote(now.checkpoint!)!.text)!.size).toBe(14);
    // The older size's checkpoint is still the one stored for it.
    const atOld = await log.inclusion(receipts[0]!.receipt_id, 13);
    expect(atOld.checkpoint).toBe(old.checkpoint);
  });

  describe('in a tree of 600 leaves', () => {
    let big: Receipt[];
    beforeEach(async () => {
      big = [...receipts];
      while (big.length < 600) {
        const signed = signClaim(makeClaim(), serverKey, { log: ORIGIN });
        big.push((await store.ledger.append(appendRequest(signed))).entry.receipt);
      }
    });

    it('keeps the upper-level hashes a proof read, and every proof still verifies', async () => {
      const log = openLog();
      const checkpoint = await log.makeCheckpoint();
      const root = parseCheckpointText(parseNote(checkpoint.note)!.text)!.root;
      const hashes = jest.spyOn(store.tree, 'hashes');
      const asked = () => hashes.mock.calls.flatMap(([coordinates]) => coordinates);
      const prove = async (index: number) => {
        hashes.mockClear();
        const answer = await log.inclusion(big[index]!.receipt_id);
        const leaf = sha256(
          Buffer.concat([Buffer.of(0), Buffer.from(receiptHashText(big[index]!))]),
        );
        const proof = answer.inclusion.map((p) => fromBase64(p)!);
        expect(verifyInclusion(index, 600, leaf, proof, root)).toBe(true);
        return asked();
      };
      // 600 = 512 + 64 + 16 + 8: leaf 5's proof needs (8, 1), the leaves 256-511, from the store.
      expect(await prove(5)).toContainEqual({ level: 8, index: 1 });
      // Leaf 6 shares it: kept. Levels below 8 are read from the store every time.
      const again = await prove(6);
      expect(again).not.toContainEqual({ level: 8, index: 1 });
      expect(again).toContainEqual({ level: 0, index: 7 });
      expect(again).toContainEqual({ level: 0, index: 6 });
      // Leaf 300 needs (8, 0), not read yet.
      expect(await prove(300)).toContainEqual({ level: 8, index: 0 });
      expect(await prove(301)).not.toContainEqual({ level: 8, index: 0 });
      // A consistency proof keeps them too, and still proves the older checkpoint's tree.
      hashes.mockClear();
      const { proof } = await log.consistency(256, 600);
      expect(asked()).not.toContainEqual({ level: 8, index: 1 });
      const older = storedHashesFrom(await store.tree.hashes([{ level: 8, index: 0 }]))(8, 0);
      expect(
        verifyConsistency(
          256,
          600,
          proof.map((p) => fromBase64(p)!),
          older,
          root,
        ),
      ).toBe(true);
    });
  });
});
