import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { writeAtomically, type BenchResults, type ScenarioResult } from './report.js';

/**
 * Two configurations of the service measured in alternating rounds (A, B, A, B, …), each
 * round a run of bench/run.js with its own baselines: on a shared machine, only rounds taken
 * close together compare, and each round's ratio to Express is judged against the Express
 * route of the same round. A configuration is a node binary, a service build and its flags:
 * Node 24 against Node 22, with or without `npm start`'s flags, or one build against another.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const RUN = join(ROOT, 'dist/bench/run.js');

interface Variant {
  name: 'A' | 'B';
  node: string;
  server: string | null;
  startFlags: boolean;
  nodeArgs: string;
}

interface Options {
  variants: [Variant, Variant];
  rounds: number;
  only: string[];
  size: number;
  duration: string | null;
  warmup: string | null;
  smoke: boolean;
  out: string | null;
  keep: boolean;
}

const label = (size: number) =>
  size >= 1000 && size % 1000 === 0 ? `${size / 1000}k` : String(size);

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      a: { type: 'string' },
      b: { type: 'string' },
      'a-server': { type: 'string' },
      'b-server': { type: 'string' },
      'a-no-start-flags': { type: 'boolean', default: false },
      'b-no-start-flags': { type: 'boolean', default: false },
      'a-node-args': { type: 'string' },
      'b-node-args': { type: 'string' },
      rounds: { type: 'string' },
      only: { type: 'string' },
      size: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      smoke: { type: 'boolean', default: false },
      out: { type: 'string' },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(`usage: node dist/bench/node-ab.js [options]
Alternating rounds A, B, A, B, … of bench/run.js (baselines included in every round), then
a table of CPU per request, its ratio to the Express route of the same round, and peak RSS.
  --a <node>, --b <node>     node binary of configuration A / B (default: the one running
                             this script); the service and the baselines run on it
  --a-server, --b-server <file>
                             service entry point of A / B (default dist/src/server.js); a
                             build in another copy of the project, with its own node_modules
  --a-no-start-flags, --b-no-start-flags
                             run A / B without the node flags of \`npm start\`
  --a-node-args, --b-node-args <flags>
                             node flags added for A / B, e.g. --b-node-args=--max-old-space-size=1024
  --rounds <n>               rounds of each configuration (default 3, smoke 1)
  --only <a,b>               scenarios (default evaluate@empty,verify,search-filters@<size>,
                             search-text@<size>)
  --size <n>                 receipts in the ledger the search scenarios read (default 10000,
                             smoke 1000); seeded once, shared by every round
  --duration <s>, --warmup <s>
                             per load scenario, passed to run.js (its defaults otherwise)
  --smoke                    run.js --smoke: seconds-long rounds, to check the driver works
  --out <file>               every round's results and the summary, JSON
  --keep                     keep the rounds' results and the seeded ledger`);
    process.exit(0);
  }
  const positive = (text: string | undefined, fallback: number) => {
    if (text === undefined) return fallback;
    const n = Number(text);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`not a positive integer: ${text}`);
    return n;
  };
  const smoke = values.smoke;
  const size = positive(values.size, smoke ? 1000 : 10_000);
  const variant = (name: 'A' | 'B', key: 'a' | 'b'): Variant => ({
    name,
    node: resolve(values[key] ?? process.execPath),
    server: values[`${key}-server`] ? resolve(values[`${key}-server`]!) : null,
    startFlags: !values[`${key}-no-start-flags`],
    nodeArgs: values[`${key}-node-args`] ?? '',
  });
  return {
    variants: [variant('A', 'a'), variant('B', 'b')],
    rounds: positive(values.rounds, smoke ? 1 : 3),
    only: (
      values.only ??
      `evaluate@empty,verify,search-filters@${label(size)},search-text@${label(size)}`
    )
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    size,
    duration: values.duration ?? null,
    warmup: values.warmup ?? null,
    smoke,
    out: values.out ? resolve(values.out) : null,
    keep: values.keep,
  };
}

const log = (message: string) =>
  console.log(`[node-ab ${new Date().toISOString().slice(11, 19)}] ${message}`);

function runArgs(variant: Variant, options: Options, out: string, ledgerDir: string): string[] {
  return [
    RUN,
    ...(options.smoke ? ['--smoke'] : []),
    '--no-docs',
    '--out',
    out,
    '--only',
    options.only.join(','),
    '--sizes',
    String(options.size),
    '--ledger-dir',
    ledgerDir,
    '--node',
    variant.node,
    ...(variant.server ? ['--server', variant.server] : []),
    ...(variant.startFlags ? [] : ['--no-start-flags']),
    ...(variant.nodeArgs ? [`--node-args=${variant.nodeArgs}`] : []),
    ...(options.duration ? ['--duration', options.duration] : []),
    ...(options.warmup ? ['--warmup', options.warmup] : []),
  ];
}

/** One run of run.js; its log lines are passed through, prefixed with the round. */
function runRound(args: string[], prefix: string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let tail = '';
    const pass = (chunk: Buffer) => {
      const text = chunk.toString();
      tail = (tail + text).slice(-4_000);
      for (const line of text.split('\n')) {
        if (line.startsWith('[bench ')) console.log(`${prefix} ${line}`);
      }
    };
    child.stdout.on('data', pass);
    child.stderr.on('data', pass);
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      code === 0
        ? resolvePromise()
        : reject(new Error(`${prefix} run.js ended with ${signal ?? `exit ${code}`}:\n${tail}`)),
    );
  });
}

