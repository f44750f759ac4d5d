import { HASH_PATTERN } from './canonical.js';
import { SvcError } from './errors.js';
import type { PublicKey } from './public-key.js';
import { verifyReceipt, type VerifyExpectations, type VerifyResult } from './verify.js';

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
): VerifyResult {
  const result = verifyReceipt(receipt, { publicKey: key.raw, keyId: key.keyId, expect });
  const status = (name: string) => result.checks.find((c) => c.name === name)?.status;
  return {
    ...result,
    valid: result.checks.every((c) => c.status !== 'FAIL') && status('signature_valid') === 'PASS',
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
}): VerifyExpectations {
  const expect: VerifyExpectations = {};
  const policy = input.policy?.trim();
  const configHash = input.configHash?.trim();
  const submitter = input.submitter?.trim();
  if (policy) expect.policy = policy;
  if (configHash) {
    if (!HASH_PATTERN.test(configHash))
      throw new SvcError(
        'validation_failed',
        `expected config hash must be "sha256:" followed by 64 lowercase hex digits, got ${JSON.stringify(configHash)}`,
      );
    expect.configHash = configHash;
  }
  if (submitter) {
    if (!SUBMITTER.test(submitter))
      throw new SvcError(
        'validation_failed',
        `expected submitter must be an API key's kid_<ULID> or github_app:<app_id>:<installation_id>, got ${JSON.stringify(submitter)}`,
      );
    expect.submitter = submitter;
  }
  return expect;
}
