import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import {
  consistencyProof,
  coordinatesOf,
  inclusionProof,
  type StoredHashes,
  storedHashesFrom,
  treeHash,
  verifyConsistency,
  verifyInclusion,
} from '@svc/verify';
import type { Receipt } from '../../src/core/receipt.js';
import type { Store } from '../../src/ports/store.js';
import { newServerKey } from '../support/harness.js';
import { appendRequest, makeClaim, signClaim } from './ledger-fixtures.js';

// The ledger's Merkle tree (contract §9) as every store keeps it, checked against a tree
// built here from the receipts alone: leaf data from the reference JCS, hashes by node:crypto.

const sha256 = (...parts: Uint8Array[]) =>
  createHash('sha256').update(Buffer.concat(parts)).digest();

/** The preimage of chain.receipt_hash, from the receipt's members, by the reference JCS. */
function leafDataOf(receipt: Receipt): Buffer {
  const r = receipt as unknown as Record<string, unknown>;
  const signed = r.signed_fields as { contract: string; fields: string[] };
  const preimage =
    signed.contract === 'receipt-core-v2'
      ? {
          core: Object.fromEntries(signed.fields.map((f) => [f, r[f]])),
          attestations: r.attestations,
        }
      : { evidence: r.evidence, policy: r.policy, replay: r.replay, attestations: r.attestations };
  return Buffer.from(canonicalize(preimage)!, 'utf8');
}

function referenceRoot(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return sha256();
  if (leaves.length === 1) return sha256(Buffer.of(0), leaves[0]!);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return sha256(Buffer.of(1), referenceRoot(leaves.slice(0, k)), referenceRoot(leaves.slice(k)));
}

