import { createHash, createPrivateKey, sign as nodeSign, verify as nodeVerify } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import {
  checkpointText,
  coordinateKey,
  decodeEntryBundle,
  decodeHashTile,
  encodeEntryBundle,
  encodeHashTile,
  hashesCompletedBy,
  leafHash,
  noteKeyId,
  parseCheckpointText,
  parseNote,
  parseTilePath,
  parseVerifierKey,
  signNote,
  storedHashesFrom,
  tileCoordinates,
  tileExists,
  tileIndexPath,
  tilePath,
  tilesOf,
  treeHash,
  verifierKey,
  verifyCheckpoint,
  verifyNote,
} from '@svc/verify';
import { loadFixture } from '../../../support/fixtures.js';

interface Vectors {
  leaves: string[];
  tiles: { c2sp_path: string; data: string }[];
  checkpoint: { seed_hex: string; public_key_b64: string; verifier_key: string; note: string };
}
const vectors = loadFixture<Vectors>('tlog-vectors.json');

const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const privateKeyOf = (seedHex: string) =>
  createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, Buffer.from(seedHex, 'hex')]),
    format: 'der',
    type: 'pkcs8',
  });

describe('tile paths (C2SP tlog-tiles)', () => {
  it('encodes indexes as 3-digit groups with x on all but the last', () => {
    expect(tileIndexPath(0)).toBe('000');
    expect(tileIndexPath(67)).toBe('067');
    expect(tileIndexPath(1000)).toBe('x001/000');
    expect(tileIndexPath(1234067)).toBe('x001/x234/067');
    expect(tilePath({ level: 0, index: 1234067, width: 256 })).toBe('tile/0/x001/x234/067');
    expect(tilePath({ level: 2, index: 5, width: 17 })).toBe('tile/2/005.p/17');
    expect(tilePath({ level: 'entries', index: 1, width: 44 })).toBe('tile/entries/001.p/44');
  });

  it('parses what it writes and refuses every other spelling', () => {
    for (const tile of [
      { level: 0, index: 1234067, width: 256 },
      { level: 63, index: 0, width: 1 },
      { level: 'entries' as const, index: 999, width: 255 },
      { level: 1, index: 1000, width: 3 },
    ]) {
      expect(parseTilePath(tilePath(tile).slice('tile/'.length))).toEqual(tile);
    }
    for (const bad of [
      '',
      '0',
      '00/000',
      '64/000',
      '0/00',
      '0/0000',
      '0/001/000',
      '0/x001',
      '0/y001/000',
      '0/000.p/0',
      '0/000.p/256',
      '0/000.p/07',
      '0/000.p/',
      'entries/000.p/1/2',
      'x/000',
      '0/-01',
    ]) {
      expect(parseTilePath(bad)).toBeNull();
    }
  });

  it('lists the tiles of the specification example (70,000 leaves)', () => {
    const hashTiles = tilesOf(70_000).filter((t) => t.level !== 'entries');
    const at = (level: number) => hashTiles.filter((t) => t.level === level);
    expect(at(0).filter((t) => t.width === 256)).toHaveLength(273);
    expect(
      at(0)
        .filter((t) => t.width < 256)
        .map((t) => t.width),
    ).toEqual([112]);
    expect(at(1).map((t) => t.width)).toEqual([256, 17]);
    expect(at(2).map((t) => t.width)).toEqual([1]);
    expect(at(3)).toHaveLength(0);
    expect(tilesOf(256).map(tilePath)).toEqual([
      'tile/0/000',
      'tile/entries/000',
      'tile/1/000.p/1',
    ]);
    expect(tilesOf(0)).toEqual([]);
  });

  it('knows which tiles a tree of a given size holds', () => {
    expect(tileExists({ level: 0, index: 0, width: 256 }, 255)).toBe(false);
    expect(tileExists({ level: 0, index: 0, width: 255 }, 255)).toBe(true);
    expect(tileExists({ level: 0, index: 0, width: 100 }, 300)).toBe(true);
    expect(tileExists({ level: 1, index: 0, width: 1 }, 255)).toBe(false);
    expect(tileExists({ level: 1, index: 0, width: 1 }, 256)).toBe(true);
    expect(tileExists({ level: 'entries', index: 1, width: 45 }, 300)).toBe(false);
  });
});

