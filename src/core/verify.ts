import { canonicalBytes, HASH_PATTERN } from './canonical.js';
import { SOURCE_TYPES } from './claim-schema.js';
import { verifyEd25519Strict } from './ed25519.js';
import { fromBase64 } from './encoding.js';
import { RECEIPT_ID_PATTERN, receiptHash, signedCoreOf, type Receipt } from './receipt.js';

export type CheckStatus = 'PASS' | 'FAIL' | 'UNVERIFIED' | 'SKIPPED';
export type CheckLayer = 'structural' | 'cryptographic' | 'ledger';

export interface VerifyCheck {
  name: string;
  layer: CheckLayer;
  status: CheckStatus;
  detail?: string;
}

export interface VerifyResult {
  valid: boolean;
  receipt_id: string | null;
  admissibility: string | null;
  verification_depth: 'cryptographic';
  checks: VerifyCheck[];
}

export type Ed25519Verify = (
  signature: Uint8Array,
  message: Uint8Array,
  publicKey: Uint8Array,
) => boolean;

export interface VerifyOptions {
  /** The issuer's raw 32-byte Ed25519 public key, authenticated by the caller. */
  publicKey: Uint8Array;
  keyId: string;
  /** Defaults to the portable strict verifier; the server passes its native equivalent. */
  verifySignature?: Ed25519Verify;
  /**
   * The ledger's stored `chain.receipt_hash` for this receipt_id: a string when found, null
   * when the ledger does not know the receipt, undefined when no ledger is consulted (offline).
   */
  ledgerHash?: string | null;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === 'string';
const oneOf = (v: unknown, values: readonly string[]) => isString(v) && values.includes(v);
const sourceTypes: readonly string[] = SOURCE_TYPES;

const STRUCTURE: [name: string, test: (r: Json) => string | null][] = [
  [
    'receipt_id_valid',
    (r) =>
      isString(r.receipt_id) && RECEIPT_ID_PATTERN.test(r.receipt_id)
        ? null
        : 'receipt_id must be "dr-" followed by a ULID or UUID',
  ],
  [
    'admissibility_present',
    (r) =>
      isObject(r.admissibility) &&
      oneOf(r.admissibility.status, ['ACCEPTED', 'NON_DETERMINISTIC', 'REJECTED'])
        ? null
        : 'admissibility.status missing or not ACCEPTED, NON_DETERMINISTIC or REJECTED',
  ],
  [
    'replay_present',
    (r) =>
      isObject(r.replay) &&
      typeof r.replay.deterministic === 'boolean' &&
      isString(r.replay.replay_hash) &&
      HASH_PATTERN.test(r.replay.replay_hash)
        ? null
        : 'replay.deterministic or replay.replay_hash missing or malformed',
  ],
  [
    'policy_present',
    (r) =>
      isObject(r.policy) &&
      oneOf(r.policy.status, ['PASS', 'FAIL', 'ESCALATE']) &&
      oneOf(r.policy.verdict, ['ALLOWED', 'BLOCKED', 'ESCALATED']) &&
      Array.isArray(r.policy.checks)
        ? null
        : 'policy.status, policy.verdict or policy.checks missing or malformed',
  ],
  [
    'evidence_present',
    (r) =>
      isObject(r.evidence) &&
      isString(r.evidence.inputs_hash) &&
      HASH_PATTERN.test(r.evidence.inputs_hash) &&
      Number.isSafeInteger(r.evidence.source_count) &&
      (r.evidence.source_count as number) >= 1 &&
      Array.isArray(r.evidence.source_types) &&
      r.evidence.source_types.every((t) => oneOf(t, sourceTypes))
        ? null
        : 'evidence.inputs_hash, source_count or source_types missing or malformed',
  ],
  [
    'attestation_present',
    (r) =>
      Array.isArray(r.attestations) &&
      r.attestations.some(
        (a) =>
          isObject(a) &&
          a.algorithm === 'Ed25519' &&
          isString(a.signature) &&
          isString(a.key_id) &&
          isString(a.signer) &&
          isString(a.timestamp),
      )
        ? null
        : 'no Ed25519 attestation with signer, key_id, signature and timestamp',
  ],
];

/**
 * The three layers of the receipt contract (§6) over an untrusted receipt. Pure: the ledger's
 * answer is an argument. Every failure is a FAIL check, never an exception.
 */
export function verifyReceipt(input: unknown, options: VerifyOptions): VerifyResult {
  const receipt: Json = isObject(input) ? input : {};
  const checks: VerifyCheck[] = STRUCTURE.map(([name, test]) => {
    const problem = test(receipt);
    return problem
      ? { name, layer: 'structural', status: 'FAIL', detail: problem }
      : { name, layer: 'structural', status: 'PASS' };
  });
  checks.push(checkSignature(receipt, options));
  checks.push(checkHashIntegrity(receipt, options.ledgerHash));
  checks.push({
    name: 'chain_linkage',
    layer: 'ledger',
    status: 'UNVERIFIED',
    detail:
      'receipt-core-v1 does not sign chain coordinates; sequence needs an independently kept ledger head',
  });
  const status = (name: string) => checks.find((c) => c.name === name)?.status;
  return {
    valid:
      checks.every((c) => c.status !== 'FAIL') &&
      status('signature_valid') === 'PASS' &&
      status('hash_integrity') === 'PASS',
    receipt_id: isString(receipt.receipt_id) ? receipt.receipt_id : null,
    admissibility:
      isObject(receipt.admissibility) && isString(receipt.admissibility.status)
        ? receipt.admissibility.status
        : null,
    verification_depth: 'cryptographic',
    checks,
  };
}

function checkSignature(receipt: Json, options: VerifyOptions): VerifyCheck {
  const fail = (detail: string): VerifyCheck => ({
    name: 'signature_valid',
    layer: 'cryptographic',
    status: 'FAIL',
    detail,
  });
  const core = signedCoreOf(receipt);
  if (!core)
    return fail(
      'signed_fields must declare receipt-core-v1 with its exact field list, and every listed member must be present',
    );
  const attestations = Array.isArray(receipt.attestations)
    ? receipt.attestations.filter(isObject)
    : [];
  const attestation = attestations.find(
    (a) => a.algorithm === 'Ed25519' && a.key_id === options.keyId,
  );
  if (!attestation) return fail(`no Ed25519 attestation by key ${options.keyId}`);
  const signature = isString(attestation.signature) ? fromBase64(attestation.signature) : null;
  if (!signature || signature.length !== 64) return fail('signature is not the base64 of 64 bytes');
  let message: Uint8Array;
  try {
    message = canonicalBytes(core);
  } catch (error) {
    return fail(`signed core has no canonical form: ${(error as Error).message}`);
  }
  const verify = options.verifySignature ?? verifyEd25519Strict;
  return verify(signature, message, options.publicKey)
    ? { name: 'signature_valid', layer: 'cryptographic', status: 'PASS' }
    : fail('Ed25519 signature does not verify over the signed core');
}

function checkHashIntegrity(receipt: Json, ledgerHash: string | null | undefined): VerifyCheck {
  const name = 'hash_integrity';
  if (ledgerHash === undefined)
    return { name, layer: 'ledger', status: 'SKIPPED', detail: 'no ledger consulted' };
  if (ledgerHash === null)
    return {
      name,
      layer: 'ledger',
      status: 'FAIL',
      detail: 'receipt_id is unknown to this ledger',
    };
  let recomputed: string;
  try {
    recomputed = receiptHash(receipt as unknown as Receipt);
  } catch (error) {
    return {
      name,
      layer: 'ledger',
      status: 'FAIL',
      detail: `receipt has no canonical form: ${(error as Error).message}`,
    };
  }
  return recomputed === ledgerHash
    ? { name, layer: 'ledger', status: 'PASS' }
    : {
        name,
        layer: 'ledger',
        status: 'FAIL',
        detail: `recomputed ${recomputed} differs from the ledger's ${ledgerHash}`,
      };
}
