import { sha256 } from '@noble/hashes/sha2.js';
import { verifyEd25519Strict } from '../ed25519.js';
import { concatBytes, fromBase64, toBase64, toHex, utf8Bytes } from '../encoding.js';
import { HASH_SIZE } from './merkle.js';

// C2SP signed-note (Ed25519, signature type 0x01) and tlog-checkpoint, as the receipt
// contract §9 fixes them. Notes are attacker-controlled text: parsing is strict and every
// mismatch is a null or false, never an exception.

const ED25519_TYPE = 0x01;
/** C2SP: verifiers must accept at least 16 signatures; more is refused as oversized. */
export const MAX_NOTE_SIGNATURES = 32;
export const MAX_NOTE_SIZE = 64 * 1024;

/** A signing key as a note sees it: its name and raw 32-byte Ed25519 public key. */
export interface NoteKey {
  name: string;
  publicKey: Uint8Array;
}

export interface NoteSignature {
  name: string;
  /** The 4-byte key ID, as an unsigned 32-bit integer. */
  keyId: number;
  signature: Uint8Array;
}

export interface Note {
  /** The signed text, ending in a newline. */
  text: string;
  signatures: NoteSignature[];
}

export const validKeyName = (name: string): boolean => name.length > 0 && !/[\s+]/u.test(name);

/** key ID = SHA-256(key name ‖ 0x0A ‖ 0x01 ‖ public key)[:4], big-endian. */
export function noteKeyId(key: NoteKey): number {
  const digest = sha256(
    concatBytes(utf8Bytes(key.name), Uint8Array.of(0x0a, ED25519_TYPE), key.publicKey),
  );
  return ((digest[0]! << 24) | (digest[1]! << 16) | (digest[2]! << 8) | digest[3]!) >>> 0;
}

export const keyIdHex = (id: number): string => id.toString(16).padStart(8, '0');
export const keyIdBytes = (id: number): Uint8Array =>
  Uint8Array.of(id >>> 24, (id >>> 16) & 0xff, (id >>> 8) & 0xff, id & 0xff);

/** The verifier key `<name>+<hex key ID>+<base64(0x01 ‖ public key)>`. */
export function verifierKey(key: NoteKey): string {
  if (!validKeyName(key.name)) throw new TypeError('a key name is non-empty, without spaces or +');
  if (key.publicKey.length !== 32) throw new TypeError('an Ed25519 public key is 32 bytes');
  return `${key.name}+${keyIdHex(noteKeyId(key))}+${toBase64(
    concatBytes(Uint8Array.of(ED25519_TYPE), key.publicKey),
  )}`;
}

/** Parses an Ed25519 verifier key; null when it is malformed or its key ID does not match. */
export function parseVerifierKey(text: string): NoteKey | null {
  // The key's base64 may hold '+' itself: only the first two separate the parts.
  const match = /^([^+]*)\+([^+]*)\+(.*)$/su.exec(text);
  if (!match) return null;
  const [, name, idHex, encoded] = match as unknown as [string, string, string, string];
  if (!validKeyName(name) || !/^[0-9a-f]{8}$/.test(idHex)) return null;
  const bytes = fromBase64(encoded);
  if (!bytes || bytes.length !== 33 || bytes[0] !== ED25519_TYPE) return null;
  const key = { name, publicKey: bytes.slice(1) };
  return keyIdHex(noteKeyId(key)) === idHex ? key : null;
}

// Valid UTF-8 is guaranteed for a JS string read from UTF-8 bytes with fatal decoding (the
// callers' job); here no control character but the newline may appear.
const hasControl = (text: string) => {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 && code !== 0x0a) return true;
  }
  return false;
};

/** The signature line `— <name> <base64(key ID ‖ signature)>` for a note text. */
export function signatureLine(name: string, keyId: number, signature: Uint8Array): string {
  return `\u2014 ${name} ${toBase64(concatBytes(keyIdBytes(keyId), signature))}\n`;
}

/** Signs a note text (ending in a newline) with an Ed25519 signing function. */
export function signNote(
  text: string,
  key: NoteKey,
  sign: (message: Uint8Array) => Uint8Array,
): string {
  if (!text.endsWith('\n') || hasControl(text)) throw new TypeError('not a note text');
  return `${text}\n${signatureLine(key.name, noteKeyId(key), sign(utf8Bytes(text)))}`;
}

/** Adds signature lines to a signed note (a cosignature, say). */
export function appendSignatureLines(note: string, lines: readonly string[]): string {
  return note + lines.join('');
}

const SIGNATURE_LINE = /^\u2014 (\S+) ([A-Za-z0-9+/]+={0,2})$/u;

