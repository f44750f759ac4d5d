/** Nearest-rank percentile of ascending values; NaN for none. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** Milliseconds rounded to `decimals` places, for reports. */
export const roundMs = (ms: number, decimals: number): number => {
  const scale = 10 ** decimals;
  return Math.round(ms * scale) / scale;
};

/** p50, p90, p99 and the minimum of a set of timings in milliseconds, rounded. */
export function latencySummary(times: readonly number[], decimals: number) {
  const sorted = [...times].sort((a, b) => a - b);
  const ms = (v: number) => roundMs(v, decimals);
  return {
    p50_ms: ms(percentile(sorted, 50)),
    p90_ms: ms(percentile(sorted, 90)),
    p99_ms: ms(percentile(sorted, 99)),
    min_ms: ms(sorted[0] ?? Number.NaN),
  };
}
