import { concatBytes } from '../encoding.js';
import { HASH_SIZE, type HashCoordinate } from './merkle.js';

// C2SP tlog-tiles with tile height 8 (receipt contract §9): a tile at level L holds up to 256
// consecutive stored hashes of tree level 8·L; entry bundles hold the leaf data.

export const TILE_HEIGHT = 8;
export const TILE_WIDTH = 256;
/** Entries are prefixed by a big-endian uint16 length. */
export const MAX_ENTRY_SIZE = 0xffff;
/** C2SP: levels 0 to 63. */
const MAX_LEVEL = 63;

export interface Tile {
  /** Tile level L (hashes of tree level 8·L), or "entries" for an entry bundle. */
  level: number | 'entries';
  /** Index N of the tile within its level. */
  index: number;
  /** 256 for a full tile, 1 to 255 for a partial one. */
  width: number;
}

/** N as zero-padded 3-digit path elements, all but the last prefixed by "x". */
export function tileIndexPath(index: number): string {
  if (!Number.isSafeInteger(index) || index < 0) throw new TypeError('bad tile index');
  const groups: string[] = [];
  let n = index;
  do {
    groups.unshift(String(n % 1000).padStart(3, '0'));
    n = Math.floor(n / 1000);
  } while (n > 0);
  return groups.map((g, i) => (i < groups.length - 1 ? `x${g}` : g)).join('/');
}

/** The tile's path under the log's prefix: `tile/<L>/<N>[.p/<W>]`, `tile/entries/...`. */
export function tilePath(tile: Tile): string {
  const partial = tile.width < TILE_WIDTH ? `.p/${tile.width}` : '';
  return `tile/${tile.level}/${tileIndexPath(tile.index)}${partial}`;
}

const LEVEL = /^(?:0|[1-9][0-9]?)$/;
const GROUP = /^[0-9]{3}$/;
const WIDTH = /^(?:[1-9][0-9]?|1[0-9]{2}|2[0-4][0-9]|25[0-5])$/;

/**
 * Parses the part of a tile URL after `tile/`, as C2SP writes it: null for anything else
 * (attacker-controlled: no leading zeros in levels or widths, 3-digit groups, `x` on all
 * but the last).
 */
export function parseTilePath(rest: string): Tile | null {
  const parts = rest.split('/');
  const levelText = parts.shift();
  if (levelText === undefined) return null;
  let level: Tile['level'];
  if (levelText === 'entries') level = 'entries';
  else if (LEVEL.test(levelText) && Number(levelText) <= MAX_LEVEL) level = Number(levelText);
  else return null;
  let width = TILE_WIDTH;
  const last = parts[parts.length - 1];
  if (parts.length >= 2 && parts[parts.length - 2]?.endsWith('.p') === true && last) {
    if (!WIDTH.test(last)) return null;
    width = Number(last);
    parts.pop();
    parts[parts.length - 1] = parts[parts.length - 1]!.slice(0, -2);
  }
  if (parts.length === 0) return null;
  let index = 0;
  for (const [i, part] of parts.entries()) {
    const digits = i < parts.length - 1 ? (part.startsWith('x') ? part.slice(1) : null) : part;
    if (digits === null || !GROUP.test(digits)) return null;
    index = index * 1000 + Number(digits);
    if (!Number.isSafeInteger(index)) return null;
  }
  return { level, index, width };
}

/**
 * Whether the tree of `size` leaves holds every hash of this tile. Its hashes never change
 * once they exist, so a partial tile of any earlier checkpoint stays servable.
 */
export function tileExists(tile: Tile, size: number): boolean {
  const level = tile.level === 'entries' ? 0 : tile.level;
  return tile.index * TILE_WIDTH + tile.width <= Math.floor(size / TILE_WIDTH ** level);
}

/** The stored hashes a hash tile holds: tree level 8·L, 256·N onwards, `width` of them. */
export function tileCoordinates(tile: Tile): HashCoordinate[] {
  if (tile.level === 'entries') throw new TypeError('an entry bundle holds no hashes');
  const level = tile.level * TILE_HEIGHT;
  return Array.from({ length: tile.width }, (_, i) => ({
    level,
    index: tile.index * TILE_WIDTH + i,
  }));
}

/** The leaf indexes an entry bundle holds. */
export function entryRange(tile: Tile): { first: number; count: number } {
  return { first: tile.index * TILE_WIDTH, count: tile.width };
}

/** The tiles of a tree of `size` leaves at every level, full and partial, and its entry bundles. */
export function tilesOf(size: number): Tile[] {
  const tiles: Tile[] = [];
  for (let level = 0; TILE_WIDTH ** level <= size; level++) {
    const hashes = Math.floor(size / TILE_WIDTH ** level);
    const full = Math.floor(hashes / TILE_WIDTH);
    for (let index = 0; index < full; index++) tiles.push({ level, index, width: TILE_WIDTH });
    if (hashes % TILE_WIDTH > 0) tiles.push({ level, index: full, width: hashes % TILE_WIDTH });
    if (level === 0) {
      for (let index = 0; index < full; index++) {
        tiles.push({ level: 'entries', index, width: TILE_WIDTH });
      }
      if (hashes % TILE_WIDTH > 0) {
        tiles.push({ level: 'entries', index: full, width: hashes % TILE_WIDTH });
      }
    }
  }
  return tiles;
}

/** A hash tile's bytes: its hashes concatenated. */
export function encodeHashTile(hashes: readonly Uint8Array[]): Uint8Array {
  if (hashes.some((h) => h.length !== HASH_SIZE)) throw new TypeError('hashes are 32 bytes');
  return concatBytes(...hashes);
}

/** Splits a hash tile's bytes; null when its length is not a whole number of hashes. */
export function decodeHashTile(bytes: Uint8Array): Uint8Array[] | null {
  if (bytes.length === 0 || bytes.length % HASH_SIZE !== 0) return null;
  return Array.from({ length: bytes.length / HASH_SIZE }, (_, i) =>
    bytes.slice(i * HASH_SIZE, (i + 1) * HASH_SIZE),
  );
}

/** An entry bundle: each entry prefixed by its length as a big-endian uint16. */
export function encodeEntryBundle(entries: readonly Uint8Array[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const entry of entries) {
    if (entry.length > MAX_ENTRY_SIZE) throw new RangeError('an entry is at most 65535 bytes');
    parts.push(Uint8Array.of(entry.length >> 8, entry.length & 0xff), entry);
  }
  return concatBytes(...parts);
}

/** The entries of a bundle; null when the bytes are not a whole sequence of entries. */
export function decodeEntryBundle(bytes: Uint8Array): Uint8Array[] | null {
  const entries: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (at + 2 > bytes.length) return null;
    const length = (bytes[at]! << 8) | bytes[at + 1]!;
    at += 2;
    if (at + length > bytes.length) return null;
    entries.push(bytes.slice(at, at + length));
    at += length;
  }
  return entries;
}
