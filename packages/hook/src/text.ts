import type { HookDecision } from './types.js';

// The words every harness shows for a decision. Every answer names its receipt (contract §12,
// "Answers"), so the human and the agent can look the decision up and verify it.

const MAX_REASONS = 5;
const MAX_TEXT = 2000;

function receiptOf(decision: HookDecision): string {
  if (decision.receipt_url) return `receipt ${decision.receipt_url}`;
  if (decision.receipt_id) return `receipt ${decision.receipt_id}`;
  return 'no receipt';
}

function reasonsOf(decision: HookDecision): string {
  const reasons = decision.reasons.filter((r) => r.trim().length > 0).slice(0, MAX_REASONS);
  return reasons.length ? reasons.join('; ') : 'no reason given';
}

function bounded(text: string): string {
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 1)}…` : text;
}

/** The text of an allowed call: short, it is shown on every call. */
export function allowText(decision: HookDecision): string {
  const approval = decision.approval_receipt_id;
  return bounded(
    approval
      ? `svc: allowed by approval ${approval} of this exact call (${receiptOf(decision)})`
      : `svc: allowed (${receiptOf(decision)})`,
  );
}

/** The text of a blocked call, with the rule reasons. */
export function denyText(decision: HookDecision): string {
  return bounded(`svc: blocked: ${reasonsOf(decision)} (${receiptOf(decision)})`);
}

/** The text of an escalated call that the harness asks its operator about. */
export function askText(decision: HookDecision): string {
  return bounded(`svc: needs approval: ${reasonsOf(decision)} (${receiptOf(decision)})`);
}

/**
 * The text of an escalated call that the harness cannot ask about: denied for now, with the
 * place where a reviewer decides; after an approval the same call is allowed once.
 */
export function escalatedDenyText(decision: HookDecision): string {
  const where = decision.receipt_url
    ? `a reviewer can approve it at ${decision.receipt_url}`
    : `a reviewer can approve it in svc (${receiptOf(decision)})`;
  return bounded(
    `svc: needs approval, denied until approved: ${reasonsOf(decision)}; ${where}, then retry the same call`,
  );
}

/** The text of a denial made without svc's decision. */
export function failClosedText(message: string): string {
  return bounded(`svc-hook: denied because no decision could be had: ${message}`);
}

/** The warning of a call let through without svc's decision. */
export function failOpenText(message: string): string {
  return bounded(`svc-hook: WARNING: allowed without a decision (fail-open is set): ${message}`);
}

/** The harness's verb for an escalated decision: ask only where it can ask and may now. */
export function escalationAsks(decision: HookDecision, harnessCanAsk: boolean): boolean {
  return decision.verdict === 'ESCALATED' && decision.can_ask && harnessCanAsk;
}
