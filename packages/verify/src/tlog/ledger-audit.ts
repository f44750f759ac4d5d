import { canonicalize } from '../canonical.js';
import { verifyEd25519Strict } from '../ed25519.js';
import { fromBase64, toHex, utf8Bytes } from '../encoding.js';
import { contractOf, RECEIPT_CORE_V2 } from '../receipt-contract.js';
import { keyIdOf } from '../ed25519.js';
import { coverageProblem, type SigningKeyRecord } from '../key-history.js';
import type { Ed25519Verify } from '../ed25519.js';
import { leafHash, nodeHash, portableHashBytes, type HashBytes } from './merkle.js';
import type { Checkpoint } from './note.js';
import type { LogKey } from './witness.js';
import {
  decodeEntryBundle,
  decodeHashTile,
  TILE_HEIGHT,
  TILE_WIDTH,
  tilePath,
  type Tile,
} from './tiles.js';
import { isObject } from '../json.js';

// The whole-ledger audit of a checkpoint (receipt contract §9): every entry bundle and hash
// tile of its size read once, in order, the tree rebuilt from the entries and every receipt
// checked. Memory stays bounded: one bundle at a time, one hash tile per level, and the
// O(log n) roots of the complete subtrees to the left. The reading is injected (an HTTP
// server, an exported directory); every byte read is attacker-controlled.

/** Reads a tile's bytes; null when the log does not have it. Throws when unreachable. */
export type ReadTile = (tile: Tile) => Promise<Uint8Array | null>;

export interface LeafFailure {
  /** Leaf index; the receipt's sequence is index + 1. -1 for the tree as a whole. */
  index: number;
  reason: string;
}

export interface LedgerAuditReport {
  ok: boolean;
  origin: string;
  size: number;
  /** Leaves by contract: v2 leaves carry their signed core, v1 leaves do not. */
  leaves: { v2: number; v1: number; unreadable: number };
  /** v2 leaves whose signature verified under a trusted key (that covered their sequence). */
  signatures_verified: number;
  /** Signed `policy.verdict` (v2), or the v1 preimage's `policy.verdict`. */
  by_verdict: Record<string, number>;
  /** Signed `admissibility.status` (v2 only: the v1 preimage does not hold it). */
  by_admissibility: Record<string, number>;
  /** Whether the rebuilt root equals the checkpoint's; false also when the audit stopped early. */
  root_matches: boolean;
  failure_count: number;
  /** The first failures, in leaf order. */
  failures: LeafFailure[];
}

export interface LedgerAuditOptions {
  /** A checkpoint whose signature the caller verified. */
  checkpoint: Checkpoint;
  /**
   * The trusted keys; a v2 leaf must carry a signature by one of them. A raw key (a single
   * pinned key) vouches for any sequence; a key of a followed history (`followKeyTransitions`)
   * only for the sequences it signed and was not revoked from.
   */
  keys: readonly LogKey[];
  readTile: ReadTile;
  /** Strict Ed25519 verification; the CLI passes node:crypto's strict equivalent. */
  verify?: Ed25519Verify;
  hash?: HashBytes;
  /** Called after each entry bundle with the leaves done so far. */
  onProgress?: (done: number, total: number) => void;
  /** How many failures to name (default 20); all are counted. */
  maxFailures?: number;
}

/** A tile's full-tree form error: thrown to stop the audit, reported as a failure. */
class TreeBroken extends Error {}

const utf8 = new TextDecoder('utf-8', { fatal: true });
type Json = Record<string, unknown>;
const sameBytes = (a: Uint8Array, b: Uint8Array) =>
  a.length === b.length && a.every((byte, i) => byte === b[i]);

const V2_LEAF = ['attestations', 'core'];
const V1_LEAF = ['attestations', 'evidence', 'policy', 'replay'];
const keysAre = (value: Json, keys: readonly string[]) => {
  const own = Object.keys(value);
  return own.length === keys.length && keys.every((k) => Object.hasOwn(value, k));
};

