import {
  canonicalBytes,
  canonicalize,
  hashText,
  portableSha256Hex,
  RECEIPT_CORE_V1,
  RECEIPT_CORE_V2,
  receiptHash,
  SIGNED_FIELDS_V1,
  SIGNED_FIELDS_V2,
  toBase64,
  utf8Bytes,
  v2HashText,
  type Sha256Hex,
} from '@svc/verify';
import type { ClaimInput } from './claim-schema.js';
import type { z } from 'zod';
import type { Evaluation } from './evaluation.js';
import type { Verdict } from './policy.js';
import type {
  attestationSchema,
  chainPositionSchema,
  receiptCoreSchema,
  receiptSchema,
  signedPositionSchema,
  subjectSchema,
  submitterSchema,
} from './receipt-schema.js';

export const SIGNER_NAME = 'svc-server';
export type PolicyStatus = 'PASS' | 'FAIL' | 'ESCALATE';

export type Subject = z.infer<typeof subjectSchema>;
export type Attestation = z.infer<typeof attestationSchema>;
export type ChainPosition = z.infer<typeof chainPositionSchema>;
export type Submitter = z.infer<typeof submitterSchema>;
export type SignedPosition = z.infer<typeof signedPositionSchema>;
/** What receipt-core-v2 signs about the policy besides the outcome. */
export interface AppliedPolicy {
  name: string;
  config_hash: string;
  overrides: boolean;
}
/** The members a `receipt-core-v1` signature covers. */
export type ReceiptCore = z.infer<typeof receiptCoreSchema>;
export type Receipt = z.infer<typeof receiptSchema>;

export type UnchainedReceipt = Omit<Receipt, 'chain'>;

export interface ChainHead {
  sequence: number;
  receipt_hash: string | null;
}

/** What signs: the server's node:crypto key on the hot path, any Ed25519 key in tests. */
export interface ReceiptSigner {
  readonly keyId: string;
  sign(message: Uint8Array): Uint8Array;
}

const POLICY_STATUS: Record<Verdict, PolicyStatus> = {
  ALLOWED: 'PASS',
  BLOCKED: 'FAIL',
  ESCALATED: 'ESCALATE',
};

export function buildSubject(claim: ClaimInput): Subject {
  const a = claim.action;
  const subject: Subject = {
    entity: claim.entity,
    agent: a?.agent,
    repository: a?.repository,
    pull_request: a?.pull_request === undefined ? undefined : pullRequestNumber(a.pull_request),
    action_type: a?.action_type,
    target_system: a?.target_system,
    commit: a?.commit,
    branch: a?.branch,
    environment: a?.environment,
  };
  // Members the claim does not supply are omitted, not null (contract §2).
  for (const key of Object.keys(subject) as (keyof Subject)[]) {
    if (subject[key] === undefined) delete subject[key];
  }
  return subject;
}

// Digits beyond the exact integer range stay a string: contract §1 refuses such numbers.
/** A pull request as the subject records it: a string of digits becomes a number. */
export const pullRequestNumber = (value: string | number): string | number =>
  typeof value === 'string' && /^\d+$/.test(value) && Number.isSafeInteger(Number(value))
    ? Number(value)
    : value;

export function buildReceiptCore(input: {
  receiptId: string;
  issuedAt: string;
  claim: ClaimInput;
  evaluation: Evaluation;
}): ReceiptCore {
  const { claim, evaluation } = input;
  return {
    receipt_id: input.receiptId,
    issued_at: input.issuedAt,
    claim_id: claim.claim_id,
    admissibility: { ...evaluation.admissibility },
    subject: buildSubject(claim),
    evidence: {
      inputs_hash: evaluation.inputs_hash,
      source_count: claim.sources.length,
      source_types: [...new Set(claim.sources.map((s) => s.type))].sort(),
    },
    replay: {
      deterministic: evaluation.replay.deterministic,
      replay_hash: evaluation.replay.replay_hash,
    },
    policy: {
      status: POLICY_STATUS[evaluation.policy.verdict],
      verdict: evaluation.policy.verdict,
      checks: evaluation.policy.rules.filter((rule) => !rule.passed),
    },
    signed_fields: { contract: RECEIPT_CORE_V1, fields: [...SIGNED_FIELDS_V1] },
  };
}

/** The signed message of a core: UTF-8 of its RFC 8785 form (contract §3). */
export const signedMessage = (core: ReceiptCore): Uint8Array => canonicalBytes(core);

export function signReceipt(core: ReceiptCore, signer: ReceiptSigner): UnchainedReceipt {
  const attestation: Attestation = {
    signer: SIGNER_NAME,
    algorithm: 'Ed25519',
    key_id: signer.keyId,
    signature: toBase64(signer.sign(signedMessage(core))),
    timestamp: core.issued_at,
  };
  return { ...core, attestations: [attestation] };
}

/**
 * Places a signed receipt after the ledger head. Pure and cheap on purpose: a store calls it
 * inside its append's critical section, and may call it again after a conflict.
 */
export function chainReceipt(
  receipt: UnchainedReceipt,
  head: ChainHead,
  hash = receiptHash(receipt),
): Receipt {
  return {
    ...receipt,
    chain: {
      sequence: head.sequence + 1,
      previous_receipt_hash: head.receipt_hash,
      receipt_hash: hash,
    },
  };
}

