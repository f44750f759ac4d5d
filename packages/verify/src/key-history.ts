import { canonicalBytes } from './canonical.js';
import { keyIdOf, rawPublicKeyFromPem, verifyEd25519Strict } from './ed25519.js';
import { fromBase64 } from './encoding.js';
import { VerifyError } from './errors.js';
import { publicKeyProblem, serverKeyUrl } from './public-key.js';
import type { Ed25519Verify } from './verify.js';
import { isObject } from './json.js';

// The signing-key history of a ledger (contract §9): every key that ever signed, the sequences
// it signed, and the key transition statements that link each key to the one before it. A
// history fetched from a server is attacker-controlled: everything here is checked, and a
// refusal is a thrown VerifyError carrying the reason, never a crash.

export const KEY_TRANSITION_TYPE = 'svc-key-transition-v1';

export const SIGNING_KEY_STATUSES = ['current', 'retired', 'revoked'] as const;
export type SigningKeyStatus = (typeof SIGNING_KEY_STATUSES)[number];

/**
 * What the key being replaced signs when it hands over: the UTF-8 bytes of this object's
 * RFC 8785 canonical form (`transitionStatementBytes`) are the Ed25519 message.
 */
export interface KeyTransitionStatement {
  type: typeof KEY_TRANSITION_TYPE;
  /** The log's origin. */
  log: string;
  previous_key_id: string;
  new_key_id: string;
  /** The new key, base64 of its raw 32 bytes. */
  new_public_key: string;
  /** The sequence of the first receipt the new key signs. */
  first_sequence: number;
  issued_at: string;
}

/** A statement with the previous key's signature over its canonical bytes (base64). */
export interface KeyTransition {
  statement: KeyTransitionStatement;
  signature: string;
}

/** One key of the history, as stored and as `GET /v1/keys` serves it. */
export interface SigningKeyRecord {
  /** `sha256:<hex>` of the DER SubjectPublicKeyInfo, as `attestations[].key_id`. */
  key_id: string;
  /** SPKI PEM; null for a key adopted from old receipts whose public key was never stored. */
  public_key_pem: string | null;
  /** The signed-note verifier key `<origin>+<key ID>+<key>`; null with no public key. */
  verifier_key: string | null;
  status: SigningKeyStatus;
  /** The first sequence the key signed (or will sign). */
  first_sequence: number;
  /** The last sequence it signed; null while it is current. */
  last_sequence: number | null;
  activated_at: string;
  retired_at: string | null;
  /** Receipts of this key at or after this sequence are refused; null unless revoked. */
  revoked_from_sequence: number | null;
  revoked_at: string | null;
  /** The statement, signed by the previous key, that introduced this key; null for the first. */
  transition: KeyTransition | null;
}

/** The bytes a transition signature covers: UTF-8 of the statement's JCS form. */
export const transitionStatementBytes = (statement: KeyTransitionStatement): Uint8Array =>
  canonicalBytes(statement);

/** Whether `key` may have signed the receipt at `sequence`; the reason when it may not. */
export function coverageProblem(key: SigningKeyRecord, sequence: number): string | null {
  const signed =
    key.last_sequence === null
      ? `sequences from ${key.first_sequence}`
      : `sequences ${key.first_sequence} to ${key.last_sequence}`;
  if (sequence < key.first_sequence || (key.last_sequence !== null && sequence > key.last_sequence))
    return `key ${key.key_id} did not sign sequence ${sequence}: it signed ${signed}`;
  if (key.revoked_from_sequence !== null && sequence >= key.revoked_from_sequence)
    return `key ${key.key_id} is revoked from sequence ${key.revoked_from_sequence} (revoked ${key.revoked_at ?? ''}): receipt ${sequence} is not trusted`.replace(
      ' ()',
      '',
    );
  return null;
}

