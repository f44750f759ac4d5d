import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface HotSpot {
  function: string;
  location: string;
  ms: number;
  /** Share of the busy time (idle excluded) of the profiled window. */
  pct: number;
}

export interface ProfileSummary {
  busy_ms: number;
  /** Time in the function itself; native calls from JS (SQLite, crypto) count as the caller's. */
  self: HotSpot[];
  /** Self time summed per module: a package, a file of the service, Node internals. */
  by_module: HotSpot[];
  /** Time in the service's own functions, callees included. */
  inclusive: HotSpot[];
}

const IDLE = '(idle)';

function pathOf(url: string): string {
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  return path.startsWith('/') ? relative(process.cwd(), path) : path;
}

const locationOf = (frame: CallFrame) =>
  frame.url ? `${pathOf(frame.url)}:${frame.lineNumber + 1}` : '(native)';

function moduleOf(frame: CallFrame): string {
  if (!frame.url) return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  const path = pathOf(frame.url);
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return pkg[1]!;
  if (path.startsWith('node:')) return 'node: internals';
  return path;
}

const isServiceCode = (frame: CallFrame) => /(^|\/)dist\/src\//.test(pathOf(frame.url));

function top(map: Map<string, HotSpot>, busyUs: number, limit: number): HotSpot[] {
  return [...map.values()]
    .sort((a, b) => b.ms - a.ms)
    .slice(0, limit)
    .map((h) => ({
      ...h,
      ms: Math.round(h.ms / 1000),
      pct: Number(((100 * h.ms) / Math.max(busyUs, 1)).toFixed(1)),
    }));
}

/**
 * Summarizes a `node --cpu-prof` profile. `window` keeps only the samples taken within it, in
 * microseconds of the monotonic clock (what `process.hrtime.bigint() / 1000n` reads and the
 * profile's timestamps use on Linux), so that start-up does not dilute the load profiled.
 */
export function summarizeProfile(
  file: string,
  limit = 20,
  window?: [number, number],
): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);

  // Accumulated in microseconds; `top` converts.
  const self = new Map<string, HotSpot>();
  const modules = new Map<string, HotSpot>();
  const inclusive = new Map<string, HotSpot>();
  const add = (
    map: Map<string, HotSpot>,
    key: string,
    fn: string,
    location: string,
    us: number,
  ) => {
    const entry = map.get(key) ?? { function: fn, location, ms: 0, pct: 0 };
    entry.ms += us;
    map.set(key, entry);
  };

  let busyUs = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (window && (at < window[0] || at > window[1])) return;
    // A sample's delta is the time until the next one: it belongs to the sampled frame.
    const delta = profile.timeDeltas[i + 1] ?? 0;
    const frame = byId.get(id)?.callFrame;
    if (!frame || frame.functionName === IDLE) return;
    busyUs += delta;
    const fn = frame.functionName || '(anonymous)';
    const location = locationOf(frame);
    add(self, `${fn}@${location}`, fn, location, delta);
    const mod = moduleOf(frame);
    add(modules, mod, mod, '', delta);
    // Recursion must not count a function twice for one sample.
    const seen = new Set<string>();
    for (let node: number | undefined = id; node !== undefined; node = parent.get(node)) {
      const f = byId.get(node)!.callFrame;
      if (!isServiceCode(f)) continue;
      const name = f.functionName || '(anonymous)';
      const key = `${name}@${locationOf(f)}`;
      if (seen.has(key)) continue;
      seen.add(key);
      add(inclusive, key, name, locationOf(f), delta);
    }
  });
  return {
    busy_ms: Math.round(busyUs / 1000),
    self: top(self, busyUs, limit),
    by_module: top(modules, busyUs, Math.ceil(limit / 2)),
    inclusive: top(inclusive, busyUs, limit),
  };
}

export function formatSummary(title: string, summary: ProfileSummary): string {
  const table = (heading: string, rows: HotSpot[]) => [
    `  ${heading}`,
    ...rows.map(
      (h) =>
        `  ${h.pct.toFixed(1).padStart(6)} % ${String(h.ms).padStart(7)} ms  ${h.function}` +
        (h.location ? `  ${h.location}` : ''),
    ),
  ];
  return [
    `${title} (busy ${summary.busy_ms} ms)`,
    ...table('self time', summary.self),
    ...table('self time by module', summary.by_module),
    ...table('inclusive time, service code', summary.inclusive),
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error('usage: node dist/bench/cpuprofile-top.js <file.cpuprofile>...');
    process.exit(2);
  }
  for (const file of files) console.log(formatSummary(file, summarizeProfile(file, 25)) + '\n');
}
