import { canonicalBytes } from './canonical.js';
import { keyIdOf, rawPublicKeyFromPem, verifyEd25519Strict } from './ed25519.js';
import { fromBase64 } from './encoding.js';
import { VerifyError } from './errors.js';
import { publicKeyProblem, serverKeyUrl } from './public-key.js';
import type { Ed25519Verify } from './ed25519.js';
import { isObject } from './json.js';

// The signing-key history of a ledger (contract §9): every key that ever signed, the sequences
// it signed, and the key transition statements that link each key to the one before it. A
// history fetched from a server is attacker-controlled: everything here is checked, and a
// refusal is a thrown VerifyError carrying the reason, never a crash.

export const KEY_TRANSITION_TYPE = 'svc-key-transition-v1';
export const KEY_REVOCATION_TYPE = 'svc-key-revocation-v1';

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

/**
 * What a key of the history signs when it revokes a key (itself or an earlier one): the
 * UTF-8 bytes of this object's RFC 8785 canonical form (`revocationStatementBytes`) are the
 * Ed25519 message. A verifier trusts it only when `signer_key_id` is a key it trusts.
 */
export interface KeyRevocationStatement {
  type: typeof KEY_REVOCATION_TYPE;
  /** The log's origin. */
  log: string;
  /** The revoked key. */
  key_id: string;
  /** Receipts and checkpoints of the revoked key at or after this sequence are refused. */
  revoked_from_sequence: number;
  /** The key that signs the statement. */
  signer_key_id: string;
  issued_at: string;
}

/** A revocation statement with the signer's signature over its canonical bytes (base64). */
export interface KeyRevocation {
  statement: KeyRevocationStatement;
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
  /**
   * The signed statement that revoked this key; null unless revoked (and for a revocation
   * recorded before revocations were signed, which a verifier honours as served: it only
   * withdraws trust). Absent from histories served before it existed: read as null.
   */
  revocation: KeyRevocation | null;
}

/** The bytes a transition signature covers: UTF-8 of the statement's JCS form. */
export const transitionStatementBytes = (statement: KeyTransitionStatement): Uint8Array =>
  canonicalBytes(statement);

/** The bytes a revocation signature covers: UTF-8 of the statement's JCS form. */
export const revocationStatementBytes = (statement: KeyRevocationStatement): Uint8Array =>
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

