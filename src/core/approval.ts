import { HASH_PATTERN, RECEIPT_ID_PATTERN } from '@svc/verify';
import type { ClaimInput, Source } from './claim-schema.js';
import type { PolicyOutcome, RuleResult } from './policy-outcome.js';
import { toolCallOf } from './tool-call.js';

// Argument-bound approval (contract §12): a disposition approving an escalated tool call lets
// that input run once in that session. The approval travels in the claim, as an evidence source
// naming the disposition's receipt id and hash, so the evaluation (and its replay) stays a pure
// function of the signed claim; the ledger checks at append time, in the append's transaction,
// that the source names a real approval of this very call, within its lifetime, used once.

/** How long an approval lasts unless configured (SVC_AGENT_APPROVAL_TTL): one hour. */
export const DEFAULT_APPROVAL_TTL_MS = 3_600_000;

/** The source id of an approval; one per claim. */
export const APPROVAL_SOURCE_ID = 'svc-approval';
/** The rule an approval adds to a tool call's evaluation. */
export const APPROVED_RULE = 'rule:approved';
const URN_PREFIX = 'urn:svc:receipt:';

/** The disposition a claim cites as its approval. */
export interface ApprovalRef {
  receiptId: string;
  receiptHash: string;
}

/**
 * The evidence source that carries an approval in a tool-call claim. Marked inadmissible so
 * that it counts towards no threshold rule (sources, types, confidence, human approval): it
 * lifts an escalation through `rule:approved` alone, and never a block.
 */
export const approvalSource = (approval: ApprovalRef): Source => ({
  id: APPROVAL_SOURCE_ID,
  type: 'human_approval',
  uri: `${URN_PREFIX}${approval.receiptId}`,
  confidence: 1,
  content: approval.receiptHash,
  admissibility: {
    state: 'INADMISSIBLE',
    reason: 'the citation of an approval of this call, read by rule:approved, not evidence',
  },
});

/** The claim with its approval source: any earlier one is replaced, never doubled. */
export const withApprovalSource = (claim: ClaimInput, approval: ApprovalRef): ClaimInput => ({
  ...claim,
  sources: [...claim.sources.filter((s) => s.id !== APPROVAL_SOURCE_ID), approvalSource(approval)],
});

/**
 * The approval a tool-call claim cites, or null: for any other claim, or a source that is not
 * well formed (then it approves nothing and the ledger refuses nothing).
 */
export function approvalOf(claim: ClaimInput): ApprovalRef | null {
  if (!toolCallOf(claim)) return null;
  const source = claim.sources.find((s) => s.id === APPROVAL_SOURCE_ID);
  if (!source || source.type !== 'human_approval' || !source.uri.startsWith(URN_PREFIX))
    return null;
  const receiptId = source.uri.slice(URN_PREFIX.length);
  if (!RECEIPT_ID_PATTERN.test(receiptId) || !HASH_PATTERN.test(source.content)) return null;
  return { receiptId, receiptHash: source.content };
}

/**
 * The outcome of a tool call's policy with its approval applied: `rule:approved` is added,
 * and an ESCALATED verdict becomes ALLOWED. An approval never lifts a BLOCKED verdict: it
 * answers the review the policy asked for, not a rule that forbids the call.
 */
export function applyApproval(claim: ClaimInput, outcome: PolicyOutcome): PolicyOutcome {
  const approval = approvalOf(claim);
  if (!approval) return outcome;
  const rule: RuleResult = {
    rule: APPROVED_RULE,
    passed: true,
    reason: `disposition ${approval.receiptId} approved this input in this session`,
  };
  const rules = [...outcome.rules, rule];
  if (outcome.verdict !== 'ESCALATED') return { ...outcome, rules };
  return {
    verdict: 'ALLOWED',
    reason: `Allowed by approval ${approval.receiptId} of this exact call`,
    rules,
  };
}
