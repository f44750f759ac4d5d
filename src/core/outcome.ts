import type { z } from 'zod';
import {
  hashCanonical,
  portableSha256Hex,
  RAN_WITHOUT_ALLOW,
  RECEIPT_CORE_V2,
  SIGNED_FIELDS_OUTCOME,
  type Sha256Hex,
} from '@svc/verify';
import type { ClaimInput } from './claim-schema.js';
import type { PolicyConfig } from './policy-config.js';
import { resolvePolicy } from './policy-config.js';
import type { Receipt, ReceiptDraft, Submitter } from './receipt.js';
import type { outcomeSchema } from './receipt-schema.js';
import type { ToolCallFacts } from './tool-call.js';

export type Outcome = z.infer<typeof outcomeSchema>;
export type OutcomeStatus = Outcome['status'];

/** The one rule of an outcome receipt (contract §12): did an ALLOWED decision precede the call? */
export interface OutcomeRule {
  rule: typeof RAN_WITHOUT_ALLOW;
  passed: boolean;
  reason: string;
}

/**
 * The claim id of an outcome: one outcome per decision, so a harness reporting the same call
 * twice gets the stored one back. An outcome without a decision takes its own receipt id.
 */
export const outcomeClaimId = (parentReceiptId: string | null, receiptId: string): string =>
  `outcome:${parentReceiptId ?? receiptId}`;

/** What the harness reported after the call. */
export interface OutcomeReport {
  status: OutcomeStatus;
  exit_code?: number;
  output_digest?: string;
  /**
   * The HEAD of the session's repository after the call, as the harness's hook read it: the
   * outcome's claim carries it as `action.git_head`, which ties the commit to the session
   * (docs/AGENTS.md, "Commits and sessions").
   */
  git_head?: string;
}

/** The decision an outcome reports on, as the ledger holds it, and whether it allowed the call. */
export interface OutcomeDecision {
  receipt: Receipt;
  claim: ClaimInput;
  config: PolicyConfig;
  /**
   * True when the decision is ALLOWED, or ESCALATED and approved by a disposition: the
   * receipt id of that approval is then `approvedBy`.
   */
  allowed: boolean;
  approvedBy?: string;
}

export interface OutcomeInput {
  receiptId: string;
  issuedAt: string;
  /** The decision found for the call, or null when the ledger holds none. */
  decision: OutcomeDecision | null;
  /** The call as the harness names it (used for the claim when there is no decision). */
  call: ToolCallFacts;
  report: OutcomeReport;
  submitter: Submitter;
  sha256Hex?: Sha256Hex;
}

export interface OutcomeParts {
  draft: ReceiptDraft;
  claim: ClaimInput;
  evaluation: {
    policy: { verdict: 'ALLOWED' | 'BLOCKED'; reason: string; rules: OutcomeRule[] };
    replay: { passed: boolean; deterministic: boolean; replay_hash: string };
    config: PolicyConfig;
  };
}

/**
 * The members of an outcome receipt that do not depend on its ledger position (contract §12),
 * built like a disposition's: the report is recorded as a claim of its own (the decision's
 * entity and action, one `runtime_log` source holding the report), so that `inputs_hash` and
 * `replay_hash` are computed as for every receipt. Verdict ALLOWED when the decision allowed
 * the call; otherwise BLOCKED by `ran_without_allow`, evidence that the gate was bypassed.
 * Pure: the decision, the time and the id are arguments.
 */
