import { canonicalize, HASH_PATTERN, hashText, type Sha256Hex } from './canonical.js';
import { type Ed25519Verify, verifyEd25519Strict } from './ed25519.js';
import { fromBase64, utf8Bytes } from './encoding.js';
import {
  contractOf,
  declaresDisposition,
  declaresOutcome,
  parentLinkOf,
  RAN_WITHOUT_ALLOW,
  RECEIPT_CORE_V2,
  RECEIPT_ID_PATTERN,
  receiptHashText,
  signedCoreOf,
  signedFieldsOf,
  SOURCE_TYPES,
  type SignedPosition,
  type Submitter,
} from './receipt-contract.js';
import { checkInclusion, type InclusionEvidence } from './tlog/receipt-inclusion.js';
import { isObject } from './json.js';
import type { CheckName, VerifyCheck } from './verify-check.js';

export {
  CHECK_NAMES,
  type CheckLayer,
  type CheckName,
  type CheckStatus,
  type VerifyCheck,
} from './verify-check.js';

/** What a relying party requires of a receipt (contract §8); each member optional. */
export interface VerifyExpectations {
  /** The policy name the receipt must have been evaluated under. */
  policy?: string;
  /** The `policy.config_hash` it must carry. */
  configHash?: string;
  /** The submitter: an API key's `kid_<ULID>`, or `github_app:<app_id>:<installation_id>`. */
  submitter?: string;
  /**
   * For a disposition (contract §11): the `reviewer.id` it signs. Who recorded it is the
   * submitter: pin that too, since a reviewer key names the reviewer it likes.
   */
  reviewer?: string;
}

/** The signed statements of a receipt whose signature verified; v1 signs no policy identity. */
export interface SignedFacts {
  contract: string;
  submitter: Submitter | null;
  policy: { name: string; config_hash: string; overrides: boolean } | null;
  position: SignedPosition | null;
}

export interface VerifyResult {
  valid: boolean;
  receipt_id: string | null;
  admissibility: string | null;
  verification_depth: 'cryptographic';
  checks: VerifyCheck[];
  /** Reported only when `signature_valid` passed: then these members are what the key signed. */
  signed: SignedFacts | null;
}

export type { Ed25519Verify } from './ed25519.js';

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
  /**
   * The ledger's stored `chain.receipt_hash` of the receipt at `position.sequence - 1`: a
   * string when found, null when the ledger does not hold it, undefined when not consulted.
   */
  previousLedgerHash?: string | null;
  /** The ledger's origin; when given, a v2 receipt's `position.log` must equal it. */
  logOrigin?: string;
  /** Defaults to the portable SHA-256; the server passes node:crypto's. */
  sha256Hex?: Sha256Hex;
  expect?: VerifyExpectations;
  /**
   * Why the signing key may not vouch for this receipt (key history, contract §9): a key that
   * did not sign its sequence, or was revoked at or before it. Set, it fails signature_valid.
   */
  keyRefusal?: string;
  /**
   * The receipt's inclusion proof and the keys its checkpoint may be signed by: given, the
   * `inclusion` check (ledger layer) is run; absent, there is no such check.
   */
  inclusion?: InclusionEvidence;
  /**
   * A disposition's parent (contract §11), for `parent_link`: its receipt_id and
   * chain.receipt_hash (the ledger's, or recomputed from a parent receipt that verified), or
   * why there is none; undefined when the parent was not consulted (then UNVERIFIED).
   */
  parent?: ParentEvidence;
}

/** What a verifier knows of a disposition's parent: the parent, or why it has none. */
export type ParentEvidence = { receiptId: string; receiptHash: string } | { missing: string };

type Json = Record<string, unknown>;
const isString = (v: unknown): v is string => typeof v === 'string';
const oneOf = (v: unknown, values: readonly string[]) => isString(v) && values.includes(v);
const sourceTypes: readonly string[] = SOURCE_TYPES;

