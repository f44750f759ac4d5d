import { proceeds } from '@svc/verify';
import { receiptPageUrl } from './check-run.js';

/**
 * The body of POST /repos/{owner}/{repo}/actions/runs/{run_id}/deployment_protection_rule
 * (GitHub's review-custom-gates-state-required): the environment, approved or rejected, and
 * a comment the reviewer reads on the run's page.
 */
export interface DeploymentReview {
  environment_name: string;
  state: 'approved' | 'rejected';
  comment: string;
}

/** What a receipt says about a deployment: enough to answer GitHub. */
export interface DeploymentVerdict {
  receiptId: string;
  verdict: string;
  admissibility: string;
  rules: readonly { rule: string; passed: boolean; reason: string }[];
}

// GitHub shows the comment on the run's page; the receipt page holds the rest.
const MAX_COMMENT = 1000;
const MAX_RULES_NAMED = 5;

const trimmed = (text: string, max: number) =>
  text.length <= max ? text : `${text.slice(0, max - 1)}…`;

/**
 * svc's answer to a waiting deployment, or null while it is ESCALATED: the deployment then
 * waits for a person's Approve or Reject of the receipt (explorer or API), which answers it.
 */
export function deploymentReview(
  environment: string,
  result: DeploymentVerdict,
  baseUrl: string,
): DeploymentReview | null {
  if (result.verdict === 'ESCALATED') return null;
  const approved = proceeds(result.verdict, result.admissibility);
  const failing = result.rules.filter((r) => !r.passed);
  const named = failing
    .slice(0, MAX_RULES_NAMED)
    .map((r) => `${r.rule} (${trimmed(r.reason, 120)})`)
    .join('; ');
  const more =
    failing.length > MAX_RULES_NAMED ? ` and ${failing.length - MAX_RULES_NAMED} more` : '';
  const page = receiptPageUrl(baseUrl, result.receiptId);
  const comment = [
    `svc: ${result.verdict} · ${result.admissibility}.`,
    failing.length ? `Failing rules: ${named}${more}.` : 'Every rule passed.',
    `Receipt: ${page}`,
  ].join(' ');
  return {
    environment_name: environment,
    state: approved ? 'approved' : 'rejected',
    // The receipt's page survives any cut: it is the last thing in the comment.
    comment:
      comment.length <= MAX_COMMENT
        ? comment
        : `${trimmed(comment.slice(0, comment.length - page.length), MAX_COMMENT - page.length - 1)} ${page}`,
  };
}

/** The answer to a deployment a person decided (a disposition of its ESCALATED receipt). */
export function dispositionReview(
  environment: string,
  decision: { decision: 'approve' | 'reject'; reviewer: { id: string; name?: string } },
  parentReceiptId: string,
  dispositionReceiptId: string,
  baseUrl: string,
): DeploymentReview {
  const verb = decision.decision === 'approve' ? 'approved' : 'rejected';
  return {
    environment_name: environment,
    state: verb,
    comment: trimmed(
      `svc: ESCALATED, then ${verb} by ${decision.reviewer.name ?? decision.reviewer.id} (receipt ${dispositionReceiptId}). Receipt: ${receiptPageUrl(baseUrl, parentReceiptId)}`,
      MAX_COMMENT,
    ),
  };
}
