import { verifyEd25519Strict, type Ed25519Verify } from './ed25519.js';
import { fromBase64, utf8Bytes } from './encoding.js';
import { VerifyError } from './errors.js';
import { proceeds } from './receipt-contract.js';
import { parseStrictJson } from './strict-json.js';

// A receipt as an in-toto attestation (contract §14): a DSSE envelope (DSSE v1.0,
// github.com/secure-systems-lab/dsse, "protocol.md" and "envelope.md") whose payload is an
// in-toto Statement v1 (in-toto/attestation spec/v1/statement.md) with the SLSA Verification
// Summary predicate v1 (slsa.dev/spec/v1.0/verification_summary). svc signs it; this module
// checks it, portably, for svc-verify, the Action and browsers.

export const DSSE_PAYLOAD_TYPE = 'application/vnd.in-toto+json';
export const IN_TOTO_STATEMENT_V1 = 'https://in-toto.io/Statement/v1';
export const SLSA_VSA_V1 = 'https://slsa.dev/verification_summary/v1';

/**
 * DSSE's Pre-Authentication Encoding, the bytes that are signed:
 * `"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`, lengths as ASCII decimal byte counts.
 */
export function dssePae(payloadType: string, payload: Uint8Array): Uint8Array {
  const type = utf8Bytes(payloadType);
  const head = utf8Bytes(`DSSEv1 ${type.length} ${payloadType} ${payload.length} `);
  const out = new Uint8Array(head.length + payload.length);
  out.set(head);
  out.set(payload, head.length);
  return out;
}

export interface DsseSignature {
  keyid: string;
  sig: string;
}