const STRUCTURE: [name: CheckName, test: (r: Json) => string | null][] = [
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
  const v2 = contractOf(receipt) === RECEIPT_CORE_V2;
  const structure = v2
    ? [...STRUCTURE, ...STRUCTURE_V2, NO_UNSIGNED_MEMBERS]
    : [...STRUCTURE, NO_UNSIGNED_MEMBERS];
  if (declaresOutcome(receipt)) structure.push(OUTCOME_VALID);
  const checks: VerifyCheck[] = structure.map(([name, test]) => {
    const problem = test(receipt);
    return problem
      ? { name, layer: 'structural', status: 'FAIL', detail: problem }
      : { name, layer: 'structural', status: 'PASS' };
  });
  const { check: signature, coreText } = checkSignature(receipt, options);
  checks.push(signature);
  // Computed once for both ledger checks. The v2 receipt hash covers the signed core: its
  // canonical text is reused, not redone.
  const text = ownHashText(receipt, v2 ? coreText : undefined);
  const own: OwnHash =
    'text' in text ? { hash: hashText(text.text, options.sha256Hex) } : { error: text.error };
  checks.push(checkHashIntegrity(own, options.ledgerHash));
  checks.push(v2 ? checkLinkageV2(receipt, options, own) : LINKAGE_V1);
  // The inclusion check's leaf hashes the same preimage: made once.
  if (options.inclusion)
    checks.push(checkInclusion(receipt, options.inclusion, 'text' in text ? text.text : undefined));
  if (declaresDisposition(receipt) || declaresOutcome(receipt))
    checks.push(checkParentLink(receipt, options.parent));
  const facts = signature.status === 'PASS' ? signedFactsOf(receipt) : null;
  checks.push(checkPolicyBinding(facts, options.expect, receipt));
  const status = (name: CheckName) => checks.find((c) => c.name === name)?.status;
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
    signed: facts,
  };
}

const LINKAGE_V1: VerifyCheck = {
  name: 'chain_linkage',
  layer: 'ledger',
  status: 'UNVERIFIED',
  detail:
    'receipt-core-v1 does not sign chain coordinates; sequence needs an independently kept ledger head',
};

const isSafePositive = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 1;
const isHashOrNull = (v: unknown) => v === null || (isString(v) && HASH_PATTERN.test(v));

// Members receipt-core-v2 adds; checked only for receipts that declare v2.
const STRUCTURE_V2: [name: CheckName, test: (r: Json) => string | null][] = [
  [
    'submitter_present',
    (r) => (submitterOf(r.submitter) ? null : 'submitter missing or malformed'),
  ],
  [
    'position_present',
    (r) =>
      positionOf(r.position)
        ? null
        : 'position.log, sequence or previous_receipt_hash missing or malformed',
  ],
];

// Outside the signed core by design (contract §3): the signatures themselves, and the chain
// coordinates that hash_integrity and chain_linkage check.
const UNSIGNED_MEMBERS: readonly string[] = ['attestations', 'chain'];
const CHAIN_MEMBERS: readonly string[] = ['sequence', 'previous_receipt_hash', 'receipt_hash'];

/** Member names as a detail shows them: attacker-controlled, so quoted, shortened and counted. */
function listNames(names: string[]): string {
  const shown = names
    .slice(0, 5)
    .map((n) => JSON.stringify(n.length > 64 ? `${n.slice(0, 64)}…` : n));
  return names.length > 5 ? `${shown.join(', ')} and ${names.length - 5} more` : shown.join(', ');
}

// A signature covers only the members signed_fields names. Anything else beside them — a
// `decision: {proceed: true}` or `verdict: "ALLOWED"` added to a BLOCKED receipt — would be
// read by a careless consumer as part of what was signed: such a receipt is not valid.
const NO_UNSIGNED_MEMBERS: [name: CheckName, test: (r: Json) => string | null] = [
  'no_unsigned_members',
  (r) => {
    const signed = signedFieldsOf(r);
    if (!signed) return 'signed_fields declares no known contract, so no member can be told signed';
    const extra = Object.keys(r).filter(
      (k) => !signed.includes(k) && !UNSIGNED_MEMBERS.includes(k),
    );
    const chainExtra = isObject(r.chain)
      ? Object.keys(r.chain).filter((k) => !CHAIN_MEMBERS.includes(k))
      : [];
    const problems = [
      ...(extra.length > 0
        ? [`members neither signed nor attestations or chain: ${listNames(extra)}`]
        : []),
      ...(chainExtra.length > 0
        ? [
            `chain members other than sequence, previous_receipt_hash and receipt_hash: ${listNames(chainExtra)}`,
          ]
        : []),
    ];
    return problems.length > 0 ? problems.join('; ') : null;
  },
];

