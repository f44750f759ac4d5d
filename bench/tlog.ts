import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { nativeSha256Hex } from '@svc/verify/node';
import { systemClock } from '../src/ports/clock.js';
import { loadServerKey } from '../src/secrets/server-key.js';
import { ClaimService, type SubmitterContext } from '../src/services/claims.js';
import { logOriginFor } from '../src/services/log-origin.js';
import { PolicyService } from '../src/services/policies.js';
import type { SqliteLogTree } from '../src/storage/sqlite/sqlite-log-tree.js';
import { openSqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import { benchClaim } from './claims.js';
import type { Spawned } from './processes.js';

/**
 * The transparency log's costs, measured outside HTTP where HTTP would only add noise:
 * what the tree adds to each append, and how fast `svc-verify ledger` audits an export.
 */

export interface TreeCostResult {
  /** Evaluations per round, on each of the two stores. */
  per_round: number;
  rounds: number;
  /** Concurrent evaluations per group (they share one group commit, as under load). */
  group: number;
  /**
   * CPU µs per ClaimService.evaluate (evaluate, seal, append, commit; no HTTP), per round:
   * on a store writing the tree, and on one whose `tree.record` is a no-op.
   */
  with_tree_us: number[];
  without_tree_us: number[];
  /** µs per SqliteLogTree.record call, per round (mean of the calls, slowest 1 % left out). */
  record_us: number[];
  /** Medians of the rounds. */
  median: {
    with_tree_us: number;
    without_tree_us: number;
    /** with − without, paired by round: the tree's whole cost, its share of the commit included. */
    difference_us: number;
    record_us: number;
  };
  /** Receipts in the tree-writing store at the end (all receipt-core-v2, as the service writes). */
  ledger_size: number;
}

export interface AuditResult {
  receipts: number;
  /** `svc log export`: wall seconds. */
  export_seconds: number;
  /** `svc-verify ledger --dir`: its own user + system CPU seconds and wall seconds, per run. */
  cpu_seconds: number[];
  wall_seconds: number[];
  /** CPU seconds of `svc-verify ledger --help`: starting Node and loading the CLI. */
  startup_cpu_seconds: number;
  /** receipts / median CPU seconds: the rate on one core, start-up included. */
  receipts_per_cpu_second: number;
  /** The same without the start-up's CPU. */
  receipts_per_cpu_second_net: number;
  receipts_per_wall_second: number;
  loadavg_end: number[];
}

const round = (n: number, digits = 1) => Number(n.toFixed(digits));
export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const trimmedMean = (values: number[], drop: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const kept = sorted.slice(0, Math.max(1, Math.ceil(sorted.length * (1 - drop))));
  return kept.reduce((a, b) => a + b, 0) / kept.length;
};
const cpuMicros = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

interface Evaluator {
  evaluate(i: number): Promise<unknown>;
  close(): Promise<void>;
}

/** ClaimService on the SQLite store in `dataDir`, wired as app.ts wires it. */
function evaluator(
  dataDir: string,
  options: { tree: boolean; wrap?: (record: SqliteLogTree['record']) => SqliteLogTree['record'] },
): Evaluator {
  const store = openSqliteStore(join(dataDir, 'ledger.db'));
  const { key } = loadServerKey({ dataDir });
  const tree = store.tree as SqliteLogTree;
  // Bench-only, in this process: the append transaction calls `this.tree.record(receipt)`,
  // so an instance property replaces it for one store and leaves the code under test as is.
  if (!options.tree) tree.record = () => undefined;
  else if (options.wrap) tree.record = options.wrap(tree.record.bind(tree));
  const claims = new ClaimService({
    ledger: store.ledger,
    policies: new PolicyService({ policies: store.policies, clock: systemClock }),
    serverKey: key,
    clock: systemClock,
    logOrigin: logOriginFor(undefined, key.keyId),
    sha256Hex: nativeSha256Hex,
  });
  const context: SubmitterContext = {
    submitter: { kind: 'api_key', key_id: 'bench-tree' },
    scope: 'bench-tree',
    account: null,
    lockedPolicy: null,
  };
  return {
    evaluate: (i) => claims.evaluate(benchClaim(i, `tree-${i}`), context),
    close: () => store.close(),
  };
}

async function evaluateMany(e: Evaluator, from: number, count: number, group: number) {
  for (let at = from; at < from + count; at += group) {
    const n = Math.min(group, from + count - at);
    await Promise.all(Array.from({ length: n }, (_, k) => e.evaluate(at + k)));
  }
}

/**
 * The tree's share of an append, in process: rounds of ClaimService.evaluate alternate between
 * a store that writes the tree and one whose `tree.record` does nothing (same code otherwise),
 * and inside the first, each `record` call is timed itself (the leaf text, SHA-256 of the leaf
 * and the subtrees it completes, reads and inserts of tlog_hashes).
 * `withTree` is left holding `warmup + rounds × perRound` receipt-core-v2 receipts.
 */
export async function measureTreeCost(
  withTreeDir: string,
  withoutTreeDir: string,
  options: { rounds: number; perRound: number; warmup: number; group?: number },
): Promise<TreeCostResult> {
  const group = options.group ?? 32;
  // Wall time of each record() call: it is synchronous, so this is its CPU unless the thread
  // was descheduled meanwhile, which the trimmed mean leaves out. (process.cpuUsage() costs a
  // system call of several µs, too much to read twice per call.)
  let samples: number[] = [];
  let timing = false;
  const on = evaluator(withTreeDir, {
    tree: true,
    wrap: (record) => (receipt, hashText) => {
      if (!timing) return record(receipt, hashText);
      const t0 = performance.now();
      record(receipt, hashText);
      samples.push((performance.now() - t0) * 1000);
    },
  });
  const off = evaluator(withoutTreeDir, { tree: false });
  const result: TreeCostResult = {
    per_round: options.perRound,
    rounds: options.rounds,
    group,
    with_tree_us: [],
    without_tree_us: [],
    record_us: [],
    median: {
      with_tree_us: 0,
      without_tree_us: 0,
      difference_us: 0,
      record_us: 0,
    },
    ledger_size: 0,
  };
  try {
    let next = 0;
    // The JIT compiles both paths before anything is measured.
    await evaluateMany(on, next, options.warmup, group);
    await evaluateMany(off, next, options.warmup, group);
    next += options.warmup;
    for (let r = 0; r < options.rounds; r++) {
      // Alternating which store goes first, so a drift in the machine's load hits both alike.
      const order = r % 2 === 0 ? ([on, off] as const) : ([off, on] as const);
      for (const e of order) {
        samples = [];
        timing = e === on;
        const t0 = cpuMicros();
        await evaluateMany(e, next, options.perRound, group);
        const per = (cpuMicros() - t0) / options.perRound;
        timing = false;
        if (e === on) {
          result.with_tree_us.push(round(per));
          result.record_us.push(round(trimmedMean(samples, 0.01), 2));
        } else {
          result.without_tree_us.push(round(per));
        }
      }
      next += options.perRound;
    }
    result.ledger_size = next;
  } finally {
    await on.close();
    await off.close();
  }
  const m = result.median;
  m.with_tree_us = round(median(result.with_tree_us));
  m.without_tree_us = round(median(result.without_tree_us));
  // Paired by round: the two stores of one round ran under the same load.
  m.difference_us = round(
    median(result.with_tree_us.map((w, i) => w - result.without_tree_us[i]!)),
  );
  m.record_us = round(median(result.record_us), 2);
  return result;
}

/** The size of the newest checkpoint `service` serves, once it is `size`; throws after `ms`. */
export async function waitForCheckpoint(service: Spawned, size: number, ms = 60_000) {
  const deadline = Date.now() + ms;
  let last: string;
  for (;;) {
    const response = await fetch(`${service.url}/v1/log/checkpoint`);
    last = await response.text();
    // A C2SP checkpoint: origin, then the tree size, then the root hash.
    if (response.ok && Number(last.split('\n')[1]) === size) return;
    if (Date.now() > deadline) {
      throw new Error(`no checkpoint of size ${size} after ${ms} ms; last: ${last.slice(0, 200)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** `count` receipt ids at random leaves of the ledger in `dataDir` (read while it is served). */
export async function sampleReceiptIds(dataDir: string, count: number): Promise<string[]> {
  const store = openSqliteStore(join(dataDir, 'ledger.db'), { readonly: true });
  try {
    const size = (await store.ledger.head()).sequence;
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const [entry] = await store.ledger.list(Math.floor(Math.random() * size), 1);
      if (entry) ids.push(entry.receipt.receipt_id);
    }
    return ids;
  } finally {
    await store.close();
  }
}

/** Runs `node args…` to its end; its CPU from the rusage hook when `usageFile` is given. */
function runNode(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string; wall: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      resolve({ code: code ?? 1, stdout, stderr, wall: (performance.now() - started) / 1000 }),
    );
  });
}

/**
 * Exports the ledger in `dataDir` (which must hold a checkpoint of its full size) with
 * `svc log export` and audits the export `runs` times with `svc-verify ledger --dir`, each
 * run's CPU read from its own resource usage (user + system), not from the wall clock.
 */
export async function auditExport(options: {
  dataDir: string;
  exportDir: string;
  receipts: number;
  runs: number;
  svc: string;
  svcVerify: string;
  rusageHook: string;
}): Promise<AuditResult> {
  const { key } = loadServerKey({ dataDir: options.dataDir });
  mkdirSync(options.exportDir, { recursive: true });
  const keyFile = join(options.exportDir, '..', 'audit-key.pem');
  writeFileSync(keyFile, key.publicKeyPem);
  const exported = await runNode([options.svc, 'log', 'export', options.exportDir], {
    SVC_DATA_DIR: options.dataDir,
    LOG_LEVEL: 'warn',
  });
  if (exported.code !== 0) throw new Error(`svc log export failed: ${exported.stderr}`);
  const usageFile = join(options.exportDir, '..', 'audit-usage.json');
  const usage = () => {
    const u = JSON.parse(readFileSync(usageFile, 'utf8')) as { user_us: number; system_us: number };
    return (u.user_us + u.system_us) / 1e6;
  };
  // What starting the CLI costs (Node, the imports, the help text), apart from the audit.
  rmSync(usageFile, { force: true });
  await runNode(['--import', options.rusageHook, options.svcVerify, 'ledger', '--help'], {
    SVC_BENCH_RUSAGE: usageFile,
  });
  const startup = usage();
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < options.runs; i++) {
    rmSync(usageFile, { force: true });
    const run = await runNode(
      [
        '--import',
        options.rusageHook,
        options.svcVerify,
        'ledger',
        '--dir',
        options.exportDir,
        '--key',
        keyFile,
        '--json',
      ],
      { SVC_BENCH_RUSAGE: usageFile },
    );
    if (run.code !== 0) throw new Error(`svc-verify ledger failed: ${run.stderr || run.stdout}`);
    const report = JSON.parse(run.stdout) as { size: number; signatures_verified: number };
    if (report.size !== options.receipts || report.signatures_verified !== options.receipts) {
      throw new Error(
        `svc-verify ledger checked ${report.size} leaves and ${report.signatures_verified} signatures, not ${options.receipts}`,
      );
    }
    cpu.push(round(usage(), 3));
    wall.push(round(run.wall, 3));
  }
  return {
    receipts: options.receipts,
    export_seconds: round(exported.wall, 2),
    cpu_seconds: cpu,
    wall_seconds: wall,
    startup_cpu_seconds: round(startup, 3),
    receipts_per_cpu_second: Math.round(options.receipts / median(cpu)),
    receipts_per_cpu_second_net: Math.round(
      options.receipts / Math.max(median(cpu) - startup, 1e-3),
    ),
    receipts_per_wall_second: Math.round(options.receipts / median(wall)),
    loadavg_end: loadavg().map((n) => round(n, 2)),
  };
}
