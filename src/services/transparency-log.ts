import {
  appendSignatureLines,
  checkpointText,
  consistencyProof,
  coordinatesOf,
  encodeEntryBundle,
  encodeHashTile,
  entryRange,
  type HashBytes,
  inclusionProof,
  leafHash,
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
  toBase64,
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

  private async withStored<T>(compute: (read: StoredHashes) => T): Promise<T> {
    const map = await this.deps.tree.hashes(coordinatesOf(compute));
    return compute(storedHashesFrom(map));
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
    const root = await this.withStored((read) => treeHash(size, read, hash));
    if (latest) {
      const previous = parseCheckpointText(parseNote(latest.note)!.text)!;
      const proof = await this.withStored((read) =>
        consistencyProof(previous.size, size, read, hash),
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
    const cosignatures = await this.deps.tree.cosignaturesOf(checkpoint.size);
    const names = new Set(cosignatures.map((c) => c.witness));
    return {
      note: appendSignatureLines(
        checkpoint.note,
        cosignatures.map((c) => c.line),
      ),
      final: (this.deps.witnesses ?? []).every((name) => names.has(name)),
    };
  }

  async checkpointOfSize(size: number): Promise<StoredCheckpoint> {
    const stored = await this.deps.tree.checkpointOfSize(size);
    if (!stored) throw new SvcError('not_found', `No checkpoint of size ${size} was made`);
    return stored;
  }

  /** The inclusion proof of a receipt in the tree of `size` leaves (default: the newest checkpoint's). */
  async inclusion(receiptId: string, size?: number): Promise<InclusionAnswer> {
    const entry = await this.deps.ledger.getByReceiptId(receiptId);
    if (!entry) throw new SvcError('not_found', `Receipt ${receiptId} not found`);
    const index = entry.receipt.chain.sequence - 1;
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
    const hash = this.deps.hash;
    const proof = await this.withStored((read) => inclusionProof(index, treeSize, read, hash));
    return {
      leaf_index: index,
      tree_size: treeSize,
      leaf_hash: toBase64(leafHash(utf8Bytes(receiptHashText(entry.receipt)), hash)),
      inclusion: proof.map(toBase64),
      checkpoint: checkpoint ? (await this.served(checkpoint)).note : null,
    };
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
    const hash = this.deps.hash;
    const proof = await this.withStored((read) => consistencyProof(from, to, read, hash));
    return { from, to, proof: proof.map(toBase64) };
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
