// One check of a verification report: its own module so that the checks run elsewhere
// (tlog/receipt-inclusion.ts) name their result type without importing verify.ts, which
// imports them.

export type CheckStatus = 'PASS' | 'FAIL' | 'UNVERIFIED' | 'SKIPPED';
export type CheckLayer = 'structural' | 'cryptographic' | 'ledger';

/**
 * The names of the checks a verification reports, in report order: a closed set, like
 * sigstore-js's error codes, so a consumer comparing `check.name` with a name that is not one
 * fails to compile. A new check adds its name here.
 */
export const CHECK_NAMES = [
  // structural
  'receipt_id_valid',
  'admissibility_present',
  'replay_present',
  'policy_present',
  'evidence_present',
  'attestation_present',
  'submitter_present',
  'position_present',
  'no_unsigned_members',
  'outcome_valid',
  // cryptographic and ledger
  'signature_valid',
  'hash_integrity',
  'chain_linkage',
  'inclusion',
  'parent_link',
  'policy_binding',
] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

export interface VerifyCheck {
  name: CheckName;
  layer: CheckLayer;
  status: CheckStatus;
  detail?: string;
}