export interface DsseEnvelope {
  payload: string;
  payloadType: string;
  signatures: DsseSignature[];
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const invalid = (message: string): never => {
  throw new VerifyError('validation_failed', message);
};

/** A DSSE envelope of the JSON text, or a VerifyError saying what is wrong with it. */
export function parseDsseEnvelope(text: string): DsseEnvelope {
  const value = parseStrictJson(text);
  if (!isObject(value)) return invalid('envelope: expected a JSON object');
  const { payload, payloadType, signatures } = value;
  if (typeof payload !== 'string') return invalid('envelope: payload must be a base64 string');
  if (typeof payloadType !== 'string') return invalid('envelope: payloadType must be a string');
  if (!Array.isArray(signatures) || signatures.length === 0)
    return invalid('envelope: signatures must be a non-empty array');
  const parsed = signatures.map((s, i) => {
    if (!isObject(s) || typeof s.sig !== 'string')
      return invalid(`envelope: signatures[${i}].sig must be a base64 string`);
    return { keyid: typeof s.keyid === 'string' ? s.keyid : '', sig: s.sig };
  });
  return { payload, payloadType, signatures: parsed };
}

/** The receipt members an attestation's checks read. */
interface AttestedReceipt {
  receipt_id?: unknown;
  policy?: { verdict?: unknown };
  admissibility?: { status?: unknown };
  chain?: { receipt_hash?: unknown } | null;
}

export interface AttestationKey {
  keyId: string;
  raw: Uint8Array;
}

export interface AttestationCheck {
  name: 'signature' | 'statement' | 'receipt_digest' | 'verification_result';
  passed: boolean;
  detail: string;
}

export interface AttestationResult {
  valid: boolean;
  checks: AttestationCheck[];
  /** The statement, when the payload was one. */
  statement: Record<string, unknown> | null;
}

const hexOf = (hash: unknown): string | null =>
  typeof hash === 'string' && /^sha256:[0-9a-f]{64}$/.test(hash) ? hash.slice(7) : null;

/** Why a statement is not the VSA of contract §14, or null when it is. */
function statementProblem(statement: Record<string, unknown>): string | null {
  if (statement._type !== IN_TOTO_STATEMENT_V1) return `_type is not ${IN_TOTO_STATEMENT_V1}`;
  if (statement.predicateType !== SLSA_VSA_V1) return `predicateType is not ${SLSA_VSA_V1}`;
  if (!Array.isArray(statement.subject) || statement.subject.length === 0)
    return 'subject must be a non-empty array';
  const p = statement.predicate;
  if (!isObject(p)) return 'predicate must be an object';
  if (!isObject(p.verifier) || typeof p.verifier.id !== 'string')
    return 'predicate.verifier.id missing';
  if (typeof p.timeVerified !== 'string') return 'predicate.timeVerified missing';
  if (typeof p.resourceUri !== 'string') return 'predicate.resourceUri missing';
  if (!isObject(p.policy) || typeof p.policy.uri !== 'string')
    return 'predicate.policy.uri missing';
  if (p.verificationResult !== 'PASSED' && p.verificationResult !== 'FAILED')
    return 'predicate.verificationResult must be PASSED or FAILED';
  if (!Array.isArray(p.verifiedLevels)) return 'predicate.verifiedLevels must be an array';
  if (!Array.isArray(p.inputAttestations)) return 'predicate.inputAttestations must be an array';
  return null;
}

/** DSSE allows either base64 alphabet (the URL-safe one too); the payload and signatures are decoded so. */
const fromAnyBase64 = (text: string): Uint8Array | null =>
  fromBase64(text.replace(/-/g, '+').replace(/_/g, '/'));

/**
 * Whether a DSSE envelope carries a signature over PAE, by one of `keys`, for one of the
 * `payloadTypes` the caller supports (DSSE protocol.md, "Verification"). A keyid is an
 * unauthenticated hint: a signature is tried with the key it names, else with every key.
 */
export function verifyDsse(
  envelope: DsseEnvelope,
  keys: readonly AttestationKey[],
  payloadTypes: readonly string[],
  verify: Ed25519Verify = verifyEd25519Strict,
): boolean {
  if (!payloadTypes.includes(envelope.payloadType)) return false;
  const payload = fromAnyBase64(envelope.payload);
  if (payload === null) return false;
  const pae = dssePae(envelope.payloadType, payload);
  return envelope.signatures.some((s) => {
    const sig = fromAnyBase64(s.sig);
    if (sig === null) return false;
    const named = keys.filter((k) => k.keyId === s.keyid);
    return (named.length > 0 ? named : keys).some((key) => verify(sig, pae, key.raw));
  });
}

/**
 * Checks an attestation of a receipt: the DSSE signature over PAE under one of `keys` (the one
 * its keyid names), the statement's shape, that its input attestation is this receipt (the
 * SHA-256 of `chain.receipt_hash`), and that `verificationResult` says PASSED exactly when the
 * receipt says proceed. The receipt itself must be verified apart (verifyOffline): this says
 * only that the attestation speaks for it.
 */
export function checkAttestation(
  envelope: DsseEnvelope,
  receipt: AttestedReceipt,
  keys: readonly AttestationKey[],
  verify: Ed25519Verify = verifyEd25519Strict,
): AttestationResult {
  const checks: AttestationCheck[] = [];
  const payload = fromAnyBase64(envelope.payload);
  const signed = verifyDsse(envelope, keys, [DSSE_PAYLOAD_TYPE], verify);
  checks.push({
    name: 'signature',
    passed: signed,
    detail: signed
      ? 'DSSE signature over PAE verified under a trusted key'
      : payload === null
        ? 'payload is not base64'
        : envelope.payloadType !== DSSE_PAYLOAD_TYPE
          ? `payloadType is not ${DSSE_PAYLOAD_TYPE}`
          : 'no signature verifies under a trusted key',
  });
  let statement: Record<string, unknown> | null = null;
  if (payload !== null) {
    try {
      const value = parseStrictJson(new TextDecoder('utf-8', { fatal: true }).decode(payload));
      statement = isObject(value) ? value : null;
    } catch {
      statement = null;
    }
  }
  const problem = statement ? statementProblem(statement) : 'payload is not a JSON object';
  checks.push({
    name: 'statement',
    passed: problem === null,
    detail: problem ?? 'in-toto Statement v1 with the SLSA VSA v1 predicate',
  });
  const predicate = (problem === null ? statement!.predicate : {}) as Record<string, unknown>;
  const receiptHex = hexOf(receipt.chain?.receipt_hash);
  const inputs = (
    Array.isArray(predicate.inputAttestations) ? predicate.inputAttestations : []
  ) as {
    digest?: { sha256?: unknown };
  }[];
  const digestMatches =
    receiptHex !== null && inputs.some((input) => input?.digest?.sha256 === receiptHex);
  checks.push({
    name: 'receipt_digest',
    passed: digestMatches,
    detail: digestMatches
      ? `inputAttestations names this receipt (sha256 ${receiptHex})`
      : receiptHex === null
        ? 'the receipt has no chain.receipt_hash'
        : 'no input attestation has the digest of this receipt',
  });
  const expected = proceeds(receipt.policy?.verdict, receipt.admissibility?.status)
    ? 'PASSED'
    : 'FAILED';
  const agrees = predicate.verificationResult === expected;
  checks.push({
    name: 'verification_result',
    passed: agrees,
    detail: agrees
      ? `${expected}, as the receipt says`
      : `verificationResult ${String(predicate.verificationResult)} but the receipt says ${expected}`,
  });
  return { valid: checks.every((c) => c.passed), checks, statement };
}
