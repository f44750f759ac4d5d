import type { AdmissibilityStatus } from '../core/evaluation.js';
import type { Verdict } from '../core/policy.js';
import type { AdmissibilityCounts, VerdictCounts } from '../ports/ledger-queries.js';

/** The counters every backend keeps per repository and per agent. */
export interface CounterRow {
  total: number;
  allowed: number;
  blocked: number;
  escalated: number;
  accepted: number;
  non_deterministic: number;
  rejected: number;
}

/** The counter columns of a CounterRow, in the order the stores keep them. */
export const COUNTERS = [
  'total',
  'allowed',
  'blocked',
  'escalated',
  'accepted',
  'non_deterministic',
  'rejected',
] as const satisfies readonly (keyof CounterRow)[];

/** Every counter at zero. */
export const noCounters = (): CounterRow => ({
  total: 0,
  allowed: 0,
  blocked: 0,
  escalated: 0,
  accepted: 0,
  non_deterministic: 0,
  rejected: 0,
});

/** The counters one receipt adds: 1 to the total, to its verdict and to its admissibility. */
export const countersOf = (verdict: Verdict, status: AdmissibilityStatus): CounterRow => ({
  total: 1,
  allowed: Number(verdict === 'ALLOWED'),
  blocked: Number(verdict === 'BLOCKED'),
  escalated: Number(verdict === 'ESCALATED'),
  accepted: Number(status === 'ACCEPTED'),
  non_deterministic: Number(status === 'NON_DETERMINISTIC'),
  rejected: Number(status === 'REJECTED'),
});

export const verdictsOf = (r: CounterRow): VerdictCounts => ({
  ALLOWED: r.allowed,
  BLOCKED: r.blocked,
  ESCALATED: r.escalated,
});

export const admissibilityOf = (r: CounterRow): AdmissibilityCounts => ({
  ACCEPTED: r.accepted,
  NON_DETERMINISTIC: r.non_deterministic,
  REJECTED: r.rejected,
});

/** Ledger totals from the (verdict, admissibility) count rows a backend keeps. */
export function foldTotals(
  rows: { verdict: Verdict; admissibility: AdmissibilityStatus; n: number }[],
): { total: number; by_verdict: VerdictCounts; by_admissibility: AdmissibilityCounts } {
  const by_verdict: VerdictCounts = { ALLOWED: 0, BLOCKED: 0, ESCALATED: 0 };
  const by_admissibility: AdmissibilityCounts = { ACCEPTED: 0, NON_DETERMINISTIC: 0, REJECTED: 0 };
  let total = 0;
  for (const row of rows) {
    by_verdict[row.verdict] += row.n;
    by_admissibility[row.admissibility] += row.n;
    total += row.n;
  }
  return { total, by_verdict, by_admissibility };
}

/** Counts by verdict, and their total, from the (verdict, count) rows a backend groups. */
export function foldVerdicts(
  rows: { verdict: Verdict; n: number }[],
): VerdictCounts & { total: number } {
  const counts = { ALLOWED: 0, BLOCKED: 0, ESCALATED: 0, total: 0 };
  for (const row of rows) {
    counts[row.verdict] += row.n;
    counts.total += row.n;
  }
  return counts;
}