/** Parses one signature line (without its newline); null for anything malformed. */
export function parseSignatureLine(line: string): NoteSignature | null {
  const match = SIGNATURE_LINE.exec(line);
  if (!match) return null;
  const bytes = fromBase64(match[2]!);
  if (!bytes || bytes.length < 5) return null;
  return {
    name: match[1]!,
    keyId: ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0,
    signature: bytes.slice(4),
  };
}

/** Splits a signed note into its text and signatures; null for anything malformed. */
export function parseNote(note: string): Note | null {
  if (note.length > MAX_NOTE_SIZE || !note.endsWith('\n') || hasControl(note)) return null;
  // The text ends at the last blank line; every line after it is a signature.
  const split = note.lastIndexOf('\n\n');
  if (split < 0) return null;
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split('\n');
  if (lines.length === 0 || lines.length > MAX_NOTE_SIGNATURES) return null;
  const signatures: NoteSignature[] = [];
  for (const line of lines) {
    const signature = parseSignatureLine(line);
    if (!signature) return null;
    signatures.push(signature);
  }
  return { text, signatures };
}

export type NoteVerification =
  { ok: true; text: string; verifiedBy: NoteKey[] } | { ok: false; reason: string };

/**
 * Verifies a signed note against trusted keys, as C2SP requires: signatures of unknown keys
 * are ignored, a known key's signature that fails rejects the whole note, and at least one
 * known key must have signed.
 */
export function verifyNote(
  note: string,
  trusted: readonly NoteKey[],
  verify: (
    signature: Uint8Array,
    message: Uint8Array,
    publicKey: Uint8Array,
  ) => boolean = verifyEd25519Strict,
): NoteVerification {
  const parsed = parseNote(note);
  if (!parsed) return { ok: false, reason: 'not a well-formed signed note' };
  const message = utf8Bytes(parsed.text);
  const verifiedBy: NoteKey[] = [];
  for (const sig of parsed.signatures) {
    const key = trusted.find((k) => k.name === sig.name && noteKeyId(k) === sig.keyId);
    if (!key) continue;
    if (sig.signature.length !== 64 || !verify(sig.signature, message, key.publicKey)) {
      return { ok: false, reason: `the signature of ${key.name} does not verify` };
    }
    verifiedBy.push(key);
  }
  return verifiedBy.length > 0
    ? { ok: true, text: parsed.text, verifiedBy }
    : { ok: false, reason: 'no signature by a trusted key' };
}

export interface Checkpoint {
  origin: string;
  size: number;
  root: Uint8Array;
  /** Extension lines, if any (svc writes none). */
  extensions: string[];
}

/** The checkpoint body `<origin>\n<size>\n<base64 root>\n`. */
export function checkpointText(checkpoint: Omit<Checkpoint, 'extensions'>): string {
  if (checkpoint.origin.length === 0 || /[\n]/.test(checkpoint.origin)) {
    throw new TypeError('bad origin');
  }
  if (!Number.isSafeInteger(checkpoint.size) || checkpoint.size < 0) {
    throw new TypeError('bad size');
  }
  if (checkpoint.root.length !== HASH_SIZE) throw new TypeError('a root hash is 32 bytes');
  return `${checkpoint.origin}\n${checkpoint.size}\n${toBase64(checkpoint.root)}\n`;
}

/** Parses a checkpoint's note text; null for anything malformed. */
export function parseCheckpointText(text: string): Checkpoint | null {
  if (!text.endsWith('\n')) return null;
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3 || lines.some((l) => l.length === 0)) return null;
  const [origin, sizeText, rootText, ...extensions] = lines as [string, string, string];
  if (!/^(?:0|[1-9][0-9]*)$/.test(sizeText)) return null;
  const size = Number(sizeText);
  if (!Number.isSafeInteger(size)) return null;
  const root = fromBase64(rootText);
  if (!root || root.length !== HASH_SIZE) return null;
  return { origin, size, root, extensions };
}

export type CheckpointVerification =
  { ok: true; checkpoint: Checkpoint; verifiedBy: NoteKey[] } | { ok: false; reason: string };

/** Verifies a signed checkpoint of the expected origin against trusted keys. */
export function verifyCheckpoint(
  note: string,
  origin: string,
  trusted: readonly NoteKey[],
): CheckpointVerification {
  const verified = verifyNote(note, trusted);
  if (!verified.ok) return verified;
  const checkpoint = parseCheckpointText(verified.text);
  if (!checkpoint) return { ok: false, reason: 'the note is not a checkpoint' };
  if (checkpoint.origin !== origin) {
    return { ok: false, reason: `the checkpoint is of ${checkpoint.origin}, not ${origin}` };
  }
  return { ok: true, checkpoint, verifiedBy: verified.verifiedBy };
}

/** The hex of a root, for messages. */
export const rootHex = (root: Uint8Array): string => toHex(root);
