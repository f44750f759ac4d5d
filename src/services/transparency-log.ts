import {
  appendSignatureLines,
  checkpointText,
  consistencyProof,
  coordinateKey,
  coordinatesOf,
  encodeEntryBundle,
  encodeHashTile,
  entryRange,
  formatTlogProof,
  fromBase64,
  HASH_SIZE,
  type HashBytes,
  type HashCoordinate,
  inclusionProof,
  MAX_ENTRY_SIZE,
  type NoteKey,
  parseCheckpointText,
  parseNote,
  receiptHashText,
  signNote,
  type StoredHashes,
  storedHashesFrom,
  type Tile,
  tileCoordinates,
  tileExists,
  treeHash,
  utf8Bytes,
  verifierKey,
  verifyConsistency,
} from '@svc/verify';
import { SvcError } from '../core/errors.js';
import type { Clock } from '../ports/clock.js';
import type { LedgerStore } from '../ports/ledger-store.js';
import type { LogTreeStore, StoredCheckpoint } from '../ports/log-tree.js';
import type { ServerKey } from '../ports/signer.js';

// What the run that only collects a computation's coordinates hashes with: the coordinates
// depend on sizes and indexes alone, never on hash values (see coordinatesOf), so that run
// need not hash anything.
const PLACEHOLDER = new Uint8Array(HASH_SIZE);
const skipHashing: HashBytes = () => PLACEHOLDER;

// Proofs keep the stored hashes they read of the tree's upper levels: from level 8, or higher
// in a tree so large that more than about 2^15 hashes lie above it. A stored hash never
// changes (the tree is append-only), and every proof needs about one hash per level.
const UPPER_LEVEL = 8;
const UPPER_SPAN = 15;
const UPPER_MAX = 2 ** (UPPER_SPAN + 1);
/** The lowest level of the tree of `size` leaves whose hashes proofs keep. */
function upperLevelOf(size: number): number {
  let levels = 0;
  for (let k = 1; k < size; k *= 2) levels += 1;
  return Math.max(UPPER_LEVEL, levels - UPPER_SPAN);
}

/** Base64 by node's Buffer: what toBase64 gives, several times faster, for every hash of a proof. */
const base64 = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');

export interface InclusionAnswer {
  leaf_index: number;
  tree_size: number;
  leaf_hash: string;
  inclusion: string[];
  /**
   * The stored checkpoint of `tree_size`, when one was made at that size, as served: with the
   * witnesses' cosignature lines stored so far.
   */
  checkpoint: string | null;
}

/**
 * The ledger as a transparency log (contract §9): signed checkpoints of its Merkle tree,
 * inclusion and consistency proofs, and C2SP tiles. Every proof is computed from stored
 * subtree hashes read in one batch, so its cost grows with log n, not n.
 */
export class TransparencyLog {
  /** The key that signs new checkpoints; null for a log opened to read only. */
  readonly noteKey: NoteKey | null;
  /**
   * The newest final checkpoint as served. A stored checkpoint never changes, and once every
   * configured witness has cosigned it its cosignature lines do not either (what the year-long
   * Cache-Control of `GET /v1/log/checkpoint?size=` also relies on): every proof against it
   * reuses this instead of reading the cosignatures again.
   */
  private finalServed: { size: number; note: string } | null = null;
  /** Stored hashes of the upper levels, by `coordinateKey` (see UPPER_LEVEL). */
  private readonly upper = new Map<string, Uint8Array>();

  constructor(
    private readonly deps: {
      tree: LogTreeStore;
      ledger: LedgerStore;
      origin: string;
      hash?: HashBytes;
      /**
       * What signs and dates new checkpoints. Without them the log serves what is stored —
       * checkpoints, tiles, proofs — and refuses to make a checkpoint: how `svc log export`
       * reads a store without holding the service's private key.
       */
      serverKey?: ServerKey;
      clock?: Clock;
      /** The key history: a checkpoint is signed only by the key current when it is made. */
      signingKeys?: { isCurrent(keyId: string): Promise<boolean> };
      /** The configured witnesses' names: a checkpoint is final once each has cosigned it. */
      witnesses?: readonly string[];
    },
  ) {
    this.noteKey = deps.serverKey
      ? { name: deps.origin, publicKey: deps.serverKey.publicKeyRaw }
      : null;
  }

