import { sha256 } from '@noble/hashes/sha2.js';
import { ml_dsa44 } from '@noble/post-quantum/ml-dsa.js';
import { verifyEd25519Strict } from '../ed25519.js';
import { concatBytes, fromBase64, toBase64, utf8Bytes } from '../encoding.js';
import { COSIGNATURE_TYPE, cosignedMessage } from './cosignature.js';
import { keyIdHex, validKeyName, type Checkpoint, type NoteSignature } from './note.js';

// The two cosignature kinds of C2SP tlog-cosignature (§Format): timestamped Ed25519 over a
// `cosignature/v1` message (signature type 0x04) and ML-DSA-44 over a `subtree/v1`
// `cosigned_message` (signature type 0x06, §ML-DSA-44 signed message). A witness key is what a
// tlog-policy `witness` line names; the signature lines checked against it are
// attacker-controlled, so every mismatch is a failure value, never an exception.

export const ML_DSA_COSIGNATURE_TYPE = 0x06;
const ML_DSA_PUBLIC_KEY_SIZE = 1312;
const ML_DSA_SIGNATURE_SIZE = 2420;
const ED25519_SIGNATURE_SIZE = 64;
const TIMESTAMP_SIZE = 8;
const MAX_TIMESTAMP = (1n << 63n) - 1n;

export type CosignatureKind = 'cosignature/v1' | 'subtree/v1';

/** A witness's cosigning key: its name, kind and raw public key. */
export interface WitnessKey {
  name: string;
  kind: CosignatureKind;
  publicKey: Uint8Array;
}

const typeOf = (kind: CosignatureKind) =>
  kind === 'cosignature/v1' ? COSIGNATURE_TYPE : ML_DSA_COSIGNATURE_TYPE;

/** key ID = SHA-256(name ‖ 0x0A ‖ type ‖ public key)[:4], big-endian (tlog-cosignature §Format). */
export function witnessKeyId(key: WitnessKey): number {
  const digest = sha256(
    concatBytes(utf8Bytes(key.name), Uint8Array.of(0x0a, typeOf(key.kind)), key.publicKey),
  );
  return ((digest[0]! << 24) | (digest[1]! << 16) | (digest[2]! << 8) | digest[3]!) >>> 0;
}

/** The vkey `<name>+<hex key ID>+<base64(type ‖ public key)>` (signed-note §Verifier keys). */
export function witnessVerifierKey(key: WitnessKey): string {
  if (!validKeyName(key.name)) throw new TypeError('a key name is non-empty, without spaces or +');
  const size = key.kind === 'cosignature/v1' ? 32 : ML_DSA_PUBLIC_KEY_SIZE;
  if (key.publicKey.length !== size) throw new TypeError(`a ${key.kind} key is ${size} bytes`);
  return `${key.name}+${keyIdHex(witnessKeyId(key))}+${toBase64(
    concatBytes(Uint8Array.of(typeOf(key.kind)), key.publicKey),
  )}`;
}

/**
 * Parses a witness vkey of type 0x04 (Ed25519) or 0x06 (ML-DSA-44); null when it is malformed,
 * of another type (a log's 0x01 key, say), or its key ID does not match.
 */
export function parseWitnessVerifierKey(text: string): WitnessKey | null {
  // The key's base64 may hold '+' itself: only the first two separate the parts.
  const match = /^([^+]*)\+([^+]*)\+(.*)$/su.exec(text);
  if (!match) return null;
  const [, name, idHex, encoded] = match as unknown as [string, string, string, string];
  if (!validKeyName(name) || !/^[0-9a-f]{8}$/.test(idHex)) return null;
  const bytes = fromBase64(encoded);
  if (!bytes) return null;
  let key: WitnessKey;
  if (bytes[0] === COSIGNATURE_TYPE && bytes.length === 33)
    key = { name, kind: 'cosignature/v1', publicKey: bytes.slice(1) };
  else if (bytes[0] === ML_DSA_COSIGNATURE_TYPE && bytes.length === 1 + ML_DSA_PUBLIC_KEY_SIZE)
    key = { name, kind: 'subtree/v1', publicKey: bytes.slice(1) };
  else return null;
  return keyIdHex(witnessKeyId(key)) === idHex ? key : null;
}

const u64 = (value: bigint) => {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, value, false);
  return out;
};

const shortOpaque = (what: string, bytes: Uint8Array) => {
  if (bytes.length < 1 || bytes.length > 255) throw new TypeError(`${what} is 1 to 255 bytes`);
  return concatBytes(Uint8Array.of(bytes.length), bytes);
};

