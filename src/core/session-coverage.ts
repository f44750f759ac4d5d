import type { Verdict } from './policy.js';
import type { SessionRecord } from './session-record.js';

/** A session's counts and whether it is covered (contract §12). */
export interface SessionCoverage {
  /** Tool-call decisions by verdict (dispositions and outcomes are counted apart). */
  decisions: Record<Verdict, number>;
  dispositions: number;
  outcomes: number;
  ran_without_allow: number;
  /** Whether the harness reports outcomes in this session: it reported at least one. */
  reports_outcomes: boolean;
  /** ALLOWED decisions with no outcome, in a session whose harness reports outcomes. */
  missing_outcomes: string[];
  covered: boolean;
}

/**
 * Calls whose harness has no event after them: Cursor gates file reads with beforeReadFile
 * (the tool `Read`) and reports nothing once the file is read. Their ALLOWED decisions cannot
 * have an outcome, so coverage does not wait for one.
 */
const NO_AFTER_EVENT: Readonly<Record<string, ReadonlySet<string>>> = {
  cursor: new Set(['Read']),
};

/** Whether the harness reports an outcome after this tool's calls, when it reports outcomes. */
export const callHasOutcomeEvent = (harness: string, toolName: string): boolean =>
  !NO_AFTER_EVENT[harness]?.has(toolName);

/**
 * Coverage of a session's records (contract §12): covered when every outcome has an ALLOWED
 * decision (else it is `ran_without_allow`), no record is `ran_without_allow`, and, where the
 * harness reports outcomes, every ALLOWED decision has its outcome. svc cannot tell a call
 * that was allowed and then not run from one that ran unreported, so every ALLOWED decision of
 * such a session counts as acted on, except calls the harness never reports after
 * (`callHasOutcomeEvent`). Pure; the stores keep the same counts in their appends.
 */
export function sessionCoverage(
  records: readonly SessionRecord[],
  harness: string,
): SessionCoverage {
  const decisions: Record<Verdict, number> = { ALLOWED: 0, BLOCKED: 0, ESCALATED: 0 };
  let dispositions = 0;
  let ranWithoutAllow = 0;
  const answered = new Set<string>();
  const outcomes = records.filter((r) => r.kind === 'outcome');
  for (const r of records) {
    if (r.kind === 'decision') decisions[r.verdict]++;
    else if (r.kind === 'disposition') dispositions++;
    else {
      if (r.ran_without_allow) ranWithoutAllow++;
      if (r.parent_receipt_id !== null) answered.add(r.parent_receipt_id);
    }
  }
  const reportsOutcomes = outcomes.length > 0;
  const missing = reportsOutcomes
    ? records
        .filter((r) => r.kind === 'decision' && r.verdict === 'ALLOWED')
        .filter((r) => callHasOutcomeEvent(harness, r.tool_name))
        .filter((r) => !answered.has(r.receipt_id))
        .map((r) => r.receipt_id)
    : [];
  return {
    decisions,
    dispositions,
    outcomes: outcomes.length,
    ran_without_allow: ranWithoutAllow,
    reports_outcomes: reportsOutcomes,
    missing_outcomes: missing,
    covered: ranWithoutAllow === 0 && missing.length === 0,
  };
}
