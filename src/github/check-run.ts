import { proceeds } from '@svc/verify';
import { clipText } from '../core/text.js';
import type { EvaluateResponse } from '../services/claims.js';
import { renderAgentSessions } from './agent-sessions.js';

// GitHub's limits on check-run output (docs: "Create a check run"), in characters: code
// points, not UTF-16 units, so a cut never leaves half an emoji.
const MAX_SUMMARY = 65_535;
const MAX_TITLE = 255;

export const REEVALUATE = {
  label: 'Re-evaluate',
  description: 'Evaluate this pull request again',
  identifier: 're-evaluate',
} as const;

/** The buttons of an ESCALATED check run: a human decides it on GitHub (contract §11). */
export const APPROVE = {
  label: 'Approve',
  description: 'Approve this escalation (maintainers)',
  identifier: 'approve',
} as const;

export const REJECT = {
  label: 'Reject',
  description: 'Reject this escalation (maintainers)',
  identifier: 'reject',
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

/** The check run's buttons: Approve and Reject only while a human decision is pending. */
export const actionsFor = (conclusion: Conclusion) =>
  conclusion === 'action_required' ? [REEVALUATE, APPROVE, REJECT] : [REEVALUATE];

/**
 * What completes a check run with `output`: its conclusion and text, its buttons (Approve and
 * Reject only where a human can decide from it) and, with a receipt, the receipt's link.
 */
export function completedCheckRun(
  output: CheckRunOutput & { receiptId?: string },
  options: { decidable: boolean; baseUrl: string; completedAt: string },
) {
  return {
    status: 'completed' as const,
    conclusion: output.conclusion,
    completed_at: options.completedAt,
    output: { title: output.title, summary: output.summary },
    actions: options.decidable ? actionsFor(output.conclusion) : [REEVALUATE],
    ...(output.receiptId
      ? {
          external_id: output.receiptId,
          details_url: receiptPageUrl(options.baseUrl, output.receiptId),
        }
      : {}),
  };
}

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
    ...renderAgentSessions(response.claim.action, options.baseUrl),
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

/** What the pull request's own `.github/svc.yml` would decide (simulated, never signed). */
export type Preview =
  | { kind: 'invalid'; problem: string }
  | { kind: 'not_gated'; author: string }
  | {
      kind: 'evaluated';
      verdict: 'ALLOWED' | 'ESCALATED' | 'BLOCKED';
      admissibility: string;
      policy: string;
      failing: { rule: string; reason: string }[];
    };

export const PREVIEW_HEADING = 'What the proposed .github/svc.yml would decide';

// How much a verdict lets through: a proposed config that raises it loosens the gate.
const LENIENCY = { BLOCKED: 0, ESCALATED: 1, ALLOWED: 2 } as const;

/** Whether the proposed config would let this pull request through more easily than the base's. */
export function loosens(base: keyof typeof LENIENCY, preview: Preview): boolean {
  if (preview.kind === 'invalid') return false;
  // Not gated: a neutral check, which passes a required check as success does.
  if (preview.kind === 'not_gated') return base !== 'ALLOWED';
  return LENIENCY[preview.verdict] > LENIENCY[base];
}

/**
 * The check run's output with a section on the pull request's proposed `.github/svc.yml`. The
 * base branch's file decided the verdict above it; this only says what the change would
 * decide, and says plainly when it would loosen the gate.
 */
export function renderPreview(
  output: CheckRunOutput,
  base: { verdict: keyof typeof LENIENCY },
  preview: Preview,
): CheckRunOutput {
  const lines = [
    '',
    `### ${PREVIEW_HEADING}`,
    '',
    'This pull request changes `.github/svc.yml`. The verdict above is the base branch’s file’s: a pull request cannot change its own gate. Were this change merged, its file would decide:',
    '',
  ];
  if (preview.kind === 'invalid') {
    lines.push(
      `**Invalid configuration**: ${cell(preview.problem)}`,
      '',
      'Merged as it is, every pull request into the base branch would get a failing check until the file is fixed.',
    );
  } else if (preview.kind === 'not_gated') {
    lines.push(
      `**Not gated**: @${cell(preview.author)} would not be one of its \`agents\`, and \`gate_humans\` would be false, so this pull request would get a neutral check.`,
    );
  } else {
    lines.push(
      `**${preview.verdict} · ${cell(preview.admissibility)}** under policy **${cell(preview.policy)}**.`,
    );
    if (preview.failing.length > 0) {
      lines.push('', '| | Rule | Result |', '|---|---|---|');
      for (const rule of preview.failing)
        lines.push(`| ❌ | \`${cell(rule.rule)}\` | ${cell(rule.reason)} |`);
    } else {
      lines.push('', 'Every rule would pass.');
    }
  }
  if (loosens(base.verdict, preview)) {
    const now = base.verdict;
    const then = preview.kind === 'evaluated' ? preview.verdict : 'not gated';
    lines.push(
      '',
      `> ⚠️ **This change loosens the gate**: under the proposed file this pull request would be ${then} instead of ${now}. Review the change to \`.github/svc.yml\` as a change to who may merge what.`,
    );
  }
  lines.push('', 'This preview was simulated: no receipt records it.');
  return { ...output, summary: clipSummary(`${output.summary}\n${lines.join('\n')}`) };
}

/**
 * The check run once a person decided its escalation on GitHub: success (approve) or failure
 * (reject), naming who decided and linking the escalated receipt and the decision's.
 */
export function renderDisposition(input: {
  baseUrl: string;
  decision: 'approve' | 'reject';
  /** A GitHub login (`github_user`), or a person an API key's holder named (`user`). */
  reviewer: { kind: string; id: string };
  parentReceiptId: string;
  dispositionReceiptId: string;
}): CheckRunOutput {
  const approve = input.decision === 'approve';
  const onGithub = input.reviewer.kind === 'github_user';
  const plain = onGithub ? `@${input.reviewer.id}` : input.reviewer.id;
  const who = onGithub ? `@${cell(input.reviewer.id)}` : cell(input.reviewer.id);
  const link = (id: string) => `[\`${id}\`](${receiptPageUrl(input.baseUrl, id)})`;
  const summary = [
    `## ${approve ? 'Approved' : 'Rejected'} by ${who} after escalation`,
    '',
    `svc escalated this commit to a human; ${who} ${approve ? 'approved' : 'rejected'} it ${onGithub ? 'on GitHub' : 'through the svc API'}.`,
    '',
    `- Escalated receipt: ${link(input.parentReceiptId)}`,
    `- Decision receipt: ${link(input.dispositionReceiptId)} (signed, appended to the ledger, linked to the escalated receipt)`,
    '',
    'A new push is evaluated afresh: this decision holds for this commit only.',
  ].join('\n');
  return {
    conclusion: approve ? 'success' : 'failure',
    title: clipTitle(
      `${approve ? 'ALLOWED' : 'BLOCKED'}: ${approve ? 'approved' : 'rejected'} by ${plain}`,
    ),
    summary: clipSummary(summary),
  };
}