/**
 * The ML-DSA-44 `cosigned_message` of tlog-cosignature (§ML-DSA-44 signed message): the label
 * `subtree/v1\n\0`, the cosigner name and log origin as 8-bit-length opaques, the timestamp,
 * start and end as big-endian u64 and the 32-byte subtree hash. A checkpoint is the subtree
 * from 0 to its size.
 */
export function subtreeMessage(input: {
  cosigner: string;
  timestamp: bigint;
  origin: string;
  start: bigint;
  end: bigint;
  hash: Uint8Array;
}): Uint8Array {
  if (input.hash.length !== 32) throw new TypeError('a subtree hash is 32 bytes');
  if (input.timestamp < 0n || input.timestamp > MAX_TIMESTAMP)
    throw new TypeError('a cosignature timestamp is from 0 to 2^63 - 1');
  if (input.start !== 0n && input.timestamp !== 0n)
    throw new TypeError('a subtree with a non-zero start has a zero timestamp');
  return concatBytes(
    utf8Bytes('subtree/v1\n\0'),
    shortOpaque('the cosigner name', utf8Bytes(input.cosigner)),
    u64(input.timestamp),
    shortOpaque('the log origin', utf8Bytes(input.origin)),
    u64(input.start),
    u64(input.end),
    input.hash,
  );
}

/** The message a witness key signs for a checkpoint, by kind. */
export function witnessSignedMessage(
  key: WitnessKey,
  checkpointText: string,
  checkpoint: Checkpoint,
  timestamp: bigint,
): Uint8Array {
  return key.kind === 'cosignature/v1'
    ? cosignedMessage(checkpointText, timestamp)
    : subtreeMessage({
        cosigner: key.name,
        timestamp,
        origin: checkpoint.origin,
        start: 0n,
        end: BigInt(checkpoint.size),
        hash: checkpoint.root,
      });
}

export type WitnessSignatureCheck =
  | { status: 'absent' }
  | { status: 'valid'; timestamp: number }
  | { status: 'invalid'; reason: string };

/** ML-DSA-44 (FIPS 204, pure, empty context) by @noble/post-quantum. */
export const verifyMlDsa44 = (
  signature: Uint8Array,
  message: Uint8Array,
  publicKey: Uint8Array,
): boolean => {
  try {
    return ml_dsa44.verify(signature, message, publicKey);
  } catch {
    return false;
  }
};

/**
 * Checks a witness key's signature among a checkpoint note's signature lines: lines of other
 * names or key IDs are not this witness's (`absent` when none is); a line of this key that is
 * malformed, dated 0 (a Ed25519 v1 cosignature always carries its time), later than `notAfter`
 * or whose signature fails is `invalid`.
 */
export function checkWitnessSignature(
  key: WitnessKey,
  checkpointText: string,
  checkpoint: Checkpoint,
  signatures: readonly NoteSignature[],
  options: { notAfter?: number } = {},
): WitnessSignatureCheck {
  const keyId = witnessKeyId(key);
  const mine = signatures.filter((s) => s.name === key.name && s.keyId === keyId);
  if (mine.length === 0) return { status: 'absent' };
  const size = key.kind === 'cosignature/v1' ? ED25519_SIGNATURE_SIZE : ML_DSA_SIGNATURE_SIZE;
  let newest: number | null = null;
  for (const sig of mine) {
    if (sig.signature.length !== TIMESTAMP_SIZE + size)
      return {
        status: 'invalid',
        reason: `the ${key.kind} cosignature of ${key.name} has the wrong length`,
      };
    const view = new DataView(sig.signature.buffer, sig.signature.byteOffset, TIMESTAMP_SIZE);
    const timestamp = view.getBigUint64(0, false);
    if (timestamp > MAX_TIMESTAMP || (key.kind === 'cosignature/v1' && timestamp === 0n))
      return {
        status: 'invalid',
        reason: `the cosignature of ${key.name} has the timestamp ${timestamp}`,
      };
    const seconds = Number(timestamp);
    if (options.notAfter !== undefined && seconds > options.notAfter)
      return {
        status: 'invalid',
        reason: `the cosignature of ${key.name} is dated in the future (${timestamp})`,
      };
    const message = witnessSignedMessage(key, checkpointText, checkpoint, timestamp);
    const signature = sig.signature.slice(TIMESTAMP_SIZE);
    const ok =
      key.kind === 'cosignature/v1'
        ? verifyEd25519Strict(signature, message, key.publicKey)
        : verifyMlDsa44(signature, message, key.publicKey);
    if (!ok)
      return {
        status: 'invalid',
        reason: `the ${key.kind} cosignature of ${key.name} does not verify`,
      };
    newest = Math.max(newest ?? 0, seconds);
  }
  return { status: 'valid', timestamp: newest! };
}
