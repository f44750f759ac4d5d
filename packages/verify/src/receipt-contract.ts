import { canonicalize, hashText, portableSha256Hex, type Sha256Hex } from './canonical.js';

// What the receipt contract fixes for every verifier: the contracts and their signed members,
// the receipt id's form, the source types evidence may name, and the preimage of
// chain.receipt_hash. Building and signing receipts is the service's own, not the package's.

export const RECEIPT_CORE_V1 = 'receipt-core-v1';
export const SIGNED_FIELDS_V1 = [
  'receipt_id',
  'issued_at',
  'claim_id',
  'admissibility',
  'subject',
  'evidence',
  'replay',
  'policy',
  'signed_fields',
] as const;
export const RECEIPT_CORE_V2 = 'receipt-core-v2';
export const SIGNED_FIELDS_V2 = [...SIGNED_FIELDS_V1, 'submitter', 'position'] as const;
/** A disposition receipt (contract §11): receipt-core-v2 with its `disposition` signed too. */
export const SIGNED_FIELDS_DISPOSITION = [...SIGNED_FIELDS_V2, 'disposition'] as const;
/** An outcome receipt (contract §12): receipt-core-v2 with its `outcome` signed too. */
export const SIGNED_FIELDS_OUTCOME = [...SIGNED_FIELDS_V2, 'outcome'] as const;
/** The rule of an outcome receipt: failed when the call it reports had no ALLOWED decision. */
export const RAN_WITHOUT_ALLOW = 'ran_without_allow';
export const RECEIPT_ID_PATTERN =
  /^dr-(?:[0-9A-HJKMNP-TV-Z]{26}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** The source types a claim may cite, and so the values `evidence.source_types` may hold. */
export const SOURCE_TYPES = [
  'scm',
  'ci',
  'agent_trace',
  'code_review',
  'test_result',
  'policy_check',
  'human_approval',
  'model_output',
  'runtime_log',
  'infrastructure',
  'manual',
] as const;

/** receipt-core-v2: who asked for the receipt. */
export type Submitter =
  | { kind: 'api_key'; key_id: string }
  | { kind: 'github_app'; app_id: number; installation_id: number };

/** receipt-core-v2: the chain position, signed; equal to the same members of `chain`. */
export interface SignedPosition {
  log: string;
  sequence: number;
  previous_receipt_hash: string | null;
}

/** The members `chain.receipt_hash` covers; a receipt of any contract has them. */
export interface HashedMembers {
  evidence?: unknown;
  policy?: unknown;
  replay?: unknown;
  attestations?: unknown;
}

/**
 * The canonical text whose SHA-256 is `chain.receipt_hash`: for `receipt-core-v2`
 * JCS({core, attestations}) (contract §8), else JCS of evidence, policy, replay and
 * attestations (§4). It is also the receipt's leaf data in the ledger's Merkle tree (§9).
 * Throws when a v2 receipt lacks a member of its core.
 */
export function receiptHashText(receipt: HashedMembers, coreText?: string): string {
  const record = receipt as Record<string, unknown>;
  if ((record.signed_fields as { contract?: unknown } | undefined)?.contract === RECEIPT_CORE_V2) {
    // A verifier that canonicalized the core for the signature passes that text in.
    if (coreText !== undefined) return v2HashText(coreText, receipt.attestations);
    const core = signedCoreOf(record);
    if (!core) throw new TypeError('receipt-core-v2 receipt without its declared core');
    return canonicalize({ core, attestations: receipt.attestations });
  }
  return canonicalize({
    evidence: receipt.evidence,
    policy: receipt.policy,
    replay: receipt.replay,
    attestations: receipt.attestations,
  });
}

/** `chain.receipt_hash`: "sha256:" + the hex SHA-256 of `receiptHashText`. */
export function receiptHash(
  receipt: HashedMembers,
  options: { sha256Hex?: Sha256Hex; coreText?: string } = {},
): string {
  return hashText(
    receiptHashText(receipt, options.coreText),
    options.sha256Hex ?? portableSha256Hex,
  );
}

// JCS of {core, attestations} is the two canonical texts under sorted keys ("attestations"
// sorts before "core"), so the already canonical core text is spliced in, not recomputed.
/** `receiptHashText` of a v2 receipt from its core's canonical text and its attestations. */
export const v2HashText = (coreText: string, attestations: unknown): string =>
  `{"attestations":${canonicalize(attestations)},"core":${coreText}}`;

// The exact field lists each contract allows: receipt-core-v2 also signs a disposition's link.
const CONTRACT_FIELDS: Readonly<Record<string, readonly (readonly string[])[]>> = {
  [RECEIPT_CORE_V1]: [SIGNED_FIELDS_V1],
  [RECEIPT_CORE_V2]: [SIGNED_FIELDS_V2, SIGNED_FIELDS_DISPOSITION, SIGNED_FIELDS_OUTCOME],
};

/** The declared contract and field list, when they are a known contract's exact list. */
function declarationOf(
  receipt: Record<string, unknown>,
): { contract: string; fields: readonly string[] } | null {
  const declared = receipt.signed_fields as { contract?: unknown; fields?: unknown } | undefined;
  if (typeof declared !== 'object' || declared === null || !Array.isArray(declared.fields))
    return null;
  const lists =
    typeof declared.contract === 'string' && Object.hasOwn(CONTRACT_FIELDS, declared.contract)
      ? CONTRACT_FIELDS[declared.contract]!
      : [];
  const fields = declared.fields as unknown[];
  const expected = lists.find(
    (list) => fields.length === list.length && fields.every((f, i) => f === list[i]),
  );
  return expected ? { contract: declared.contract as string, fields: expected } : null;
}

/** The contract a receipt declares, when it is one this code knows with its exact field list. */
export function contractOf(receipt: Record<string, unknown>): string | null {
  return declarationOf(receipt)?.contract ?? null;
}

/** The members a receipt declares signed, when the declaration is a known contract's exact list. */
export function signedFieldsOf(receipt: Record<string, unknown>): readonly string[] | null {
  return declarationOf(receipt)?.fields ?? null;
}

/** Whether a receipt declares itself a disposition (contract §11): it signs `disposition`. */
export const declaresDisposition = (receipt: Record<string, unknown>): boolean =>
  signedFieldsOf(receipt)?.includes('disposition') ?? false;

/** Whether a receipt declares itself an outcome (contract §12): it signs `outcome`. */
export const declaresOutcome = (receipt: Record<string, unknown>): boolean =>
  signedFieldsOf(receipt)?.includes('outcome') ?? false;

/**
 * The signed member that links a receipt to its parent: a disposition's `disposition` or an
 * outcome's `outcome` (both carry parent_receipt_id and parent_receipt_hash); null for a
 * receipt that declares neither.
 */
export function parentLinkOf(receipt: Record<string, unknown>): unknown {
  if (declaresDisposition(receipt)) return receipt.disposition ?? null;
  if (declaresOutcome(receipt)) return receipt.outcome ?? null;
  return null;
}

/** Picks the members a receipt declares signed; null when the declaration is not a known one. */
export function signedCoreOf(receipt: Record<string, unknown>): Record<string, unknown> | null {
  const fields = signedFieldsOf(receipt);
  if (!fields) return null;
  const core: Record<string, unknown> = {};
  for (const field of fields) {
    if (!Object.hasOwn(receipt, field)) return null;
    core[field] = receipt[field];
  }
  return core;
}

/**
 * The one outcome a gate may go on with: the verdict ALLOWED with the admissibility ACCEPTED.
 * Anything else stops it — BLOCKED, ESCALATED, or ALLOWED on evidence that did not replay. For
 * a receipt, only a valid one's signed values count (`decisionOf`).
 */
export const proceeds = (verdict: unknown, admissibility: unknown): boolean =>
  verdict === 'ALLOWED' && admissibility === 'ACCEPTED';