  get origin(): string {
    return this.deps.origin;
  }

  /** The signed-note verifier key of the checkpoints (`<origin>+<key ID>+<key>`), when signing. */
  get verifierKey(): string | null {
    return this.noteKey ? verifierKey(this.noteKey) : null;
  }

  /** The newest stored checkpoint, without making one. */
  latestCheckpoint(): Promise<StoredCheckpoint | null> {
    return this.deps.tree.latestCheckpoint();
  }

  /**
   * Runs `compute` on the stored hashes it needs (and those at `extra`), read in one batch:
   * a first run without hashing collects the coordinates, the second computes. With
   * `keepFor`, the size of the tree a proof is of, upper-level hashes read before are
   * taken from memory and those read now are kept; a checkpoint is computed from the store
   * alone.
   */
  private async withStored<T>(
    compute: (read: StoredHashes, hash: HashBytes | undefined) => T,
    options: { extra?: readonly HashCoordinate[]; keepFor?: number } = {},
  ): Promise<{ value: T; read: StoredHashes }> {
    const coordinates = coordinatesOf((read) => compute(read, skipHashing));
    if (options.extra) coordinates.push(...options.extra);
    const lowest = options.keepFor === undefined ? Infinity : upperLevelOf(options.keepFor);
    const known = new Map<string, Uint8Array>();
    const missing: HashCoordinate[] = [];
    for (const c of coordinates) {
      const kept = c.level >= lowest ? this.upper.get(coordinateKey(c.level, c.index)) : undefined;
      if (kept) known.set(coordinateKey(c.level, c.index), kept);
      else missing.push(c);
    }
    if (missing.length > 0) {
      const stored = await this.deps.tree.hashes(missing);
      for (const c of missing) {
        const key = coordinateKey(c.level, c.index);
        const hash = stored.get(key);
        if (!hash) continue; // storedHashesFrom names it when compute asks for it
        known.set(key, hash);
        if (c.level >= lowest) {
          if (this.upper.size >= UPPER_MAX) this.upper.clear();
          this.upper.set(key, hash);
        }
      }
    }
    const read = storedHashesFrom(known);
    return { value: compute(read, this.deps.hash), read };
  }

  /**
   * Signs and stores a checkpoint of the tree as it is now, unless the newest one already has
   * this size. Before signing, it proves the new tree consistent with the newest checkpoint,
   * so the log never signs two inconsistent checkpoints, even over a damaged store.
   */
  async makeCheckpoint(): Promise<StoredCheckpoint> {
    const latest = await this.deps.tree.latestCheckpoint();
    const size = await this.deps.tree.size();
    if (latest && latest.size >= size) return latest;
    const { serverKey, clock } = this.deps;
    const noteKey = this.noteKey;
    if (!serverKey || !clock || !noteKey) {
      throw new Error('log: opened to read only (no signing key): it cannot make a checkpoint');
    }
    if (this.deps.signingKeys && !(await this.deps.signingKeys.isCurrent(serverKey.keyId))) {
      throw new SvcError(
        'unavailable',
        `no checkpoint signed: this process's key ${serverKey.keyId} is no longer the ledger's current key; restart the service to sign with the current one`,
      );
    }
    const hash = this.deps.hash;
    const { value: root } = await this.withStored((read, h) => treeHash(size, read, h));
    if (latest) {
      const previous = parseCheckpointText(parseNote(latest.note)!.text)!;
      const { value: proof } = await this.withStored((read, h) =>
        consistencyProof(previous.size, size, read, h),
      );
      if (!verifyConsistency(previous.size, size, proof, previous.root, root, hash)) {
        throw new Error(
          `log: the tree of size ${size} is not consistent with the checkpoint of size ${previous.size}`,
        );
      }
    }
    const note = signNote(
      checkpointText({ origin: this.deps.origin, size, root }),
      noteKey,
      (message) => serverKey.sign(message),
    );
    return this.deps.tree.addCheckpoint({
      size,
      note,
      created_at: new Date(clock.now()).toISOString(),
    });
  }