function submitterOf(value: unknown): Submitter | null {
  if (!isObject(value)) return null;
  if (value.kind === 'api_key' && isString(value.key_id))
    return { kind: 'api_key', key_id: value.key_id };
  if (
    value.kind === 'github_app' &&
    Number.isSafeInteger(value.app_id) &&
    Number.isSafeInteger(value.installation_id)
  ) {
    return {
      kind: 'github_app',
      app_id: value.app_id as number,
      installation_id: value.installation_id as number,
    };
  }
  return null;
}

function positionOf(value: unknown): SignedPosition | null {
  if (!isObject(value)) return null;
  const { log, sequence, previous_receipt_hash } = value;
  if (!isString(log) || !isSafePositive(sequence) || !isHashOrNull(previous_receipt_hash))
    return null;
  if ((sequence === 1) !== (previous_receipt_hash === null)) return null;
  return { log, sequence, previous_receipt_hash: previous_receipt_hash as string | null };
}

function signedFactsOf(receipt: Json): SignedFacts {
  const contract = contractOf(receipt)!;
  const policy = isObject(receipt.policy) ? receipt.policy : {};
  const v2 = contract === RECEIPT_CORE_V2;
  return {
    contract,
    submitter: v2 ? submitterOf(receipt.submitter) : null,
    policy:
      v2 &&
      isString(policy.name) &&
      isString(policy.config_hash) &&
      typeof policy.overrides === 'boolean'
        ? { name: policy.name, config_hash: policy.config_hash, overrides: policy.overrides }
        : null,
    position: v2 ? positionOf(receipt.position) : null,
  };
}

/** The display form of a submitter that expectations compare against. */
export const submitterLabel = (submitter: Submitter): string =>
  submitter.kind === 'api_key'
    ? submitter.key_id
    : `github_app:${submitter.app_id}:${submitter.installation_id}`;

function checkLinkageV2(receipt: Json, options: VerifyOptions, own: OwnHash): VerifyCheck {
  const name = 'chain_linkage';
  const fail = (detail: string): VerifyCheck => ({ name, layer: 'ledger', status: 'FAIL', detail });
  const position = positionOf(receipt.position);
  if (!position) return fail('position is missing or malformed');
  const chain = isObject(receipt.chain) ? receipt.chain : {};
  if (chain.sequence !== position.sequence)
    return fail(
      `chain.sequence ${String(chain.sequence)} differs from the signed position ${position.sequence}`,
    );
  if (chain.previous_receipt_hash !== position.previous_receipt_hash)
    return fail('chain.previous_receipt_hash differs from the signed position');
  // Third parties chain receipts by this member: it must be this receipt's own hash.
  if (!('hash' in own) || chain.receipt_hash !== own.hash)
    return fail('chain.receipt_hash is not the hash of this receipt ({core, attestations})');
  if (options.logOrigin !== undefined && position.log !== options.logOrigin)
    return fail(
      `position.log ${JSON.stringify(position.log)} is not this ledger (${JSON.stringify(options.logOrigin)})`,
    );
  const previous = options.previousLedgerHash;
  if (position.sequence > 1 && isString(previous) && previous !== position.previous_receipt_hash)
    return fail(
      `the ledger's receipt ${position.sequence - 1} has hash ${previous}, not the signed previous_receipt_hash`,
    );
  const pass = (detail?: string): VerifyCheck =>
    detail
      ? { name, layer: 'ledger', status: 'PASS', detail }
      : { name, layer: 'ledger', status: 'PASS' };
  if (position.sequence === 1 || isString(previous)) return pass();
  return pass(
    previous === null
      ? `the ledger does not hold receipt ${position.sequence - 1}; position checked against chain only`
      : 'no ledger consulted; position checked against chain only',
  );
}

const OUTCOME_STATUSES: readonly string[] = ['succeeded', 'failed'];
const OUTCOME_MEMBERS: readonly string[] = [
  'parent_receipt_id',
  'parent_receipt_hash',
  'status',
  'exit_code',
  'output_digest',
];