describe('tiles and entry bundles reassemble the tree (Go sumdb/tlog vectors)', () => {
  const leaves = vectors.leaves.map((l) => Buffer.from(l, 'base64'));
  const map = new Map<string, Uint8Array>();
  const read = storedHashesFrom(map);
  leaves.forEach((data, index) => {
    for (const s of hashesCompletedBy(index, leafHash(data), read)) {
      map.set(coordinateKey(s.level, s.index), s.hash);
    }
  });

  it('serves the same tile bytes as Go for the tree of 300 leaves', () => {
    for (const v of vectors.tiles) {
      const tile = parseTilePath(v.c2sp_path.slice('tile/'.length))!;
      expect(tileExists(tile, 300)).toBe(true);
      const bytes = encodeHashTile(tileCoordinates(tile).map((c) => read(c.level, c.index)));
      expect(Buffer.from(bytes).toString('base64')).toBe(v.data);
    }
  });

  it('rebuilds the root from the level-0 tiles and entry bundles alone', () => {
    const size = 300;
    const bundles = tilesOf(size).filter((t) => t.level === 'entries');
    const entries = bundles.flatMap((t) =>
      decodeEntryBundle(encodeEntryBundle(leaves.slice(t.index * 256, t.index * 256 + t.width)))!,
    );
    expect(entries.map((e) => Buffer.from(e))).toEqual(leaves);
    const rebuilt = new Map<string, Uint8Array>();
    const readRebuilt = storedHashesFrom(rebuilt);
    entries.forEach((data, index) => {
      for (const s of hashesCompletedBy(index, leafHash(data), readRebuilt)) {
        rebuilt.set(coordinateKey(s.level, s.index), s.hash);
      }
    });
    // Each level-0 tile's hashes are the entries' leaf hashes.
    for (const t of tilesOf(size).filter((x) => x.level === 0)) {
      const tileHashes = decodeHashTile(
        encodeHashTile(tileCoordinates(t).map((c) => read(c.level, c.index))),
      )!;
      expect(tileHashes.map((x) => Buffer.from(x))).toEqual(
        entries.slice(t.index * 256, t.index * 256 + t.width).map((e) => Buffer.from(leafHash(e))),
      );
    }
    expect(treeHash(size, readRebuilt)).toEqual(treeHash(size, read));
  });

  it('refuses malformed bundles and tiles', () => {
    expect(decodeEntryBundle(Uint8Array.of(0))).toBeNull();
    expect(decodeEntryBundle(Uint8Array.of(0, 3, 1, 2))).toBeNull();
    expect(decodeEntryBundle(Uint8Array.of(0, 0))).toEqual([new Uint8Array(0)]);
    expect(decodeHashTile(new Uint8Array(33))).toBeNull();
    expect(decodeHashTile(new Uint8Array(0))).toBeNull();
    expect(() => encodeEntryBundle([new Uint8Array(65_536)])).toThrow(RangeError);
  });
});