  /** The newest checkpoint, made now when none covers the whole tree yet. */
  async currentCheckpoint(): Promise<StoredCheckpoint> {
    const latest = await this.deps.tree.latestCheckpoint();
    const size = await this.deps.tree.size();
    return latest && latest.size >= size ? latest : this.makeCheckpoint();
  }

  /**
   * A stored checkpoint as served: the signed note with the stored witnesses' cosignature lines
   * appended (a signed note carries several signatures; clients ignore keys they do not know),
   * and whether every configured witness has cosigned it, so that it will not change again.
   */
  async served(checkpoint: StoredCheckpoint): Promise<{ note: string; final: boolean }> {
    const cached = this.finalServed;
    if (cached?.size === checkpoint.size) return { note: cached.note, final: true };
    const cosignatures = await this.deps.tree.cosignaturesOf(checkpoint.size);
    const names = new Set(cosignatures.map((c) => c.witness));
    const note = appendSignatureLines(
      checkpoint.note,
      cosignatures.map((c) => c.line),
    );
    const final = (this.deps.witnesses ?? []).every((name) => names.has(name));
    if (final && checkpoint.size >= (this.finalServed?.size ?? 0)) {
      this.finalServed = { size: checkpoint.size, note };
    }
    return { note, final };
  }

  async checkpointOfSize(size: number): Promise<StoredCheckpoint> {
    const stored = await this.deps.tree.checkpointOfSize(size);
    if (!stored) throw new SvcError('not_found', `No checkpoint of size ${size} was made`);
    return stored;
  }

  /** The inclusion proof of a receipt in the tree of `size` leaves (default: the newest checkpoint's). */
  async inclusion(receiptId: string, size?: number, leafIndex?: number): Promise<InclusionAnswer> {
    // A caller that has read the receipt's sequence already (verify) passes its leaf.
    const index = leafIndex ?? (await this.deps.tree.leafIndexOf(receiptId));
    if (index === null) throw new SvcError('not_found', `Receipt ${receiptId} not found`);
    let checkpoint: StoredCheckpoint | null;
    let treeSize: number;
    if (size === undefined) {
      checkpoint = await this.currentCheckpoint();
      treeSize = checkpoint.size;
    } else {
      const current = await this.deps.tree.size();
      if (size <= index || size > current) {
        throw new SvcError(
          'validation_failed',
          `size: the receipt is leaf ${index}, so size must be from ${index + 1} to the tree size ${current}`,
        );
      }
      treeSize = size;
      checkpoint = await this.deps.tree.checkpointOfSize(size);
    }
    // The leaf hash as the tree stores it at (0, index), read with the proof's hashes: the
    // store wrote it from the preimage of the receipt's chain.receipt_hash, and a verifier
    // recomputes it from the receipt anyway.
    const { value: proof, read } = await this.withStored(
      (read, h) => inclusionProof(index, treeSize, read, h),
      { extra: [{ level: 0, index }], keepFor: treeSize },
    );
    return {
      leaf_index: index,
      tree_size: treeSize,
      leaf_hash: base64(read(0, index)),
      inclusion: proof.map(base64),
      checkpoint: checkpoint ? (await this.served(checkpoint)).note : null,
    };
  }

