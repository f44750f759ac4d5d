import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { enterpriseKey } from './api-key.js';
import { AGENTS, benchClaim, REPOSITORIES, TOPICS } from './claims.js';
import {
  APP_ID,
  OWNER,
  pullRequestDelivery,
  REPO,
  startFakeGitHub,
  type FakeGitHub,
} from './fake-github.js';
import { freePort, LOOPBACK, startNode, stopAll, type Spawned } from './processes.js';
import { peakRssMiB } from './proc-stats.js';
import { startFlags } from './start-flags.js';

/**
 * The soak: the built service under mixed traffic for a bounded time, with garbage collection
 * forced far more often than its own allocation would (bench/gc-pressure.ts), on the Node
 * binary given. It counts what must never happen — a process killed by a signal, a worker the
 * supervisor had to replace, an unexpected answer — and exits 1 when any did.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SERVER = join(ROOT, 'dist/src/server.js');
const GC_PRESSURE = join(ROOT, 'dist/bench/gc-pressure.js');
const GITHUB_SECRET = 'soak-webhook-secret';

// Never more than this many service restarts after an abort: a service that cannot stay up
// ends the soak early instead of restarting in a loop.
const MAX_SERVICE_RESTARTS = 3;
// Any one request; a hung service shows as timeouts, not as a soak that never ends.
const REQUEST_TIMEOUT_MS = 10_000;
// Receipts kept for verify and the reads, the newest ones.
const RECENT = 256;

interface Options {
  duration: number;
  node: string;
  workers: number;
  connections: number;
  gcMs: number;
  /** Seconds the soak waits, after the traffic, for the outbound deliveries to catch up. */
  drain: number;
  out: string | null;
  keep: boolean;
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string' },
      node: { type: 'string' },
      workers: { type: 'string' },
      connections: { type: 'string' },
      'gc-ms': { type: 'string' },
      drain: { type: 'string' },
      out: { type: 'string' },
      'no-out': { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(`usage: node dist/bench/soak.js [options]
  --duration <s>      seconds of traffic (default 180; the whole soak takes about a minute more)
  --node <path>       the node binary the service runs on (default: the one running the soak)
  --workers <n>       SVC_WORKERS of the service (default 1)
  --connections <n>   requests in flight at once (default 8)
  --gc-ms <ms>        a forced garbage collection this often in every service process
                      (default 20; every 5th is a major one)
  --drain <s>         seconds to wait after the traffic for webhook deliveries (default 30)
  --out <file>        result JSON (default bench/results/soak-<node version>-w<workers>.json)
  --no-out            write no result file
  --keep              keep the temporary data directory`);
    process.exit(0);
  }
  const number = (value: string | undefined, fallback: number) => {
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`not a positive number: ${value}`);
    return n;
  };
  return {
    duration: number(values.duration, 180),
    node: values.node ? resolve(values.node) : process.execPath,
    workers: Math.round(number(values.workers, 1)),
    connections: Math.round(number(values.connections, 8)),
    gcMs: number(values['gc-ms'], 20),
    drain: values.drain === '0' ? 0 : number(values.drain, 30),
    out: values['no-out'] ? null : values.out ? resolve(values.out) : '',
    keep: values.keep,
  };
}

const log = (message: string) =>
  console.log(`[soak ${new Date().toISOString().slice(11, 19)}] ${message}`);

// ---------------------------------------------------------------------------------------
// What the service's processes said: the supervisor's log (JSON lines on stdout) and
// whatever else they wrote (a native abort prints its assertion and stack on stderr).

interface WorkerRestart {
  at: string;
  worker_pid: number | null;
  code: number | null;
  signal: string | null;
}

interface ServiceOutput {
  restarts: WorkerRestart[];
  /** Log lines at error level or above other than the restarts (at most 20 kept). */
  loggedErrors: string[];
  loggedErrorCount: number;
  /** Lines that are not JSON log lines: assertion messages, native stacks, warnings. */
  rawLines: string[];
}

