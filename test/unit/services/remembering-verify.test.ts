import { describe, expect, it } from '@jest/globals';
import { generateKeyPairSync, sign as nodeSign } from 'node:crypto';
import { verifyEd25519Strict } from '@svc/verify';
import { rememberingVerify } from '../../../src/services/remembering-verify.js';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const raw = new Uint8Array(publicKey.export({ format: 'der', type: 'spki' }).subarray(12));
const note = new TextEncoder().encode('svc.example/log\n42\nAAAA\n');
const signature = new Uint8Array(nodeSign(null, note, privateKey));

/** The portable strict verifier behind the memo, with a count of the verifications it ran. */
function memo(kept?: number) {
  let calls = 0;
  const verify = rememberingVerify((s, m, p) => {
    calls++;
    return verifyEd25519Strict(s, m, p);
  }, kept);
  return { verify, calls: () => calls };
}

describe('rememberingVerify: checkpoint signatures verified once per exact byte string', () => {
  it('verifies a note once and answers the same bytes from memory', () => {
    const m = memo();
    expect(m.verify(signature, note, raw)).toBe(true);
    expect(m.verify(Uint8Array.from(signature), Uint8Array.from(note), Uint8Array.from(raw))).toBe(
      true,
    );
    expect(m.calls()).toBe(1);
  });

  it('verifies anew a different note under the same key and signature: no borrowed verdict', () => {
    const m = memo();
    expect(m.verify(signature, note, raw)).toBe(true);
    const other = Uint8Array.from(note);
    other[other.length - 2]! ^= 0x01;
    expect(m.verify(signature, other, raw)).toBe(false);
    // A prefix or an extension of the remembered bytes is another string too.
    expect(m.verify(signature, note.subarray(0, note.length - 1), raw)).toBe(false);
    expect(m.verify(signature, new Uint8Array([...note, 0x0a]), raw)).toBe(false);
    expect(m.calls()).toBe(4);
    // The remembered verdict of the original is unchanged.
    expect(m.verify(signature, note, raw)).toBe(true);
    expect(m.calls()).toBe(4);
  });

  it('verifies anew a different signature or key for remembered note bytes', () => {
    const m = memo();
    expect(m.verify(signature, note, raw)).toBe(true);
    const flipped = Uint8Array.from(signature);
    flipped[10]! ^= 0x80;
    expect(m.verify(flipped, note, raw)).toBe(false);
    const otherKey = new Uint8Array(
      generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(12),
    );
    expect(m.verify(signature, note, otherKey)).toBe(false);
    expect(m.calls()).toBe(3);
  });

  it('keeps a refusal as a refusal, and a refused note first does not spoil the valid one', () => {
    const m = memo();
    const forged = new Uint8Array(64);
    expect(m.verify(forged, note, raw)).toBe(false);
    expect(m.verify(forged, note, raw)).toBe(false);
    expect(m.verify(signature, note, raw)).toBe(true);
    expect(m.calls()).toBe(2);
  });

  it('is bounded: past its size the oldest entry is verified again', () => {
    const m = memo(2);
    const notes = [1, 2, 3].map((n) => new TextEncoder().encode(`svc.example/log\n${n}\n`));
    const signed = notes.map((n) => new Uint8Array(nodeSign(null, n, privateKey)));
    notes.forEach((n, i) => expect(m.verify(signed[i]!, n, raw)).toBe(true));
    expect(m.calls()).toBe(3);
    expect(m.verify(signed[2]!, notes[2]!, raw)).toBe(true);
    expect(m.calls()).toBe(3);
    expect(m.verify(signed[0]!, notes[0]!, raw)).toBe(true);
    expect(m.calls()).toBe(4);
  });
});