/** A `{statement, signature}` revocation, checked for shape; null for null. */
export function parseRevocation(value: unknown, where: string): KeyRevocation | null {
  if (value === null) return null;
  if (!isObject(value) || !isObject(value.statement) || !isString(value.signature))
    return refuse(`${where}: revocation must be {statement, signature}`);
  const s = value.statement;
  const keys = Object.keys(s).sort().join(',');
  if (
    keys !== 'issued_at,key_id,log,revoked_from_sequence,signer_key_id,type' ||
    s.type !== KEY_REVOCATION_TYPE ||
    !isString(s.log) ||
    !isString(s.key_id) ||
    !isSequence(s.revoked_from_sequence) ||
    !isString(s.signer_key_id) ||
    !isString(s.issued_at)
  )
    return refuse(`${where}: revocation statement is not a ${KEY_REVOCATION_TYPE} statement`);
  return { statement: s as unknown as KeyRevocationStatement, signature: value.signature };
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
  const revocation = parseRevocation(v.revocation ?? null, where);
  // A statement that says something else than the record it is served with is a tampered one.
  if (
    revocation &&
    (revocation.statement.key_id !== v.key_id ||
      revocation.statement.revoked_from_sequence !== v.revoked_from_sequence ||
      revocation.statement.issued_at !== v.revoked_at)
  )
    return refuse(
      `${where} (${v.key_id}): its revocation statement does not match revoked_from_sequence and revoked_at`,
    );
  if ((v.status === 'revoked') !== (v.revoked_from_sequence !== null))
    return refuse(`${where} (${v.key_id}): status and revoked_from_sequence disagree`);
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
    revocation,
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

/** What following a history takes besides the history and the pins. */
export interface FollowOptions {
  /** The log's origin every statement must name; else the first statement's. */
  origin?: string;
  verify?: Ed25519Verify;
  /**
   * Signed revocations this verifier has seen before (kept in its state, or given to it): a
   * history that no longer holds one of them, for a key the pins trust, is refused.
   */
  seen?: readonly KeyRevocation[];
}

/**
 * The keys `pins` trust through a history as a service served it (the parsed body of
 * `GET /v1/keys`), as `followKeyTransitions` finds them; null when the service lists no key
 * yet, so that its single server key holds. A history that is refused throws, with the reason.
 */
export function followServedHistory(
  body: unknown,
  pins: string | readonly string[],
  options: FollowOptions = {},
): TrustedKey[] | null {
  const listed = isObject(body) ? body.keys : undefined;
  if (Array.isArray(listed) && listed.length === 0) return null;
  return followKeyTransitions(parseKeyHistory(body), pins, options);
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
 * The keys a relying party that pinned `pins` (one key id or several) can trust, in history
 * order: the pinned keys, and every key after the earliest of them that a transition
 * statement signed by the key before it introduces. Trust runs forward only: a key before a
 * pin is trusted only when it is pinned itself, however its successor's statement is signed
 * (anyone can make a key and sign a statement handing over from it to the pinned one).
 *
 * Refuses a history whose keys do not partition the ledger in order (a gap, an overlap, a
 * reordering); a pin it does not hold; a trusted key without a valid transition (one that
 * does not name the right keys and sequence or is not signed by the key before it), unless
 * that key is pinned and carries none; a trusted key's revocation statement not signed by a
 * trusted key; and a history that lacks a revocation of `options.seen` for a trusted key.
 * A revocation recorded without a statement is honoured as served: it only withdraws trust.
 */
export function followKeyTransitions(
  history: readonly SigningKeyRecord[],
  pins: string | readonly string[],
  options: FollowOptions = {},
): TrustedKey[] {
  const verify = options.verify ?? verifyEd25519Strict;
  const pinned = new Set(typeof pins === 'string' ? [pins] : pins);
  if (pinned.size === 0) return refuse('no pinned key');
  let start = history.length;
  for (const pin of pinned) {
    const at = history.findIndex((k) => k.key_id === pin);
    if (at < 0) return refuse(`the pinned key ${pin} is not in the history`);
    start = Math.min(start, at);
  }
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
  const checkOrigin = (log: string, where: string, what: string): void => {
    origin ??= log;
    if (log !== origin)
      refuse(
        `${where}: the ${what} is for log ${JSON.stringify(log)}, not ${JSON.stringify(origin)}`,
      );
  };
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
    checkOrigin(s.log, where, 'transition');
    const signature = fromBase64(t.signature);
    if (!signature || !verify(signature, transitionStatementBytes(s), previous.raw))
      return refuse(`${where}: the transition is not signed by the previous key ${previous.keyId}`);
  };
  const chain = [trusted(start)];
  for (let i = start + 1; i < history.length; i++) {
    const next = trusted(i);
    // A pinned key needs no statement to be trusted; one it carries must still hold.
    if (!pinned.has(next.keyId) || next.record.transition !== null)
      checkLink(i, chain[chain.length - 1]!, next);
    chain.push(next);
  }
  /** Why a revocation is not one a trusted key signed, or null when it is. */
  const revocationProblem = (r: KeyRevocation, where: string): string | null => {
    const s = r.statement;
    const signer = chain.find((k) => k.keyId === s.signer_key_id);
    if (!signer)
      return `${where}: the revocation is signed by ${s.signer_key_id}, a key the pin does not trust`;
    checkOrigin(s.log, where, 'revocation');
    const signature = fromBase64(r.signature);
    return signature && verify(signature, revocationStatementBytes(s), signer.raw)
      ? null
      : `${where}: the revocation is not signed by ${s.signer_key_id}`;
  };
  chain.forEach((key, j) => {
    const revocation = key.record.revocation;
    const problem = revocation && revocationProblem(revocation, `keys[${start + j}]`);
    if (problem) refuse(problem);
  });
  for (const [n, seen] of (options.seen ?? []).entries()) {
    const s = seen.statement;
    const key = chain.find((k) => k.keyId === s.key_id);
    // A revocation of a key the pins do not trust changes nothing here.
    if (!key) continue;
    const problem = revocationProblem(seen, `known revocation ${n}`);
    if (problem) refuse(problem);
    const from = key.record.revoked_from_sequence;
    if (from === null || from > s.revoked_from_sequence)
      refuse(
        `the history omits the revocation of ${s.key_id} from sequence ${s.revoked_from_sequence} (signed by ${s.signer_key_id} at ${s.issued_at}) that this verifier has seen${from === null ? '' : `: it says revoked from ${from}`}`,
      );
  }
  return chain;
}

/** The signed revocations of a history: what a verifier keeps to hold later histories to. */
export const signedRevocationsOf = (history: readonly SigningKeyRecord[]): KeyRevocation[] =>
  history.flatMap((k) => (k.revocation ? [k.revocation] : []));

/**
 * The earliest key from which the history's own transition statements lead, unbroken, to its
 * newest key: where a reader that takes a published history as served starts following it.
 * It is no pin: the service that serves the history chooses it.
 */
export function publishedChainStart(history: readonly SigningKeyRecord[]): string {
  let i = history.length - 1;
  while (i > 0 && history[i]!.transition !== null) i--;
  return history[i]?.key_id ?? '';
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
