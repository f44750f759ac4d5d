import { RAN_WITHOUT_ALLOW } from '@svc/verify';
import type { ClaimInput } from './claim-schema.js';
import type { Verdict } from './policy.js';
import type { Receipt } from './receipt.js';
import { toolCallOf, type ToolCallFacts } from './tool-call.js';

/**
 * What a receipt is in its session (contract §12): the decision on a tool call, a reviewer's
 * disposition of an escalated one, or the outcome the harness reported after a call.
 */
export type SessionRecordKind = 'decision' | 'disposition' | 'outcome';

/** One receipt of a session, as coverage and the session reads see it. */
export interface SessionRecord {
  receipt_id: string;
  sequence: number;
  issued_at: string;
  kind: SessionRecordKind;
  verdict: Verdict;
  tool_name: string;
  input_digest: string;
  /** An outcome's decision or a disposition's escalated receipt; null otherwise. */
  parent_receipt_id: string | null;
  /** An outcome whose call had no ALLOWED decision: the gate was bypassed. */
  ran_without_allow: boolean;
}

/**
 * The session record of a stored receipt and the call it names, or null for a receipt that
 * belongs to no session (its claim is not a tool call).
 */
export function sessionRecordOf(entry: {
  receipt: Receipt;
  claim: ClaimInput;
}): { call: ToolCallFacts; record: SessionRecord } | null {
  const call = toolCallOf(entry.claim);
  if (!call) return null;
  const { receipt } = entry;
  const kind: SessionRecordKind = receipt.outcome
    ? 'outcome'
    : receipt.disposition
      ? 'disposition'
      : 'decision';
  const parent =
    receipt.outcome?.parent_receipt_id ?? receipt.disposition?.parent_receipt_id ?? null;
  return {
    call,
    record: {
      receipt_id: receipt.receipt_id,
      sequence: receipt.chain.sequence,
      issued_at: receipt.issued_at,
      kind,
      verdict: receipt.policy.verdict,
      tool_name: call.toolName,
      input_digest: call.inputDigest,
      parent_receipt_id: parent,
      ran_without_allow:
        kind === 'outcome' &&
        receipt.policy.checks.some((c) => c.rule === RAN_WITHOUT_ALLOW && !c.passed),
    },
  };
}
