import { execFileSync, spawnSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type autocannon from 'autocannon';
import { enterpriseKey } from './api-key.js';
import {
  authzenBatch,
  authzenEvaluation,
  authzenRequests,
  HOOK_SESSIONS,
  toolCallClaim,
  toolCallClaimRequests,
  hookEvent,
  hookRequests,
} from './agent-requests.js';
import { benchClaim, claimBodyTemplates, fillClaimId } from './claims.js';
import { formatSummary, summarizeProfile } from './cpuprofile-top.js';
import { ed25519NativeCost } from './crypto-floor.js';
import { runLoad, runPaced } from './load.js';
import { runMicro } from './micro.js';
import { startNode, stopAll, type Spawned } from './processes.js';
import { cpuSeconds, peakRssMiB, sampleRss } from './proc-stats.js';
import {
  judgeGoals,
  type ScaleResult,
  renderMarkdown,
  updateDoc,
  writeAtomically,
  type BenchResults,
  type ScenarioKind,
  type ScenarioResult,
} from './report.js';
import { startFlags } from './start-flags.js';
import { seedLedger, type SeedResult } from './seed.js';
import { auditExport, measureTreeCost, sampleReceiptIds, waitForCheckpoint } from './tlog.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SERVER = join(ROOT, 'dist/src/server.js');
const BASELINE = join(ROOT, 'dist/bench/baseline-server.js');
const RUSAGE_HOOK = join(ROOT, 'dist/bench/rusage-hook.js');

// The goal for evaluate is stated at 32 connections; the write and baseline scenarios share
// it so their ratios compare like with like. Read scenarios run at 8, and search also at 1:
// its goal is a latency, and in a closed loop on one event loop the p50 at n connections is
// mostly time queued behind the other n - 1 requests (Little's law: p50 ≈ n / throughput).
const WRITE_CONNECTIONS = 32;
const READ_CONNECTIONS = 8;

interface Options {
  mode: 'full' | 'smoke';
  duration: number;
  /** Seconds of the same load run and discarded before each measurement. */
  warmup: number;
  microSeconds: number;
  sizes: number[];
  out: string | null;
  docs: string | null;
  profile: string | null;
  keep: boolean;
  /** Scenario ids or kinds to run (the baselines always run); null for all. */
  only: string[] | null;
  /** The service entry point, to measure another build against this one. */
  server: string;
  /** SVC_WORKERS of the service: HTTP worker processes sharing its port. */
  workers: number;
  /** Node flags of the service (and of the baselines): those of `npm start`, then --node-args. */
  nodeArgs: string[];
  /** The node binary the service and the baselines run on (the harness runs on its own). */
  node: string;
  /** Ledger sizes the inclusion and consistency proofs are measured at. */
  tlogSizes: number[];
  /** The data directory of the proof scenarios' ledger, kept; null for one in the run's temp dir. */
  tlogDir: string | null;
  /** The data directory of the seeded scenarios' ledger, kept; null for one in the run's temp dir. */
  ledgerDir: string | null;
  /** Rounds and evaluations per round of the in-process tree cost; runs of the audit. */
  treeRounds: number;
  treePerRound: number;
  auditRuns: number;
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      smoke: { type: 'boolean', default: false },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      'micro-seconds': { type: 'string' },
      sizes: { type: 'string' },
      out: { type: 'string' },
      docs: { type: 'string' },
      'no-docs': { type: 'boolean', default: false },
      profile: { type: 'string' },
      keep: { type: 'boolean', default: false },
      only: { type: 'string' },
      server: { type: 'string' },
      workers: { type: 'string' },
      'node-args': { type: 'string' },
      node: { type: 'string' },
      'no-start-flags': { type: 'boolean', default: false },
      'tlog-sizes': { type: 'string' },
      'tlog-dir': { type: 'string' },
      'ledger-dir': { type: 'string' },
      'tree-rounds': { type: 'string' },
      'tree-per-round': { type: 'string' },
      'audit-runs': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(`usage: node dist/bench/run.js [options]
  --smoke              seconds-long run on a tiny ledger; writes to a temp dir, not the docs
  --duration <s>       seconds per load scenario (full 10, smoke 0.3)
  --warmup <s>         seconds of the same load before each, not counted (full 2, smoke 0.05)
  --micro-seconds <s>  seconds per microbenchmark (full 1, smoke 0.02)
  --sizes <a,b>        seeded ledger sizes (full 10000,100000,1000000; smoke 100,1000);
                       at a size also in --tlog-sizes the proofs run on the same ledger
  --ledger-dir <dir>   data directory of the seeded ledger, kept after the run; a ledger
                       already there is reused and grown to each size
  --out <file>         results JSON (full: bench/results/latest.json)
  --docs <file>        doc whose generated section is replaced (full: docs/BENCHMARKS.md)
  --no-docs            leave the doc alone
  --only <a,b>         scenario ids or kinds to run, e.g. evaluate@empty,verify (baselines
                       always run)
  --server <file>      service entry point (default dist/src/server.js)
  --workers <n>        SVC_WORKERS of the service (default 1); CPU and memory are summed
                       over its processes
  --node-args=<flags>  node flags added after those \`npm start\` runs the service with
                       (package.json), e.g. --node-args="--max-old-space-size=1024"; the
                       baselines get the same flags
  --no-start-flags     leave out the flags of \`npm start\` (only --node-args), to measure
                       what those flags change
  --node <path>        node binary the service and the baselines run on (default: the one
                       running the harness); refused unless it opens a database with the
                       service's better-sqlite3 (Node 20 cannot: better-sqlite3 13 crashes
                       there). machine.ed25519_native is then measured on it
  --profile <dir>      run each selected scenario (default evaluate@empty,verify) in its own
                       service process under node --cpu-prof; print the top self times
  --keep               keep the temporary data directories
  --tlog-sizes <a,b>   ledger sizes of the proof scenarios (full 100000,1000000; smoke 1000);
                       1,000,000 receipts take a few minutes to seed and about 6 GB of disk
  --tlog-dir <dir>     data directory of the proof scenarios' ledger, kept after the run; a
                       ledger already there is reused and grown to each size (to measure
                       several builds, with --server, on one seeding)
  --tree-rounds <n>    rounds of the in-process tree cost (full 5, smoke 1)
  --tree-per-round <n> evaluations per round and store (full 4000, smoke 100); the audited
                       ledger holds rounds × this + a tenth of it (the warm-up)
  --audit-runs <n>     runs of svc-verify ledger over the export (full 3, smoke 1)`);
    process.exit(0);
  }
  const smoke = values.smoke;
  const number = (value: string | undefined, fallback: number) => {
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`not a positive number: ${value}`);
    return n;
  };
  const sizeList = (text: string) =>
    text
      .split(',')
      .map((s) => Math.round(number(s.trim(), 0)))
      .sort((a, b) => a - b);
  const sizes = sizeList(values.sizes ?? (smoke ? '100,1000' : '10000,100000,1000000'));
  return {
    mode: smoke ? 'smoke' : 'full',
    duration: number(values.duration, smoke ? 0.3 : 10),
    warmup: values.warmup === '0' ? 0 : number(values.warmup, smoke ? 0.05 : 2),
    microSeconds: number(values['micro-seconds'], smoke ? 0.02 : 1),
    sizes,
    out:
      values.out ??
      (smoke
        ? join(tmpdir(), 'svc-bench-smoke', 'latest.json')
        : join(ROOT, 'bench/results/latest.json')),
    docs: values['no-docs']
      ? null
      : (values.docs ?? (smoke ? null : join(ROOT, 'docs/BENCHMARKS.md'))),
    profile: values.profile ?? null,
    keep: values.keep,
    only: values.only
      ? values.only.split(',').map((id) => id.trim())
      : values.profile
        ? ['evaluate@empty', 'verify']
        : null,
    server: resolve(values.server ?? SERVER),
    workers: Math.round(number(values.workers, 1)),
    nodeArgs: [
      ...(values['no-start-flags'] ? [] : startFlags(ROOT)),
      ...(values['node-args'] ?? '').split(/\s+/).filter(Boolean),
    ],
    node: values.node ? resolve(values.node) : process.execPath,
    tlogSizes: sizeList(values['tlog-sizes'] ?? (smoke ? '1000' : '100000,1000000')),
    tlogDir: values['tlog-dir'] ? resolve(values['tlog-dir']) : null,
    ledgerDir: values['ledger-dir'] ? resolve(values['ledger-dir']) : null,
    treeRounds: Math.round(number(values['tree-rounds'], smoke ? 1 : 5)),
    treePerRound: Math.round(number(values['tree-per-round'], smoke ? 100 : 4000)),
    auditRuns: Math.round(number(values['audit-runs'], smoke ? 1 : 3)),
  };
}

