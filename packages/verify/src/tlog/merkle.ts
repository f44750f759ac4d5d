import { sha256 } from '@noble/hashes/sha2.js';
import { concatBytes } from '../encoding.js';

// The Merkle tree of RFC 9162 §2.1 over the ledger (receipt contract §9). Pure: the tree's
// stored hashes are read by the caller, in one batch, from the coordinates these functions
// ask for, the way Go's sumdb/tlog separates ProofIndex from Prove.

/** SHA-256 of bytes. Injectable so the server can use node:crypto; portable by default. */
export type HashBytes = (data: Uint8Array) => Uint8Array;
export const portableHashBytes: HashBytes = (data) => sha256(data);

export const HASH_SIZE = 32;

const LEAF_PREFIX = Uint8Array.of(0x00);
const NODE_PREFIX = Uint8Array.of(0x01);

/** Leaf hash = SHA-256(0x00 ‖ leaf data). */
export const leafHash = (data: Uint8Array, hash: HashBytes = portableHashBytes): Uint8Array =>
  hash(concatBytes(LEAF_PREFIX, data));

/** Interior node = SHA-256(0x01 ‖ left ‖ right). */
export const nodeHash = (
  left: Uint8Array,
  right: Uint8Array,
  hash: HashBytes = portableHashBytes,
): Uint8Array => hash(concatBytes(NODE_PREFIX, left, right));

/** The hash of the empty tree: SHA-256 of nothing. */
export const emptyTreeHash = (hash: HashBytes = portableHashBytes): Uint8Array =>
  hash(new Uint8Array(0));

/**
 * A stored hash: the root of the complete subtree of 2^level leaves starting at leaf
 * index × 2^level. Every such subtree inside the tree is stored, level 0 being the leaf
 * hashes, so any proof needs O(log n) of them.
 */
export interface HashCoordinate {
  level: number;
  index: number;
}

/** Reads the stored hash at a coordinate; the caller fetched every coordinate asked for. */
export type StoredHashes = (level: number, index: number) => Uint8Array;

export const coordinateKey = (level: number, index: number): string => `${level}/${index}`;

/** A StoredHashes over a map filled from the store; a missing hash is a caller's bug. */
export function storedHashesFrom(map: ReadonlyMap<string, Uint8Array>): StoredHashes {
  return (level, index) => {
    const found = map.get(coordinateKey(level, index));
    if (!found) throw new TypeError(`stored hash ${level}/${index} was not read`);
    return found;
  };
}

/**
 * Runs `compute` once with a recording reader to learn which stored hashes it needs. The
 * recursion's shape depends only on indexes and sizes, never on hash values, so the
 * coordinates read with placeholder hashes are exactly those the real run reads.
 */
export function coordinatesOf(compute: (read: StoredHashes) => unknown): HashCoordinate[] {
  const seen = new Map<string, HashCoordinate>();
  const placeholder = new Uint8Array(HASH_SIZE);
  compute((level, index) => {
    seen.set(coordinateKey(level, index), { level, index });
    return placeholder;
  });
  return [...seen.values()];
}

const isSafeCount = (n: number) => Number.isSafeInteger(n) && n >= 0;

function requireSize(name: string, n: number): void {
  if (!isSafeCount(n)) throw new TypeError(`${name} must be a non-negative safe integer`);
}

/** The largest power of two strictly below n (n ≥ 2). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** Exact for every safe integer (Math.log2 rounds 2^53 - 1 to 53). */
function isPowerOfTwo(n: number): boolean {
  let k = 1;
  while (k < n) k *= 2;
  return k === n;
}

/** log2 of a power of two, exactly. */
function levelOf(n: number): number {
  let level = 0;
  for (let k = 1; k < n; k *= 2) level += 1;
  return level;
}

/**
 * MTH(D[start:end]) for a range that starts on a boundary of its own split (as every range
 * of the RFC's recursion does): a complete aligned subtree is one stored hash, anything else
 * splits at the largest power of two.
 */
function rangeHash(start: number, end: number, read: StoredHashes, hash: HashBytes): Uint8Array {
  const n = end - start;
  if (isPowerOfTwo(n) && start % n === 0) return read(levelOf(n), start / n);
  const k = splitPoint(n);
  return nodeHash(
    rangeHash(start, start + k, read, hash),
    rangeHash(start + k, end, read, hash),
    hash,
  );
}

/** The root hash of the tree of `size` leaves. */
export function treeHash(
  size: number,
  read: StoredHashes,
  hash: HashBytes = portableHashBytes,
): Uint8Array {
  requireSize('size', size);
  return size === 0 ? emptyTreeHash(hash) : rangeHash(0, size, read, hash);
}

/**
 * The stored hashes that appending the leaf at `index` completes, the leaf's own first:
 * (0, index), then one more per level while the new subtree closes a pair. `read` gives the
 * left siblings, which are already stored.
 */
