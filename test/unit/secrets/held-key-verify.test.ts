import { describe, expect, it } from '@jest/globals';
import {
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign as nodeSign,
  type KeyObject,
} from 'node:crypto';
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { verifyEd25519Strict, type Ed25519Verify } from '@svc/verify';
import { createNativeStrictVerify } from '@svc/verify/node';
import { heldKeyVerify } from '../../../src/secrets/held-key-verify.js';
import { serverKeyFrom } from '../../../src/secrets/server-key.js';

ed.hashes.sha512 = sha512;
const L = ed.Point.CURVE().n;

const rawOf = (key: KeyObject) =>
  new Uint8Array(createPublicKey(key).export({ format: 'der', type: 'spki' }).subarray(12));
const seedOf = (key: KeyObject) =>
  new Uint8Array(Buffer.from(key.export({ format: 'jwk' }).d!, 'base64url'));
const le = (n: bigint) => {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++, n >>= 8n) out[i] = Number(n & 0xffn);
  return out;
};
const fromLe = (bytes: Uint8Array) => bytes.reduceRight((n, b) => (n << 8n) | BigInt(b), 0n);

/**
 * A valid Ed25519 signature made with a random nonce instead of RFC 8032's derived one, built
 * with @noble's group arithmetic: valid under strict verification, and never the signature
 * the deterministic signer makes.
 */
function randomNonceSignature(seed: Uint8Array, message: Uint8Array): Uint8Array {
  const { scalar, pointBytes } = ed.utils.getExtendedPublicKey(seed);
  const r = fromLe(randomBytes(64)) % L;
  const R = ed.Point.BASE.multiply(r).toBytes();
  const k = fromLe(sha512(new Uint8Array([...R, ...pointBytes, ...message]))) % L;
  return new Uint8Array([...R, ...le((r + k * scalar) % L)]);
}

/** The strict native verifier, counting how often the fast path handed over to it. */
function counted(): { verify: Ed25519Verify; calls: () => number } {
  const strict = createNativeStrictVerify();
  let calls = 0;
  return {
    verify: (s, m, p) => {
      calls++;
      return strict(s, m, p);
    },
    calls: () => calls,
  };
}

describe('heldKeyVerify: re-signing with the held key before verifying', () => {
  const { privateKey } = generateKeyPairSync('ed25519');
  const raw = rawOf(privateKey);
  const message = new TextEncoder().encode('{"receipt_id":"r-1","verdict":"ALLOWED"}');
  const signature = new Uint8Array(nodeSign(null, message, privateKey));

  it('accepts the held key’s own signature without the full verification', () => {
    const strict = counted();
    const verify = heldKeyVerify(privateKey, raw, strict.verify);
    const before = strict.calls(); // the self-check at construction
    expect(verify(signature, message, raw)).toBe(true);
    expect(strict.calls()).toBe(before);
    // The independent verifier agrees.
    expect(ed.verify(signature, message, raw, { zip215: false })).toBe(true);
  });

  it('refuses a tampered message (one byte changed), through the full verification', () => {
    const strict = counted();
    const verify = heldKeyVerify(privateKey, raw, strict.verify);
    const before = strict.calls();
    const tampered = Uint8Array.from(message);
    tampered[5]! ^= 0x01;
    expect(verify(signature, tampered, raw)).toBe(false);
    expect(strict.calls()).toBe(before + 1);
    expect(verifyEd25519Strict(signature, tampered, raw)).toBe(false);
  });

  it('refuses a signature made by another key, checked under the held key', () => {
    const other = generateKeyPairSync('ed25519').privateKey;
    const verify = heldKeyVerify(privateKey, raw, createNativeStrictVerify());
    const foreign = new Uint8Array(nodeSign(null, message, other));
    expect(verify(foreign, message, raw)).toBe(false);
    // Under the other key it is valid, and the held key's fast path is not taken for it.
    expect(verify(foreign, message, rawOf(other))).toBe(true);
    // The held key's signature presented under another public key is refused.
    expect(verify(signature, message, rawOf(other))).toBe(false);
  });

  it('refuses the non-canonical S + L form of its own valid signature', () => {
    const verify = heldKeyVerify(privateKey, raw, createNativeStrictVerify());
    const s = fromLe(signature.subarray(32));
    const malleated = new Uint8Array([...signature.subarray(0, 32), ...le(s + L)]);
    // S + L still fits in 32 bytes for most S; the test is only meaningful then.
    expect(s + L < 2n ** 256n).toBe(true);
    expect(verify(malleated, message, raw)).toBe(false);
    expect(verifyEd25519Strict(malleated, message, raw)).toBe(false);
  });

  it('accepts a valid signature the deterministic signer would not make (random nonce)', () => {
    const strict = counted();
    const verify = heldKeyVerify(privateKey, raw, strict.verify);
    const before = strict.calls();
    const other = randomNonceSignature(seedOf(privateKey), message);
    expect(Buffer.from(other).equals(Buffer.from(signature))).toBe(false);
    expect(ed.verify(other, message, raw, { zip215: false })).toBe(true);
    expect(verify(other, message, raw)).toBe(true);
    expect(strict.calls()).toBe(before + 1);
  });

  it('never throws on malformed input, and is false for it', () => {
    const verify = heldKeyVerify(privateKey, raw, createNativeStrictVerify());
    expect(verify(new Uint8Array(0), message, raw)).toBe(false);
    expect(verify(signature.subarray(0, 63), message, raw)).toBe(false);
    expect(verify(new Uint8Array([...signature, 0]), message, raw)).toBe(false);
    expect(verify(signature, message, raw.subarray(0, 31))).toBe(false);
  });

  it('refuses to build over a public key that is not the private key’s', () => {
    const other = rawOf(generateKeyPairSync('ed25519').privateKey);
    expect(() => heldKeyVerify(privateKey, other, createNativeStrictVerify())).toThrow(
      /does not verify its own signature/,
    );
  });

  it('is what a ServerKey verifies with: same verdicts as the portable strict verifier', () => {
    const key = serverKeyFrom(privateKey);
    const other = generateKeyPairSync('ed25519').privateKey;
    const tampered = Uint8Array.from(message);
    tampered[0]! ^= 0x20;
    const cases: [Uint8Array, Uint8Array, Uint8Array][] = [
      [signature, message, raw],
      [signature, tampered, raw],
      [new Uint8Array(nodeSign(null, message, other)), message, raw],
      [randomNonceSignature(seedOf(privateKey), message), message, raw],
    ];
    for (const [s, m, p] of cases) expect(key.verify(s, m, p)).toBe(verifyEd25519Strict(s, m, p));
  });
});