interface Round {
  variant: 'A' | 'B';
  round: number;
  results: BenchResults;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

interface Cell {
  cpu_us: number[];
  cpu_ratio: number[];
  peak_rss_mb: number | null;
  hwm_rss_mb: number | null;
}

/** Per scenario and configuration: every round's CPU per request and ratio, and the peak RSS. */
function summarize(rounds: Round[], ids: string[]): Record<string, Record<'A' | 'B', Cell>> {
  const out: Record<string, Record<'A' | 'B', Cell>> = {};
  for (const id of ['baseline-express', ...ids]) {
    const cell = (variant: 'A' | 'B'): Cell => {
      const found = rounds
        .filter((r) => r.variant === variant)
        .map((r) => r.results.scenarios.find((s) => s.id === id))
        .filter((s): s is ScenarioResult => s !== undefined && s.status === 'ok');
      const max = (pick: (s: ScenarioResult) => number | null) => {
        const values = found.map(pick).filter((n): n is number => n !== null);
        return values.length ? Math.max(...values) : null;
      };
      return {
        cpu_us: found.map((s) => s.cpu_us_per_request).filter((n): n is number => n !== null),
        cpu_ratio: found.map((s) => s.cpu_ratio_to_express).filter((n): n is number => n !== null),
        peak_rss_mb: max((s) => s.peak_rss_mb),
        hwm_rss_mb: max((s) => s.hwm_rss_mb),
      };
    };
    out[id] = { A: cell('A'), B: cell('B') };
  }
  return out;
}

const describeVariant = (v: Variant, results: BenchResults | undefined) => {
  const ed = results?.machine.ed25519_native;
  return (
    `${v.name}: Node ${results?.settings.service_node?.version ?? '?'} (${v.node})` +
    (v.server ? `, server ${v.server}` : '') +
    `, flags: ${results?.settings.node_args?.join(' ') || 'none'}` +
    (ed ? `; node:crypto Ed25519 sign ${ed.sign_us} µs, verify ${ed.verify_us} µs` : '')
  );
};

function renderTable(
  options: Options,
  rounds: Round[],
  summary: ReturnType<typeof summarize>,
): string {
  const first = (name: 'A' | 'B') => rounds.find((r) => r.variant === name)?.results;
  const m = rounds[0]!.results.machine;
  const fmt = (values: number[], digits = 0) =>
    values.length === 0
      ? '—'
      : values.length === 1
        ? values[0]!.toFixed(digits)
        : `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
  const lines = [
    `CPU: ${m.cpu_model}, ${m.cores} cores, ${m.memory_mb} MB (harness on Node ${m.node})`,
    describeVariant(options.variants[0], first('A')),
    describeVariant(options.variants[1], first('B')),
    `Rounds: ${rounds.map((r) => `${r.variant}${r.round}`).join(' ')}; load (1 min) at each ` +
      `round's end: ${rounds.map((r) => r.results.machine.loadavg_end[0]).join(', ')}`,
    '',
    '| scenario | A CPU µs/req | B CPU µs/req | B / A | A × Express | B × Express | peak RSS MB A / B |',
    '|---|--:|--:|--:|--:|--:|--:|',
  ];
  for (const [id, { A, B }] of Object.entries(summary)) {
    const ratio =
      A.cpu_us.length && B.cpu_us.length ? (median(B.cpu_us) / median(A.cpu_us)).toFixed(3) : '—';
    lines.push(
      `| ${id} | ${fmt(A.cpu_us)} | ${fmt(B.cpu_us)} | ${ratio} | ${fmt(A.cpu_ratio, 2)} | ` +
        `${fmt(B.cpu_ratio, 2)} | ${A.peak_rss_mb ?? '—'} / ${B.peak_rss_mb ?? '—'} |`,
    );
  }
  lines.push(
    '',
    'Medians over the rounds (min–max); B / A compares the medians of CPU per request.',
  );
  return lines.join('\n');
}

async function main(): Promise<void> {
  const options = parseOptions();
  const workDir = mkdtempSync(join(tmpdir(), 'svc-node-ab-'));
  const ledgerDir = join(workDir, 'ledger');
  mkdirSync(ledgerDir);
  const rounds: Round[] = [];
  try {
    log(`load ${loadavg()[0]!.toFixed(2)}; ${options.rounds} rounds of A and B`);
    for (let round = 1; round <= options.rounds; round++) {
      for (const variant of options.variants) {
        const out = join(workDir, `round-${round}-${variant.name}.json`);
        log(`round ${round} ${variant.name}`);
        await runRound(runArgs(variant, options, out, ledgerDir), `${variant.name}${round}`);
        const results = JSON.parse(readFileSync(out, 'utf8')) as BenchResults;
        rounds.push({ variant: variant.name, round, results });
      }
    }
    const summary = summarize(rounds, options.only);
    const table = renderTable(options, rounds, summary);
    if (options.out) {
      writeAtomically(
        options.out,
        JSON.stringify(
          {
            schema: 'svc-node-ab/1',
            date: new Date().toISOString(),
            machine: rounds[0]!.results.machine,
            variants: options.variants.map((v) => ({
              ...v,
              service_node: rounds.find((r) => r.variant === v.name)?.results.settings.service_node,
              node_args: rounds.find((r) => r.variant === v.name)?.results.settings.node_args,
            })),
            only: options.only,
            summary,
            rounds,
          },
          null,
          2,
        ) + '\n',
      );
      log(`results: ${options.out}`);
    }
    console.log('\n' + table);
  } finally {
    if (options.keep) log(`rounds and ledger kept in ${workDir}`);
    else rmSync(workDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