const round2 = (n: number) => Number(n.toFixed(2));
const round3 = (n: number) => Number(n.toFixed(3));
const mib = (n: number | null) => (n === null ? null : Math.round(n));

const log = (message: string) =>
  console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`);
const label = (size: number) =>
  size >= 1e6 && size % 1e6 === 0
    ? `${size / 1e6}m`
    : size >= 1000 && size % 1000 === 0
      ? `${size / 1000}k`
      : String(size);

const wanted = (options: Options, id: string, kind: ScenarioKind) =>
  !options.only || options.only.includes(id) || options.only.includes(kind);

/** The service on `dataDir`; under --profile, writing `<profile>/<name>.cpuprofile` at exit. */
function startService(
  dataDir: string,
  options: Options,
  name: string,
  env: Record<string, string> = {},
  readyPath = '/health',
): Promise<Spawned> {
  const nodeArgs = options.profile
    ? ['--cpu-prof', `--cpu-prof-dir=${options.profile}`, `--cpu-prof-name=${name}.cpuprofile`]
    : [];
  return startNode({
    name: 'svc',
    execPath: options.node,
    script: options.server,
    nodeArgs: [...options.nodeArgs, ...nodeArgs],
    readyPath,
    env: {
      SVC_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      SVC_ANON_LIMIT_PER_HOUR: 'unlimited',
      SVC_SIGNUP_LIMIT_PER_HOUR: 'unlimited',
      SVC_WORKERS: String(options.workers),
      ...env,
    },
  });
}

async function ledgerSize(service: Spawned): Promise<number | null> {
  try {
    const response = await fetch(`${service.url}/v1/ledger/stats`);
    const body = (await response.json()) as { head?: { sequence?: number }; total?: number };
    return body.head?.sequence ?? body.total ?? null;
  } catch {
    return null;
  }
}

interface ScenarioDef {
  id: string;
  kind: ScenarioKind;
  method: 'GET' | 'POST';
  path: string;
  connections: number;
  target: Spawned;
  requests: autocannon.Request[];
  /** One request like those of the load, sent first: a scenario that cannot work is not run. */
  probe: () => Promise<Response>;
  /**
   * Requests a second each connection sends (bench/load.ts runPaced): a session that waits
   * between its calls, instead of sending the next as soon as it has an answer.
   */
  rate?: number;
  /** Whether the probe's answer is the right one, beyond a 2xx status. */
  accept?: (body: unknown) => string | null;
  ledger: boolean;
}

// Kept out of the results: only a profile of the same run can use them.
const loadWindows = new Map<string, [number, number]>();

async function runScenario(def: ScenarioDef, options: Options): Promise<ScenarioResult> {
  const base: ScenarioResult = {
    id: def.id,
    kind: def.kind,
    method: def.method,
    path: def.path,
    connections: def.connections,
    ...(def.rate !== undefined && { connection_rate: def.rate }),
    ledger_size: def.ledger ? await ledgerSize(def.target) : null,
    ledger_size_end: null,
    status: 'ok',
    rps: null,
    p50_ms: null,
    p99_ms: null,
    ratio_to_express: null,
    cpu_seconds: null,
    cpu_us_per_request: null,
    cpu_ratio_to_express: null,
    peak_rss_mb: null,
    hwm_rss_mb: null,
    loadavg_end: null,
  };
  const probe = await def.probe();
  const text = await probe.text();
  if (probe.status === 404) {
    log(`${def.id}: ${def.method} ${def.path} answered 404, reported as missing`);
    return { ...base, status: 'missing', detail: `endpoint answered 404: ${text.slice(0, 160)}` };
  }
  let problem = probe.ok ? null : `probe answered ${probe.status}: ${text.slice(0, 200)}`;
  if (!problem && def.accept) {
    try {
      problem = def.accept(JSON.parse(text));
    } catch {
      problem = `probe answer is not JSON: ${text.slice(0, 200)}`;
    }
  }
  if (problem) {
    log(`${def.id}: ${problem}`);
    return { ...base, status: 'error', detail: problem };
  }
  const run = (durationSeconds: number) => {
    const load = {
      url: def.target.url,
      connections: def.connections,
      durationSeconds,
      requests: def.requests,
    };
    return def.rate === undefined ? runLoad(load) : runPaced({ ...load, rate: def.rate });
  };
  // The JIT compiles the path under load first; that is not what a running service costs.
  if (options.warmup > 0) await run(options.warmup);
  const pid = def.target.process.pid!;
  const measure = async (durationSeconds: number) => {
    const cpuBefore = cpuSeconds(pid);
    const rss = sampleRss(pid);
    const load = await run(durationSeconds);
    return { load, cpuBefore, cpuAfter: cpuSeconds(pid), peakRss: rss() };
  };
  // A window shorter than one answer (a smoke window on a loaded machine) measures nothing:
  // it runs again, twice as long each time, until a window of 8 s or more has had its chance.
  let duration = options.duration;
  let measured = await measure(duration);
  const answered = ({ load }: typeof measured) =>
    load.responses_2xx + load.non_2xx + load.errors + load.timeouts;
  while (answered(measured) === 0 && duration < 8) {
    duration *= 2;
    log(`${def.id}: no answer within the window; measuring again for ${duration} s`);
    measured = await measure(duration);
  }
  const { load, cpuBefore, cpuAfter, peakRss } = measured;
  loadWindows.set(def.id, load.window_us);
  // The service's CPU over the measured window, per answered request: unlike req/s it does not
  // depend on how much of the machine the load generator and other work leave to the service.
  const cpu = cpuBefore !== null && cpuAfter !== null ? cpuAfter - cpuBefore : null;
  const result: ScenarioResult = {
    ...base,
    ledger_size_end: def.ledger ? await ledgerSize(def.target) : null,
    rps: load.rps,
    p50_ms: load.p50_ms,
    p99_ms: load.p99_ms,
    responses_2xx: load.responses_2xx,
    non_2xx: load.non_2xx,
    errors: load.errors,
    timeouts: load.timeouts,
    status_codes: load.status_codes,
    duration_s: load.duration_s,
    cpu_seconds: cpu === null ? null : round3(cpu),
    cpu_us_per_request:
      cpu === null || load.responses_2xx === 0
        ? null
        : Number(((cpu * 1e6) / load.responses_2xx).toFixed(1)),
    cpu_ratio_to_express: null,
    peak_rss_mb: peakRss === null ? null : Math.round(peakRss),
    hwm_rss_mb: mib(peakRssMiB(pid)),
    loadavg_end: loadavg().map(round2),
  };
  if (load.responses_2xx === 0) {
    result.status = 'error';
    result.detail = `no 2xx response (status codes ${JSON.stringify(load.status_codes)}, errors ${load.errors})`;
  } else if (load.non_2xx > 0 || load.errors > 0) {
    result.detail = `${load.non_2xx} non-2xx responses ${JSON.stringify(load.status_codes)}, ${load.errors} connection errors`;
  }
  log(
    `${def.id}: ${result.rps} req/s, p50 ${result.p50_ms} ms, p99 ${result.p99_ms} ms, ` +
      `CPU ${result.cpu_us_per_request ?? '—'} µs/req, peak RSS ${result.peak_rss_mb ?? '—'} MB, ` +
      `load ${loadavg()[0]!.toFixed(2)}` +
      (result.detail ? ` (${result.detail})` : ''),
  );
  return result;
}

const JSON_HEADERS = { 'content-type': 'application/json' };

/** Evaluate (or simulate) with a claim_id never sent before on every request. */
function claimRequests(path: string, apiKey: string, prefix: string): autocannon.Request[] {
  const templates = claimBodyTemplates(64);
  let n = 0;
  return [
    {
      method: 'POST',
      path,
      headers: { ...JSON_HEADERS, 'x-api-key': apiKey },
      setupRequest: (request) => {
        const i = n++;
        return {
          ...request,
          body: fillClaimId(templates[i % templates.length]!, `${prefix}-${i}`),
        };
      },
    },
  ];
}

function postClaim(service: Spawned, path: string, apiKey: string, claimId: string) {
  return fetch(`${service.url}${path}`, {
    method: 'POST',
    headers: { ...JSON_HEADERS, 'x-api-key': apiKey },
    body: JSON.stringify(benchClaim(1, claimId)),
  });
}

function evaluateScenario(
  id: string,
  service: Spawned,
  apiKey: string,
  prefix: string,
  // evaluate-sessions: the same claims at the hook's connections, in the same closed loop,
  // so that the hook's saturated latency has the plain decision's beside it.
  kind: 'evaluate' | 'evaluate-sessions' = 'evaluate',
): ScenarioDef {
  return {
    id,
    kind,
    method: 'POST',
    path: '/v1/evaluate',
    connections: kind === 'evaluate' ? WRITE_CONNECTIONS : HOOK_SESSIONS,
    target: service,
    requests: claimRequests('/v1/evaluate', apiKey, prefix),
    probe: () => postClaim(service, '/v1/evaluate', apiKey, `${prefix}-probe`),
    accept: (body) =>
      (body as { receipt?: { chain?: unknown } }).receipt?.chain ? null : 'no chained receipt',
    ledger: true,
  };
}

/**
 * Calls a second of each session in the paced hook scenarios: from a pace no agent reaches
 * (one call every 100 ms, a tenth of the time a model takes to answer) to near the service's
 * capacity, so the latency of a decision is seen with and without a queue.
 */
export const HOOK_PACES = [10, 25, 50] as const;
const hookPacedId = (pace: number) => `hook-${pace}ps@empty`;

/**
 * The agent gate's doors (contract §12, §13): a coding agent's hook at one connection per
 * session, each sending its next call as soon as it has an answer (hook@empty) or at a pace
 * (hook-<n>ps@empty); the same tool calls' claims through POST /v1/evaluate at the same
 * connections (evaluate-agent@empty: what the hook's door adds); an AuthZEN evaluation and a
 * batch of 20 at the evaluate scenario's connections.
 */
function agentScenarios(
  service: Spawned,
  apiKey: string,
  want: {
    evaluateAgent: boolean;
    hook: boolean;
    hookPaced: boolean;
    authzen: boolean;
    authzenBatch: boolean;
  },
  options: Options,
): ScenarioDef[] {
  const post = (path: string, body: string, auth: Record<string, string>) => () =>
    fetch(`${service.url}${path}`, { method: 'POST', headers: { ...JSON_HEADERS, ...auth }, body });
  const bearer = { authorization: `Bearer ${apiKey}` };
  const defs: ScenarioDef[] = [];
  const key = { 'x-api-key': apiKey };
  if (want.evaluateAgent)
    defs.push({
      id: 'evaluate-agent@empty',
      kind: 'evaluate-agent',
      method: 'POST',
      path: '/v1/evaluate',
      connections: HOOK_SESSIONS,
      target: service,
      requests: toolCallClaimRequests(apiKey, 'ev-'),
      probe: post('/v1/evaluate', JSON.stringify(toolCallClaim(99, 0, 'ev-')), key),
      accept: (body) =>
        (body as { receipt?: { chain?: unknown } }).receipt?.chain ? null : 'no chained receipt',
      ledger: true,
    });
  const hook = (id: string, kind: ScenarioKind, prefix: string, rate?: number): ScenarioDef => ({
    id,
    kind,
    method: 'POST',
    path: '/v1/hooks/claude-code',
    connections: HOOK_SESSIONS,
    ...(rate !== undefined && { rate }),
    target: service,
    requests: hookRequests(apiKey, prefix),
    probe: post('/v1/hooks/claude-code', hookEvent(99, 0, prefix), key),
    accept: (body) =>
      (body as { hookSpecificOutput?: unknown }).hookSpecificOutput ? null : 'no hook answer',
    ledger: true,
  });
  if (want.hook) defs.push(hook('hook@empty', 'hook', ''));
  for (const pace of HOOK_PACES) {
    const id = hookPacedId(pace);
    if (wanted(options, id, 'hook-paced')) defs.push(hook(id, 'hook-paced', `p${pace}-`, pace));
  }
  if (want.authzen)
    defs.push({
      id: 'authzen@empty',
      kind: 'authzen',
      method: 'POST',
      path: '/access/v1/evaluation',
      connections: WRITE_CONNECTIONS,
      target: service,
      requests: authzenRequests(apiKey, null),
      probe: post('/access/v1/evaluation', JSON.stringify(authzenEvaluation(-1)), bearer),
      accept: (body) =>
        typeof (body as { decision?: unknown }).decision === 'boolean' ? null : 'no decision',
      ledger: true,
    });
  if (want.authzenBatch)
    defs.push({
      id: 'authzen-batch20@empty',
      kind: 'authzen-batch',
      method: 'POST',
      path: '/access/v1/evaluations',
      connections: WRITE_CONNECTIONS,
      target: service,
      requests: authzenRequests(apiKey, 20),
      probe: post('/access/v1/evaluations', JSON.stringify(authzenBatch(-1, 20)), bearer),
      accept: (body) =>
        (body as { evaluations?: unknown[] }).evaluations?.length === 20
          ? null
          : 'not 20 decisions',
      ledger: true,
    });
  return defs;
}

// Filters that each select a few percent of the seeded population (see claims.ts), and
// texts that occur in the seeded claims, alone and combined with filters.
const SEARCH_QUERIES: Record<'search-filters' | 'search-text', string[]> = {
  'search-filters': [
    'agent=agent-03',
    'repo=org-5%2Fservice-05&verdict=BLOCKED',
    'agent=agent-11&verdict=ESCALATED',
    'repo=org-2%2Fservice-20',
  ],
  'search-text': [
    'q=hotfix',
    'q=schema%20migration',
    'q=security%20patch&verdict=ALLOWED',
    'q=feature%20flag&agent=agent-03',
  ],
};

function readScenarios(service: Spawned, apiKey: string, size: number): ScenarioDef[] {
  const get = (path: string) => () =>
    fetch(`${service.url}${path}`, { headers: { 'x-api-key': apiKey } });
  const search = (kind: 'search-filters' | 'search-text', connections: number): ScenarioDef => {
    const paths = SEARCH_QUERIES[kind].map((q) => `/v1/receipts/search?${q}`);
    return {
      id: `${kind}@${label(size)}${connections === 1 ? '/c1' : ''}`,
      kind,
      method: 'GET',
      path: `/v1/receipts/search?${kind === 'search-text' ? 'q=…' : 'agent|repo|verdict=…'}`,
      connections,
      target: service,
      requests: paths.map((path) => ({
        method: 'GET',
        path,
        headers: { 'x-api-key': apiKey },
      })),
      probe: get(paths[0]!),
      ledger: true,
    };
  };
  // A search alone (one connection: p50 is the time to answer) and among others (8).
  return [
    search('search-filters', 1),
    search('search-filters', READ_CONNECTIONS),
    search('search-text', 1),
    search('search-text', READ_CONNECTIONS),
    {
      id: `stats@${label(size)}`,
      kind: 'stats',
      method: 'GET',
      path: '/v1/ledger/stats',
      connections: READ_CONNECTIONS,
      target: service,
      requests: [{ method: 'GET', path: '/v1/ledger/stats' }],
      probe: () => fetch(`${service.url}/v1/ledger/stats`),
      ledger: true,
    },
  ];
}

// Distinct receipts, so a service that remembered verifications could not answer from memory.
const VERIFY_RECEIPTS = 64;

async function verifyScenario(service: Spawned, apiKey: string): Promise<ScenarioDef> {
  const bodies: string[] = [];
  for (let i = 0; i < VERIFY_RECEIPTS; i++) {
    const evaluated = await fetch(`${service.url}/v1/evaluate`, {
      method: 'POST',
      headers: { ...JSON_HEADERS, 'x-api-key': apiKey },
      body: JSON.stringify(benchClaim(i, `verify-subject-${i}`)),
    });
    if (!evaluated.ok) {
      throw new Error(`evaluate for the verify scenario answered ${evaluated.status}`);
    }
    bodies.push(JSON.stringify(((await evaluated.json()) as { receipt: unknown }).receipt));
  }
  // No API key: verify is open to anyone holding a receipt.
  const post = (body: string) => ({ method: 'POST' as const, headers: JSON_HEADERS, body });
  return {
    id: 'verify',
    kind: 'verify',
    method: 'POST',
    path: '/v1/verify',
    connections: WRITE_CONNECTIONS,
    target: service,
    requests: bodies.map((body) => ({ ...post(body), path: '/v1/verify' })),
    probe: () => fetch(`${service.url}/v1/verify`, post(bodies[0]!)),
    accept: (body) =>
      (body as { valid?: boolean }).valid === true ? null : 'the receipt did not verify',
    ledger: true,
  };
}

async function baselineScenario(kind: 'http' | 'express', options: Options) {
  // The service's node flags here too: the multiples compare the service's code with a bare
  // route, not one V8 configuration with another.
  const server = await startNode({
    name: `baseline-${kind}`,
    execPath: options.node,
    script: BASELINE,
    nodeArgs: options.nodeArgs,
    args: [kind],
    readyPath: '/',
  });
  try {
    return await runScenario(
      {
        id: `baseline-${kind}`,
        kind: `baseline-${kind}`,
        method: 'GET',
        path: '/',
        connections: WRITE_CONNECTIONS,
        target: server,
        requests: [{ method: 'GET', path: '/' }],
        probe: () => fetch(server.url),
        ledger: false,
      },
      options,
    );
  } finally {
    await server.stop();
  }
}

async function emptyLedgerScenarios(dataDir: string, options: Options) {
  const results: ScenarioResult[] = [];
  const want = {
    health: wanted(options, 'health', 'health'),
    evaluate: wanted(options, 'evaluate@empty', 'evaluate'),
    simulate: wanted(options, 'simulate', 'simulate'),
    verify: wanted(options, 'verify', 'verify'),
    evaluateSessions: wanted(options, 'evaluate-8@empty', 'evaluate-sessions'),
    evaluateAgent: wanted(options, 'evaluate-agent@empty', 'evaluate-agent'),
    hook: wanted(options, 'hook@empty', 'hook'),
    hookPaced: HOOK_PACES.some((pace) => wanted(options, hookPacedId(pace), 'hook-paced')),
    authzen: wanted(options, 'authzen@empty', 'authzen'),
    authzenBatch: wanted(options, 'authzen-batch20@empty', 'authzen-batch'),
  };
  if (!Object.values(want).some(Boolean)) return results;
  const service = await startService(dataDir, options, 'empty');
  try {
    const apiKey = await enterpriseKey(service, dataDir);
    // The service's own floor: every middleware of a request (request id, logging, headers,
    // CORS, the rate limiter) around a handler that does almost nothing.
    if (want.health) {
      results.push(
        await runScenario(
          {
            id: 'health',
            kind: 'health',
            method: 'GET',
            path: '/health',
            connections: WRITE_CONNECTIONS,
            target: service,
            requests: [{ method: 'GET', path: '/health' }],
            probe: () => fetch(`${service.url}/health`),
            ledger: false,
          },
          options,
        ),
      );
    }
    if (want.evaluate) {
      results.push(
        await runScenario(evaluateScenario('evaluate@empty', service, apiKey, 'ev-empty'), options),
      );
    }
    if (want.evaluateSessions) {
      const def = evaluateScenario('evaluate-8@empty', service, apiKey, 'ev8', 'evaluate-sessions');
      results.push(await runScenario(def, options));
    }
    if (want.simulate) {
      results.push(
        await runScenario(
          {
            id: 'simulate',
            kind: 'simulate',
            method: 'POST',
            path: '/v1/simulate',
            connections: WRITE_CONNECTIONS,
            target: service,
            requests: claimRequests('/v1/simulate', apiKey, 'sim'),
            probe: () => postClaim(service, '/v1/simulate', apiKey, 'sim-probe'),
            ledger: true,
          },
          options,
        ),
      );
    }
    if (want.verify)
      results.push(await runScenario(await verifyScenario(service, apiKey), options));
    for (const def of agentScenarios(service, apiKey, want, options)) {
      results.push(await runScenario(def, options));
    }
    return results;
  } finally {
    await service.stop();
  }
}

const SEEDED_KINDS = ['search-filters', 'search-text', 'stats', 'evaluate'] as const;

/** Everything under `dir`, in bytes: the database, its WAL and whatever else the service keeps. */
function bytesUnder(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).size;
  }
  return total;
}

async function seededScenarios(
  dataDir: string,
  size: number,
  options: Options,
  scale: ScaleResult[],
  proofs: boolean,
) {
  // A restart on the settled ledger, timed to the first healthy deep check (which writes).
  const spawnedAt = performance.now();
  const service = await startService(
    dataDir,
    options,
    `seeded-${label(size)}`,
    proofs ? CHECKPOINT_EVERY : {},
    '/health?deep=true',
  );
  const restartMs = Math.round(performance.now() - spawnedAt);
  const bytes = bytesUnder(dataDir);
  let results: ScenarioResult[] = [];
  try {
    const apiKey = await enterpriseKey(service, dataDir);
    results = [];
    for (const def of readScenarios(service, apiKey, size)) {
      if (wanted(options, def.id, def.kind)) results.push(await runScenario(def, options));
    }
    if (proofs) results.push(...(await proofRuns(service, apiKey, dataDir, size, options)));
    // Last: it grows the ledger, which the read scenarios above must see at its seeded size.
    const id = `evaluate@${label(size)}`;
    if (wanted(options, id, 'evaluate')) {
      results.push(await runScenario(evaluateScenario(id, service, apiKey, `ev-${size}`), options));
    }
    return results;
  } finally {
    await service.stop();
    const hwm = results.map((r) => r.hwm_rss_mb).filter((n): n is number => n !== null);
    scale.push({
      size,
      restart_ms: restartMs,
      bytes_per_receipt: Math.round(bytes / size),
      peak_rss_mb: hwm.length ? Math.max(...hwm) : null,
    });
    log(
      `  ${label(size)}: restart to deep health ${restartMs} ms, ` +
        `${Math.round(bytes / size)} bytes/receipt on disk`,
    );
  }
}

// The proof scenarios' random leaves (and consistency proofs' random older sizes).
const PROOF_RECEIPTS = 256;
const CONSISTENCY_SIZES = 64;
// Checkpoints every second, so one of the seeded size is there soon after the service starts.
const CHECKPOINT_EVERY = { SVC_CHECKPOINT_INTERVAL: '1' };

function proofScenarios(
  service: Spawned,
  apiKey: string,
  size: number,
  receiptIds: string[],
  name = label(size),
): ScenarioDef[] {
  const headers = { 'x-api-key': apiKey };
  const get = (path: string) => () => fetch(`${service.url}${path}`, { headers });
  const proofPaths = receiptIds.map((id) => `/v1/receipts/${id}/proof`);
  const consistencyPaths = Array.from(
    { length: CONSISTENCY_SIZES },
    () => `/v1/log/consistency?from=${1 + Math.floor(Math.random() * (size - 1))}&to=${size}`,
  );
  const def = (
    kind: 'proof' | 'checkpoint' | 'consistency',
    path: string,
    paths: string[],
    accept?: ScenarioDef['accept'],
    connections = READ_CONNECTIONS,
  ): ScenarioDef => ({
    id: `${kind}@${name}${connections === 1 ? '/c1' : ''}`,
    kind,
    method: 'GET',
    path,
    connections,
    target: service,
    requests: paths.map((p) => ({ method: 'GET', path: p, headers })),
    probe: get(paths[0]!),
    accept,
    ledger: true,
  });
  const isProof = (body: unknown) => {
    const proof = body as { tree_size?: number; inclusion?: unknown[] };
    return proof.tree_size === size && Array.isArray(proof.inclusion)
      ? null
      : `no inclusion proof at size ${size}`;
  };
  // Alone (one connection: p50 is the time to answer one proof) and among others (8, the
  // target's setting, where p50 is mostly time queued behind the other 7: Little's law).
  return [
    def('proof', '/v1/receipts/:id/proof (random leaves)', proofPaths, isProof, 1),
    def('proof', '/v1/receipts/:id/proof (random leaves)', proofPaths, isProof),
    def('checkpoint', '/v1/log/checkpoint', ['/v1/log/checkpoint']),
    def('consistency', '/v1/log/consistency?from=(random)&to=size', consistencyPaths, (body) =>
      Array.isArray((body as { proof?: unknown }).proof) ? null : 'no consistency proof',
    ),
  ];
}

/** The proof scenarios on a running service, at the ledger's actual size (a reused one may be larger). */
async function proofRuns(
  service: Spawned,
  apiKey: string,
  dataDir: string,
  nominal: number,
  options: Options,
): Promise<ScenarioResult[]> {
  const size = (await ledgerSize(service)) ?? nominal;
  await waitForCheckpoint(service, size, 120_000);
  const ids = await sampleReceiptIds(dataDir, PROOF_RECEIPTS);
  const results: ScenarioResult[] = [];
  for (const def of proofScenarios(service, apiKey, size, ids, label(nominal))) {
    if (wanted(options, def.id, def.kind)) results.push(await runScenario(def, options));
  }
  return results;
}

const PROOF_KINDS = ['proof', 'checkpoint', 'consistency'] as const;
const proofsWanted = (options: Options, size: number) =>
  options.tlogSizes.includes(size) &&
  (!options.only ||
    options.only.some((o) =>
      PROOF_KINDS.some((k) => o === k || o.startsWith(`${k}@${label(size)}`)),
    ));

/**
 * The transparency log: the tree's cost per append in process, the audit of an export of
 * that ledger, and inclusion and consistency proofs at each of `tlogSizes` receipts.
 */
async function transparencyLogPhase(
  workDir: string,
  options: Options,
  scenarios: ScenarioResult[],
  covered: ReadonlySet<number>,
): Promise<NonNullable<BenchResults['tlog']>> {
  const only = (name: string) => !options.only || options.only.includes(name);
  const out: NonNullable<BenchResults['tlog']> = { tree: null, audit: null, seeding: [] };
  if (only('tree') || only('audit')) {
    log('transparency log: tree cost per append, in process');
    const treeDir = join(workDir, 'tree');
    const offDir = join(workDir, 'tree-off');
    out.tree = await measureTreeCost(treeDir, offDir, {
      rounds: options.treeRounds,
      perRound: options.treePerRound,
      warmup: Math.max(10, Math.round(options.treePerRound / 10)),
    });
    rmSync(offDir, { recursive: true, force: true });
    const t = out.tree.median;
    log(
      `  evaluate in process ${t.with_tree_us} µs with the tree, ${t.without_tree_us} µs ` +
        `without (paired difference ${t.difference_us} µs); record ${t.record_us} µs; ` +
        `load ${loadavg()[0]!.toFixed(2)}`,
    );
    if (only('audit')) {
      const receipts = out.tree.ledger_size;
      log(`transparency log: audit of an export of ${receipts.toLocaleString('en-US')} receipts`);
      const service = await startService(treeDir, options, 'tree', CHECKPOINT_EVERY);
      try {
        await waitForCheckpoint(service, receipts);
      } finally {
        await service.stop();
      }
      out.audit = await auditExport({
        dataDir: treeDir,
        exportDir: join(workDir, 'export', 'log'),
        receipts,
        runs: options.auditRuns,
        svc: join(dirname(options.server), 'cli/svc.js'),
        svcVerify: join(ROOT, 'packages/verify/dist/cli/svc-verify.js'),
        rusageHook: RUSAGE_HOOK,
      });
      log(
        `  svc-verify ledger: CPU ${out.audit.cpu_seconds.join(', ')} s, ` +
          `${out.audit.receipts_per_cpu_second}/CPU s, load ${loadavg()[0]!.toFixed(2)}`,
      );
    }
    rmSync(treeDir, { recursive: true, force: true });
  }
  // Sizes the seeded phase reached were measured there, on the same ledger.
  const sizes = options.tlogSizes.filter(
    (size) => !covered.has(size) && proofsWanted(options, size),
  );
  const dataDir = options.tlogDir ?? join(workDir, 'tlog');
  for (const size of sizes) {
    log(`transparency log: seeding to ${size.toLocaleString('en-US')} receipts`);
    const seed = await seedLedger(dataDir, size, (done, total) => {
      if (done % 100_000 === 0 || total < 100_000)
        log(`  ${done.toLocaleString('en-US')} / ${total.toLocaleString('en-US')}`);
    });
    log(`  appended ${seed.appended} in ${seed.seconds} s (${seed.per_second}/s)`);
    out.seeding.push(seed);
    const service = await startService(dataDir, options, `tlog-${label(size)}`, CHECKPOINT_EVERY);
    try {
      const apiKey = await enterpriseKey(service, dataDir);
      scenarios.push(...(await proofRuns(service, apiKey, dataDir, size, options)));
    } finally {
      await service.stop();
    }
  }
  return out;
}

/** ed25519NativeCost on another node binary: its OpenSSL is the one the service uses. */
function ed25519NativeCostOn(node: string): { sign_us: number; verify_us: number } {
  const module = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), 'crypto-floor.js'));
  const script = `import { ed25519NativeCost } from ${JSON.stringify(module.href)}; console.log(JSON.stringify(ed25519NativeCost()));`;
  const out = execFileSync(node, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  return JSON.parse(out) as { sign_us: number; verify_us: number };
}

function machine(node: string): Omit<BenchResults['machine'], 'loadavg_start' | 'loadavg_end'> {
  return {
    cores: cpus().length,
    cpu_model: cpus()[0]?.model.trim() ?? 'unknown',
    node: process.version,
    platform: process.platform,
    arch: process.arch,
    memory_mb: Math.round(totalmem() / 2 ** 20),
    ed25519_native: node === process.execPath ? ed25519NativeCost() : ed25519NativeCostOn(node),
  };
}

/** The version of the node binary the service runs on, and its path when not the harness's. */
function serviceNode(node: string): { version: string; path: string | null } {
  if (node === process.execPath) return { version: process.version, path: null };
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  return { version, path: node };
}

/**
 * Refuses a node binary the service's SQLite addon cannot run on, before anything starts:
 * better-sqlite3 13 is an N-API addon that declares Node >= 22, and on Node 20.20 it loads
 * but crashes (SIGSEGV) when it opens a database, which a server would do mid-run.
 */
function checkNativeAddon(node: string, server: string): void {
  if (node === process.execPath) return;
  const probe = "const D = require('better-sqlite3'); new D(':memory:').prepare('select 1').get();";
  const result = spawnSync(node, ['-e', probe], {
    cwd: dirname(server),
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (result.status !== 0) {
    throw new Error(
      `${node} cannot open a database with the better-sqlite3 that ${server} loads ` +
        `(${result.signal ? `killed by ${result.signal}` : `exit ${result.status}`}): run a ` +
        `build whose node_modules supports that node (for Node 20, one with better-sqlite3 ` +
        `12, installed with that node first on PATH) with --server. ` +
        result.stderr.trim().slice(-300),
    );
  }
}

async function runSuite(options: Options, workDir: string): Promise<BenchResults> {
  const started = performance.now();
  const loadBefore = loadavg();
  const date = new Date().toISOString();
  const scenarios: ScenarioResult[] = [];
  const seeding: SeedResult[] = [];
  const scale: ScaleResult[] = [];

  log('baselines');
  scenarios.push(await baselineScenario('http', options));
  scenarios.push(await baselineScenario('express', options));

  log('empty ledger');
  scenarios.push(...(await emptyLedgerScenarios(join(workDir, 'empty'), options)));

  const seededWanted = options.sizes.filter(
    (size) =>
      !options.only ||
      proofsWanted(options, size) ||
      options.only.some((o) =>
        SEEDED_KINDS.some((kind) => o === kind || o.startsWith(`${kind}@${label(size)}`)),
      ),
  );
  // One store grows through the sizes; seeding runs while no service is up, so the service
  // starts on a settled database as it would after a restart.
  const seeded = options.ledgerDir ?? join(workDir, 'seeded');
  const covered = new Set<number>();
  for (const size of seededWanted) {
    log(`seeding the ledger to ${size.toLocaleString('en-US')} receipts`);
    const seed = await seedLedger(seeded, size, (done, total) =>
      log(`  ${done.toLocaleString('en-US')} / ${total.toLocaleString('en-US')}`),
    );
    log(`  appended ${seed.appended} in ${seed.seconds} s (${seed.per_second}/s)`);
    seeding.push(seed);
    const proofs = proofsWanted(options, size);
    if (proofs) covered.add(size);
    scenarios.push(...(await seededScenarios(seeded, size, options, scale, proofs)));
  }

  const tlog = await transparencyLogPhase(workDir, options, scenarios, covered);

  let micro: ReturnType<typeof runMicro> = [];
  if (!options.only) {
    log('microbenchmarks');
    micro = runMicro(options.microSeconds);
  }

  const express = scenarios.find((s) => s.kind === 'baseline-express');
  for (const s of scenarios) {
    // With one connection the rate is bound by latency, not capacity: no ratio.
    if (s.rps !== null && express?.rps && s.connections > 1) {
      s.ratio_to_express = Number((s.rps / express.rps).toFixed(3));
    }
    // CPU per request compares at any concurrency: it is the cost of one answer.
    if (s.cpu_us_per_request !== null && express?.cpu_us_per_request) {
      s.cpu_ratio_to_express = Number(
        (s.cpu_us_per_request / express.cpu_us_per_request).toFixed(2),
      );
    }
  }
  const partial = {
    schema: 'svc-bench/1' as const,
    mode: options.mode,
    date,
    machine: {
      ...machine(options.node),
      loadavg_start: loadBefore.map(round2),
      loadavg_end: loadavg().map(round2),
    },
    settings: {
      duration_s: options.duration,
      warmup_s: options.warmup,
      micro_seconds: options.microSeconds,
      ledger_sizes: options.sizes,
      server: relative(ROOT, options.server),
      only: options.only,
      workers: options.workers,
      node_args: options.nodeArgs,
      service_node: serviceNode(options.node),
      tlog_sizes: options.tlogSizes,
    },
    seeding,
    scale,
    scenarios,
    tlog,
    micro,
    total_seconds: Math.round((performance.now() - started) / 1000),
  };
  return { ...partial, goals: judgeGoals(partial) };
}

/**
 * Runs each selected scenario alone, in its own service process under --cpu-prof, and prints
 * the functions with the most self time.
 */
async function runProfile(options: Options, workDir: string): Promise<void> {
  const dir = resolve(options.profile!);
  mkdirSync(dir, { recursive: true });
  for (const id of options.only ?? []) {
    const results = await runSuite(
      { ...options, profile: dir, only: [id] },
      mkdtempSync(join(workDir, 'profile-')),
    );
    const scenario = results.scenarios.find((s) => s.id === id || s.kind === id);
    if (!scenario) throw new Error(`no scenario ${id}`);
    const at = scenario.id.split('@')[1];
    const phase = ['proof', 'checkpoint', 'consistency'].includes(scenario.kind)
      ? `tlog-${at}`
      : scenario.id.includes('@') && at !== 'empty'
        ? `seeded-${at}`
        : 'empty';
    const file = join(dir, `${phase}.cpuprofile`);
    const target = join(dir, `${scenario.id.replace('@', '-')}.cpuprofile`);
    renameSync(file, target);
    const express = results.scenarios.find((s) => s.kind === 'baseline-express')?.rps;
    const summary = formatSummary(
      `${scenario.id}: ${scenario.rps} req/s under --cpu-prof (Express baseline ${express} req/s), self time`,
      summarizeProfile(target, 20, loadWindows.get(scenario.id)),
    );
    writeFileSync(target.replace(/\.cpuprofile$/, '.top.txt'), summary + '\n');
    console.log(summary + '\n');
  }
}

async function main(): Promise<void> {
  const options = parseOptions();
  checkNativeAddon(options.node, options.server);
  const workDir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const interrupted = (signal: NodeJS.Signals) => {
    log(`${signal}: stopping servers`);
    void stopAll().finally(() => {
      if (!options.keep) rmSync(workDir, { recursive: true, force: true });
      process.exit(130);
    });
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    if (options.profile) {
      await runProfile(options, workDir);
      return;
    }
    const results = await runSuite(options, workDir);
    if (options.out) {
      writeAtomically(options.out, JSON.stringify(results, null, 2) + '\n');
      log(`results: ${options.out}`);
    }
    if (options.docs) {
      updateDoc(options.docs, results);
      log(`doc: ${options.docs}`);
    }
    console.log('\n' + renderMarkdown(results));
  } finally {
    await stopAll();
    if (options.keep) log(`data kept in ${workDir}`);
    else rmSync(workDir, { recursive: true, force: true });
  }
}

main()
  .catch((error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exitCode = 1;
  })
  // Sockets autocannon left half-closed must not keep a finished run alive.
  .finally(() => process.exit());