export function hashesCompletedBy(
  index: number,
  leaf: Uint8Array,
  read: StoredHashes,
  hash: HashBytes = portableHashBytes,
): { level: number; index: number; hash: Uint8Array }[] {
  requireSize('index', index);
  const out = [{ level: 0, index, hash: leaf }];
  let current = leaf;
  let level = 0;
  let at = index;
  while (at % 2 === 1) {
    current = nodeHash(read(level, at - 1), current, hash);
    level += 1;
    at = (at - 1) / 2;
    out.push({ level, index: at, hash: current });
  }
  return out;
}

/** RFC 9162 §2.1.3.1 PATH(m, D[start:end]). */
function path(
  m: number,
  start: number,
  end: number,
  read: StoredHashes,
  hash: HashBytes,
): Uint8Array[] {
  const n = end - start;
  if (n <= 1) return [];
  const k = splitPoint(n);
  return m < k
    ? [...path(m, start, start + k, read, hash), rangeHash(start + k, end, read, hash)]
    : [...path(m - k, start + k, end, read, hash), rangeHash(start, start + k, read, hash)];
}

/** The inclusion proof of leaf `index` in the tree of `size` leaves (RFC 9162 §2.1.3.1). */
export function inclusionProof(
  index: number,
  size: number,
  read: StoredHashes,
  hash: HashBytes = portableHashBytes,
): Uint8Array[] {
  requireSize('index', index);
  requireSize('size', size);
  if (index >= size) throw new RangeError(`leaf ${index} is not in a tree of size ${size}`);
  return path(index, 0, size, read, hash);
}

/** RFC 9162 §2.1.4.1 SUBPROOF(m, D[start:end], b). */
function subproof(
  m: number,
  start: number,
  end: number,
  whole: boolean,
  read: StoredHashes,
  hash: HashBytes,
): Uint8Array[] {
  const n = end - start;
  if (m === n) return whole ? [] : [rangeHash(start, end, read, hash)];
  const k = splitPoint(n);
  return m <= k
    ? [...subproof(m, start, start + k, whole, read, hash), rangeHash(start + k, end, read, hash)]
    : [
        ...subproof(m - k, start + k, end, false, read, hash),
        rangeHash(start, start + k, read, hash),
      ];
}

/** The consistency proof from the tree of `from` leaves to the tree of `to` (RFC 9162). */
export function consistencyProof(
  from: number,
  to: number,
  read: StoredHashes,
  hash: HashBytes = portableHashBytes,
): Uint8Array[] {
  requireSize('from', from);
  requireSize('to', to);
  if (from > to) throw new RangeError(`size ${from} is larger than size ${to}`);
  if (from === 0 || from === to) return [];
  return subproof(from, 0, to, true, read, hash);
}

const sameBytes = (a: Uint8Array, b: Uint8Array) =>
  a.length === b.length && a.every((byte, i) => byte === b[i]);

/**
 * RFC 9162 §2.1.3.2: whether `proof` proves the leaf hash at `index` in the tree of `size`
 * whose root is `root`. Mismatch returns false; every input is attacker-controlled.
 */
export function verifyInclusion(
  index: number,
  size: number,
  leaf: Uint8Array,
  proof: readonly Uint8Array[],
  root: Uint8Array,
  hash: HashBytes = portableHashBytes,
): boolean {
  if (!isSafeCount(index) || !isSafeCount(size) || index >= size) return false;
  if (proof.some((p) => p.length !== HASH_SIZE)) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r, hash);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = nodeHash(r, p, hash);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && sameBytes(r, root);
}

/**
 * RFC 9162 §2.1.4.2: whether `proof` proves the tree of `from` leaves with root `fromRoot`
 * is a prefix of the tree of `to` leaves with root `toRoot`.
 */
export function verifyConsistency(
  from: number,
  to: number,
  proof: readonly Uint8Array[],
  fromRoot: Uint8Array,
  toRoot: Uint8Array,
  hash: HashBytes = portableHashBytes,
): boolean {
  if (!isSafeCount(from) || !isSafeCount(to) || from > to) return false;
  if (proof.some((p) => p.length !== HASH_SIZE)) return false;
  if (from === to) return proof.length === 0 && sameBytes(fromRoot, toRoot);
  // The empty tree is a prefix of every tree, with nothing to prove.
  if (from === 0) return proof.length === 0 && sameBytes(fromRoot, emptyTreeHash(hash));
  if (proof.length === 0) return false;
  const path = isPowerOfTwo(from) ? [fromRoot, ...proof] : [...proof];
  let fn = from - 1;
  let sn = to - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr, hash);
      sr = nodeHash(c, sr, hash);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = nodeHash(sr, c, hash);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && sameBytes(fr, fromRoot) && sameBytes(sr, toRoot);
}
