import { HASH_PATTERN } from './canonical.js';
import { VerifyError } from './errors.js';
import { keyForReceipt, type TrustedKey } from './key-history.js';
import type { PublicKey } from './public-key.js';
import { parseCheckpointText, parseNote, type Checkpoint } from './tlog/note.js';
import type { CheckpointKey, InclusionEvidence } from './tlog/receipt-inclusion.js';
import { receiptHash } from './receipt-contract.js';
import {
  verifyReceipt,
  type CheckName,
  type ParentEvidence,
  type VerifyCheck,
  type VerifyExpectations,
  type VerifyResult,
} from './verify.js';
import { isObject } from './json.js';
import { proceeds } from './receipt-contract.js';

/**
 * Verification without the issuer: the receipt checked against a key the caller trusts,
 * with no ledger consulted. `hash_integrity` is then SKIPPED (only the ledger knows the stored
 * hash), so here `valid` means: no check FAILs and `signature_valid` PASSes. That is what a
 * signature can establish; ledger membership and sequence still need the ledger or a kept
 * head. The key is required: without one nothing may be called valid.
 */
export function verifyOffline(
  receipt: unknown,
  key: PublicKey,
  expect: VerifyExpectations = {},
  keyRefusal?: string,
  inclusion?: InclusionEvidence,
  parent?: ParentEvidence,
): VerifyResult {
  const result = verifyReceipt(receipt, {
    publicKey: key.raw,
    keyId: key.keyId,
    expect,
    keyRefusal,
    inclusion,
    parent,
  });
  // Without a proof there is nothing to check inclusion with: SKIPPED, in the place the
  // server's inclusion check takes, so the checks have the names and order of POST /v1/verify.
  const checks = [...result.checks];
  if (!inclusion)
    checks.splice(checks.findIndex((c) => c.name === 'chain_linkage') + 1, 0, INCLUSION_SKIPPED);
  const status = (name: CheckName) => checks.find((c) => c.name === name)?.status;
  return {
    ...result,
    checks,
    valid: checks.every((c) => c.status !== 'FAIL') && status('signature_valid') === 'PASS',
  };
}

/**
 * A disposition's parent as a verifier holding the parent receipt knows it (contract §11):
 * the parent must itself verify (`parentResult`, under the same trust), and its hash is
 * recomputed from its content, never read from its own unsigned `chain.receipt_hash`.
 */
export function parentEvidenceOf(parent: unknown, parentResult: VerifyResult): ParentEvidence {
  if (!parentResult.valid) {
    const failed = parentResult.checks.filter((c) => c.status === 'FAIL').map((c) => c.name);
    return {
      missing: `the parent receipt given does not verify (${failed.join(', ') || 'signature not verified'})`,
    };
  }
  const record = isObject(parent) ? parent : {};
  try {
    return {
      receiptId: String(record.receipt_id),
      receiptHash: receiptHash(record),
    };
  } catch (error) {
    return { missing: `the parent receipt given has no receipt hash: ${(error as Error).message}` };
  }
}

const INCLUSION_SKIPPED: VerifyCheck = {
  name: 'inclusion',
  layer: 'ledger',
  status: 'SKIPPED',
  detail: 'no inclusion proof given',
};

/**
 * The inclusion evidence of an offline check: the proof (attacker-controlled, checked by
 * `checkInclusion`), the keys that may have signed its checkpoint (the pinned key, or the keys
 * a followed history trusts, each within the sizes it was current for) and the ledger's
 * origin. The origin is the one the receipt signs (`position.log`, receipt-core-v2); for a
 * receipt that signs none, the trusted checkpoint's, else the proof checkpoint's own, which
 * its signature under a trusted key (key name = origin) vouches for.
 */
export function offlineInclusionEvidence(
  receipt: unknown,
  proof: unknown,
  keys: readonly (PublicKey | TrustedKey)[],
  trustedCheckpoint?: Checkpoint,
): InclusionEvidence {
  const record = isObject(receipt) ? receipt : {};
  const signed =
    isObject(record.position) && typeof record.position.log === 'string'
      ? record.position.log
      : undefined;
  const checkpoint =
    isObject(proof) && typeof proof.checkpoint === 'string' ? proof.checkpoint : '';
  const note = parseNote(checkpoint);
  const origin =
    signed ?? trustedCheckpoint?.origin ?? (note && parseCheckpointText(note.text)?.origin) ?? '';
  const checkpointKeys: CheckpointKey[] = keys.map((k) => ({
    publicKey: k.raw,
    keyId: k.keyId,
    ...('record' in k ? { record: k.record } : {}),
  }));
  return { proof, origin, keys: checkpointKeys, trustedCheckpoint };
}

/**
 * A checkpoint the user trusts, from a file: a signed note (a witness's state, an exported
 * `checkpoint`) or the bare checkpoint text. Its signatures are not checked here: the proof's
 * checkpoint, whose signature is checked, must equal it.
 */
export function parseTrustedCheckpoint(text: string): Checkpoint {
  const note = parseNote(text);
  const checkpoint = parseCheckpointText(
    note ? note.text : text.endsWith('\n') ? text : `${text}\n`,
  );
  if (!checkpoint)
    throw new VerifyError(
      'validation_failed',
      'not a checkpoint: expected a signed note or the checkpoint text (origin, size, base64 root)',
    );
  return checkpoint;
}