describe('signed notes and checkpoints (C2SP signed-note, tlog-checkpoint)', () => {
  it('verifies the example of the signed-note specification', () => {
    const key = parseVerifierKey(
      'example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k',
    )!;
    expect(key).not.toBeNull();
    const note =
      'This is an example message.\n\n— example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n';
    const result = verifyNote(note, [key]);
    expect(result).toMatchObject({ ok: true, text: 'This is an example message.\n' });
    expect(verifyNote(note.replace('example message', 'exemplary message'), [key])).toEqual({
      ok: false,
      reason: 'the signature of example.com/foo does not verify',
    });
  });

  it('signs a checkpoint byte for byte as Go sumdb/note does', () => {
    const v = vectors.checkpoint;
    const publicKey = Buffer.from(v.public_key_b64, 'base64');
    const name = 'svc.example.com/ledger';
    expect(verifierKey({ name, publicKey })).toBe(v.verifier_key);
    expect(parseVerifierKey(v.verifier_key)).toEqual({
      name,
      publicKey: Uint8Array.from(publicKey),
    });
    const parsed = parseCheckpointText(parseNote(v.note)!.text)!;
    expect(parsed.origin).toBe(name);
    expect(parsed.size).toBe(300);
    const privateKey = privateKeyOf(v.seed_hex);
    const note = signNote(checkpointText(parsed), { name, publicKey }, (m) =>
      nodeSign(null, m, privateKey),
    );
    expect(note).toBe(v.note);
    // node:crypto checks the signature over the note text too.
    const sig = parseNote(note)!.signatures[0]!;
    const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), publicKey]);
    expect(
      nodeVerify(
        null,
        Buffer.from(checkpointText(parsed)),
        { key: spki, format: 'der', type: 'spki' },
        sig.signature,
      ),
    ).toBe(true);
    expect(verifyCheckpoint(note, name, [{ name, publicKey }])).toMatchObject({
      ok: true,
      checkpoint: { origin: name, size: 300 },
    });
  });

  it('computes key IDs as SHA-256(name ‖ 0x0A ‖ 0x01 ‖ key)[:4]', () => {
    const publicKey = Buffer.from(vectors.checkpoint.public_key_b64, 'base64');
    const digest = createHash('sha256')
      .update(Buffer.concat([Buffer.from('svc.example.com/ledger\n\x01', 'latin1'), publicKey]))
      .digest();
    expect(noteKeyId({ name: 'svc.example.com/ledger', publicKey })).toBe(digest.readUInt32BE(0));
  });

  it('ignores unknown keys, refuses notes no trusted key signed, and malformed notes', () => {
    const v = vectors.checkpoint;
    const name = 'svc.example.com/ledger';
    const publicKey = Buffer.from(v.public_key_b64, 'base64');
    const other = { name: 'witness.example/w1', publicKey: new Uint8Array(32).fill(7) };
    const cosigned = `${v.note}— witness.example/w1 ${Buffer.alloc(68, 1).toString('base64')}\n`;
    expect(verifyNote(cosigned, [{ name, publicKey }])).toMatchObject({ ok: true });
    expect(verifyNote(v.note, [other])).toEqual({
      ok: false,
      reason: 'no signature by a trusted key',
    });
    // Same name, another key: its ID differs, so the signature is ignored, not failed.
    const impostor = { name, publicKey: new Uint8Array(32).fill(9) };
    expect(verifyNote(v.note, [impostor])).toEqual({
      ok: false,
      reason: 'no signature by a trusted key',
    });
    expect(verifyCheckpoint(v.note, 'other.example/log', [{ name, publicKey }])).toMatchObject({
      ok: false,
    });
    for (const bad of [
      '',
      'text\n',
      'text\n\n',
      'text\n\nnot a signature\n',
      'text\n\n— name\n',
      'text\n\n— name AAAA\n',
      'te\u0001xt\n\n— name AAAAAAAA\n',
      v.note.slice(0, -1),
    ]) {
      expect(parseNote(bad)).toBeNull();
    }
    for (const bad of [
      'o\n1\n',
      'o\n01\nAAAA\n',
      'o\n1\nAAAA\n',
      '\n1\n' + 'A'.repeat(43) + '=\n',
    ]) {
      expect(parseCheckpointText(bad)).toBeNull();
    }
    expect(parseVerifierKey('svc+00000000+AQ==')).toBeNull();
    expect(parseVerifierKey(v.verifier_key.replace('+1494e853+', '+1494e854+'))).toBeNull();
  });
});