export function buildOutcomeParts(input: OutcomeInput): OutcomeParts {
  const sha256Hex = input.sha256Hex ?? portableSha256Hex;
  const { decision, call, report } = input;
  const parentId = decision?.receipt.receipt_id ?? null;
  const claim: ClaimInput = {
    claim_id: outcomeClaimId(parentId, input.receiptId),
    entity: decision?.claim.entity ?? `session:${call.sessionId}`,
    claim: `Tool ${call.toolName} ${report.status}${report.exit_code === undefined ? '' : ` with exit code ${report.exit_code}`}`,
    action: {
      ...(decision?.claim.action ?? noDecisionAction(call)),
      ...(report.git_head === undefined ? {} : { git_head: report.git_head }),
    } as ClaimInput['action'],
    sources: [
      {
        id: call.toolUseId ?? 'outcome',
        type: 'runtime_log',
        uri: `urn:svc:session:${encodeURIComponent(call.sessionId)}`,
        confidence: 1,
        content: JSON.stringify(report),
      },
    ],
  };
  const rule = outcomeRule(decision, parentId);
  const allowed = rule.passed;
  const verdict = allowed ? 'ALLOWED' : 'BLOCKED';
  const config = decision?.config ?? resolvePolicy(undefined);
  const inputsHash = hashCanonical(claim, sha256Hex);
  const replayHash = hashCanonical(
    { inputs_hash: inputsHash, policy: config, rules: [rule], verdict },
    sha256Hex,
  );
  const parentPolicy = decision?.receipt.policy;
  const draft: ReceiptDraft = {
    receipt_id: input.receiptId,
    issued_at: input.issuedAt,
    claim_id: claim.claim_id,
    admissibility: allowed
      ? { status: 'ACCEPTED', reason: `the call ran after decision ${parentId}, which allowed it` }
      : { status: 'REJECTED', reason: `the call ran without an ALLOWED decision` },
    subject: decision?.receipt.subject ?? {
      entity: claim.entity,
      action_type: 'agent_execution',
      target_system: call.harness,
    },
    evidence: { inputs_hash: inputsHash, source_count: 1, source_types: ['runtime_log'] },
    replay: { deterministic: true, replay_hash: replayHash },
    policy: {
      status: allowed ? 'PASS' : 'FAIL',
      verdict,
      checks: allowed ? [] : [rule],
      name: parentPolicy?.name ?? 'default',
      config_hash: parentPolicy?.config_hash ?? hashCanonical(config, sha256Hex),
      overrides: parentPolicy?.overrides ?? false,
    },
    signed_fields: { contract: RECEIPT_CORE_V2, fields: [...SIGNED_FIELDS_OUTCOME] },
    submitter: input.submitter,
    outcome: {
      parent_receipt_id: parentId,
      parent_receipt_hash: decision?.receipt.chain.receipt_hash ?? null,
      status: report.status,
      ...(report.exit_code === undefined ? {} : { exit_code: report.exit_code }),
      ...(report.output_digest === undefined ? {} : { output_digest: report.output_digest }),
    },
  };
  return {
    draft,
    claim,
    evaluation: {
      policy: { verdict, reason: rule.reason, rules: [rule] },
      replay: { passed: true, deterministic: true, replay_hash: replayHash },
      config,
    },
  };
}

function outcomeRule(decision: OutcomeDecision | null, parentId: string | null): OutcomeRule {
  const rule = RAN_WITHOUT_ALLOW;
  if (!decision)
    return { rule, passed: false, reason: 'the ledger holds no decision on this call' };
  const verdict = decision.receipt.policy.verdict;
  if (decision.allowed)
    return {
      rule,
      passed: true,
      reason: decision.approvedBy
        ? `decision ${parentId} escalated the call and disposition ${decision.approvedBy} approved it`
        : `decision ${parentId} allowed the call`,
    };
  return {
    rule,
    passed: false,
    reason:
      verdict === 'ESCALATED'
        ? `decision ${parentId} escalated the call and no approval was recorded`
        : `decision ${parentId} did not allow the call (${verdict})`,
  };
}

/** The action of an outcome whose call svc never decided: the call as the harness named it. */
function noDecisionAction(call: ToolCallFacts): ClaimInput['action'] {
  // Stored as data: the tool-call members of §12 beside the members every action has.
  return {
    action_type: 'agent_execution',
    target_system: call.harness,
    tool: { harness: call.harness, name: call.toolName, input_digest: call.inputDigest },
    session: { id: call.sessionId, harness: call.harness },
  } as unknown as ClaimInput['action'];
}