/** A v2 receipt before its ledger position is known: everything but `position`. */
export type ReceiptDraft = Omit<ReceiptCore, 'position'> & {
  submitter: Submitter;
  policy: ReceiptCore['policy'] & AppliedPolicy;
};

/** The members of a `receipt-core-v2` receipt that do not depend on its ledger position. */
export function buildReceiptDraft(input: {
  receiptId: string;
  issuedAt: string;
  claim: ClaimInput;
  evaluation: Evaluation;
  policy: AppliedPolicy;
  submitter: Submitter;
}): ReceiptDraft {
  const v1 = buildReceiptCore(input);
  return {
    ...v1,
    policy: { ...v1.policy, ...input.policy },
    signed_fields: { contract: RECEIPT_CORE_V2, fields: [...SIGNED_FIELDS_V2] },
    submitter: input.submitter,
  };
}

/**
 * Signs a draft at the ledger head it extends: `position` is part of the signed core, so this
 * runs inside the store's serialized append. Pure, and cheap enough for that critical section:
 * the core is canonicalized once, and the receipt hash reuses that text.
 */
export function sealReceipt(
  draft: ReceiptDraft,
  head: ChainHead,
  options: { signer: ReceiptSigner; log: string; sha256Hex?: Sha256Hex },
): Receipt {
  return sealReceiptWithText(draft, head, options).receipt;
}

/**
 * `sealReceipt`, also returning `receiptHashText` of the sealed receipt (the preimage of
 * chain.receipt_hash, which is also its leaf in the log's tree), so that a store need not
 * canonicalize the receipt again for its tree.
 */
export function sealReceiptWithText(
  draft: ReceiptDraft,
  head: ChainHead,
  options: { signer: ReceiptSigner; log: string; sha256Hex?: Sha256Hex },
): { receipt: Receipt; hashText: string } {
  const position: SignedPosition = {
    log: options.log,
    sequence: head.sequence + 1,
    previous_receipt_hash: head.receipt_hash,
  };
  const core = { ...draft, position };
  const coreText = canonicalize(core);
  const attestation: Attestation = {
    signer: SIGNER_NAME,
    algorithm: 'Ed25519',
    key_id: options.signer.keyId,
    signature: toBase64(options.signer.sign(utf8Bytes(coreText))),
    timestamp: core.issued_at,
  };
  const attestations = [attestation];
  const text = v2HashText(coreText, attestations);
  const receipt: Receipt = {
    ...core,
    attestations,
    chain: {
      sequence: position.sequence,
      previous_receipt_hash: position.previous_receipt_hash,
      receipt_hash: hashText(text, options.sha256Hex ?? portableSha256Hex),
    },
  };
  return { receipt, hashText: text };
}

/**
 * What sealing added to a draft: the signed position, the signature and the chain link. With
 * the draft it is the whole receipt (`receiptOfSeal`): a process that sealed a draft another
 * one holds need send back only this.
 */
export interface SealParts {
  log: string;
  sequence: number;
  previous_receipt_hash: string | null;
  receipt_hash: string;
  key_id: string;
  signature: string;
}

/**
 * The parts `sealReceiptWithText` added to a receipt; null for a receipt it did not make (a
 * receipt-core-v1 one, or one with other attestations), which must travel whole.
 */
export function sealPartsOf(receipt: Receipt): SealParts | null {
  const [attestation, ...others] = receipt.attestations;
  const { position, chain } = receipt;
  if (!position || !attestation || others.length > 0) return null;
  if (attestation.signer !== SIGNER_NAME || attestation.timestamp !== receipt.issued_at) {
    return null;
  }
  if (
    position.sequence !== chain.sequence ||
    position.previous_receipt_hash !== chain.previous_receipt_hash
  ) {
    return null;
  }
  return {
    log: position.log,
    sequence: chain.sequence,
    previous_receipt_hash: chain.previous_receipt_hash,
    receipt_hash: chain.receipt_hash,
    key_id: attestation.key_id,
    signature: attestation.signature,
  };
}

/** The receipt `sealReceiptWithText` made of `draft`, from the parts it added. */
export function receiptOfSeal(draft: ReceiptDraft, parts: SealParts): Receipt {
  return {
    ...draft,
    position: {
      log: parts.log,
      sequence: parts.sequence,
      previous_receipt_hash: parts.previous_receipt_hash,
    },
    attestations: [
      {
        signer: SIGNER_NAME,
        algorithm: 'Ed25519',
        key_id: parts.key_id,
        signature: parts.signature,
        timestamp: draft.issued_at,
      },
    ],
    chain: {
      sequence: parts.sequence,
      previous_receipt_hash: parts.previous_receipt_hash,
      receipt_hash: parts.receipt_hash,
    },
  };
}

/**
 * Whether a built receipt is the next one after `head` for `claimId`: the sequence and link
 * follow the head and, for v2, the signed position is the one it will be stored at. Every
 * store checks this before it writes.
 */
export const extendsHead = (
  receipt: Pick<Receipt, 'chain' | 'position' | 'claim_id'>,
  head: ChainHead,
  claimId: string,
): boolean =>
  receipt.chain.sequence === head.sequence + 1 &&
  receipt.chain.previous_receipt_hash === head.receipt_hash &&
  receipt.claim_id === claimId &&
  (receipt.position === undefined ||
    (receipt.position.sequence === receipt.chain.sequence &&
      receipt.position.previous_receipt_hash === receipt.chain.previous_receipt_hash));
