/**
 * What `run` returned, and the CPU time it took in this process in milliseconds, for tests
 * that guard against super-linear matching (a backtracking regular expression or glob takes
 * minutes on their inputs, where a linear one takes milliseconds). CPU time, not wall clock:
 * a test worker that a loaded machine leaves waiting for a core spends none of that wait
 * here, so the guard fails on a blow-up and not on a busy machine. How fast matching is
 * stays with the bench.
 */
export function cpuTimed<T>(run: () => T): { value: T; ms: number } {
  const before = process.cpuUsage();
  const value = run();
  const used = process.cpuUsage(before);
  return { value, ms: (used.user + used.system) / 1000 };
}