function outputReader(into: ServiceOutput) {
  const partial = { stdout: '', stderr: '' };
  const line = (text: string) => {
    if (!text.trim()) return;
    type Entry = { level?: number; msg?: string; [k: string]: unknown };
    let entry: Entry | null = null;
    if (text.startsWith('{')) {
      try {
        entry = JSON.parse(text) as Entry;
      } catch {
        entry = null;
      }
    }
    if (!entry) {
      // Bounded: the last lines are the ones that explain an abort.
      into.rawLines.push(text.slice(0, 2_000));
      if (into.rawLines.length > 400) into.rawLines.splice(0, into.rawLines.length - 400);
      return;
    }
    if (entry.msg === 'worker died; starting another') {
      into.restarts.push({
        at: new Date().toISOString(),
        worker_pid: typeof entry.worker_pid === 'number' ? entry.worker_pid : null,
        code: typeof entry.code === 'number' ? entry.code : null,
        signal: typeof entry.signal === 'string' ? entry.signal : null,
      });
    } else if ((entry.level ?? 0) >= 50) {
      into.loggedErrorCount++;
      if (into.loggedErrors.length < 20) into.loggedErrors.push(text.slice(0, 2_000));
    }
  };
  return (stream: 'stdout' | 'stderr', chunk: string) => {
    const lines = (partial[stream] + chunk).split('\n');
    partial[stream] = lines.pop() ?? '';
    // A line without an end (a runaway write) is cut rather than held.
    if (partial[stream].length > 65_536) partial[stream] = partial[stream].slice(-65_536);
    for (const l of lines) line(l);
  };
}

// ---------------------------------------------------------------------------------------
// The receiver of the service's outbound webhooks, on the loopback address.

interface Receiver {
  url: string;
  setSecret(secret: string): void;
  received: () => number;
  badSignatures: () => number;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  let webhook: Webhook | null = null;
  let received = 0;
  let bad = 0;
  const ids = new Set<string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= 1 << 20) chunks.push(chunk);
    });
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(
        Object.entries(req.headers as IncomingHttpHeaders).map(([k, v]) => [k, String(v)]),
      );
      try {
        if (!webhook) throw new Error('no secret yet');
        webhook.verify(body, headers);
        // A delivery sent again (a retry after a lost answer) is counted once.
        const id = headers['webhook-id'] ?? '';
        if (!ids.has(id)) {
          ids.add(id);
          received++;
        }
      } catch {
        bad++;
      }
      res.writeHead(204).end();
    });
  });
  server.listen(0, LOOPBACK);
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: `http://${LOOPBACK}:${port}/hooks/svc`,
    setSecret: (secret) => (webhook = new Webhook(secret)),
    received: () => received,
    badSignatures: () => bad,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

// ---------------------------------------------------------------------------------------
// The traffic.

const KINDS = ['evaluate', 'verify', 'read', 'search', 'explorer', 'github'] as const;
type Kind = (typeof KINDS)[number];

// The mix, in the order each connection walks it (from its own offset): evaluations and
// verifications most, then reads, searches and explorer pages, and a GitHub delivery.
const SCHEDULE: Kind[] = [
  'evaluate',
  'verify',
  'read',
  'search',
  'evaluate',
  'explorer',
  'verify',
  'read',
  'evaluate',
  'search',
  'explorer',
  'github',
];

interface KindStats {
  requests: number;
  ok: number;
  /** Answers with another status than the one expected, by status. */
  unexpected_status: Record<string, number>;
  /** A 2xx answer that is wrong (a receipt that does not verify, an evaluation without one). */
  wrong_answers: number;
  connection_errors: number;
  timeouts: number;
}

const emptyStats = (): KindStats => ({
  requests: 0,
  ok: 0,
  unexpected_status: {},
  wrong_answers: 0,
  connection_errors: 0,
  timeouts: 0,
});