/**
 * Audits the ledger of a verified checkpoint. Mismatches are failures in the report; only an
 * unreachable source (the reader throwing) rejects.
 */
export async function auditLedger(options: LedgerAuditOptions): Promise<LedgerAuditReport> {
  const { checkpoint, readTile } = options;
  const hash = options.hash ?? portableHashBytes;
  const verify = options.verify ?? verifyEd25519Strict;
  const maxFailures = options.maxFailures ?? 20;
  // key_id → key: the key a leaf names is found in O(1), however long the history.
  const trusted = new Map<string, { raw: Uint8Array; record: SigningKeyRecord | null }>(
    options.keys.map((key) =>
      ArrayBuffer.isView(key)
        ? [keyIdOf(key), { raw: key, record: null }]
        : [key.keyId, { raw: key.raw, record: key.record }],
    ),
  );
  const withHistory = options.keys.some((key) => !ArrayBuffer.isView(key));
  const size = checkpoint.size;
  const report: LedgerAuditReport = {
    ok: false,
    origin: checkpoint.origin,
    size,
    leaves: { v2: 0, v1: 0, unreadable: 0 },
    signatures_verified: 0,
    by_verdict: {},
    by_admissibility: {},
    root_matches: false,
    failure_count: 0,
    failures: [],
  };
  const failed = (index: number, reason: string) => {
    report.failure_count += 1;
    if (report.failures.length < maxFailures) report.failures.push({ index, reason });
  };
  const count = (table: Record<string, number>, key: string) => {
    table[key] = (table[key] ?? 0) + 1;
  };

  // The roots of the complete subtrees left of the next leaf, largest first (a compact range).
  const range: { level: number; hash: Uint8Array }[] = [];
  // One hash tile per tile level above 0: the one holding the next subtree root to compare.
  const upper = new Map<number, { index: number; hashes: Uint8Array[] }>();

  const tileOf = async (tile: Tile, what: string): Promise<Uint8Array> => {
    const bytes = await readTile(tile);
    if (!bytes) throw new TreeBroken(`${what} ${tilePath(tile)} is missing`);
    return bytes;
  };
  const hashTile = async (level: number, index: number): Promise<Uint8Array[]> => {
    const hashes = Math.floor(size / TILE_WIDTH ** level);
    const width = Math.min(TILE_WIDTH, hashes - index * TILE_WIDTH);
    const tile: Tile = { level, index, width };
    const decoded = decodeHashTile(await tileOf(tile, 'hash tile'));
    if (!decoded || decoded.length !== width) {
      throw new TreeBroken(`hash tile ${tilePath(tile)} does not hold ${width} hashes`);
    }
    return decoded;
  };
  // A complete subtree of 256^L leaves is a hash of tile level L: compare it with the tile.
  const checkUpper = async (treeLevel: number, index: number, value: Uint8Array) => {
    const level = treeLevel / TILE_HEIGHT;
    const tileIndex = Math.floor(index / TILE_WIDTH);
    let held = upper.get(level);
    if (held?.index !== tileIndex) {
      held = { index: tileIndex, hashes: await hashTile(level, tileIndex) };
      upper.set(level, held);
    }
    if (!sameBytes(held.hashes[index % TILE_WIDTH]!, value)) {
      throw new TreeBroken(
        `hash tile ${level} disagrees with the entries: the subtree of ${TILE_WIDTH ** level} leaves from leaf ${index * TILE_WIDTH ** level}`,
      );
    }
  };
  const append = async (leaf: Uint8Array, index: number) => {
    let node = { level: 0, hash: leaf };
    let at = index;
    while (at % 2 === 1) {
      const left = range.pop()!;
      node = { level: node.level + 1, hash: nodeHash(left.hash, node.hash, hash) };
      at = (at - 1) / 2;
      if (node.level % TILE_HEIGHT === 0) await checkUpper(node.level, at, node.hash);
    }
    range.push(node);
  };

  let previousHash: string | null = null;
  const checkLeaf = (index: number, data: Uint8Array): void => {
    const own = `sha256:${toHex(hash(data))}`;
    const linkTo = previousHash;
    previousHash = own;
    let text: string;
    let value: unknown;
    try {
      text = utf8.decode(data);
      value = JSON.parse(text);
    } catch {
      report.leaves.unreadable += 1;
      return failed(index, 'the leaf is not UTF-8 JSON');
    }
    if (!isObject(value)) {
      report.leaves.unreadable += 1;
      return failed(index, 'the leaf is not a JSON object');
    }
    if (keysAre(value, V2_LEAF) && isObject(value.core)) {
      report.leaves.v2 += 1;
      const reason = checkV2(value.core, value.attestations, text, index, linkTo);
      if (reason) return failed(index, reason);
      report.signatures_verified += 1;
      const policy = isObject(value.core.policy) ? value.core.policy : {};
      const admissibility = isObject(value.core.admissibility) ? value.core.admissibility : {};
      count(report.by_verdict, String(policy.verdict));
      count(report.by_admissibility, String(admissibility.status));
      return;
    }
    if (keysAre(value, V1_LEAF)) {
      report.leaves.v1 += 1;
      try {
        if (canonicalize(value) !== text) return failed(index, 'the v1 leaf is not canonical JCS');
      } catch (error) {
        return failed(index, `the v1 leaf has no canonical form: ${(error as Error).message}`);
      }
      const policy = isObject(value.policy) ? value.policy : {};
      count(report.by_verdict, String(policy.verdict));
      return;
    }
    report.leaves.unreadable += 1;
    return failed(index, 'the leaf is neither a receipt-core-v2 nor a receipt-core-v1 preimage');
  };

  const checkV2 = (
    core: Json,
    attestations: unknown,
    text: string,
    index: number,
    linkTo: string | null,
  ): string | null => {
    if (contractOf(core) !== RECEIPT_CORE_V2) {
      return 'the core does not declare receipt-core-v2 with its exact field list';
    }
    let coreText: string;
    try {
      coreText = canonicalize(core);
      // JCS of {attestations, core}: the leaf is exactly the preimage of chain.receipt_hash.
      if (`{"attestations":${canonicalize(attestations)},"core":${coreText}}` !== text) {
        return 'the leaf is not canonical JCS';
      }
    } catch (error) {
      return `the leaf has no canonical form: ${(error as Error).message}`;
    }
    const position = isObject(core.position) ? core.position : {};
    if (position.log !== checkpoint.origin) {
      return `position.log ${JSON.stringify(position.log)} is not the checkpoint's origin ${JSON.stringify(checkpoint.origin)}`;
    }
    if (position.sequence !== index + 1) {
      return `position.sequence ${JSON.stringify(position.sequence)} is not ${index + 1} (leaf ${index})`;
    }
    if (position.previous_receipt_hash !== linkTo) {
      return `position.previous_receipt_hash ${JSON.stringify(position.previous_receipt_hash)} is not ${linkTo === null ? 'null (the first leaf)' : `${linkTo}, the hash of leaf ${index - 1}`}`;
    }
    const list = Array.isArray(attestations) ? attestations.filter(isObject) : [];
    const ours = list.filter(
      (a) => a.algorithm === 'Ed25519' && typeof a.key_id === 'string' && trusted.has(a.key_id),
    );
    if (ours.length === 0) {
      const named = list.map((a) => String(a.key_id)).join(', ') || 'no key';
      return withHistory
        ? `signed by ${named}, which is not in the key history followed from the pin`
        : `signed by ${named}, not by a trusted key`;
    }
    const message = utf8Bytes(coreText);
    for (const attestation of ours) {
      const keyId = attestation.key_id as string;
      const { raw, record } = trusted.get(keyId)!;
      // A key of the history vouches only for the sequences it signed, before any revocation.
      const sequence = index + 1;
      const covered =
        record === null ||
        (sequence >= record.first_sequence &&
          (record.last_sequence === null || sequence <= record.last_sequence) &&
          (record.revoked_from_sequence === null || sequence < record.revoked_from_sequence));
      // The reason (a string) is only built for a leaf that fails: the audit stays fast.
      const problem = covered ? null : coverageProblem(record, sequence);
      if (problem) return `signed by ${keyId}, which ${problem.replace(`key ${keyId} `, '')}`;
      const signature =
        typeof attestation.signature === 'string' ? fromBase64(attestation.signature) : null;
      if (!signature || !verify(signature, message, raw)) {
        return `the Ed25519 signature of ${attestation.key_id as string} does not verify over the core`;
      }
    }
    return null;
  };

  const bundles = Math.ceil(size / TILE_WIDTH);
  const bundleTiles = (b: number): [Tile, Tile] => {
    const width = Math.min(TILE_WIDTH, size - b * TILE_WIDTH);
    return [
      { level: 'entries', index: b, width },
      { level: 0, index: b, width },
    ];
  };
  const read = (b: number) => {
    const [entries, hashes] = bundleTiles(b);
    // Both reads settle before either is judged, so the entry bundle is named first whichever
    // read failed sooner: the report must not depend on I/O timing.
    return Promise.allSettled([tileOf(entries, 'entry bundle'), tileOf(hashes, 'hash tile')]).then(
      ([e, h]) => {
        if (e.status === 'rejected') throw e.reason;
        if (h.status === 'rejected') throw h.reason;
        return [e.value, h.value] as const;
      },
    );
  };
  try {
    // The next bundle is read while this one is checked.
    let next = bundles > 0 ? read(0) : null;
    next?.catch(() => undefined);
    for (let b = 0; b < bundles; b++) {
      const [entryBytes, hashBytes] = await next!;
      next = b + 1 < bundles ? read(b + 1) : null;
      next?.catch(() => undefined);
      const [entryTile, hashTileOf] = bundleTiles(b);
      const entries = decodeEntryBundle(entryBytes);
      if (!entries || entries.length !== entryTile.width) {
        throw new TreeBroken(
          `entry bundle ${tilePath(entryTile)} does not hold ${entryTile.width} entries`,
        );
      }
      const leafHashes = decodeHashTile(hashBytes);
      if (!leafHashes || leafHashes.length !== hashTileOf.width) {
        throw new TreeBroken(
          `hash tile ${tilePath(hashTileOf)} does not hold ${hashTileOf.width} hashes`,
        );
      }
      for (let i = 0; i < entries.length; i++) {
        const index = b * TILE_WIDTH + i;
        const data = entries[i]!;
        const leaf = leafHash(data, hash);
        if (!sameBytes(leaf, leafHashes[i]!)) {
          failed(index, `the leaf hash in ${tilePath(hashTileOf)} is not the entry's`);
        }
        checkLeaf(index, data);
        await append(leaf, index);
      }
      options.onProgress?.(Math.min(size, (b + 1) * TILE_WIDTH), size);
    }
    let root = range.length === 0 ? hash(new Uint8Array(0)) : range[range.length - 1]!.hash;
    for (let i = range.length - 2; i >= 0; i--) root = nodeHash(range[i]!.hash, root, hash);
    report.root_matches = sameBytes(root, checkpoint.root);
    if (!report.root_matches) {
      failed(
        -1,
        `the tree of the entries has root ${toHex(root)}, the checkpoint signs ${toHex(checkpoint.root)}`,
      );
    }
  } catch (error) {
    if (!(error instanceof TreeBroken)) throw error;
    failed(-1, `${error.message}; the audit stopped there`);
  }
  report.ok = report.failure_count === 0 && report.root_matches;
  return report;
}
