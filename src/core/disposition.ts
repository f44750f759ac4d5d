import type { z } from 'zod';
import type { ClaimInput } from './claim-schema.js';
import type { PolicyConfig } from './policy-config.js';
import type { RuleResult } from './policy.js';
import type { OutcomeRule } from './outcome.js';
import {
  hashCanonical,
  portableSha256Hex,
  RECEIPT_CORE_V2,
  SIGNED_FIELDS_DISPOSITION,
  type Sha256Hex,
} from '@svc/verify';
import type { Receipt, ReceiptDraft, Submitter } from './receipt.js';
import { DISPOSITION_RULE, type dispositionSchema, type reviewerSchema } from './receipt-schema.js';

export type Reviewer = z.infer<typeof reviewerSchema>;
export type Disposition = z.infer<typeof dispositionSchema>;
export type DispositionDecision = Disposition['decision'];

/** The one rule of a disposition's evaluation (contract §11): the reviewer's decision. */
export interface DispositionRule {
  rule: typeof DISPOSITION_RULE;
  passed: boolean;
  reason: string;
  reviewer: Reviewer;
}

/** A rule result as the ledger keeps it: a policy rule, a disposition's decision, or an outcome's. */
export type StoredRuleResult = RuleResult | DispositionRule | OutcomeRule;

/** The claim id of a parent's disposition: one per parent, so one id per parent. */
export const dispositionClaimId = (parentReceiptId: string): string =>
  `disposition:${parentReceiptId}`;

/** What a disposition's draft is built from; the parent is the ledger's, already checked. */
export interface DispositionInput {
  receiptId: string;
  issuedAt: string;
  parent: { receipt: Receipt; claim: ClaimInput; config: PolicyConfig };
  decision: DispositionDecision;
  reviewer: Reviewer;
  reason: string;
  submitter: Submitter;
  sha256Hex?: Sha256Hex;
}

export interface DispositionParts {
  draft: ReceiptDraft;
  /** The record of the decision in ClaimInput form: what `evidence.inputs_hash` commits to. */
  claim: ClaimInput;
  evaluation: {
    policy: { verdict: 'ALLOWED' | 'BLOCKED'; reason: string; rules: DispositionRule[] };
    replay: { passed: boolean; deterministic: boolean; replay_hash: string };
    config: PolicyConfig;
  };
}

/**
 * The members of a disposition receipt that do not depend on its ledger position (contract
 * §11). Pure: the parent, the time and the id are arguments. The decision is recorded as a
 * claim of its own (the parent's entity and action, one source holding the reviewer's reason)
 * so that `evidence.inputs_hash` and `replay.replay_hash` are computed as for every receipt
 * (§4), under the parent's effective policy, whose name and config_hash it signs again.
 */
export function buildDispositionParts(input: DispositionInput): DispositionParts {
  const sha256Hex = input.sha256Hex ?? portableSha256Hex;
  const { parent, decision, reviewer, reason } = input;
  const approve = decision === 'approve';
  const parentId = parent.receipt.receipt_id;
  const claim: ClaimInput = {
    claim_id: dispositionClaimId(parentId),
    entity: parent.claim.entity,
    claim: `${approve ? 'Approve' : 'Reject'} escalated receipt ${parentId}`,
    ...(parent.claim.action ? { action: parent.claim.action } : {}),
    sources: [
      {
        id: 'disposition',
        // A rejection is a person's review, not an approval: `human_approval` would count
        // towards require_human_approval wherever the claim is read.
        type: approve ? 'human_approval' : 'manual',
        uri: `urn:svc:receipt:${parentId}`,
        confidence: 1,
        content: reason,
      },
    ],
  };
  const rule: DispositionRule = { rule: DISPOSITION_RULE, passed: approve, reason, reviewer };
  const verdict = approve ? 'ALLOWED' : 'BLOCKED';
  const inputsHash = hashCanonical(claim, sha256Hex);
  const replayHash = hashCanonical(
    { inputs_hash: inputsHash, policy: parent.config, rules: [rule], verdict },
    sha256Hex,
  );
  const who = `${reviewer.kind} ${JSON.stringify(reviewer.id)}`;
  const policyReason = approve
    ? `Approved by ${who} after escalation`
    : `Rejected by ${who} after escalation`;
  const parentPolicy = parent.receipt.policy;
  const draft: ReceiptDraft = {
    receipt_id: input.receiptId,
    issued_at: input.issuedAt,
    claim_id: claim.claim_id,
    admissibility: approve
      ? { status: 'ACCEPTED', reason: `Escalation approved by ${who}` }
      : { status: 'REJECTED', reason: `Escalation rejected by ${who}` },
    subject: parent.receipt.subject,
    evidence: {
      inputs_hash: inputsHash,
      source_count: 1,
      source_types: [claim.sources[0]!.type],
    },
    replay: { deterministic: true, replay_hash: replayHash },
    policy: {
      status: approve ? 'PASS' : 'FAIL',
      verdict,
      checks: approve ? [] : [rule],
      // The policy that escalated: a relying party pinning it accepts the decision under it.
      name: parentPolicy.name ?? 'default',
      config_hash: parentPolicy.config_hash ?? hashCanonical(parent.config, sha256Hex),
      overrides: parentPolicy.overrides ?? false,
    },
    signed_fields: { contract: RECEIPT_CORE_V2, fields: [...SIGNED_FIELDS_DISPOSITION] },
    submitter: input.submitter,
    disposition: {
      parent_receipt_id: parentId,
      parent_receipt_hash: parent.receipt.chain.receipt_hash,
      decision,
      reviewer,
      reason,
    },
  };
  return {
    draft,
    claim,
    evaluation: {
      policy: { verdict, reason: policyReason, rules: [rule] },
      replay: { passed: true, deterministic: true, replay_hash: replayHash },
      config: parent.config,
    },
  };
}

/**
 * Whether `reviewerId` names the claim's agent or its human operator: they may not decide
 * their own escalation (separation of duties). Compared without case or surrounding space,
 * as logins and email addresses are.
 */
export function reviewerConflict(claim: ClaimInput, reviewerId: string): string | null {
  const norm = (s: string) => s.trim().toLowerCase();
  const id = norm(reviewerId);
  const action = claim.action;
  if (action?.agent !== undefined && norm(action.agent) === id)
    return 'the reviewer is the agent of the escalated claim';
  if (action?.human_operator !== undefined && norm(action.human_operator) === id)
    return 'the reviewer is the human operator of the escalated claim';
  return null;
}