  /**
   * The C2SP tlog-proof@v1 text of a receipt (contract §14): its index, its inclusion proof and
   * the served checkpoint (with the witnesses' cosignatures) of the tree of `size` leaves,
   * default the best-witnessed checkpoint holding the leaf (else the newest). A size no
   * checkpoint was made at has nothing signed to prove against.
   */
  async tlogProof(receiptId: string, size?: number, leafIndex?: number): Promise<string> {
    const index = leafIndex ?? (await this.deps.tree.leafIndexOf(receiptId));
    if (index === null) throw new SvcError('not_found', `Receipt ${receiptId} not found`);
    const answer = await this.inclusion(
      receiptId,
      size ?? (await this.witnessedSize(index)),
      index,
    );
    if (answer.checkpoint === null)
      throw new SvcError(
        'not_found',
        `No checkpoint of size ${answer.tree_size} was made: a tlog-proof holds a signed checkpoint, so give the size of one (GET /v1/log/checkpoint) or none for the newest`,
      );
    return formatTlogProof({
      extra: null,
      index: answer.leaf_index,
      proof: answer.inclusion.map((hash) => fromBase64(hash)!),
      checkpoint: answer.checkpoint,
    });
  }

  /**
   * The stored checkpoint a tlog-proof of leaf `index` is best made against: witnesses are
   * sent a checkpoint at most every SVC_WITNESS_MIN_INTERVAL, so the newest one is often not
   * cosigned yet. Of the sizes the configured witnesses last cosigned that hold the leaf, the
   * one cosigned by the most (the larger on a tie); undefined (the newest) when none does.
   */
  private async witnessedSize(index: number): Promise<number | undefined> {
    const sizes = new Set<number>();
    for (const name of this.deps.witnesses ?? []) {
      const size = await this.deps.tree.lastCosignedSize(name);
      if (size !== null && size > index) sizes.add(size);
    }
    let best: { size: number; count: number } | undefined;
    for (const size of sizes) {
      const count = (await this.deps.tree.cosignaturesOf(size)).length;
      if (!best || count > best.count || (count === best.count && size > best.size))
        best = { size, count };
    }
    return best?.size;
  }

  /** The root of the tree of `size` leaves (1 to the current size), or null beyond it. */
  async rootAt(size: number): Promise<Uint8Array | null> {
    if (!Number.isSafeInteger(size) || size < 1 || size > (await this.deps.tree.size()))
      return null;
    const { value } = await this.withStored((read, h) => treeHash(size, read, h), {
      keepFor: size,
    });
    return value;
  }

  /** The proof that the tree of `from` leaves is a prefix of the tree of `to` leaves. */
  async consistency(
    from: number,
    to: number,
  ): Promise<{ from: number; to: number; proof: string[] }> {
    const size = await this.deps.tree.size();
    if (from > to || to > size) {
      throw new SvcError(
        'validation_failed',
        `from and to must satisfy 0 <= from <= to <= ${size} (the tree size)`,
      );
    }
    const { value: proof } = await this.withStored(
      (read, h) => consistencyProof(from, to, read, h),
      { keepFor: to },
    );
    return { from, to, proof: proof.map(base64) };
  }

  /** A tile's bytes as C2SP tlog-tiles serves them; 404 for one the tree does not hold. */
  async tile(tile: Tile): Promise<Uint8Array> {
    const size = await this.deps.tree.size();
    if (!tileExists(tile, size)) {
      throw new SvcError('not_found', `The log of size ${size} has no such tile`);
    }
    if (tile.level !== 'entries') {
      const coordinates = tileCoordinates(tile);
      const map = await this.deps.tree.hashes(coordinates);
      return encodeHashTile(coordinates.map((c) => storedHashesFrom(map)(c.level, c.index)));
    }
    const { first, count } = entryRange(tile);
    const entries = (await this.deps.ledger.list(first, count)).map((e) =>
      utf8Bytes(receiptHashText(e.receipt)),
    );
    if (entries.length !== count || entries.some((e) => e.length > MAX_ENTRY_SIZE)) {
      throw new Error(`log: entry bundle ${tile.index} cannot be encoded`);
    }
    return encodeEntryBundle(entries);
  }
}