/** A key trusted through the chain: its raw public key and what it may have signed. */
export interface TrustedKey {
  keyId: string;
  raw: Uint8Array;
  record: SigningKeyRecord;
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isSequence = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 1;
const seqOrNull = (v: unknown): v is number | null => v === null || isSequence(v);
const strOrNull = (v: unknown): v is string | null => v === null || isString(v);

const refuse = (reason: string): never => {
  throw new VerifyError('validation_failed', `key history refused: ${reason}`);
};

function parseTransition(value: unknown, where: string): KeyTransition | null {
  if (value === null) return null;
  if (!isObject(value) || !isObject(value.statement) || !isString(value.signature))
    return refuse(`${where}: transition must be {statement, signature}`);
  const s = value.statement;
  const keys = Object.keys(s).sort().join(',');
  if (
    keys !== 'first_sequence,issued_at,log,new_key_id,new_public_key,previous_key_id,type' ||
    s.type !== KEY_TRANSITION_TYPE ||
    !isString(s.log) ||
    !isString(s.previous_key_id) ||
    !isString(s.new_key_id) ||
    !isString(s.new_public_key) ||
    !isSequence(s.first_sequence) ||
    !isString(s.issued_at)
  )
    return refuse(`${where}: transition statement is not a ${KEY_TRANSITION_TYPE} statement`);
  return { statement: s as unknown as KeyTransitionStatement, signature: value.signature };
}

/** One entry of an untrusted history, checked for shape. */
export function parseSigningKeyRecord(value: unknown, where: string): SigningKeyRecord {
  if (!isObject(value)) return refuse(`${where} is not an object`);
  const v = value;
  if (
    !isString(v.key_id) ||
    !strOrNull(v.public_key_pem) ||
    !strOrNull(v.verifier_key) ||
    !(SIGNING_KEY_STATUSES as readonly unknown[]).includes(v.status) ||
    !isSequence(v.first_sequence) ||
    !(
      v.last_sequence === null ||
      (Number.isSafeInteger(v.last_sequence) && (v.last_sequence as number) >= 0)
    ) ||
    !isString(v.activated_at) ||
    !strOrNull(v.retired_at) ||
    !seqOrNull(v.revoked_from_sequence) ||
    !strOrNull(v.revoked_at)
  )
    return refuse(`${where} lacks key_id, public_key_pem, status, first_sequence or last_sequence`);
  return {
    key_id: v.key_id,
    public_key_pem: v.public_key_pem,
    verifier_key: v.verifier_key,
    status: v.status as SigningKeyStatus,
    first_sequence: v.first_sequence,
    last_sequence: v.last_sequence as number | null,
    activated_at: v.activated_at,
    retired_at: v.retired_at,
    revoked_from_sequence: v.revoked_from_sequence,
    revoked_at: v.revoked_at,
    transition: parseTransition(v.transition, where),
  };
}

/** The history of a `GET /v1/keys` body (`{keys: [...]}`) or a bare array. */
export function parseKeyHistory(value: unknown): SigningKeyRecord[] {
  const list = isObject(value) ? value.keys : value;
  if (!Array.isArray(list) || list.length === 0)
    return refuse('expected {"keys": [...]} with at least one key');
  return list.map((entry, i) => parseSigningKeyRecord(entry, `keys[${i}]`));
}

/**
 * Where an svc serves its key history (`GET /v1/keys`), from its base URL or its key URL
 * (`…/v1/keys/server`). Throws a validation VerifyError for anything but an http(s) URL.
 */
export const keyHistoryUrl = (url: string): string => serverKeyUrl(url).replace(/\/server$/, '');

/**
 * The keys `pinnedKeyId` trusts through a history as a service served it (the parsed body of
 * `GET /v1/keys`), as `followKeyTransitions` finds them; null when the service lists no key
 * yet, so that its single server key holds. A history that is refused throws, with the reason.
 */
export function followServedHistory(
  body: unknown,
  pinnedKeyId: string,
  options: { verify?: Ed25519Verify } = {},
): TrustedKey[] | null {
  const listed = isObject(body) ? body.keys : undefined;
  if (Array.isArray(listed) && listed.length === 0) return null;
  return followKeyTransitions(parseKeyHistory(body), pinnedKeyId, options);
}

/** The raw key of a record, refused when it has none or the PEM does not match its key_id. */
function rawKeyOf(record: SigningKeyRecord, where: string): Uint8Array {
  const raw = record.public_key_pem === null ? null : rawPublicKeyFromPem(record.public_key_pem);
  if (!raw) return refuse(`${where} (${record.key_id}) has no Ed25519 public key`);
  const problem = publicKeyProblem(raw);
  if (problem) return refuse(`${where} (${record.key_id}): ${problem}`);
  if (keyIdOf(raw) !== record.key_id)
    return refuse(`${where}: its public key has fingerprint ${keyIdOf(raw)}, not ${record.key_id}`);
  return raw;
}

/**
 * The keys a relying party that pinned `pinnedKeyId` can trust, in history order: the pinned
 * key, every later key reached by a transition statement signed by its predecessor, and every
 * earlier key that signed the transition to the key after it (so the chain of statements
 * links each to the pin). Refuses a history whose keys do not partition the ledger in order
 * (a gap, an overlap, a reordering), a later key without a valid transition, and any
 * transition on the way that does not name the right keys and sequence or is not signed by the
 * key before it. Earlier keys stop at the first one without a transition (keys adopted from
 * receipts signed before the history existed): the pin vouches for none of those.
 * Revocations are taken as served: they only ever withdraw trust.
 */
export function followKeyTransitions(
  history: readonly SigningKeyRecord[],
  pinnedKeyId: string,
  options: { origin?: string; verify?: Ed25519Verify } = {},
): TrustedKey[] {
  const verify = options.verify ?? verifyEd25519Strict;
  const start = history.findIndex((k) => k.key_id === pinnedKeyId);
  if (start < 0) return refuse(`the pinned key ${pinnedKeyId} is not in the history`);
  for (let i = 1; i < history.length; i++) {
    const before = history[i - 1]!;
    const key = history[i]!;
    if (before.last_sequence === null)
      return refuse(`keys[${i - 1}] (${before.key_id}) has no last_sequence but a key follows it`);
    if (key.first_sequence !== before.last_sequence + 1)
      return refuse(
        `keys[${i}] starts at sequence ${key.first_sequence}, but keys[${i - 1}] ended at ${before.last_sequence}: the keys must follow one another without gap or overlap`,
      );
  }
  const trusted = (i: number): TrustedKey => ({
    keyId: history[i]!.key_id,
    raw: rawKeyOf(history[i]!, `keys[${i}]`),
    record: history[i]!,
  });
  let origin = options.origin;
  /** Checks the transition that introduced history[i], signed by history[i - 1]. */
  const checkLink = (i: number, previous: TrustedKey, next: TrustedKey): void => {
    const where = `keys[${i}]`;
    const t = next.record.transition;
    if (!t)
      return refuse(`${where} (${next.keyId}) has no transition statement from ${previous.keyId}`);
    const s = t.statement;
    if (s.previous_key_id !== previous.keyId)
      return refuse(
        `${where}: the transition names ${s.previous_key_id} as previous key, not ${previous.keyId}`,
      );
    if (s.new_key_id !== next.keyId)
      return refuse(`${where}: the transition introduces ${s.new_key_id}, not ${next.keyId}`);
    const stated = fromBase64(s.new_public_key);
    if (!stated || stated.length !== 32 || stated.some((b, j) => b !== next.raw[j]))
      return refuse(`${where}: the transition's new_public_key is not this key`);
    if (s.first_sequence !== next.record.first_sequence)
      return refuse(
        `${where}: the transition says the key starts at ${s.first_sequence}, the history says ${next.record.first_sequence}`,
      );
    origin ??= s.log;
    if (s.log !== origin)
      return refuse(
        `${where}: the transition is for log ${JSON.stringify(s.log)}, not ${JSON.stringify(origin)}`,
      );
    const signature = fromBase64(t.signature);
    if (!signature || !verify(signature, transitionStatementBytes(s), previous.raw))
      return refuse(`${where}: the transition is not signed by the previous key ${previous.keyId}`);
  };
  const chain = [trusted(start)];
  for (let i = start + 1; i < history.length; i++) {
    const next = trusted(i);
    checkLink(i, chain[chain.length - 1]!, next);
    chain.push(next);
  }
  for (let i = start; i > 0 && history[i]!.transition !== null; i--) {
    const previous = trusted(i - 1);
    checkLink(i, previous, chain[0]!);
    chain.unshift(previous);
  }
  return chain;
}

/** The sequence a receipt claims: the signed position (v2), else its chain member (v1). */
export function receiptSequence(receipt: unknown): number | null {
  if (!isObject(receipt)) return null;
  const position = isObject(receipt.position) ? receipt.position.sequence : undefined;
  if (isSequence(position)) return position;
  const chain = isObject(receipt.chain) ? receipt.chain.sequence : undefined;
  return isSequence(chain) ? chain : null;
}

/** The key_ids a receipt's Ed25519 attestations name. */
export function attestationKeyIdsOf(receipt: unknown): string[] {
  const attestations = isObject(receipt) ? receipt.attestations : undefined;
  if (!Array.isArray(attestations)) return [];
  return attestations.flatMap((a) =>
    isObject(a) && a.algorithm === 'Ed25519' && isString(a.key_id) ? [a.key_id] : [],
  );
}

/**
 * Which of `keys` to check a receipt against, and why it must fail when none may: the first
 * key named by an attestation; a refusal when that key did not sign the receipt's sequence or
 * was revoked at or before it; null `key` when no attestation names one of them.
 */
export function keyForReceipt<K extends { keyId: string; record: SigningKeyRecord }>(
  receipt: unknown,
  keys: readonly K[],
): { key: K | null; refusal?: string } {
  const named = attestationKeyIdsOf(receipt);
  const key = keys.find((k) => named.includes(k.keyId)) ?? null;
  if (!key) return { key: null };
  const sequence = receiptSequence(receipt);
  if (sequence === null)
    return {
      key,
      refusal: 'the receipt names no sequence, so no key of the history can be said to cover it',
    };
  const problem = coverageProblem(key.record, sequence);
  return problem ? { key, refusal: problem } : { key };
}
