import { randomUUID } from 'node:crypto';
import { hashCanonical } from '@svc/verify';
import { claimInputSchema, type ClaimInput } from '../../src/core/claim-schema.js';
import { evaluateClaim } from '../../src/core/evaluation.js';
import { resolvePolicy } from '../../src/core/policy-config.js';
import {
  buildReceiptCore,
  buildReceiptDraft,
  chainReceipt,
  sealReceipt,
  signReceipt,
  type ChainHead,
  type ReceiptDraft,
  type ReceiptSigner,
  type UnchainedReceipt,
} from '../../src/core/receipt.js';
import { buildDispositionParts } from '../../src/core/disposition.js';
import type { AppendRequest, LedgerEntry } from '../../src/ports/ledger-store.js';
import { claimOf, type Kind } from '../support/claims.js';

// Kept free of the app and the harness (claims.ts is pure): child processes load this module
// transpiled.

export type ClaimKind = Kind;

export interface ClaimOptions {
  claimId?: string;
  kind?: ClaimKind;
  /** null leaves the member out of the claim. */
  agent?: string | null;
  repository?: string | null;
}

/**
 * A validated ClaimInput whose evaluation gives the verdict and admissibility of `kind`: the
 * shared claimOf claim, parsed as the core receives it. BLOCKED here comes from a policyConfig
 * that asks for three sources, so every kind cites the same passing CI source.
 */
export function makeClaim(options: ClaimOptions = {}): ClaimInput {
  const { kind = 'allowed' } = options;
  return claimInputSchema.parse(
    claimOf({
      claimId: options.claimId ?? `claim-${randomUUID()}`,
      kind: kind === 'blocked' ? 'allowed' : kind,
      agent: options.agent,
      repository: options.repository,
      commit: null,
      extra: kind === 'blocked' ? { policyConfig: { minSources: 3 } } : {},
    }),
  );
}

export interface SignedClaim {
  claim: ClaimInput;
  /** The idempotency scope it is appended under. */
  scope: string;
  /** A v1 receipt signed already, or a v2 draft signed only once its position is known. */
  receipt: UnchainedReceipt | ReceiptDraft;
  /** The ledger entry this receipt becomes at the position after `head`. */
  entryAt(head: ChainHead): LedgerEntry;
}

/**
 * Evaluates a claim as the service does: a receipt-core-v2 receipt signed at the position it
 * is appended at, or with `contract: 'v1'` a legacy receipt signed up front.
 */
export function signClaim(
  claim: ClaimInput,
  signer: ReceiptSigner,
  options: {
    apiKeyId?: string | null;
    issuedAt?: string;
    scope?: string;
    contract?: 'v1' | 'v2';
    log?: string;
  } = {},
): SignedClaim {
  const evaluation = evaluateClaim(claim, resolvePolicy(claim.policyConfig));
  const input = {
    receiptId: `dr-${randomUUID()}`,
    issuedAt: options.issuedAt ?? new Date().toISOString(),
    claim,
    evaluation,
  };
  const stored = {
    policy: evaluation.policy,
    replay: evaluation.replay,
    config: evaluation.config,
  };
  const apiKeyId = options.apiKeyId ?? null;
  const scope = options.scope ?? (apiKeyId === null ? 'test' : `key:${apiKeyId}`);
  const entry = (receipt: LedgerEntry['receipt']): LedgerEntry => ({
    receipt,
    claim,
    evaluation: stored,
    apiKeyId,
  });
  if (options.contract === 'v1') {
    const receipt = signReceipt(buildReceiptCore(input), signer);
    return { claim, scope, receipt, entryAt: (head) => entry(chainReceipt(receipt, head)) };
  }
  const draft = buildReceiptDraft({
    ...input,
    policy: { name: 'default', config_hash: hashCanonical(evaluation.config), overrides: false },
    submitter: { kind: 'api_key', key_id: `kid_${'0'.repeat(26)}` },
  });
  const log = options.log ?? 'svc/test';
  return {
    claim,
    scope,
    receipt: draft,
    entryAt: (head) => entry(sealReceipt(draft, head, { signer, log })),
  };
}

export interface RecordingRequest extends AppendRequest {
  /** Every head `build` was called with, in order. */
  heads: ChainHead[];
}

/** An append request for a signed claim that records the heads its build receives. */
export function appendRequest(signed: SignedClaim): RecordingRequest {
  const heads: ChainHead[] = [];
  return {
    scope: signed.scope,
    claimId: signed.claim.claim_id,
    heads,
    build(head) {
      heads.push({ ...head });
      return { entry: signed.entryAt(head) };
    },
  };
}

/**
 * The append request of a disposition (contract §11) of a stored escalated entry, as the
 * service builds it, in `scope`.
 */
export function dispositionRequest(
  parent: LedgerEntry,
  signer: ReceiptSigner,
  options: { scope: string; decision?: 'approve' | 'reject'; log?: string },
): AppendRequest {
  const parts = buildDispositionParts({
    receiptId: `dr-${randomUUID()}`,
    issuedAt: new Date().toISOString(),
    parent: { receipt: parent.receipt, claim: parent.claim, config: parent.evaluation.config },
    decision: options.decision ?? 'approve',
    reviewer: { kind: 'user', id: 'reviewer-1' },
    reason: 'reviewed',
    submitter: { kind: 'api_key', key_id: `kid_${'1'.repeat(26)}` },
  });
  return {
    scope: options.scope,
    claimId: parts.claim.claim_id,
    parentReceiptId: parent.receipt.receipt_id,
    build: (head) => ({
      entry: {
        receipt: sealReceipt(parts.draft, head, { signer, log: options.log ?? 'svc/test' }),
        claim: parts.claim,
        evaluation: parts.evaluation,
        apiKeyId: null,
      },
    }),
  };
}
