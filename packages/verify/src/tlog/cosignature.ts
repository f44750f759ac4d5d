import { sha256 } from '@noble/hashes/sha2.js';
import { verifyEd25519Strict } from '../ed25519.js';
import { concatBytes, fromBase64, toBase64, utf8Bytes } from '../encoding.js';
import { keyIdBytes, keyIdHex, parseSignatureLine, validKeyName, type NoteKey } from './note.js';

// C2SP tlog-cosignature, the Ed25519 type (signature type 0x04): a witness's timestamped
// signature over a checkpoint. A witness's answer is attacker-controlled text to us: parsing
// is strict and every mismatch is a failure value, never an exception.

export const COSIGNATURE_TYPE = 0x04;
const TIMESTAMP_SIZE = 8;
const SIGNATURE_SIZE = 64;
/** tlog-cosignature: a timestamp never exceeds 2^63 - 1. */
const MAX_TIMESTAMP = (1n << 63n) - 1n;

/** key ID = SHA-256(name ‖ 0x0A ‖ 0x04 ‖ public key)[:4], big-endian. */
export function cosignerKeyId(key: NoteKey): number {
  const digest = sha256(
    concatBytes(utf8Bytes(key.name), Uint8Array.of(0x0a, COSIGNATURE_TYPE), key.publicKey),
  );
  return ((digest[0]! << 24) | (digest[1]! << 16) | (digest[2]! << 8) | digest[3]!) >>> 0;
}

/** The cosigner's verifier key `<name>+<hex key ID>+<base64(0x04 ‖ public key)>`. */
export function cosignerVerifierKey(key: NoteKey): string {
  if (!validKeyName(key.name)) throw new TypeError('a key name is non-empty, without spaces or +');
  if (key.publicKey.length !== 32) throw new TypeError('an Ed25519 public key is 32 bytes');
  return `${key.name}+${keyIdHex(cosignerKeyId(key))}+${toBase64(
    concatBytes(Uint8Array.of(COSIGNATURE_TYPE), key.publicKey),
  )}`;
}

/**
 * Parses a cosigner's verifier key of type 0x04; null when it is malformed, of another type
 * (an ordinary 0x01 note key, say), or its key ID does not match.
 */
export function parseCosignerVerifierKey(text: string): NoteKey | null {
  // The key's base64 may hold '+' itself: only the first two separate the parts.
  const match = /^([^+]*)\+([^+]*)\+(.*)$/su.exec(text);
  if (!match) return null;
  const [, name, idHex, encoded] = match as unknown as [string, string, string, string];
  if (!validKeyName(name) || !/^[0-9a-f]{8}$/.test(idHex)) return null;
  const bytes = fromBase64(encoded);
  if (!bytes || bytes.length !== 33 || bytes[0] !== COSIGNATURE_TYPE) return null;
  const key = { name, publicKey: bytes.slice(1) };
  return keyIdHex(cosignerKeyId(key)) === idHex ? key : null;
}

const checkTimestamp = (timestamp: bigint) => {
  if (timestamp < 0n || timestamp > MAX_TIMESTAMP) {
    throw new TypeError('a cosignature timestamp is from 0 to 2^63 - 1');
  }
};

/**
 * The signed message: `cosignature/v1\ntime <timestamp>\n` followed by the checkpoint's note
 * text (its body, final newline included, no signature line).
 */
export function cosignedMessage(checkpointText: string, timestamp: bigint): Uint8Array {
  checkTimestamp(timestamp);
  if (!checkpointText.endsWith('\n')) throw new TypeError('a note text ends in a newline');
  return utf8Bytes(`cosignature/v1\ntime ${timestamp.toString()}\n${checkpointText}`);
}

const timestampBytes = (timestamp: bigint) => {
  const out = new Uint8Array(TIMESTAMP_SIZE);
  new DataView(out.buffer).setBigUint64(0, timestamp, false);
  return out;
};

