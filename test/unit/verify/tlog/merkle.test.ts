import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import {
  consistencyProof,
  coordinateKey,
  coordinatesOf,
  type HashBytes,
  hashesCompletedBy,
  inclusionProof,
  leafHash,
  type StoredHashes,
  storedHashesFrom,
  treeHash,
  verifyConsistency,
  verifyInclusion,
} from '@svc/verify';
import { loadFixture } from '../../../support/fixtures.js';

// An independent reference: RFC 9162 §2.1 written from the text with node:crypto, over the
// leaf data itself (no stored hashes), and Go's recursive proof checkers.

const nativeHash: HashBytes = (data) => createHash('sha256').update(data).digest();
const h = (...parts: Uint8Array[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
const LEAF = Buffer.of(0);
const NODE = Buffer.of(1);
const refLeaf = (data: Uint8Array) => h(LEAF, data);
const refNode = (l: Uint8Array, r: Uint8Array) => h(NODE, l, r);
const largestPow2Below = (n: number) => 2 ** Math.floor(Math.log2(n - 1));

// The reference trees are contiguous runs of distinct leaves: the first and last leaves and the length
// name a run, so its root is computed once.
const mthMemo = new Map<string, Buffer>();
function mth(leaves: Uint8Array[]): Buffer {
  if (leaves.length === 0) return h();
  if (leaves.length === 1) return refLeaf(leaves[0]!);
  const key = `${Buffer.from(leaves[0]!).toString('hex')}:${Buffer.from(leaves[leaves.length - 1]!).toString('hex')}:${leaves.length}`;
  const known = mthMemo.get(key);
  if (known) return known;
  const k = largestPow2Below(leaves.length);
  const root = refNode(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
  mthMemo.set(key, root);
  return root;
}

function refPath(m: number, leaves: Uint8Array[]): Buffer[] {
  if (leaves.length <= 1) return [];
  const k = largestPow2Below(leaves.length);
  return m < k
    ? [...refPath(m, leaves.slice(0, k)), mth(leaves.slice(k))]
    : [...refPath(m - k, leaves.slice(k)), mth(leaves.slice(0, k))];
}

function refSubproof(m: number, leaves: Uint8Array[], whole: boolean): Buffer[] {
  const n = leaves.length;
  if (m === n) return whole ? [] : [mth(leaves)];
  const k = largestPow2Below(n);
  return m <= k
    ? [...refSubproof(m, leaves.slice(0, k), whole), mth(leaves.slice(k))]
    : [...refSubproof(m - k, leaves.slice(k), false), mth(leaves.slice(0, k))];
}

/** Go's runRecordProof: the root of D[lo:hi] from a proof of leaf `index`, or null. */
function rootFromInclusion(
  proof: Uint8Array[],
  lo: number,
  hi: number,
  index: number,
  leaf: Uint8Array,
): Uint8Array | null {
  if (hi - lo === 1) return proof.length === 0 ? leaf : null;
  if (proof.length === 0) return null;
  const k = largestPow2Below(hi - lo);
  const last = proof[proof.length - 1]!;
  const rest = proof.slice(0, -1);
  if (index < lo + k) {
    const left = rootFromInclusion(rest, lo, lo + k, index, leaf);
    return left && refNode(left, last);
  }
  const right = rootFromInclusion(rest, lo + k, hi, index, leaf);
  return right && refNode(last, right);
}

/** Go's runTreeProof: the roots of the old and new trees from a consistency proof. */
function rootsFromConsistency(
  proof: Uint8Array[],
  lo: number,
  hi: number,
  n: number,
  old: Uint8Array,
): [Uint8Array, Uint8Array] | null {
  if (n === hi) {
    if (lo === 0) return proof.length === 0 ? [old, old] : null;
    return proof.length === 1 ? [proof[0]!, proof[0]!] : null;
  }
  if (proof.length === 0) return null;
  const k = largestPow2Below(hi - lo);
  const last = proof[proof.length - 1]!;
  const rest = proof.slice(0, -1);
  if (n <= lo + k) {
    const inner = rootsFromConsistency(rest, lo, lo + k, n, old);
    return inner && [inner[0], refNode(inner[1], last)];
  }
  const inner = rootsFromConsistency(rest, lo + k, hi, n, old);
  return inner && [refNode(last, inner[0]), refNode(last, inner[1])];
}

const independentInclusion = (
  index: number,
  size: number,
  leaf: Uint8Array,
  proof: Uint8Array[],
  root: Uint8Array,
) => {
  const got = rootFromInclusion(proof, 0, size, index, leaf);
  return got !== null && Buffer.from(got).equals(root);
};

const independentConsistency = (
  from: number,
  to: number,
  proof: Uint8Array[],
  fromRoot: Uint8Array,
  toRoot: Uint8Array,
) => {
  const got = rootsFromConsistency(proof, 0, to, from, fromRoot);
  return got !== null && Buffer.from(got[0]).equals(fromRoot) && Buffer.from(got[1]).equals(toRoot);
};

/** A tree kept as this module's stored hashes, appended one leaf at a time. */
function buildTree(leaves: Uint8Array[], hash: HashBytes = nativeHash) {
  const map = new Map<string, Uint8Array>();
  const read = storedHashesFrom(map);
  leaves.forEach((data, index) => {
    for (const s of hashesCompletedBy(index, leafHash(data, hash), read, hash)) {
      map.set(coordinateKey(s.level, s.index), s.hash);
    }
  });
  return { map, read };
}

const leafData = (i: number) => Buffer.from(`svc leaf ${i}`);
// Hashes compared as hex text: the same bytes, and Jest's deep equality of buffers (key by key)
// was most of this file's time.
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const tamper = (proof: Uint8Array[], at: number) =>
  proof.map((p, i) => {
    if (i !== at) return p;
    const copy = Uint8Array.from(p);
    copy[0] = copy[0]! ^ 1;
    return copy;
  });

describe('Merkle tree (RFC 9162) over stored hashes', () => {
  const leaves = Array.from({ length: 64 }, (_, i) => leafData(i));
  const { map, read } = buildTree(leaves);

  it('stores 2n - 1 hashes for a power of two and the reference root at every size', () => {
    expect(map.size).toBe(127);
    for (let size = 0; size <= 64; size++) {
      expect(hex(treeHash(size, read, nativeHash))).toBe(hex(mth(leaves.slice(0, size))));
    }
  });

  it('proves inclusion of every leaf in every tree up to 64 leaves', () => {
    for (let size = 1; size <= 64; size++) {
      const root = mth(leaves.slice(0, size));
      for (let index = 0; index < size; index++) {
        const proof = inclusionProof(index, size, read, nativeHash);
        expect(proof.map(hex)).toEqual(refPath(index, leaves.slice(0, size)).map(hex));
        const leaf = refLeaf(leaves[index]!);
        expect(verifyInclusion(index, size, leaf, proof, root, nativeHash)).toBe(true);
        expect(independentInclusion(index, size, leaf, proof, root)).toBe(true);
        for (let at = 0; at < proof.length; at++) {
          expect(verifyInclusion(index, size, leaf, tamper(proof, at), root)).toBe(false);
        }
        if (size > 1) {
          expect(verifyInclusion((index + 1) % size, size, leaf, proof, root)).toBe(false);
          expect(verifyInclusion(index, size, leaf, proof.slice(1), root)).toBe(false);
        }
        expect(verifyInclusion(index, size, leaf, [...proof, root], root)).toBe(false);
      }
    }
  });

  it('proves consistency between every pair of trees up to 64 leaves', () => {
    for (let to = 1; to <= 64; to++) {
      const toRoot = mth(leaves.slice(0, to));
      for (let from = 1; from <= to; from++) {
        const fromRoot = mth(leaves.slice(0, from));
        const proof = consistencyProof(from, to, read, nativeHash);
        const expected = from === to ? [] : refSubproof(from, leaves.slice(0, to), true);
        expect(proof.map(hex)).toEqual(expected.map(hex));
        expect(verifyConsistency(from, to, proof, fromRoot, toRoot, nativeHash)).toBe(true);
        if (from < to) {
          expect(independentConsistency(from, to, proof, fromRoot, toRoot)).toBe(true);
          for (let at = 0; at < proof.length; at++) {
            expect(verifyConsistency(from, to, tamper(proof, at), fromRoot, toRoot)).toBe(false);
          }
          // A forked history: the same size with another root.
          const forked = mth([...leaves.slice(0, from - 1), Buffer.from('forged')]);
          expect(verifyConsistency(from, to, proof, forked, toRoot)).toBe(false);
          expect(verifyConsistency(from, to, [], fromRoot, toRoot)).toBe(false);
        }
      }
    }
  });

  it('treats the empty tree as a prefix of every tree, and refuses impossible sizes', () => {
    const root = mth(leaves.slice(0, 5));
    expect(verifyConsistency(0, 5, [], mth([]), root)).toBe(true);
    expect(verifyConsistency(0, 5, [], root, root)).toBe(false);
    expect(verifyConsistency(6, 5, [], root, root)).toBe(false);
    expect(() => inclusionProof(5, 5, read)).toThrow(RangeError);
    expect(() => consistencyProof(6, 5, read)).toThrow(RangeError);
    expect(() => inclusionProof(-1, 5, read)).toThrow(TypeError);
    expect(verifyInclusion(0, 0, refLeaf(leaves[0]!), [], root)).toBe(false);
    expect(verifyInclusion(1.5, 5, refLeaf(leaves[0]!), [], root)).toBe(false);
  });

  it('reads O(log n) stored hashes for a proof, and names them before reading', () => {
    const size = 61;
    const wanted = coordinatesOf((r: StoredHashes) => inclusionProof(17, size, r, nativeHash));
    expect(wanted.length).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(size)));
    const only = new Map(
      wanted.map((c) => [
        coordinateKey(c.level, c.index),
        map.get(coordinateKey(c.level, c.index))!,
      ]),
    );
    expect(inclusionProof(17, size, storedHashesFrom(only), nativeHash)).toEqual(
      inclusionProof(17, size, read, nativeHash),
    );
  });

  it('proves random leaves and prefixes of a tree of 100,000 leaves', () => {
    const big = Array.from({ length: 100_000 }, (_, i) => leafData(i));
    const tree = buildTree(big);
    const leafHashes = big.map(refLeaf);
    // Roots from the leaf hashes alone, by the RFC's recursion; complete subtrees are
    // remembered so that 80 roots of prefixes cost little more than one.
    const memo = new Map<string, Uint8Array>();
    const rangeRoot = (lo: number, hi: number): Uint8Array => {
      if (hi - lo === 1) return leafHashes[lo]!;
      const key = `${lo}:${hi}`;
      const known = memo.get(key);
      if (known) return known;
      const k = largestPow2Below(hi - lo);
      const root = refNode(rangeRoot(lo, lo + k), rangeRoot(lo + k, hi));
      memo.set(key, root);
      return root;
    };
    const rootOf = (size: number) => rangeRoot(0, size);
    let seed = 7;
    const random = (below: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % below;
    };
    for (let round = 0; round < 40; round++) {
      const to = 1 + random(100_000);
      const from = 1 + random(to);
      const index = random(to);
      const toRoot = rootOf(to);
      const fromRoot = rootOf(from);
      expect(hex(treeHash(to, tree.read, nativeHash))).toBe(hex(toRoot));
      const inclusion = inclusionProof(index, to, tree.read, nativeHash);
      expect(independentInclusion(index, to, leafHashes[index]!, inclusion, toRoot)).toBe(true);
      expect(verifyInclusion(index, to, leafHashes[index]!, inclusion, toRoot)).toBe(true);
      const consistency = consistencyProof(from, to, tree.read, nativeHash);
      if (from < to) {
        expect(independentConsistency(from, to, consistency, fromRoot, toRoot)).toBe(true);
      }
      expect(verifyConsistency(from, to, consistency, fromRoot, toRoot)).toBe(true);
    }
  });
});

interface Vectors {
  leaves: string[];
  roots: Record<string, string>;
  inclusion: { index: number; size: number; proof: string[] }[];
  consistency: { from: number; to: number; proof: string[] }[];
}

describe('Merkle tree against Go sumdb/tlog vectors', () => {
  const vectors = loadFixture<Vectors>('tlog-vectors.json');
  const leaves = vectors.leaves.map((l) => Buffer.from(l, 'base64'));
  // The portable hash this time: the verifier's default.
  const { read } = buildTree(leaves, (d) => Uint8Array.from(nativeHash(d)));
  const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

  it('computes the same root at every size', () => {
    for (const [size, root] of Object.entries(vectors.roots)) {
      expect(b64(treeHash(Number(size), read))).toBe(root);
    }
  });

  it('produces and accepts the same inclusion proofs', () => {
    for (const v of vectors.inclusion) {
      expect(inclusionProof(v.index, v.size, read).map(b64)).toEqual(v.proof);
      const proof = v.proof.map((p) => Buffer.from(p, 'base64'));
      const root = Buffer.from(vectors.roots[String(v.size)]!, 'base64');
      expect(verifyInclusion(v.index, v.size, refLeaf(leaves[v.index]!), proof, root)).toBe(true);
    }
  });

  it('produces and accepts the same consistency proofs', () => {
    for (const v of vectors.consistency) {
      expect(consistencyProof(v.from, v.to, read).map(b64)).toEqual(v.proof);
      const proof = v.proof.map((p) => Buffer.from(p, 'base64'));
      const fromRoot = Buffer.from(vectors.roots[String(v.from)]!, 'base64');
      const toRoot = Buffer.from(vectors.roots[String(v.to)]!, 'base64');
      expect(verifyConsistency(v.from, v.to, proof, fromRoot, toRoot)).toBe(true);
    }
  });
});