/** What a verified receipt tells a gate: the signed outcome, and whether to go on. */
export interface Decision {
  /** The signed `policy.verdict`; null unless the signature verified under the trusted key. */
  verdict: string | null;
  /** The signed `admissibility.status`; null unless the signature verified. */
  admissibility: string | null;
  /** The failed rules the receipt signs (`policy.checks`); empty unless the signature verified. */
  failedRules: { rule: string; reason: string }[];
  /** True only when the receipt is valid, its verdict ALLOWED and its admissibility ACCEPTED. */
  proceed: boolean;
  /** Why `proceed` is what it is, in one sentence. */
  reason: string;
}

type Json = Record<string, unknown>;
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** Failed rules as text: `min_sources (2 admissible sources, minimum 5), …`. */
export const describeRules = (rules: { rule: string; reason: string }[]): string =>
  rules.map((r) => (r.reason ? `${r.rule} (${r.reason})` : r.rule)).join(', ');

/**
 * The decision a verified receipt carries. A valid receipt is authentic, not a go-ahead: a
 * BLOCKED receipt verifies as well as an ALLOWED one. Only what the signature covers is read,
 * and nothing counts as a go-ahead unless the whole receipt is valid.
 */
export function decisionOf(receipt: unknown, result: VerifyResult): Decision {
  const signed = result.checks.some((c) => c.name === 'signature_valid' && c.status === 'PASS');
  const r: Json = signed && isObject(receipt) ? receipt : {};
  const policy = isObject(r.policy) ? r.policy : {};
  const verdict = str(policy.verdict);
  const admissibility = isObject(r.admissibility) ? str(r.admissibility.status) : null;
  const failedRules = (Array.isArray(policy.checks) ? policy.checks : [])
    .filter(isObject)
    .map((c) => ({ rule: str(c.rule) ?? '?', reason: str(c.reason) ?? '' }));
  const base = { verdict, admissibility, failedRules };
  if (!result.valid)
    return {
      ...base,
      proceed: false,
      reason: signed
        ? 'the receipt is not valid (a check failed), so its verdict cannot be relied on'
        : 'the receipt is not valid: its signature did not verify under the trusted key, so it says nothing',
    };
  if (proceeds(verdict, admissibility))
    return {
      ...base,
      proceed: true,
      reason: 'the signed verdict is ALLOWED and admissibility ACCEPTED',
    };
  const why =
    failedRules.length > 0
      ? `; failed rules: ${describeRules(failedRules)}`
      : isObject(r.admissibility) && str(r.admissibility.reason)
        ? `; ${str(r.admissibility.reason)}`
        : '';
  return {
    ...base,
    proceed: false,
    reason: `the signed verdict is ${verdict ?? 'missing'} and admissibility ${admissibility ?? 'missing'}, not ALLOWED and ACCEPTED${why}`,
  };
}

/** The key_ids a receipt's Ed25519 attestations name: to say which key signed when it is not ours. */
export function attestationKeyIds(receipt: unknown): string[] {
  const attestations =
    typeof receipt === 'object' && receipt !== null
      ? (receipt as { attestations?: unknown }).attestations
      : undefined;
  if (!Array.isArray(attestations)) return [];
  return attestations.flatMap((a: unknown) => {
    const keyId = (a as { key_id?: unknown } | null)?.key_id;
    return typeof keyId === 'string' ? [keyId] : [];
  });
}

const SUBMITTER = /^(?:kid_[0-9A-HJKMNP-TV-Z]{26}|github_app:\d+:\d+)$/;

/**
 * Expectations as a person types them (flags, workflow inputs), checked for form so a typo
 * is a usage error rather than a policy_binding FAIL that looks like a forged receipt.
 * Empty strings mean "not stated".
 */
export function parseExpectations(input: {
  policy?: string | undefined;
  configHash?: string | undefined;
  submitter?: string | undefined;
  /** A disposition's signed reviewer id (at most 256 characters, as the API takes it). */
  reviewer?: string | undefined;
}): VerifyExpectations {
  const expect: VerifyExpectations = {};
  const policy = input.policy?.trim();
  const configHash = input.configHash?.trim();
  const submitter = input.submitter?.trim();
  if (policy) expect.policy = policy;
  if (configHash) {
    if (!HASH_PATTERN.test(configHash))
      throw new VerifyError(
        'validation_failed',
        `expected config hash must be "sha256:" followed by 64 lowercase hex digits, got ${JSON.stringify(configHash)}`,
      );
    expect.configHash = configHash;
  }
  if (submitter) {
    if (!SUBMITTER.test(submitter))
      throw new VerifyError(
        'validation_failed',
        `expected submitter must be an API key's kid_<ULID> or github_app:<app_id>:<installation_id>, got ${JSON.stringify(submitter)}`,
      );
    expect.submitter = submitter;
  }
  const reviewer = input.reviewer?.trim();
  if (reviewer) {
    if (reviewer.length > 256)
      throw new VerifyError(
        'validation_failed',
        `expected reviewer must be at most 256 characters, got ${reviewer.length}`,
      );
    expect.reviewer = reviewer;
  }
  return expect;
}

/**
 * The key of `trusted` (the pinned key and those reached from it by signed transitions) to
 * check a receipt against, with the refusal when that key did not sign the receipt's sequence
 * or is revoked at or before it. A receipt naming none of them is checked against the newest
 * trusted key, and fails as signed by no trusted key.
 */
export function keyFromHistory(
  receipt: unknown,
  trusted: readonly TrustedKey[],
): { key: PublicKey; keyRefusal?: string } {
  const { key, refusal } = keyForReceipt(receipt, trusted);
  const chosen = key ?? trusted[trusted.length - 1]!;
  return { key: { raw: chosen.raw, keyId: chosen.keyId }, keyRefusal: refusal };
}