/** The signature line `— <name> <base64(key ID ‖ u64 timestamp ‖ signature)>\n`. */
export function cosignatureLine(key: NoteKey, timestamp: bigint, signature: Uint8Array): string {
  checkTimestamp(timestamp);
  if (signature.length !== SIGNATURE_SIZE) throw new TypeError('an Ed25519 signature is 64 bytes');
  const bytes = concatBytes(keyIdBytes(cosignerKeyId(key)), timestampBytes(timestamp), signature);
  return `\u2014 ${key.name} ${toBase64(bytes)}\n`;
}

/** Cosigns a checkpoint's note text with an Ed25519 signing function: the signature line. */
export function cosignCheckpoint(
  checkpointText: string,
  key: NoteKey,
  timestamp: bigint,
  sign: (message: Uint8Array) => Uint8Array,
): string {
  return cosignatureLine(key, timestamp, sign(cosignedMessage(checkpointText, timestamp)));
}

export interface Cosignature {
  /** The signature line as the witness wrote it, newline included. */
  line: string;
  /** Seconds since the epoch. */
  timestamp: number;
}

export type CosignatureVerification =
  { ok: true; cosignatures: Cosignature[] } | { ok: false; reason: string };

/** A witness's answer is a few lines; more is not an answer. */
export const MAX_COSIGNATURE_LINES = 16;

/**
 * Verifies a witness's add-checkpoint answer (tlog-witness: one or more signature lines, each
 * ending in a newline) over a checkpoint's note text, against the witness's key. Lines of
 * other keys are ignored, as the specification requires; a line of this key whose signature
 * fails, whose timestamp is zero or later than `notAfter` (seconds), rejects the answer; at
 * least one line must be of this key.
 */
export function verifyCosignatures(
  checkpointText: string,
  answer: string,
  key: NoteKey,
  options: {
    notAfter?: number;
    verify?: (signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array) => boolean;
  } = {},
): CosignatureVerification {
  const verify = options.verify ?? verifyEd25519Strict;
  if (!answer.endsWith('\n')) return { ok: false, reason: 'the answer does not end in a newline' };
  const lines = answer.slice(0, -1).split('\n');
  if (lines.length > MAX_COSIGNATURE_LINES) {
    return { ok: false, reason: `more than ${MAX_COSIGNATURE_LINES} lines` };
  }
  const keyId = cosignerKeyId(key);
  const cosignatures: Cosignature[] = [];
  for (const line of lines) {
    const parsed = parseSignatureLine(line);
    if (!parsed) return { ok: false, reason: 'not a sequence of signature lines' };
    // Another key of the witness (an ML-DSA-44 one, say) or another witness: ignored.
    if (parsed.name !== key.name || parsed.keyId !== keyId) continue;
    if (parsed.signature.length !== TIMESTAMP_SIZE + SIGNATURE_SIZE) {
      return { ok: false, reason: 'a cosignature of this key has the wrong length' };
    }
    const view = new DataView(
      parsed.signature.buffer,
      parsed.signature.byteOffset,
      parsed.signature.byteLength,
    );
    const timestamp = view.getBigUint64(0, false);
    if (timestamp === 0n || timestamp > MAX_TIMESTAMP) {
      return { ok: false, reason: `a cosignature has the timestamp ${timestamp}` };
    }
    const seconds = Number(timestamp);
    if (
      !Number.isSafeInteger(seconds) ||
      (options.notAfter !== undefined && seconds > options.notAfter)
    ) {
      return { ok: false, reason: `a cosignature is dated in the future (${timestamp})` };
    }
    const signature = parsed.signature.slice(TIMESTAMP_SIZE);
    if (!verify(signature, cosignedMessage(checkpointText, timestamp), key.publicKey)) {
      return { ok: false, reason: `the cosignature of ${key.name} does not verify` };
    }
    cosignatures.push({ line: `${line}\n`, timestamp: seconds });
  }
  return cosignatures.length > 0
    ? { ok: true, cosignatures }
    : { ok: false, reason: `no cosignature by ${key.name} (key ID ${keyIdHex(keyId)})` };
}