interface Receipt {
  receipt_id: string;
  [key: string]: unknown;
}

interface Traffic {
  url: () => string;
  apiKey: string;
  runId: string;
  recent: Receipt[];
  next: { claim: number; pull: number };
  stats: Record<Kind, KindStats>;
  /** Details of the first few failures, to say what went wrong. */
  samples: string[];
}

const SEARCHES = [
  ...TOPICS.slice(0, 4).map((t) => `q=${encodeURIComponent(t)}`),
  `agent=${AGENTS[3]}`,
  `repo=${encodeURIComponent(REPOSITORIES[5]!)}&verdict=BLOCKED`,
  'verdict=ESCALATED',
];

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;

/** One request of `kind`; what it expects, and what counts as a wrong answer. */
async function send(t: Traffic, kind: Kind): Promise<void> {
  const stats = t.stats[kind];
  const key = { 'x-api-key': t.apiKey };
  const json = { 'content-type': 'application/json' };
  let request: { path: string; init?: RequestInit; expect: number } | null;
  let check: ((body: unknown) => boolean) | null = null;
  const receipt = t.recent.length ? pick(t.recent) : null;
  switch (kind) {
    case 'evaluate': {
      const i = t.next.claim++;
      request = {
        path: '/v1/evaluate',
        init: {
          method: 'POST',
          headers: { ...json, ...key },
          body: JSON.stringify(benchClaim(i, `soak-${t.runId}-${i}`)),
        },
        expect: 200,
      };
      check = (body) => {
        const r = (body as { receipt?: Receipt }).receipt;
        if (!r?.receipt_id) return false;
        t.recent.push(r);
        if (t.recent.length > RECENT) t.recent.shift();
        return true;
      };
      break;
    }
    case 'verify':
      // Anyone holding a receipt may verify it: no key.
      request = receipt && {
        path: '/v1/verify',
        init: { method: 'POST', headers: json, body: JSON.stringify(receipt) },
        expect: 200,
      };
      check = (body) => (body as { valid?: unknown }).valid === true;
      break;
    case 'read':
      request = receipt && {
        path: pick([
          `/v1/receipts/${receipt.receipt_id}`,
          `/v1/receipts/${receipt.receipt_id}`,
          '/v1/ledger/stats',
          '/v1/log/checkpoint',
        ]),
        init: { headers: key },
        expect: 200,
      };
      break;
    case 'search':
      request = {
        path: `/v1/receipts/search?${pick(SEARCHES)}`,
        init: { headers: key },
        expect: 200,
      };
      break;
    case 'explorer':
      request = {
        path: pick([
          '/explorer',
          '/explorer/receipts',
          `/explorer/receipts?agent=${pick(AGENTS)}`,
          receipt ? `/explorer/receipts/${receipt.receipt_id}` : '/explorer/keys',
          '/explorer/keys',
          `/explorer/pulls?repository=${OWNER}%2F${REPO}&pr=1`,
        ]),
        expect: 200,
      };
      break;
    case 'github': {
      const delivery = await pullRequestDelivery(GITHUB_SECRET, ++t.next.pull);
      request = {
        path: '/v1/webhook/scm',
        init: { method: 'POST', headers: delivery.headers, body: delivery.body },
        expect: 202,
      };
      check = (body) => (body as { status?: unknown }).status === 'queued';
      break;
    }
  }
  // Nothing to verify or read before the first receipt: an evaluation instead.
  if (!request) return send(t, 'evaluate');
  stats.requests++;
  const fail = (what: string) => {
    if (t.samples.length < 20) t.samples.push(`${kind} ${request.path}: ${what}`);
  };
  try {
    const response = await fetch(t.url() + request.path, {
      ...request.init,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    if (response.status !== request.expect) {
      stats.unexpected_status[response.status] =
        (stats.unexpected_status[response.status] ?? 0) + 1;
      fail(`${response.status} ${text.slice(0, 300)}`);
      return;
    }
    if (check) {
      let ok = false;
      try {
        ok = check(JSON.parse(text));
      } catch {
        ok = false;
      }
      if (!ok) {
        stats.wrong_answers++;
        fail(`wrong answer ${text.slice(0, 300)}`);
        return;
      }
    }
    stats.ok++;
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'TimeoutError') stats.timeouts++;
    else stats.connection_errors++;
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    fail(`${name}${cause ? ` ${cause}` : ''}: ${(error as Error).message}`);
  }
}

/** `connections` loops, each bounded by the deadline and by a count. */
async function drive(t: Traffic, connections: number, deadline: number): Promise<void> {
  // Far more than any loop can send in the time (a request takes a millisecond at best).
  const maxPerLoop = Math.ceil((deadline - Date.now()) / 1) + 1;
  await Promise.all(
    Array.from({ length: connections }, async (_, j) => {
      for (let n = 0; n < maxPerLoop && Date.now() < deadline; n++) {
        await send(t, SCHEDULE[(j + n) % SCHEDULE.length]!);
      }
    }),
  );
}

// ---------------------------------------------------------------------------------------

interface Abort {
  at: string;
  /** The service process (one worker: it serves; several: the supervisor and writer). */
  process: 'service';
  pid: number | undefined;
  code: number | null;
  signal: string | null;
  /** What the processes wrote last that is not a log line: the assertion and native stack. */
  output_tail: string[];
}

function nodeVersion(node: string): string {
  return execFileSync(node, ['-p', 'process.version'], { encoding: 'utf8' }).trim();
}

async function ledgerCount(url: string): Promise<number | null> {
  try {
    const response = await fetch(`${url}/v1/ledger/stats`, { signal: AbortSignal.timeout(5_000) });
    const body = (await response.json()) as { total?: number; head?: { sequence?: number } };
    return body.total ?? body.head?.sequence ?? null;
  } catch {
    return null;
  }
}

async function main(): Promise<number> {
  const options = parseOptions();
  const version = nodeVersion(options.node);
  const [major] = version.slice(1).split('.');
  if (Number(major) < 22) throw new Error(`${options.node} is Node ${version}; svc needs 22 or 24`);
  const out =
    options.out === ''
      ? join(ROOT, 'bench/results', `soak-${version}-w${options.workers}.json`)
      : options.out;
  const workDir = mkdtempSync(join(tmpdir(), 'svc-soak-'));
  const dataDir = join(workDir, 'data');
  const stopped = { value: false };
  const interrupted = (signal: NodeJS.Signals) => {
    log(`${signal}: stopping`);
    stopped.value = true;
    void stopAll().finally(() => {
      if (!options.keep) rmSync(workDir, { recursive: true, force: true });
      process.exit(130);
    });
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);

  const receiver = await startReceiver();
  let github: FakeGitHub | null = null;
  let service: Spawned | null = null;
  const output: ServiceOutput = {
    restarts: [],
    loggedErrors: [],
    loggedErrorCount: 0,
    rawLines: [],
  };
  const aborts: Abort[] = [];
  const started = performance.now();
  const loadStart = loadavg();
  try {
    github = await startFakeGitHub();
    const port = await freePort();
    const start = () =>
      startNode({
        name: 'svc',
        script: SERVER,
        execPath: options.node,
        port,
        nodeArgs: [
          ...startFlags(ROOT),
          '--expose-gc',
          `--import=${pathToFileURL(GC_PRESSURE).href}`,
        ],
        readyPath: '/health',
        timeoutMs: 60_000,
        onOutput: outputReader(output),
        env: {
          SVC_DATA_DIR: dataDir,
          LOG_LEVEL: 'warn',
          SVC_ANON_LIMIT_PER_HOUR: 'unlimited',
          SVC_SIGNUP_LIMIT_PER_HOUR: 'unlimited',
          SVC_WORKERS: String(options.workers),
          SVC_SOAK_GC_MS: String(options.gcMs),
          // Checkpoints every second, so the log's writer works under the traffic too.
          SVC_CHECKPOINT_INTERVAL: '1',
          // The documented switch for local receivers (docs/API.md): http and loopback URLs.
          SVC_ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
          // The GitHub App, against the fake GitHub as a GitHub Enterprise Server.
          WEBHOOK_SECRET: GITHUB_SECRET,
          APP_ID: String(APP_ID),
          PRIVATE_KEY: github!.appKey,
          GHE_HOST: github!.host,
          GHE_PROTOCOL: 'http',
        },
      });
    log(
      `Node ${version} (${options.node}), SVC_WORKERS=${options.workers}, ` +
        `${options.duration} s, ${options.connections} connections, GC every ${options.gcMs} ms`,
    );
    service = await start();
    const apiKey = await enterpriseKey(service, dataDir);
    const registered = await fetch(`${service.url}/v1/webhooks/outbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ url: receiver.url, event: 'receipt.created' }),
    });
    const hook = (await registered.json()) as { secret?: string };
    if (registered.status !== 201 || !hook.secret) {
      throw new Error(`webhook registration answered ${registered.status}`);
    }
    receiver.setSecret(hook.secret);

    const traffic: Traffic = {
      url: () => service!.url,
      apiKey,
      runId: Date.now().toString(36),
      recent: [],
      next: { claim: 0, pull: 0 },
      stats: Object.fromEntries(KINDS.map((k) => [k, emptyStats()])) as Record<Kind, KindStats>,
      samples: [],
    };
    const deadline = Date.now() + options.duration * 1000;

    // A service process that ends by itself is an abort: recorded, and the service started
    // again on the same port (as an operator's supervisor would) so the soak goes on.
    let restarting: Promise<void> | null = null;
    const watch = (s: Spawned) =>
      s.process.once('exit', (code, signal) => {
        if (stopped.value) return;
        aborts.push({
          at: new Date().toISOString(),
          process: 'service',
          pid: s.process.pid,
          code,
          signal,
          output_tail: output.rawLines.slice(-80),
        });
        log(`service exited by itself: code ${code}, signal ${signal}`);
        if (aborts.length > MAX_SERVICE_RESTARTS || Date.now() > deadline) return;
        restarting = start().then(
          (again) => {
            service = again;
            watch(again);
          },
          (error: unknown) => log(`could not start the service again: ${String(error)}`),
        );
      });
    watch(service);

    log(`traffic for ${options.duration} s`);
    const progress = setInterval(() => {
      const total = KINDS.reduce((n, k) => n + traffic.stats[k].requests, 0);
      log(
        `  ${total} requests, ${receiver.received()} webhook deliveries, ` +
          `${github!.checkRunWrites()} check-run writes, load ${loadavg()[0]!.toFixed(2)}`,
      );
    }, 30_000);
    try {
      await drive(traffic, options.connections, deadline);
    } finally {
      clearInterval(progress);
    }
    if (restarting) await restarting;

    // The outbound deliveries and the GitHub jobs run behind the answers: a bounded wait for
    // the receiver to have every receipt written since its registration.
    const drainUntil = Date.now() + options.drain * 1000;
    let receipts = await ledgerCount(service.url);
    while (Date.now() < drainUntil && receipts !== null && receiver.received() < receipts) {
      await new Promise((r) => setTimeout(r, 500));
      receipts = await ledgerCount(service.url);
    }
    const peakRss = service.process.pid ? peakRssMiB(service.process.pid) : null;

    stopped.value = true;
    const last = service;
    const exit = new Promise<{ code: number | null; signal: string | null }>((r) => {
      if (last.process.exitCode !== null || last.process.signalCode !== null) {
        r({ code: last.process.exitCode, signal: last.process.signalCode });
      } else last.process.once('exit', (code, signal) => r({ code, signal }));
    });
    await last.stop(30_000);
    const shutdown = await exit;

    const errors =
      KINDS.reduce(
        (n, k) =>
          n +
          Object.values(traffic.stats[k].unexpected_status).reduce((a, b) => a + b, 0) +
          traffic.stats[k].wrong_answers +
          traffic.stats[k].connection_errors +
          traffic.stats[k].timeouts,
        0,
      ) +
      output.loggedErrorCount +
      receiver.badSignatures();
    const shutdownClean = shutdown.code === 0 && shutdown.signal === null;
    const passed =
      aborts.length === 0 && output.restarts.length === 0 && errors === 0 && shutdownClean;
    const result = {
      schema: 'svc-soak/1',
      date: new Date().toISOString(),
      passed,
      node: version,
      node_path: options.node,
      machine: {
        cores: cpus().length,
        cpu_model: cpus()[0]?.model.trim() ?? 'unknown',
        loadavg_start: loadStart.map((n) => Number(n.toFixed(2))),
        loadavg_end: loadavg().map((n) => Number(n.toFixed(2))),
      },
      settings: {
        workers: options.workers,
        duration_s: options.duration,
        connections: options.connections,
        gc_every_ms: options.gcMs,
        gc: 'async minor collections, every 5th a major one, in every service process',
        server: relative(ROOT, SERVER),
      },
      total_seconds: Math.round((performance.now() - started) / 1000),
      requests: Object.fromEntries(KINDS.map((k) => [k, traffic.stats[k].requests])),
      per_kind: traffic.stats,
      webhooks: {
        receipts_in_ledger: receipts,
        deliveries_received: receiver.received(),
        bad_signatures: receiver.badSignatures(),
      },
      github_app: {
        deliveries_accepted: traffic.stats.github.ok,
        check_run_writes: github.checkRunWrites(),
        unknown_api_requests: github.unknownRequests(),
      },
      aborts,
      worker_restarts: output.restarts,
      errors,
      logged_errors: { count: output.loggedErrorCount, samples: output.loggedErrors },
      error_samples: traffic.samples,
      shutdown,
      peak_rss_mb: peakRss === null ? null : Math.round(peakRss),
    };
    if (out) {
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
      log(`result: ${relative(process.cwd(), out) || out}`);
    }
    for (const a of aborts) {
      console.log(
        `\nabort at ${a.at}: code ${a.code}, signal ${a.signal}\n${a.output_tail.join('\n')}`,
      );
    }
    for (const r of output.restarts) {
      console.log(`worker ${r.worker_pid} died (code ${r.code}, signal ${r.signal}) at ${r.at}`);
    }
    if (output.restarts.length) console.log(output.rawLines.slice(-80).join('\n'));
    for (const s of [...traffic.samples, ...output.loggedErrors].slice(0, 20)) {
      console.log(`error: ${s}`);
    }
    const perKind = KINDS.map((k) => `${k} ${traffic.stats[k].requests}`).join(', ');
    console.log(
      `\nsoak ${passed ? 'PASSED' : 'FAILED'}: Node ${version}, SVC_WORKERS=${options.workers}, ` +
        `${options.duration} s: ${perKind}; ${receiver.received()}/${receipts ?? '?'} webhook ` +
        `deliveries, ${github.checkRunWrites()} check-run writes; aborts ${aborts.length}, ` +
        `restarts ${output.restarts.length}, errors ${errors}, ` +
        `shutdown ${shutdownClean ? 'clean' : `code ${shutdown.code} signal ${shutdown.signal}`}`,
    );
    return passed ? 0 : 1;
  } finally {
    stopped.value = true;
    await stopAll();
    await receiver.close();
    await github?.close();
    if (options.keep) log(`data kept in ${workDir}`);
    else rmSync(workDir, { recursive: true, force: true });
  }
}

main()
  .then((code) => (process.exitCode = code))
  .catch((error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exitCode = 1;
  })
  // Sockets left half-closed must not keep a finished soak alive.
  .finally(() => process.exit());
