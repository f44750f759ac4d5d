import { readFileSync, renameSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { MicroResult } from './micro.js';
import type { SeedResult } from './seed.js';
import type { AuditResult, TreeCostResult } from './tlog.js';

export type ScenarioKind =
  | 'baseline-http'
  | 'baseline-express'
  | 'health'
  | 'evaluate'
  | 'evaluate-agent'
  | 'evaluate-sessions'
  | 'simulate'
  | 'hook'
  | 'hook-paced'
  | 'authzen'
  | 'authzen-batch'
  | 'verify'
  | 'search-filters'
  | 'search-text'
  | 'stats'
  | 'proof'
  | 'checkpoint'
  | 'consistency';

export interface ScenarioResult {
  id: string;
  kind: ScenarioKind;
  method: 'GET' | 'POST';
  path: string;
  connections: number;
  /** Requests a second each connection sent at most, when the scenario is paced. */
  connection_rate?: number;
  /** Receipts in the ledger when the scenario started and ended; null for the baselines. */
  ledger_size: number | null;
  ledger_size_end: number | null;
  /** `missing`: the endpoint answered 404 (not implemented); `error`: it did not answer 2xx. */
  status: 'ok' | 'missing' | 'error';
  detail?: string;
  rps: number | null;
  p50_ms: number | null;
  p99_ms: number | null;
  ratio_to_express: number | null;
  responses_2xx?: number;
  non_2xx?: number;
  errors?: number;
  timeouts?: number;
  status_codes?: Record<string, number>;
  duration_s?: number;
  /** The service's user + system CPU seconds over the measured window (all its processes). */
  cpu_seconds: number | null;
  /** cpu_seconds per 2xx response, in microseconds: independent of the machine's other load. */
  cpu_us_per_request: number | null;
  /** cpu_us_per_request over the bare Express route's in the same run. */
  cpu_ratio_to_express: number | null;
  /** Largest resident size of the service (sum over its processes) sampled in the window. */
  peak_rss_mb: number | null;
  /** Largest VmHWM of the service's processes at the window's end: their peak since start. */
  hwm_rss_mb: number | null;
  /** 1, 5 and 15 minute load averages when the scenario ended. */
  loadavg_end: number[] | null;
}

/** What a ledger of one size costs beyond its requests' latency. */
export interface ScaleResult {
  size: number;
  /** From spawning the service on the settled ledger to a 200 from /health?deep=true. */
  restart_ms: number;
  /** The data directory's bytes (database, WAL, log files) over the receipts it holds. */
  bytes_per_receipt: number;
  /** Largest VmHWM of the service over that size's scenarios. */
  peak_rss_mb: number | null;
}

export interface GoalResult {
  goal: string;
  target: string;
  measured: string;
  met: boolean | null;
}

export interface BenchResults {
  schema: 'svc-bench/1';
  mode: 'full' | 'smoke';
  date: string;
  machine: {
    cores: number;
    cpu_model: string;
    node: string;
    platform: string;
    arch: string;
    memory_mb: number;
    /**
     * CPU µs of one node:crypto Ed25519 signature and verification, measured at the start
     * (absent from results before 2026-11-28): the CPU's share of the ratios to Express.
     * Measured on the service's node binary (settings.service_node), whose OpenSSL it uses.
     */
    ed25519_native?: { sign_us: number; verify_us: number };
    /** 1, 5 and 15 minute load averages: other work on the machine skews every number. */
    loadavg_start: number[];
    loadavg_end: number[];
  };
  settings: {
    duration_s: number;
    warmup_s: number;
    micro_seconds: number;
    ledger_sizes: number[];
    server: string;
    only: string[] | null;
    /** Service worker processes (SVC_WORKERS); absent in results from before the option. */
    workers?: number;
    /** Node flags of the service and the baselines; absent in results from before the option. */
    node_args?: string[];
    /** Ledger sizes of the proof scenarios; absent in results from before them. */
    tlog_sizes?: number[];
    /**
     * The node binary the service and the baselines ran on (--node): its version, and its
     * path when not the harness's (`machine.node`). Absent in results from before the option.
     */
    service_node?: { version: string; path: string | null };
  };
  seeding: SeedResult[];
  /** Per seeded ledger size: restart, disk and memory; absent in results from before them. */
  scale?: ScaleResult[];
  scenarios: ScenarioResult[];
  /** The transparency log's costs outside HTTP, and the proofs' ledgers' seeding. */
  tlog?: { tree: TreeCostResult | null; audit: AuditResult | null; seeding: SeedResult[] };
  micro: MicroResult[];
  goals: GoalResult[];
  total_seconds: number;
}

const fmtInt = (n: number | null) => (n === null ? '—' : Math.round(n).toLocaleString('en-US'));
const fmtMs = (n: number | null) => (n === null ? '—' : n < 10 ? n.toFixed(2) : n.toFixed(1));
const fmtRatio = (n: number | null) => (n === null ? '—' : n.toFixed(3));
const fmtCpuRatio = (n: number | null) => (n === null ? '—' : `${n.toFixed(2)} ×`);
const fmtLedger = (n: number | null) => (n === null ? '—' : n.toLocaleString('en-US'));

const find = (results: BenchResults, kind: ScenarioKind, ledger?: 'smallest' | 'largest') => {
  const matching = results.scenarios.filter((s) => s.kind === kind);
  if (ledger === 'smallest') return matching[0];
  if (ledger === 'largest') return matching.at(-1);
  return matching[0];
};

/** The issue's goals for a 2-core machine, judged on this run's numbers. */
export function judgeGoals(results: Omit<BenchResults, 'goals'>): GoalResult[] {
  const r = results as BenchResults;
  const goals: GoalResult[] = [];
  const empty = find(r, 'evaluate', 'smallest');
  const large = find(r, 'evaluate', 'largest');
  const verify = find(r, 'verify');
  const ok = (s: ScenarioResult | undefined): s is ScenarioResult & { rps: number } =>
    s?.status === 'ok' && s.rps !== null;

  goals.push({
    goal: `evaluate throughput, empty ledger, ${empty?.connections ?? 32} connections`,
    target: '≥ 1,500 req/s',
    measured: ok(empty) ? `${fmtInt(empty.rps)} req/s` : (empty?.status ?? 'not run'),
    met: ok(empty) ? empty.rps >= 1500 : null,
  });
  goals.push({
    goal: `evaluate p99, empty ledger, ${empty?.connections ?? 32} connections`,
    target: '< 50 ms',
    measured: ok(empty) ? `${fmtMs(empty.p99_ms)} ms` : (empty?.status ?? 'not run'),
    met: ok(empty) && empty.p99_ms !== null ? empty.p99_ms < 50 : null,
  });
  goals.push({
    goal: 'verify throughput',
    target: '≥ 3,000 req/s',
    measured: ok(verify) ? `${fmtInt(verify.rps)} req/s` : (verify?.status ?? 'not run'),
    met: ok(verify) ? verify.rps >= 3000 : null,
  });
  for (const kind of ['search-filters', 'search-text'] as const) {
    const largest = Math.max(
      ...r.scenarios.filter((s) => s.kind === kind).map((s) => s.ledger_size ?? 0),
    );
    for (const s of r.scenarios.filter((s) => s.kind === kind && s.ledger_size === largest)) {
      goals.push({
        goal: `${kind} p50 at ${fmtLedger(s.ledger_size)} receipts, ${s.connections} connection${s.connections === 1 ? '' : 's'}`,
        target: '< 10 ms',
        measured: ok(s) ? `${fmtMs(s.p50_ms)} ms` : s.status,
        met: ok(s) && s.p50_ms !== null ? s.p50_ms < 10 : null,
      });
    }
  }
  // CPU per request as a multiple of the bare Express route's: the targets that do not move
  // with the machine's load.
  const cpuGoal = (goal: string, s: ScenarioResult | undefined, max: number) =>
    goals.push({
      goal,
      target: `≤ ${max.toFixed(1)} × Express CPU/request`,
      measured:
        s?.cpu_ratio_to_express != null
          ? `${s.cpu_ratio_to_express.toFixed(2)} × (${fmtInt(s.cpu_us_per_request)} µs)`
          : (s?.status ?? 'not run'),
      met: s?.cpu_ratio_to_express != null ? s.cpu_ratio_to_express <= max : null,
    });
  cpuGoal(
    `evaluate CPU per request, empty ledger, ${empty?.connections ?? 32} connections`,
    empty,
    5,
  );
  cpuGoal('verify CPU per request', verify, 4);
  for (const kind of ['search-filters', 'search-text'] as const) {
    const s = r.scenarios.filter((x) => x.kind === kind && x.connections > 1).at(-1);
    if (s) cpuGoal(`${kind} CPU per request at ${fmtLedger(s.ledger_size)} receipts`, s, 15);
  }
  const services = r.scenarios.filter((s) => !s.kind.startsWith('baseline') && s.hwm_rss_mb);
  const peak = services.length ? Math.max(...services.map((s) => s.hwm_rss_mb!)) : null;
  goals.push({
    goal: 'service peak RSS over the run',
    target: '< 250 MB',
    measured: peak === null ? 'not measured' : `${fmtInt(peak)} MB`,
    met: peak === null ? null : peak < 250,
  });
  goals.push({
    goal: `evaluate throughput at ${fmtLedger(large?.ledger_size ?? null)} receipts vs empty ledger`,
    target: '≥ 90 %',
    measured:
      ok(empty) && ok(large) && large !== empty
        ? `${((100 * large.rps) / empty.rps).toFixed(1)} %`
        : 'not run',
    met: ok(empty) && ok(large) && large !== empty ? large.rps >= 0.9 * empty.rps : null,
  });
  goals.push(...hookGoals(r, empty));
  goals.push(...scaleGoals(r));
  goals.push(...tlogGoals(r, empty));
  return goals;
}

/**
 * The agent gate's hook (issue 29): a decision's latency at 8 sessions, each waiting for its
 * answer (saturated) and each at a pace (paced), and its CPU against an evaluate's of the same
 * run: the evaluate scenario (a pull request's claim under `default`, 32 connections) and the
 * same tool calls' claims under `agent` at the same connections (what the door adds).
 */
function hookGoals(r: BenchResults, empty: ScenarioResult | undefined): GoalResult[] {
  const goals: GoalResult[] = [];
  const latency = (
    s: ScenarioResult | undefined,
    how: string,
    [what, unit] = ['hook decision', 'sessions'],
  ) => {
    if (!s) return;
    const { p50_ms: p50, p99_ms: p99 } = s;
    const measured = s.status === 'ok' && p50 !== null && p99 !== null;
    goals.push({
      goal: `${what} latency, ${s.connections} ${unit} ${how}`,
      target: 'p50 < 5 ms, p99 < 20 ms',
      measured: measured ? `p50 ${fmtMs(p50)} ms, p99 ${fmtMs(p99)} ms` : s.status,
      met: measured ? p50 < 5 && p99 < 20 : null,
    });
  };
  const hook = find(r, 'hook');
  latency(hook, 'each sending on its answer (saturated)');
  // Not the hook's: a pull request's evaluate in the same closed loop, the target applied to
  // it to show where the saturated reading's floor is.
  latency(find(r, 'evaluate-sessions'), 'each sending on its answer (saturated)', [
    "the saturated hook's floor: a pull request's evaluate",
    'connections',
  ]);
  for (const s of r.scenarios.filter((x) => x.kind === 'hook-paced'))
    latency(s, `at ${s.connection_rate} calls/s each`);
  const cpu = (base: ScenarioResult | undefined, what: string) => {
    if (!hook) return;
    const a = hook.cpu_us_per_request;
    const b = base?.cpu_us_per_request ?? null;
    goals.push({
      goal: `hook CPU per decision over ${what}`,
      target: '≤ 1.2 ×',
      measured:
        a !== null && b !== null
          ? `${(a / b).toFixed(2)} × (${fmtInt(a)} µs / ${fmtInt(b)} µs)`
          : 'not run',
      met: a !== null && b !== null ? a / b <= 1.2 : null,
    });
  };
  cpu(empty, "the evaluate scenario's");
  cpu(find(r, 'evaluate-sessions'), "a pull request's evaluate at the same connections");
  cpu(find(r, 'evaluate-agent'), "an evaluate's of the same tool call's claim, same connections");
  return goals;
}

/** A million receipts: restart to a healthy deep check, and memory, at the largest size. */
function scaleGoals(r: BenchResults): GoalResult[] {
  const largest = r.scale?.at(-1);
  if (!largest) return [];
  return [
    {
      goal: `restart to a healthy /health?deep=true at ${fmtLedger(largest.size)} receipts`,
      target: '< 3 s',
      measured: `${(largest.restart_ms / 1000).toFixed(2)} s`,
      met: largest.restart_ms < 3000,
    },
    {
      goal: `service peak RSS at ${fmtLedger(largest.size)} receipts`,
      target: '< 250 MB',
      measured: largest.peak_rss_mb === null ? 'not measured' : `${fmtInt(largest.peak_rss_mb)} MB`,
      met: largest.peak_rss_mb === null ? null : largest.peak_rss_mb < 250,
    },
  ];
}

/** The transparency log's targets: its tree's share of evaluate, proofs, the audit. */
function tlogGoals(r: BenchResults, empty: ScenarioResult | undefined): GoalResult[] {
  const goals: GoalResult[] = [];
  const tree = r.tlog?.tree;
  if (tree) {
    // Against the HTTP evaluate of the same run when it ran, else the in-process evaluate
    // (smaller, so the share is larger: the stricter reading).
    const http = empty?.status === 'ok' ? empty.cpu_us_per_request : null;
    const whole = http ?? tree.median.with_tree_us;
    const share = (100 * tree.median.record_us) / whole;
    goals.push({
      goal: 'log tree CPU per append (SqliteLogTree.record) over evaluate CPU per request',
      target: '≤ 10 %',
      measured:
        `${share.toFixed(1)} % (${tree.median.record_us} µs of ${fmtInt(whole)} µs, ` +
        `${http === null ? 'in-process evaluate' : 'evaluate@empty over HTTP'}; with − without ` +
        `the tree in process: ${tree.median.difference_us} µs)`,
      met: Number.isFinite(share) ? share <= 10 : null,
    });
  }
  const proof = r.scenarios.filter((s) => s.kind === 'proof' && s.connections > 1).at(-1);
  if (proof) {
    goals.push({
      goal: `inclusion proof p50 at ${fmtLedger(proof.ledger_size)} receipts, ${proof.connections} connections`,
      target: '< 2 ms',
      measured: proof.status === 'ok' ? `${fmtMs(proof.p50_ms)} ms` : proof.status,
      met: proof.status === 'ok' && proof.p50_ms !== null ? proof.p50_ms < 2 : null,
    });
  }
  const audit = r.tlog?.audit;
  if (audit) {
    goals.push({
      goal: `svc-verify ledger --dir, ${fmtLedger(audit.receipts)} receipts, one core`,
      target: '≥ 5,000 receipts per CPU second',
      measured: `${fmtInt(audit.receipts_per_cpu_second)} receipts/s`,
      met: audit.receipts_per_cpu_second >= 5000,
    });
  }
  return goals;
}

const mark = (met: boolean | null) => (met === null ? 'not measured' : met ? 'met' : 'MISSED');

/** The generated part of docs/BENCHMARKS.md. */
export function renderMarkdown(results: BenchResults): string {
  const m = results.machine;
  const lines: string[] = [];
  lines.push(
    `Run of ${results.date.slice(0, 10)} (${results.date}), ${results.mode} mode: ` +
      `${m.cores} cores (${m.cpu_model}), Node ${m.node}` +
      (results.settings.service_node?.path
        ? ` (service and baselines on Node ${results.settings.service_node.version})`
        : '') +
      `, ${m.platform}/${m.arch}, ` +
      `${fmtInt(m.memory_mb)} MB RAM` +
      (m.ed25519_native
        ? ` (node:crypto Ed25519: sign ${m.ed25519_native.sign_us} µs, verify ${m.ed25519_native.verify_us} µs of CPU)`
        : '') +
      `, ${results.settings.workers ?? 1} service worker process` +
      `${(results.settings.workers ?? 1) === 1 ? '' : 'es'}` +
      (results.settings.node_args?.length
        ? ` under \`node ${results.settings.node_args.join(' ')}\`. `
        : '. ') +
      `Each load scenario ran ${results.settings.duration_s} s ` +
      `after a ${results.settings.warmup_s} s warm-up; ` +
      `the whole run took ${Math.round(results.total_seconds)} s. Load average (1, 5, 15 min) ` +
      `${m.loadavg_start.join(', ')} at the start, ${m.loadavg_end.join(', ')} at the end.`,
  );
  lines.push('');
  lines.push('### HTTP scenarios');
  lines.push('');
  lines.push(
    '| Scenario | Request | Ledger (start → end) | Conns | req/s | p50 ms | p99 ms | × Express | CPU µs/req | CPU × Express | peak RSS MB | load (1 min) |',
  );
  lines.push('|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const s of results.scenarios) {
    const ledger =
      s.ledger_size === null
        ? '—'
        : `${fmtLedger(s.ledger_size)} → ${fmtLedger(s.ledger_size_end ?? s.ledger_size)}`;
    const name = s.status === 'ok' ? s.id : `${s.id} (**${s.status}**)`;
    lines.push(
      `| ${name} | ${s.method} ${s.path.replace(/\|/g, '\\|')} | ${ledger} | ${s.connections}${s.connection_rate ? ` × ${s.connection_rate}/s` : ''} | ` +
        `${fmtInt(s.rps)} | ${fmtMs(s.p50_ms)} | ${fmtMs(s.p99_ms)} | ${fmtRatio(s.ratio_to_express)} | ` +
        `${fmtInt(s.cpu_us_per_request ?? null)} | ${fmtCpuRatio(s.cpu_ratio_to_express ?? null)} | ` +
        `${fmtInt(s.peak_rss_mb ?? null)} | ${s.loadavg_end?.[0]?.toFixed(2) ?? '—'} |`,
    );
  }
  const problems = results.scenarios.filter((s) => s.detail);
  if (problems.length) {
    lines.push('');
    for (const s of problems) lines.push(`- ${s.id}: ${s.detail}`);
  }
  lines.push('');
  lines.push('### Goals');
  lines.push('');
  lines.push('| Goal | Target | Measured | |');
  lines.push('|---|---|---|---|');
  for (const g of results.goals) {
    lines.push(`| ${g.goal} | ${g.target} | ${g.measured} | ${mark(g.met)} |`);
  }
  lines.push('');
  lines.push('### Seeding');
  lines.push('');
  lines.push(
    '| Ledger from → to | Appended | Wall s | Waiting on append s | Evaluate + sign s (worker CPU) | Receipts/s |',
  );
  lines.push('|---|--:|--:|--:|--:|--:|');
  for (const s of results.seeding) {
    lines.push(
      `| ${fmtLedger(s.from)} → ${fmtLedger(s.to)} | ${fmtInt(s.appended)} | ${s.seconds} | ` +
        `${s.append_seconds} | ${s.sign_seconds} | ${fmtInt(s.per_second)} |`,
    );
  }
  if (results.scale?.length) lines.push(...renderScale(results));
  const tlog = results.tlog;
  if (tlog?.tree || tlog?.audit || tlog?.seeding.length) {
    lines.push('');
    lines.push('### Transparency log');
    lines.push('');
    const t = tlog.tree;
    if (t) {
      lines.push(
        `In process, ${t.rounds} round(s) of ${fmtInt(t.per_round)} ClaimService.evaluate calls ` +
          `per store in groups of ${t.group}, CPU µs per call (median, rounds in brackets):`,
      );
      lines.push('');
      lines.push('| Measure | µs | Rounds |');
      lines.push('|---|--:|---|');
      const row = (name: string, value: number, rounds: number[]) =>
        lines.push(`| ${name} | ${value} | ${rounds.join(', ')} |`);
      row('evaluate, store writing the tree', t.median.with_tree_us, t.with_tree_us);
      row('evaluate, `tree.record` a no-op', t.median.without_tree_us, t.without_tree_us);
      row('SqliteLogTree.record, timed per call', t.median.record_us, t.record_us);
      lines.push('');
    }
    const a = tlog.audit;
    if (a) {
      lines.push(
        `Audit: \`svc log export\` of ${fmtInt(a.receipts)} receipts in ${a.export_seconds} s; ` +
          `\`svc-verify ledger --dir\` CPU ${a.cpu_seconds.join(', ')} s (wall ` +
          `${a.wall_seconds.join(', ')} s): ${fmtInt(a.receipts_per_cpu_second)} receipts per CPU ` +
          `second (${fmtInt(a.receipts_per_cpu_second_net)} without the CLI's start-up, ` +
          `${a.startup_cpu_seconds} s), ${fmtInt(a.receipts_per_wall_second)} per wall second, load ` +
          `${a.loadavg_end[0]?.toFixed(2)} at the end.`,
      );
      lines.push('');
    }
    for (const s of tlog.seeding) {
      lines.push(
        `- Proof ledger seeded ${fmtLedger(s.from)} → ${fmtLedger(s.to)}: ${s.seconds} s ` +
          `(${fmtInt(s.per_second)} receipts/s).`,
      );
    }
  }
  lines.push('');
  lines.push('### Microbenchmarks (in-process, one core)');
  lines.push('');
  lines.push('| Group | Operation | Input bytes | ops/s | µs/op |');
  lines.push('|---|---|--:|--:|--:|');
  for (const r of results.micro) {
    lines.push(
      `| ${r.group} | ${r.name} | ${r.bytes ?? '—'} | ${fmtInt(r.ops_per_s)} | ${r.us_per_op} |`,
    );
  }
  return lines.join('\n');
}

export const DOC_BEGIN =
  '<!-- bench:results:begin (generated by npm run bench; edits are lost) -->';
export const DOC_END = '<!-- bench:results:end -->';

/** Replaces the generated section of the doc, keeping everything outside the markers. */
/** Each size's costs and how each figure grew from the size before it. */
function renderScale(results: BenchResults): string[] {
  const scale = results.scale ?? [];
  const p50 = (kind: ScenarioKind, size: number) =>
    results.scenarios.find((s) => s.kind === kind && s.ledger_size === size && s.connections > 1)
      ?.p50_ms ?? null;
  const growth = (now: number | null, before: number | null) =>
    now === null || before === null || before === 0 ? '' : ` (${(now / before).toFixed(2)} ×)`;
  const lines = [
    '',
    '### Scale',
    '',
    'Growth in brackets: the figure over the one at the size before it.',
    '',
    '| Receipts | Restart to deep health | Bytes on disk / receipt | Peak RSS | search-filters p50 | search-text p50 |',
    '|--:|--:|--:|--:|--:|--:|',
  ];
  scale.forEach((s, i) => {
    const before = i > 0 ? scale[i - 1] : undefined;
    const cell = (now: number | null, prev: number | null | undefined, text: string) =>
      `${text}${prev === undefined ? '' : growth(now, prev)}`;
    const filters = p50('search-filters', s.size);
    const words = p50('search-text', s.size);
    lines.push(
      `| ${fmtLedger(s.size)} | ${cell(s.restart_ms, before?.restart_ms, `${fmtInt(s.restart_ms)} ms`)} | ` +
        `${cell(s.bytes_per_receipt, before?.bytes_per_receipt, fmtInt(s.bytes_per_receipt))} | ` +
        `${cell(s.peak_rss_mb, before?.peak_rss_mb, `${fmtInt(s.peak_rss_mb)} MB`)} | ` +
        `${cell(filters, before ? p50('search-filters', before.size) : undefined, `${fmtMs(filters)} ms`)} | ` +
        `${cell(words, before ? p50('search-text', before.size) : undefined, `${fmtMs(words)} ms`)} |`,
    );
  });
  return lines;
}

export function updateDoc(file: string, results: BenchResults): void {
  const generated = `${DOC_BEGIN}\n${renderMarkdown(results)}\n${DOC_END}`;
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n';
  const begin = current.indexOf(DOC_BEGIN);
  const end = current.indexOf(DOC_END);
  const next =
    begin >= 0 && end > begin
      ? current.slice(0, begin) + generated + current.slice(end + DOC_END.length)
      : `${current.trimEnd()}\n\n## Results\n\n${generated}\n`;
  writeAtomically(file, next);
}

/** Writes through a temporary file, so a reader never sees half a file. */
export function writeAtomically(file: string, contents: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, file);
}
