import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time and memory of a service process, read from Linux's /proc. CPU time per answered
 * request does not move with the machine's other load the way req/s does (the load generator
 * and everything else compete for the same cores), so it is the figure to compare across runs.
 * Elsewhere than Linux every reading is null and the harness reports no CPU figures.
 */

/** Clock ticks per second of utime/stime (`getconf CLK_TCK`, 100 on every common Linux). */
export const CLOCK_TICKS = (() => {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(ticks) && ticks > 0 ? ticks : 100;
  } catch {
    return 100;
  }
})();

const read = (path: string): string | null => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
};

/** The process and its descendants (cluster workers), each listed once. */
export function processTree(pid: number): number[] {
  const seen = new Set<number>();
  const visit = (p: number) => {
    if (seen.has(p)) return;
    seen.add(p);
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      return;
    }
    for (const task of tasks) {
      const children = read(`/proc/${p}/task/${task}/children`);
      for (const child of children?.trim().split(/\s+/) ?? []) if (child) visit(Number(child));
    }
  };
  visit(pid);
  return [...seen];
}

/** utime + stime of one process in clock ticks (all its threads); null when it is gone. */
function cpuTicksOf(pid: number): number | null {
  const stat = read(`/proc/${pid}/stat`);
  if (!stat) return null;
  // The command name (field 2) is parenthesized and may hold spaces: split after its ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 (utime, stime), counted from 1 with pid and comm before the slice.
  return Number(fields[11]) + Number(fields[12]);
}

/** CPU seconds used so far by a process and its descendants; null where /proc is missing. */
export function cpuSeconds(pid: number): number | null {
  let ticks = 0;
  let any = false;
  for (const p of processTree(pid)) {
    const t = cpuTicksOf(p);
    if (t === null) continue;
    ticks += t;
    any = true;
  }
  return any ? ticks / CLOCK_TICKS : null;
}

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number | null {
  const match = read(`/proc/${pid}/status`)?.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
  return match ? Number(match[1]) : null;
}

/** Resident memory of a process and its descendants now, in MiB. */
export function rssMiB(pid: number): number | null {
  let kb = 0;
  let any = false;
  for (const p of processTree(pid)) {
    const v = statusKb(p, 'VmRSS');
    if (v === null) continue;
    kb += v;
    any = true;
  }
  return any ? kb / 1024 : null;
}

/** The largest resident size any one process of the tree has had since it started, in MiB. */
export function peakRssMiB(pid: number): number | null {
  const values = processTree(pid)
    .map((p) => statusKb(p, 'VmHWM'))
    .filter((v): v is number => v !== null);
  return values.length ? Math.max(...values) / 1024 : null;
}

/**
 * Samples the tree's resident size until stopped; the result is the largest sum seen, the
 * peak of the window (VmHWM is per process and over its whole life, so it cannot say which
 * scenario reached it).
 */
export function sampleRss(pid: number, everyMs = 100): () => number | null {
  let peak = rssMiB(pid);
  const timer = setInterval(() => {
    const now = rssMiB(pid);
    if (now !== null && (peak === null || now > peak)) peak = now;
  }, everyMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    const now = rssMiB(pid);
    if (now !== null && (peak === null || now > peak)) peak = now;
    return peak;
  };
}