/** Whether a receipt's checks hold a failed `ran_without_allow` and its verdict is BLOCKED. */
const ranWithoutAllow = (r: Json): boolean =>
  isObject(r.policy) &&
  r.policy.verdict === 'BLOCKED' &&
  Array.isArray(r.policy.checks) &&
  r.policy.checks.some((c) => isObject(c) && c.rule === RAN_WITHOUT_ALLOW && c.passed === false);

// An outcome (contract §12): what the harness reported after a call, linked to the decision.
// One that names no decision (none was found) says the call ran without an allow, so its own
// verdict must say so: BLOCKED by ran_without_allow.
const OUTCOME_VALID: [name: CheckName, test: (r: Json) => string | null] = [
  'outcome_valid',
  (r) => {
    const o = r.outcome;
    if (!isObject(o)) return 'outcome missing or not an object';
    const extra = Object.keys(o).filter((k) => !OUTCOME_MEMBERS.includes(k));
    if (extra.length > 0)
      return `outcome members the contract does not define: ${listNames(extra)}`;
    if (!oneOf(o.status, OUTCOME_STATUSES)) return 'outcome.status is not succeeded or failed';
    if (o.exit_code !== undefined && !Number.isSafeInteger(o.exit_code))
      return 'outcome.exit_code is not an integer';
    if (
      o.output_digest !== undefined &&
      !(isString(o.output_digest) && HASH_PATTERN.test(o.output_digest))
    )
      return 'outcome.output_digest is not "sha256:" and 64 lowercase hex digits';
    if (o.parent_receipt_id === null && o.parent_receipt_hash === null)
      return ranWithoutAllow(r)
        ? null
        : 'an outcome that names no decision must be BLOCKED by a failed ran_without_allow';
    return null;
  },
];

/**
 * `parent_link` of a disposition or an outcome: the parent exists and has the hash the link
 * signs. An outcome that names no decision (a call svc never decided) has no link to check.
 */
function checkParentLink(receipt: Json, parent: ParentEvidence | undefined): VerifyCheck {
  const name = 'parent_link';
  const fail = (detail: string): VerifyCheck => ({ name, layer: 'ledger', status: 'FAIL', detail });
  const found = parentLinkOf(receipt);
  const link = isObject(found) ? found : null;
  if (
    declaresOutcome(receipt) &&
    link &&
    link.parent_receipt_id === null &&
    link.parent_receipt_hash === null
  )
    return {
      name,
      layer: 'ledger',
      status: 'SKIPPED',
      detail: 'the outcome names no decision: svc recorded no decision for the call it reports',
    };
  if (
    !link ||
    !isString(link.parent_receipt_id) ||
    !RECEIPT_ID_PATTERN.test(link.parent_receipt_id) ||
    !isString(link.parent_receipt_hash) ||
    !HASH_PATTERN.test(link.parent_receipt_hash)
  )
    return fail(
      `${declaresOutcome(receipt) ? 'outcome' : 'disposition'}.parent_receipt_id or parent_receipt_hash missing or malformed`,
    );
  if (parent === undefined)
    return {
      name,
      layer: 'ledger',
      status: 'UNVERIFIED',
      detail: `the parent receipt ${link.parent_receipt_id} was not given, so the link to it is not checked`,
    };
  if ('missing' in parent) return fail(parent.missing);
  if (parent.receiptId !== link.parent_receipt_id)
    return fail(
      `the parent given is ${JSON.stringify(parent.receiptId)}, not ${JSON.stringify(link.parent_receipt_id)}`,
    );
  return parent.receiptHash === link.parent_receipt_hash
    ? { name, layer: 'ledger', status: 'PASS' }
    : fail(
        `the parent's receipt hash is ${parent.receiptHash}, not the signed parent_receipt_hash ${link.parent_receipt_hash}`,
      );
}

/** The reviewer id a receipt signs: only a disposition's, declared in its signed fields. */
function signedReviewerOf(receipt: Json): string | null {
  if (!declaresDisposition(receipt) || !isObject(receipt.disposition)) return null;
  const reviewer = receipt.disposition.reviewer;
  return isObject(reviewer) && isString(reviewer.id) ? reviewer.id : null;
}

