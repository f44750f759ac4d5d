import * as ed from '@noble/ed25519';
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { concatBytes, fromBase64, toBase64, toHex } from './encoding.js';

// noble's synchronous API needs a SHA-512; @noble/hashes keeps the package portable.
ed.hashes.sha512 = sha512;

const SPKI_PREFIX = Uint8Array.from([
  0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
]);
const PEM =
  /^-----BEGIN PUBLIC KEY-----\r?\n([A-Za-z0-9+/=\r\n]+)\r?\n-----END PUBLIC KEY-----\s*$/;

/**
 * A strict Ed25519 verification: verifyEd25519Strict, or a faster one that refuses exactly
 * what it refuses (@svc/verify/node's createNativeStrictVerify).
 */
export type Ed25519Verify = (
  signature: Uint8Array,
  message: Uint8Array,
  publicKey: Uint8Array,
) => boolean;

/**
 * Strict RFC 8032 verification, the rule every verifier of the project applies (contract §3):
 * canonical encodings of A and R, S < L, small-order public keys refused. Mismatches and
 * malformed inputs are `false`, never an exception.
 */
export function verifyEd25519Strict(
  signature: Uint8Array,
  message: Uint8Array,
  publicKey: Uint8Array,
): boolean {
  if (signature.length !== 64 || publicKey.length !== 32) return false;
  try {
    return ed.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

/** Whether a raw key is one strict verification can accept at all (canonical, not small order). */
export function isStrictPublicKey(publicKey: Uint8Array): boolean {
  if (publicKey.length !== 32) return false;
  try {
    return !ed.Point.fromBytes(publicKey, false).isSmallOrder();
  } catch {
    return false;
  }
}

export const spkiFromRawPublicKey = (raw: Uint8Array): Uint8Array => concatBytes(SPKI_PREFIX, raw);

export function rawPublicKeyFromSpki(der: Uint8Array): Uint8Array | null {
  if (der.length !== 44) return null;
  for (let i = 0; i < SPKI_PREFIX.length; i++) if (der[i] !== SPKI_PREFIX[i]) return null;
  return der.slice(SPKI_PREFIX.length);
}

export function pemFromRawPublicKey(raw: Uint8Array): string {
  const body = toBase64(spkiFromRawPublicKey(raw))
    .replace(/(.{64})/g, '$1\n')
    .trimEnd();
  return `-----BEGIN PUBLIC KEY-----\n${body}\n-----END PUBLIC KEY-----\n`;
}

/** The raw key of an Ed25519 SPKI PEM, or null for anything else (other algorithms included). */
export function rawPublicKeyFromPem(pem: string): Uint8Array | null {
  const match = PEM.exec(pem.trim() + '\n');
  if (!match?.[1]) return null;
  const der = fromBase64(match[1].replace(/\s+/g, ''));
  return der ? rawPublicKeyFromSpki(der) : null;
}

/** `key_id` of an attestation: SHA-256 over the DER SubjectPublicKeyInfo (contract §2). */
export const keyIdOf = (raw: Uint8Array): string =>
  `sha256:${toHex(sha256(spkiFromRawPublicKey(raw)))}`;

// Group order L of Ed25519, little-endian, for the S < L check of strict verification.
const ORDER_LE = Uint8Array.from([
  0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
]);

/** Whether the S half of a signature is a canonical scalar (S < L). */
export function hasCanonicalScalar(signature: Uint8Array): boolean {
  if (signature.length !== 64) return false;
  for (let i = 31; i >= 0; i--) {
    const s = signature[32 + i]!;
    const l = ORDER_LE[i]!;
    if (s !== l) return s < l;
  }
  return false;
}
