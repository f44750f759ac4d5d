import { proceeds } from '@svc/verify';

/** An AuthZEN decision (§5.5) as svc answers it (contract §13). */
export interface AuthzenDecision {
  decision: boolean;
  context: {
    /** Absent for a dry run, which records nothing. */
    receipt_id?: string;
    verdict: 'ALLOWED' | 'BLOCKED' | 'ESCALATED';
    /** Every failed rule, `<rule>: <reason>`; for an administrator, in the PEP's logs. */
    reason_admin: string[];
    /** One short sentence to show the subject. */
    reason_user: string;
    /** The receipt as JSON and in the explorer. */
    receipt_url?: string;
    explorer_url?: string;
    /** ESCALATED: where a reviewer approves or rejects it (contract §11). */
    approval?: { request_url: string; explorer_url: string };
    dry_run?: true;
  };
}

/** What a per-evaluation error looks like in a batch (AuthZEN §7.3: decisions default to closed). */
export const evaluationError = (status: number, message: string) => ({
  decision: false as const,
  context: { error: { status, message } },
});

/** What of a receipt (or a dry run's preview) a decision reads. */
interface Decided {
  receipt_id: string;
  policy: {
    verdict: AuthzenDecision['context']['verdict'];
    checks: readonly { rule: string; reason: string }[];
  };
  admissibility: { status: string; reason: string };
}

/**
 * The AuthZEN decision for a receipt: `true` exactly when the receipt says proceed (ALLOWED and
 * ACCEPTED), with the receipt named and, for ESCALATED, where approval is requested.
 * `baseUrl` is the service's public URL; `recorded` is false for a dry run's preview.
 */
export function authzenDecision(
  receipt: Decided,
  options: { baseUrl: string; recorded: boolean },
): AuthzenDecision {
  const { verdict } = receipt.policy;
  const failed = receipt.policy.checks.map((check) => `${check.rule}: ${check.reason}`);
  const decision = proceeds(verdict, receipt.admissibility.status);
  const context: AuthzenDecision['context'] = {
    verdict,
    reason_admin: failed.length > 0 ? failed : [receipt.admissibility.reason],
    reason_user: userReason(verdict, decision),
  };
  if (!options.recorded) return { decision, context: { ...context, dry_run: true } };
  const id = encodeURIComponent(receipt.receipt_id);
  const base = options.baseUrl.replace(/\/+$/, '');
  context.receipt_id = receipt.receipt_id;
  context.receipt_url = `${base}/v1/receipts/${id}`;
  context.explorer_url = `${base}/explorer/receipts/${id}`;
  if (verdict === 'ESCALATED') {
    context.approval = {
      request_url: `${base}/v1/receipts/${id}/disposition`,
      explorer_url: context.explorer_url,
    };
  }
  return { decision, context };
}

function userReason(verdict: AuthzenDecision['context']['verdict'], decision: boolean): string {
  if (decision) return 'Allowed by policy.';
  if (verdict === 'ESCALATED') return 'Waiting for a reviewer to approve this action.';
  if (verdict === 'ALLOWED') return 'Denied: the evaluation could not be replayed.';
  return 'Denied by policy.';
}
