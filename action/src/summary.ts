import { submitterLabel, type VerifyResult, type WitnessReport } from '@svc/verify';
import type { TrustedKey } from './trust.js';

export interface RuleRow {
  rule: string;
  passed: boolean;
  reason: string;
}

export interface SummaryFacts {
  mode: string;
  /** False when the receipt did not verify: then no verdict is shown as if it were signed. */
  trusted: boolean;
  verdict: string | null;
  admissibility: string | null;
  receiptId: string | null;
  receiptPath: string | null;
  /** The receipt's page in the service's ledger explorer, when the receipt came from one. */
  receiptUrl?: string | null;
  rules: RuleRow[];
  verification: VerifyResult | null;
  key: TrustedKey | null;
  problems: string[];
  /** Why the step passes although the verdict is not ALLOWED and ACCEPTED (fail-on). */
  warning: string | null;
  /** The log witness run (input witness-state), if any. */
  witness?: WitnessReport | null;
  witnessState?: string | null;
  /** The verified disposition of an ESCALATED receipt, in one sentence, if any. */
  disposition?: string | null;
}

// Reasons and names come from the receipt: escape them so they cannot break out of the table
// or inject markup into the job summary.
const cell = (text: string): string =>
  text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\|/g, '&#124;')
    .replace(/[\r\n]+/g, ' ');
const code = (text: string): string => `<code>${cell(text)}</code>`;
const link = (url: string, text: string): string =>
  `<a href="${cell(url).replace(/"/g, '&quot;')}">${cell(text)}</a>`;

/** The job summary as Markdown: verdict, each rule, the receipt and how it was verified. */
export function renderSummary(f: SummaryFacts): string {
  const lines = [
    f.trusted
      ? `## svc ${f.mode}: ${cell(f.verdict ?? 'no verdict')} / ${cell(f.admissibility ?? 'no admissibility')}`
      : `## svc ${f.mode}: receipt not trusted`,
    '',
  ];
  for (const problem of f.problems) lines.push(`> **Failed:** ${cell(problem)}`, '');
  if (f.disposition) lines.push(`> **Decided:** ${cell(f.disposition)}`, '');
  if (f.warning) lines.push(`> **Warning:** ${cell(f.warning)}`, '');
  lines.push('| | |', '|---|---|');
  lines.push(
    `| Receipt | ${f.receiptId ? code(f.receiptId) : '—'}${f.receiptUrl ? ` · ${link(f.receiptUrl, 'receipt page')}` : ''} |`,
  );
  if (f.receiptPath) lines.push(`| Receipt file | ${code(f.receiptPath)} |`);
  const v = f.verification;
  if (v) {
    lines.push(`| Verified offline | ${v.valid ? 'yes' : '**no**'} |`);
    if (f.key) lines.push(`| Key | ${code(f.key.key.keyId)} from ${cell(f.key.origin)} |`);
    const signed = v.signed;
    if (signed) {
      lines.push(`| Contract | ${cell(signed.contract)} |`);
      if (signed.policy)
        lines.push(
          `| Policy | ${code(signed.policy.name)} ${code(signed.policy.config_hash)}${signed.policy.overrides ? ' (overridden by the claim)' : ''} |`,
        );
      if (signed.submitter) lines.push(`| Submitter | ${code(submitterLabel(signed.submitter))} |`);
    }
  } else if (f.mode === 'simulate') {
    lines.push('| Verified offline | not applicable: a simulation is not signed |');
  } else {
    lines.push('| Verified offline | **no**: no trusted key to verify with |');
  }
  if (f.witnessState) {
    const w = f.witness;
    lines.push(
      `| Log witness | ${
        !w
          ? '**failed**: see above'
          : w.ok
            ? `${cell(w.outcome)}: ${code(w.origin ?? '')} size ${w.size}, root ${code(w.root ?? '')}`
            : `**REFUSED (${cell(w.outcome)})**: state left as it was`
      } |`,
      `| Witness state | ${code(f.witnessState)} |`,
    );
  }
  if (f.rules.length > 0) {
    lines.push('', '| Rule | Result | Reason |', '|---|---|---|');
    for (const r of f.rules)
      lines.push(`| ${code(r.rule)} | ${r.passed ? 'pass' : '**fail**'} | ${cell(r.reason)} |`);
  }
  if (v) {
    lines.push('', '| Check | Status | Detail |', '|---|---|---|');
    for (const c of v.checks)
      lines.push(`| ${code(c.name)} | ${c.status} | ${cell(c.detail ?? '')} |`);
  }
  return `${lines.join('\n')}\n`;
}