export function describeLogTreeContract(name: string, open: () => Promise<Store>): void {
  describe(`${name} log tree contract`, () => {
    const serverKey = newServerKey();
    let store: Store;
    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    /** Reads what a computation needs from the store, then runs it on those hashes. */
    async function withStored<T>(compute: (read: StoredHashes) => T): Promise<T> {
      const map = await store.tree.hashes(coordinatesOf(compute));
      return compute(storedHashesFrom(map));
    }

    async function appendReceipts(n: number, contract?: 'v1' | 'v2'): Promise<Receipt[]> {
      const out: Receipt[] = [];
      for (let i = 0; i < n; i++) {
        const signed = signClaim(makeClaim(), serverKey, contract ? { contract } : {});
        const result = await store.ledger.append(appendRequest(signed));
        out.push(result.entry.receipt);
      }
      return out;
    }

    it('has the empty tree before the first receipt', async () => {
      expect(await store.tree.size()).toBe(0);
      expect(Buffer.from(await withStored((read) => treeHash(0, read)))).toEqual(sha256());
    });

    it('holds every appended receipt, v1 and v2, as the leaf at its sequence - 1', async () => {
      const receipts = [
        ...(await appendReceipts(3, 'v1')),
        ...(await appendReceipts(18)),
        ...(await appendReceipts(2, 'v1')),
      ];
      const leaves = receipts.map(leafDataOf);
      // The leaf data is the preimage of chain.receipt_hash.
      receipts.forEach((r, i) =>
        expect(`sha256:${sha256(leaves[i]!).toString('hex')}`).toBe(r.chain.receipt_hash),
      );
      expect(await store.tree.size()).toBe(receipts.length);
      for (let size = 1; size <= receipts.length; size++) {
        const root = await withStored((read) => treeHash(size, read));
        expect(Buffer.from(root)).toEqual(referenceRoot(leaves.slice(0, size)));
      }
      const size = receipts.length;
      const root = referenceRoot(leaves);
      for (let index = 0; index < size; index++) {
        const proof = await withStored((read) => inclusionProof(index, size, read));
        const leaf = sha256(Buffer.of(0), leaves[index]!);
        expect(verifyInclusion(index, size, leaf, proof, root)).toBe(true);
      }
      for (let from = 1; from < size; from += 3) {
        const proof = await withStored((read) => consistencyProof(from, size, read));
        const fromRoot = referenceRoot(leaves.slice(0, from));
        expect(verifyConsistency(from, size, proof, fromRoot, root)).toBe(true);
      }
    });

    it('keeps the tree of receipts appended concurrently', async () => {
      const signed = Array.from({ length: 12 }, () => signClaim(makeClaim(), serverKey));
      const results = await Promise.all(signed.map((s) => store.ledger.append(appendRequest(s))));
      const receipts = results
        .map((r) => r.entry.receipt)
        .sort((a, b) => a.chain.sequence - b.chain.sequence);
      const root = await withStored((read) => treeHash(12, read));
      expect(Buffer.from(root)).toEqual(referenceRoot(receipts.map(leafDataOf)));
    });

    it('writes nothing to the tree for a refused or repeated append', async () => {
      const [first] = await appendReceipts(1);
      const again = await store.ledger.append({
        scope: 'test',
        claimId: first!.claim_id,
        build: () => {
          throw new Error('not called for an existing claim');
        },
      });
      expect(again.status).toBe('exists');
      await expect(
        store.ledger.append({
          scope: 'test',
          claimId: 'refused',
          build: () => {
            throw new Error('refused');
          },
        }),
      ).rejects.toThrow('refused');
      expect(await store.tree.size()).toBe(1);
      await appendReceipts(1);
      const root = await withStored((read) => treeHash(2, read));
      const leaves = (await store.ledger.list(0, 10)).map((e) => leafDataOf(e.receipt));
      expect(Buffer.from(root)).toEqual(referenceRoot(leaves));
    });

    it("finds a receipt's leaf, its sequence - 1, from the receipt id; null for an unknown id", async () => {
      expect(await store.tree.leafIndexOf('rcpt_unknown')).toBeNull();
      const receipts = [...(await appendReceipts(2, 'v1')), ...(await appendReceipts(3))];
      for (const receipt of receipts) {
        expect(await store.tree.leafIndexOf(receipt.receipt_id)).toBe(receipt.chain.sequence - 1);
      }
      expect(await store.tree.leafIndexOf('rcpt_unknown')).toBeNull();
      expect(await store.tree.leafIndexOf('')).toBeNull();
    });

    it('answers a batch of coordinates in one call, and rejects one outside the tree', async () => {
      const receipts = await appendReceipts(5);
      const leaves = receipts.map((r) => sha256(Buffer.of(0), leafDataOf(r)));
      expect((await store.tree.hashes([])).size).toBe(0);
      const asked = [
        { level: 2, index: 0 },
        { level: 0, index: 4 },
        { level: 1, index: 1 },
        { level: 0, index: 0 },
        { level: 0, index: 4 },
      ];
      const map = await store.tree.hashes(asked);
      expect([...map.keys()].sort()).toEqual(['0/0', '0/4', '1/1', '2/0']);
      const at = (key: string) => Buffer.from(map.get(key)!);
      expect(at('0/0')).toEqual(leaves[0]);
      expect(at('0/4')).toEqual(leaves[4]);
      expect(at('1/1')).toEqual(referenceRoot(receipts.slice(2, 4).map(leafDataOf)));
      expect(at('2/0')).toEqual(referenceRoot(receipts.slice(0, 4).map(leafDataOf)));
      // Leaf 5 and the subtree of leaves 4 and 5 are not in a tree of 5 leaves.
      for (const outside of [
        { level: 0, index: 5 },
        { level: 1, index: 2 },
        { level: 3, index: 0 },
      ]) {
        await expect(store.tree.hashes([{ level: 0, index: 0 }, outside])).rejects.toThrow(
          `no stored hash at ${outside.level}/${outside.index}`,
        );
      }
    });

    it('fixes the origin once: the first caller wins, later callers get the stored value', async () => {
      expect(await store.tree.initOrigin('first.example/ledger')).toBe('first.example/ledger');
      expect(await store.tree.initOrigin('second.example/ledger')).toBe('first.example/ledger');
      await appendReceipts(1);
      expect(await store.tree.initOrigin('third.example/ledger')).toBe('first.example/ledger');
    });

    it('agrees on one origin when callers race', async () => {
      const answers = await Promise.all(
        ['a.example/ledger', 'b.example/ledger', 'c.example/ledger'].map((o) =>
          store.tree.initOrigin(o),
        ),
      );
      expect(new Set(answers).size).toBe(1);
      expect(await store.tree.initOrigin('d.example/ledger')).toBe(answers[0]);
    });

    it("takes a ledger's origin from its first receipt-core-v2 receipt when none is stored", async () => {
      await appendReceipts(2, 'v1');
      for (const log of ['svc/adopted', 'svc/later']) {
        const signed = signClaim(makeClaim(), serverKey, { log });
        await store.ledger.append(appendRequest(signed));
      }
      expect(await store.tree.initOrigin('svc/candidate')).toBe('svc/adopted');
      expect(await store.tree.initOrigin('svc/other')).toBe('svc/adopted');
    });

    it('a ledger of receipt-core-v1 receipts only takes the candidate', async () => {
      await appendReceipts(2, 'v1');
      expect(await store.tree.initOrigin('svc/candidate')).toBe('svc/candidate');
    });

    it('keeps one checkpoint per size: the first stored wins, the newest is the largest', async () => {
      expect(await store.tree.latestCheckpoint()).toBeNull();
      expect(await store.tree.checkpointOfSize(3)).toBeNull();
      const three = { size: 3, note: 'note of 3\n', created_at: '2026-01-01T00:00:03.000Z' };
      expect(await store.tree.addCheckpoint(three)).toEqual(three);
      // Idempotent per size: another note of the same size answers the stored one.
      const rival = { size: 3, note: 'rival of 3\n', created_at: '2026-01-01T00:00:09.000Z' };
      expect(await store.tree.addCheckpoint(rival)).toEqual(three);
      expect(await store.tree.checkpointOfSize(3)).toEqual(three);
      const five = { size: 5, note: 'note of 5\n', created_at: '2026-01-01T00:00:05.000Z' };
      expect(await store.tree.addCheckpoint(five)).toEqual(five);
      // The newest is the largest size, whatever the order they were stored in.
      const four = { size: 4, note: 'note of 4\n', created_at: '2026-01-01T00:00:10.000Z' };
      expect(await store.tree.addCheckpoint(four)).toEqual(four);
      expect(await store.tree.latestCheckpoint()).toEqual(five);
      expect(await store.tree.checkpointOfSize(4)).toEqual(four);
      expect(await store.tree.checkpointOfSize(6)).toBeNull();
      const both = await Promise.all([
        store.tree.addCheckpoint({ ...five, size: 7, note: 'x\n' }),
        store.tree.addCheckpoint({ ...five, size: 7, note: 'y\n' }),
      ]);
      expect(both[1]).toEqual(both[0]);
      expect(await store.tree.latestCheckpoint()).toEqual(both[0]);
    });

    it("keeps witnesses' cosignatures per checkpoint size and witness, the first one holding", async () => {
      const at = (size: number) => ({ size, note: `note ${size}\n`, created_at: 'then' });
      await store.tree.addCheckpoint(at(3));
      await store.tree.addCheckpoint(at(7));
      const cosignature = (size: number, witness: string, line: string) => ({
        size,
        witness,
        line,
        timestamp: 1_700_000_000 + size,
        created_at: `2026-01-0${size}T00:00:00.000Z`,
      });
      expect(await store.tree.cosignaturesOf(3)).toEqual([]);
      expect(await store.tree.lastCosignedSize('w.example/b')).toBeNull();
      await store.tree.addCosignature(cosignature(3, 'w.example/b', '— w.example/b AAA=\n'));
      await store.tree.addCosignature(cosignature(3, 'w.example/a', '— w.example/a BBB=\n'));
      await store.tree.addCosignature(cosignature(7, 'w.example/b', '— w.example/b CCC=\n'));
      // A second cosignature by one witness of one size changes nothing.
      await store.tree.addCosignature(cosignature(3, 'w.example/b', '— w.example/b DDD=\n'));
      expect(await store.tree.cosignaturesOf(3)).toEqual([
        cosignature(3, 'w.example/a', '— w.example/a BBB=\n'),
        cosignature(3, 'w.example/b', '— w.example/b AAA=\n'),
      ]);
      expect(await store.tree.cosignaturesOf(7)).toEqual([
        cosignature(7, 'w.example/b', '— w.example/b CCC=\n'),
      ]);
      expect(await store.tree.cosignaturesOf(5)).toEqual([]);
      expect(await store.tree.lastCosignedSize('w.example/b')).toBe(7);
      expect(await store.tree.lastCosignedSize('w.example/a')).toBe(3);
      expect(await store.tree.lastCosignedSize('w.example/c')).toBeNull();
    });
  });
}
