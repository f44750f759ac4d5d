import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  checkpointText,
  decodeEntryBundle,
  encodeEntryBundle,
  encodeHashTile,
  leafHash,
  nodeHash,
  signNote,
  TILE_HEIGHT,
  TILE_WIDTH,
  tilePath,
  tilesOf,
} from '@svc/verify';
import type { ServerKey } from '../../src/ports/signer.js';

/** Every complete subtree hash of a tree of these leaves, by level; and its root. */
export function treeOf(leaves: readonly Uint8Array[]): {
  levels: Uint8Array[][];
  root: Uint8Array;
} {
  const levels: Uint8Array[][] = [leaves.map((l) => leafHash(l))];
  while (levels[levels.length - 1]!.length > 1) {
    const below = levels[levels.length - 1]!;
    const above: Uint8Array[] = [];
    for (let i = 0; i + 1 < below.length; i += 2) above.push(nodeHash(below[i]!, below[i + 1]!));
    levels.push(above);
  }
  // RFC 9162 MTH: a complete aligned subtree is a stored hash, anything else splits at the
  // largest power of two below its size.
  const mth = (start: number, n: number): Uint8Array => {
    const level = Math.log2(n);
    if (Number.isInteger(level)) return levels[level]![start / n]!;
    const k = 2 ** Math.floor(Math.log2(n - 1));
    return nodeHash(mth(start, k), mth(start + k, n - k));
  };
  const root = leaves.length === 0 ? new Uint8Array(32) : mth(0, leaves.length);
  return { levels, root };
}

/** A signed checkpoint of these leaves under a key (key name = origin). */
export function signCheckpoint(
  origin: string,
  size: number,
  root: Uint8Array,
  key: Pick<ServerKey, 'publicKeyRaw' | 'sign'>,
): string {
  return signNote(
    checkpointText({ origin, size, root }),
    { name: origin, publicKey: key.publicKeyRaw },
    (message) => key.sign(message),
  );
}

/**
 * Writes a log of these leaves as `svc log export` lays it out: its tiles, entry bundles and
 * a checkpoint signed by `key`. For hand-made ledgers (a tampered leaf re-signed, say).
 */
export function writeLogDir(
  dir: string,
  leaves: readonly Uint8Array[],
  origin: string,
  key: Pick<ServerKey, 'publicKeyRaw' | 'sign'>,
): void {
  const { levels, root } = treeOf(leaves);
  for (const tile of tilesOf(leaves.length)) {
    const first = tile.index * TILE_WIDTH;
    const bytes =
      tile.level === 'entries'
        ? encodeEntryBundle(leaves.slice(first, first + tile.width))
        : encodeHashTile(levels[tile.level * TILE_HEIGHT]!.slice(first, first + tile.width));
    const path = join(dir, tilePath(tile));
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, bytes);
  }
  writeFileSync(join(dir, 'checkpoint'), signCheckpoint(origin, leaves.length, root, key));
}

/** The leaves of an exported directory's entry bundles, in order. */
export function readLeaves(read: (path: string) => Uint8Array, size: number): Uint8Array[] {
  return tilesOf(size)
    .filter((t) => t.level === 'entries')
    .flatMap((t) => decodeEntryBundle(read(tilePath(t)))!);
}
