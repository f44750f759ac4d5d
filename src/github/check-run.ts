import { proceeds } from '@svc/verify';
import { clipText } from '../core/text.js';
import type { EvaluateResponse } from '../services/claims.js';

// GitHub's limits on check-run output (docs: "Create a check run"), in characters: code
// points, not UTF-16 units, so a cut never leaves half an emoji.
const MAX_SUMMARY = 65_535;
const MAX_TITLE = 255;

export const REEVALUATE = {
  label: 'Re-evaluate',
  description: 'Evaluate this pull request again',
  identifier: 're-evaluate',
} as const;

export type Conclusion = 'success' | 'failure' | 'action_required' | 'neutral';

export interface CheckRunOutput {
  conclusion: Conclusion;
  title: string;
  summary: string;
}

/** The receipt's page in the ledger explorer: the check run's details link. */
export const receiptPageUrl = (baseUrl: string, receiptId: string): string =>
  `${baseUrl}/explorer/receipts/${encodeURIComponent(receiptId)}`;

/** success only for ALLOWED and ACCEPTED; ESCALATED asks a human; anything else fails. */
export function conclusionOf(response: EvaluateResponse): Conclusion {
  const { verdict, admissibility } = response.decision;
  if (proceeds(verdict, admissibility)) return 'success';
  if (verdict === 'ESCALATED') return 'action_required';
  return 'failure';
}

// Titles, branch names, job names and logins are chosen by whoever opened the pull request:
// escaped, they cannot forge links, images, emphasis or HTML in the summary.
const cell = (text: string) =>
  text.replace(/\r?\n/g, ' ').replace(/[\\`*_{}[\]()<>#+!|~-]/g, (c) => `\\${c}`);
const clipTitle = (text: string) => clipText(text, MAX_TITLE, '…');
const clipSummary = (text: string) => clipText(text, MAX_SUMMARY, '\n\n… (truncated)');

/** What a reviewer reads on the pull request: the verdict at a glance, then how to check it. */
export function renderEvaluation(
  response: EvaluateResponse,
  options: { baseUrl: string; subject: string },
): CheckRunOutput {
  const { receipt, decision, policy } = response;
  const conclusion = conclusionOf(response);
  const headline =
    conclusion === 'success'
      ? 'may merge'
      : conclusion === 'action_required'
        ? 'needs a human decision'
        : 'may not merge';
  const rules = policy.rules
    .map((r) => `| ${r.passed ? '✅' : '❌'} | \`${r.rule}\` | ${cell(r.reason)} |`)
    .join('\n');
  const sources = response.claim.sources
    .map(
      (s) =>
        `| ${cell(s.id)} | ${s.type} | ${s.confidence} | ${s.admissibility?.state === 'INADMISSIBLE' ? `inadmissible: ${cell(s.admissibility.reason ?? '')}` : 'admissible'} | ${cell(s.content)} |`,
    )
    .join('\n');
  const receiptUrl = `${options.baseUrl}/v1/receipts/${receipt.receipt_id}`;
  const summary = [
    `## ${decision.verdict} · ${decision.admissibility} — ${options.subject} ${headline}`,
    '',
    decision.reason,
    '',
    `Policy **${receipt.policy.name ?? 'default'}**${receipt.policy.overrides ? ' (overridden by the repository config)' : ''}: ${policy.reason}`,
    '',
    '| | Rule | Result |',
    '|---|---|---|',
    rules,
    '',
    '### Evidence',
    '',
    '| Source | Type | Confidence | Admissibility | Content |',
    '|---|---|---|---|---|',
    sources,
    '',
    '### Receipt',
    '',
    `- Receipt: [\`${receipt.receipt_id}\`](${receiptPageUrl(options.baseUrl, receipt.receipt_id)}) (${receipt.signed_fields.contract}), [as JSON](${receiptUrl})`,
    `- Inputs hash: \`${receipt.evidence.inputs_hash}\``,
    `- Policy config hash: \`${receipt.policy.config_hash ?? 'n/a'}\``,
    `- Ledger sequence: ${receipt.chain.sequence}${receipt.position ? ` of \`${receipt.position.log}\`` : ''}`,
    `- Signed by key \`${receipt.attestations[0]?.key_id ?? 'n/a'}\``,
    '',
    '### Verify it',
    '',
    'With the service:',
    '',
    '```bash',
    `curl -s ${receiptUrl} | jq .receipt > receipt.json`,
    `curl -s -X POST '${options.baseUrl}/v1/verify?expect_policy=${receipt.policy.name ?? 'default'}' -H 'Content-Type: application/json' -d @receipt.json`,
    '```',
    '',
    `Offline, with a key whose fingerprint you obtained separately: \`svc-verify receipt.json --fingerprint ${receipt.attestations[0]?.key_id ?? ''} --key-url ${options.baseUrl}\`.`,
  ].join('\n');
  return {
    conclusion,
    title: clipTitle(`${decision.verdict} · ${decision.admissibility}: ${policy.reason}`),
    summary: clipSummary(summary),
  };
}

/** A check that ends without a receipt: a neutral skip, or a failure with its reason. */
export function renderWithoutReceipt(
  conclusion: 'neutral' | 'failure',
  title: string,
  detail: string,
): CheckRunOutput {
  return { conclusion, title: clipTitle(title), summary: clipSummary(detail) };
}