function checkPolicyBinding(
  facts: SignedFacts | null,
  expect: VerifyExpectations | undefined,
  receipt: Json,
): VerifyCheck {
  const name = 'policy_binding';
  const stated = Object.entries(expect ?? {}).filter(([, v]) => v !== undefined);
  if (stated.length === 0)
    return { name, layer: 'cryptographic', status: 'SKIPPED', detail: 'no expectation stated' };
  const fail = (detail: string): VerifyCheck => ({
    name,
    layer: 'cryptographic',
    status: 'FAIL',
    detail,
  });
  if (!facts) return fail('the signature did not verify, so nothing signed can be compared');
  if (facts.contract !== RECEIPT_CORE_V2)
    return fail(`${facts.contract} signs neither the policy nor the submitter`);
  const problems: string[] = [];
  if (expect?.policy !== undefined && facts.policy?.name !== expect.policy)
    problems.push(
      `policy ${JSON.stringify(facts.policy?.name)} is not the expected ${JSON.stringify(expect.policy)}`,
    );
  if (expect?.configHash !== undefined && facts.policy?.config_hash !== expect.configHash)
    problems.push(
      `config_hash ${facts.policy?.config_hash ?? 'missing'} is not the expected ${expect.configHash}`,
    );
  if (expect?.submitter !== undefined) {
    const actual = facts.submitter ? submitterLabel(facts.submitter) : null;
    if (actual !== expect.submitter)
      problems.push(
        `submitter ${JSON.stringify(actual)} is not the expected ${JSON.stringify(expect.submitter)}`,
      );
  }
  if (expect?.reviewer !== undefined) {
    const actual = signedReviewerOf(receipt);
    if (actual === null) problems.push('not a disposition: it signs no reviewer');
    else if (actual !== expect.reviewer)
      problems.push(
        `reviewer ${JSON.stringify(actual)} is not the expected ${JSON.stringify(expect.reviewer)}`,
      );
  }
  return problems.length > 0
    ? fail(problems.join('; '))
    : { name, layer: 'cryptographic', status: 'PASS' };
}

function checkSignature(
  receipt: Json,
  options: VerifyOptions,
): { check: VerifyCheck; coreText?: string } {
  const fail = (detail: string) => ({
    check: { name: 'signature_valid', layer: 'cryptographic', status: 'FAIL', detail } as const,
  });
  const core = signedCoreOf(receipt);
  if (!core)
    return fail(
      'signed_fields must declare receipt-core-v1 or receipt-core-v2 with its exact field list, and every listed member must be present',
    );
  if (options.keyRefusal !== undefined) return fail(options.keyRefusal);
  const attestations = Array.isArray(receipt.attestations)
    ? receipt.attestations.filter(isObject)
    : [];
  const attestation = attestations.find(
    (a) => a.algorithm === 'Ed25519' && a.key_id === options.keyId,
  );
  if (!attestation) return fail(`no Ed25519 attestation by key ${options.keyId}`);
  const signature = isString(attestation.signature) ? fromBase64(attestation.signature) : null;
  if (!signature || signature.length !== 64) return fail('signature is not the base64 of 64 bytes');
  let coreText: string;
  try {
    coreText = canonicalize(core);
  } catch (error) {
    return fail(`signed core has no canonical form: ${(error as Error).message}`);
  }
  const verify = options.verifySignature ?? verifyEd25519Strict;
  return verify(signature, utf8Bytes(coreText), options.publicKey)
    ? { check: { name: 'signature_valid', layer: 'cryptographic', status: 'PASS' }, coreText }
    : { ...fail('Ed25519 signature does not verify over the signed core'), coreText };
}

/** The receipt's own `chain.receipt_hash`, or why it has none. */
type OwnHash = { hash: string } | { error: string };

/** The preimage of chain.receipt_hash, from the signed core's canonical text when given. */
function ownHashText(receipt: Json, coreText?: string): { text: string } | { error: string } {
  try {
    return { text: receiptHashText(receipt, coreText) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

function checkHashIntegrity(own: OwnHash, ledgerHash: string | null | undefined): VerifyCheck {
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
  if ('error' in own)
    return {
      name,
      layer: 'ledger',
      status: 'FAIL',
      detail: `receipt has no canonical form: ${own.error}`,
    };
  return own.hash === ledgerHash
    ? { name, layer: 'ledger', status: 'PASS' }
    : {
        name,
        layer: 'ledger',
        status: 'FAIL',
        detail: `recomputed ${own.hash} differs from the ledger's ${ledgerHash}`,
      };
}
