import { describe, expect, it } from '@jest/globals';
import {
  auditLedger,
  beginWitnessStep,
  canonicalize,
  completeWitnessStep,
  consistencyProof,
  encodeEntryBundle,
  encodeHashTile,
  hashText,
  parseConsistencyAnswer,
  SIGNED_FIELDS_V2,
  storedHashesFrom,
  type Tile,
  TILE_HEIGHT,
  TILE_WIDTH,
  tilePath,
  tilesOf,
  toBase64,
  utf8Bytes,
} from '@svc/verify';
import { newServerKey } from '../../../support/harness.js';
import { signCheckpoint, treeOf } from '../../../support/log-dir.js';

const ORIGIN = 'unit.example/ledger';
const key = newServerKey();

/** v1 leaves (no signed core) then v2 leaves linked to the previous leaf's hash. */
function ledger(v1: number, v2: number): Uint8Array[] {
  const leaves: Uint8Array[] = [];
  let previous: string | null = null;
  const push = (text: string) => {
    leaves.push(utf8Bytes(text));
    previous = hashText(text);
  };
  for (let i = 0; i < v1; i++) {
    push(
      canonicalize({
        attestations: [{ key_id: key.keyId, signature: 'x' }],
        evidence: { n: i },
        policy: { verdict: 'BLOCKED' },
        replay: {},
      }),
    );
  }
  for (let i = 0; i < v2; i++) {
    const sequence = leaves.length + 1;
    const core = {
      receipt_id: `r-${sequence}`,
      admissibility: { status: 'ACCEPTED' },
      policy: { verdict: 'ALLOWED' },
      signed_fields: { contract: 'receipt-core-v2', fields: [...SIGNED_FIELDS_V2] },
      position: { log: ORIGIN, sequence, previous_receipt_hash: previous },
    };
    const coreText = canonicalize(core);
    const attestations = [
      {
        algorithm: 'Ed25519',
        key_id: key.keyId,
        signature: toBase64(key.sign(utf8Bytes(coreText))),
      },
    ];
    push(`{"attestations":${canonicalize(attestations)},"core":${coreText}}`);
  }
  return leaves;
}

/** The log of these leaves as tiles in memory, read through the audit's reader. */
function tilesFor(leaves: Uint8Array[]) {
  const { levels, root } = treeOf(leaves);
  const files = new Map<string, Uint8Array>();
  for (const tile of tilesOf(leaves.length)) {
    const first = tile.index * TILE_WIDTH;
    files.set(
      tilePath(tile),
      tile.level === 'entries'
        ? encodeEntryBundle(leaves.slice(first, first + tile.width))
        : encodeHashTile(levels[tile.level * TILE_HEIGHT]!.slice(first, first + tile.width)),
    );
  }
  const read = (tile: Tile) => Promise.resolve(files.get(tilePath(tile)) ?? null);
  return { files, read, root, levels };
}

describe('auditLedger', () => {
  it('passes a ledger of v1 then v2 leaves across full and partial tiles, counting v1 apart', async () => {
    const leaves = ledger(3, 297);
    const { read, root } = tilesFor(leaves);
    const report = await auditLedger({
      checkpoint: { origin: ORIGIN, size: 300, root, extensions: [] },
      keys: [key.publicKeyRaw],
      readTile: read,
    });
    expect(report).toMatchObject({
      ok: true,
      root_matches: true,
      leaves: { v1: 3, v2: 297, unreadable: 0 },
      signatures_verified: 297,
      by_verdict: { BLOCKED: 3, ALLOWED: 297 },
      by_admissibility: { ACCEPTED: 297 },
      failures: [],
    });
  });

  it('fails a hash tile above level 0 that disagrees with the entries, and a wrong root', async () => {
    const leaves = ledger(0, 300);
    const { files, read, root } = tilesFor(leaves);
    files.set('tile/1/000.p/1', new Uint8Array(32));
    const report = await auditLedger({
      checkpoint: { origin: ORIGIN, size: 300, root, extensions: [] },
      keys: [key.publicKeyRaw],
      readTile: read,
    });
    expect(report.ok).toBe(false);
    expect(report.failures.at(-1)!.reason).toContain('hash tile 1 disagrees with the entries');

    const wrongRoot = await auditLedger({
      checkpoint: { origin: ORIGIN, size: 300, root: new Uint8Array(32), extensions: [] },
      keys: [key.publicKeyRaw],
      readTile: tilesFor(leaves).read,
    });
    expect(wrongRoot.root_matches).toBe(false);
    expect(wrongRoot.failures).toEqual([
      { index: -1, reason: expect.stringContaining('the checkpoint signs 0000') },
    ]);
  });

  it('fails a v2 leaf whose position names another log or sequence', async () => {
    const leaves = ledger(0, 5);
    const { read, root } = tilesFor(leaves);
    const report = await auditLedger({
      checkpoint: { origin: 'other.example/ledger', size: 5, root, extensions: [] },
      keys: [key.publicKeyRaw],
      readTile: read,
    });
    expect(report.failure_count).toBe(5);
    expect(report.failures[0]!.reason).toContain("is not the checkpoint's origin");
  });
});

describe('the witness step', () => {
  const leaves = ledger(0, 20);
  const { levels } = treeOf(leaves);
  const read = storedHashesFrom(
    new Map(levels.flatMap((hashes, level) => hashes.map((h, i) => [`${level}/${i}`, h]))),
  );
  const note = (size: number) =>
    signCheckpoint(ORIGIN, size, treeOf(leaves.slice(0, size)).root, key);

  it('accepts a larger tree with a proof that verifies, and refuses it with a wrong one', () => {
    const step = beginWitnessStep({ kept: note(7), latest: note(20), keys: [key.publicKeyRaw] });
    expect(step).toMatchObject({ ok: true, prove: { from: 7, to: 20 }, outcome: 'consistent' });
    if (!step.ok) throw new Error('unreachable');
    const proof = consistencyProof(7, 20, read);
    const answer = { from: 7, to: 20, proof: proof.map(toBase64) };
    expect(completeWitnessStep(step, parseConsistencyAnswer(answer, 7, 20))).toMatchObject({
      ok: true,
      prove: null,
    });
    expect(parseConsistencyAnswer({ ...answer, to: 19 }, 7, 20)).toBeNull();
    expect(completeWitnessStep(step, proof.slice(1))).toMatchObject({
      ok: false,
      failure: 'inconsistent',
    });
  });

  it('trusts the first checkpoint on first use and keeps an unchanged one', () => {
    expect(
      beginWitnessStep({ kept: null, latest: note(5), keys: [key.publicKeyRaw] }),
    ).toMatchObject({
      ok: true,
      outcome: 'first',
    });
    expect(
      beginWitnessStep({ kept: note(5), latest: note(5), keys: [key.publicKeyRaw] }),
    ).toMatchObject({
      ok: true,
      outcome: 'unchanged',
    });
  });

  it('accepts a checkpoint signed by any of several trusted keys', () => {
    const other = newServerKey();
    expect(
      beginWitnessStep({
        kept: null,
        latest: note(5),
        keys: [other.publicKeyRaw, key.publicKeyRaw],
      }),
    ).toMatchObject({ ok: true });
    expect(
      beginWitnessStep({ kept: null, latest: note(5), keys: [other.publicKeyRaw] }),
    ).toMatchObject({
      ok: false,
      failure: 'bad_signature',
    });
  });
});
