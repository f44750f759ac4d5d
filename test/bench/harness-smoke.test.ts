import { afterAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildWithBench, withRepositoryBuild } from '../support/build-lock.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

interface Scenario {
  id: string;
  kind: string;
  connections: number;
  status: 'ok' | 'missing' | 'error';
  rps: number | null;
  cpu_seconds: number | null;
  cpu_us_per_request: number | null;
  cpu_ratio_to_express: number | null;
  peak_rss_mb: number | null;
  hwm_rss_mb: number | null;
  loadavg_end: number[] | null;
  detail?: string;
}

// The endpoint is specified but may not be served yet; the harness reports it as missing
// rather than inventing numbers, and every other scenario must produce some.
const MAY_BE_MISSING = new Set(['search-filters', 'search-text']);

const workDir = mkdtempSync(join(tmpdir(), 'svc-bench-smoke-test-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

/** Runs the compiled harness; the child stops its own servers when it is told to stop. */
function runHarness(
  args: string[],
  timeoutMs: number,
  script = 'dist/bench/run.js',
): Promise<{ code: number; output: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [join(ROOT, script), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`harness did not finish in ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolvePromise({ code: code ?? 1, output });
    });
  });
}

// CI runs on a clean clone: the harness and the server it spawns exist only once built, as
// `npm run bench` builds them (the built bench imports @svc/verify's and @svc/hook's own
// builds). The build is the repository's own: no other test file rewrites it meanwhile.
let built: Promise<void> | null = null;
const build = () => (built ??= buildWithBench());

describe('benchmark harness', () => {
  it('runs every scenario briefly on a tiny ledger and writes numeric results', async () => {
    const out = join(workDir, 'latest.json');
    const run = await withRepositoryBuild(async () => {
      await build();
      // The smoke's own window per scenario (0.3 s): a scenario not answered within it on a
      // busy machine is measured again over a doubled window, until it is.
      return runHarness(['--smoke', '--out', out, '--no-docs'], 150_000);
    });
    expect({ code: run.code, output: run.code === 0 ? '' : run.output }).toEqual({
      code: 0,
      output: '',
    });

    const results = JSON.parse(readFileSync(out, 'utf8')) as {
      mode: string;
      machine: { cores: number; node: string };
      seeding: { appended: number; to: number }[];
      scale: { size: number; restart_ms: number; bytes_per_receipt: number }[];
      scenarios: Scenario[];
      micro: { name: string; ops_per_s: number }[];
      goals: unknown[];
      tlog: {
        tree: { median: { with_tree_us: number; without_tree_us: number; record_us: number } };
        audit: { receipts: number; cpu_seconds: number[]; receipts_per_cpu_second: number };
        seeding: { appended: number }[];
      };
    };
    expect(results.mode).toBe('smoke');
    expect(results.machine.cores).toBeGreaterThan(0);
    expect(results.machine.node).toBe(process.version);
    expect(results.seeding).toHaveLength(2);
    // Each seeded size reports its restart to a healthy deep check and its bytes on disk.
    expect(results.scale.map((s) => s.size)).toEqual([100, 1000]);
    for (const s of results.scale) {
      expect(s.restart_ms).toBeGreaterThan(0);
      expect(s.bytes_per_receipt).toBeGreaterThan(100);
    }

    const kinds = results.scenarios.map((s) => s.kind);
    for (const kind of ['baseline-http', 'baseline-express', 'simulate', 'verify']) {
      expect(kinds.filter((k) => k === kind)).toHaveLength(1);
    }
    // Evaluate on the empty ledger and at each seeded size; the reads at each seeded size,
    // search at two concurrencies.
    expect(kinds.filter((k) => k === 'evaluate')).toHaveLength(3);
    // The same evaluate at the hook's sessions: the floor its saturated latency is read against.
    const hookConnections = results.scenarios.find((s) => s.id === 'hook@empty')?.connections;
    expect(
      results.scenarios.filter((s) => s.kind === 'evaluate-sessions').map((s) => s.connections),
    ).toEqual([hookConnections]);
    expect(kinds.filter((k) => k === 'stats')).toHaveLength(2);
    for (const kind of ['search-filters', 'search-text']) {
      expect(kinds.filter((k) => k === kind)).toHaveLength(4);
    }
    // The transparency log at the one smoke size, over HTTP: inclusion proofs alone and at 8
    // connections, the checkpoint and consistency proofs.
    expect(kinds.filter((k) => k === 'proof')).toHaveLength(2);
    for (const kind of ['checkpoint', 'consistency']) {
      expect(kinds.filter((k) => k === kind)).toHaveLength(1);
    }
    // Its costs outside HTTP: the tree's share of an append, and the audit of an export.
    expect(results.tlog.tree.median.with_tree_us).toBeGreaterThan(0);
    expect(results.tlog.tree.median.without_tree_us).toBeGreaterThan(0);
    expect(results.tlog.tree.median.record_us).toBeGreaterThan(0);
    expect(results.tlog.audit.receipts).toBeGreaterThan(0);
    expect(results.tlog.audit.cpu_seconds).toHaveLength(1);
    expect(results.tlog.audit.receipts_per_cpu_second).toBeGreaterThan(0);
    // The smoke tlog size is also the largest seeded size: its proofs ran on that ledger, with
    // no second seeding.
    expect(results.tlog.seeding).toHaveLength(0);
    expect(results.scenarios.map((s) => s.id)).toEqual(
      expect.arrayContaining(['proof@1k/c1', 'proof@1k', 'checkpoint@1k', 'consistency@1k']),
    );
    // Each seeding reaches at least its size: evaluate at the smaller size grows the same
    // ledger, in a fast smoke window past the next size.
    expect(results.seeding).toHaveLength(2);
    expect(results.seeding[0]!.to).toBeGreaterThanOrEqual(100);
    expect(results.seeding[1]!.to).toBeGreaterThanOrEqual(1000);

    for (const s of results.scenarios) {
      if (MAY_BE_MISSING.has(s.kind) && s.status === 'missing') continue;
      expect({ id: s.id, status: s.status, detail: s.detail }).toEqual({
        id: s.id,
        status: 'ok',
        detail: s.detail,
      });
      expect(typeof s.rps).toBe('number');
      expect(s.rps).toBeGreaterThan(0);
      // CPU and memory come from /proc (Linux, where CI runs). A 0.3 s window may fall within
      // one clock tick, so the CPU may read 0, never negative; memory is always resident.
      expect(typeof s.cpu_seconds).toBe('number');
      expect(s.cpu_seconds).toBeGreaterThanOrEqual(0);
      expect(typeof s.cpu_us_per_request).toBe('number');
      expect(s.cpu_us_per_request).toBeGreaterThanOrEqual(0);
      expect(s.peak_rss_mb).toBeGreaterThan(0);
      expect(s.hwm_rss_mb).toBeGreaterThan(0);
      expect(s.loadavg_end).toHaveLength(3);
    }
    const express = results.scenarios.find((s) => s.kind === 'baseline-express')!;
    const evaluate = results.scenarios.find((s) => s.id === 'evaluate@empty')!;
    // The multiple needs a nonzero Express figure, which a smoke window may not reach.
    if (express.cpu_us_per_request! > 0)
      expect(typeof evaluate.cpu_ratio_to_express).toBe('number');

    expect(results.micro.length).toBeGreaterThan(0);
    for (const m of results.micro) expect(m.ops_per_s).toBeGreaterThan(0);
    expect(results.goals.length).toBeGreaterThan(0);

    // Two service workers: the same figures, CPU and memory summed over both processes.
    const workersOut = join(workDir, 'workers.json');
    const workers = await runHarness(
      [
        '--smoke',
        '--only',
        'evaluate@empty',
        '--workers',
        '2',
        '--node-args=--max-semi-space-size=8',
        '--out',
        workersOut,
        '--no-docs',
      ],
      60_000,
    );
    expect({ code: workers.code, output: workers.code === 0 ? '' : workers.output }).toEqual({
      code: 0,
      output: '',
    });
    const two = JSON.parse(readFileSync(workersOut, 'utf8')) as {
      settings: { workers: number; node_args: string[] };
      scenarios: Scenario[];
    };
    expect(two.settings.workers).toBe(2);
    // The service runs as npm start runs it, then with the flags asked for.
    const start = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
        scripts: { start: string };
      }
    ).scripts.start.split(/\s+/);
    expect(two.settings.node_args).toEqual([
      ...start.filter((word) => word.startsWith('--')),
      '--max-semi-space-size=8',
    ]);
    const spread = two.scenarios.find((s) => s.id === 'evaluate@empty')!;
    expect(spread.status).toBe('ok');
    expect(spread.rps).toBeGreaterThan(0);
    expect(typeof spread.cpu_us_per_request).toBe('number');
    // The resident sizes of the primary and both workers are summed: more than the largest
    // any one of them ever had (VmHWM).
    expect(spread.peak_rss_mb!).toBeGreaterThan(spread.hwm_rss_mb!);
  }, 300_000);

  it('measures a decision in process: CPU and bytes written for each kind (decision-cost)', async () => {
    const run = await withRepositoryBuild(async () => {
      await build();
      return runHarness(
        ['--rounds', '1', '--per-round', '16', '--json'],
        120_000,
        'dist/bench/decision-cost.js',
      );
    });
    expect({ code: run.code, output: run.code === 0 ? '' : run.output }).toEqual({
      code: 0,
      output: '',
    });
    const { summary } = JSON.parse(run.output) as {
      summary: { kind: string; cpu_us_median: number; bytes_written_median: number }[];
    };
    expect(summary.map((s) => s.kind)).toEqual(['evaluate', 'evaluate-agent', 'hook']);
    for (const s of summary) {
      expect(s.cpu_us_median).toBeGreaterThan(0);
      // Every decision is a receipt appended and synced: the ledger's WAL grows.
      expect(s.bytes_written_median).toBeGreaterThan(4096);
    }

    // Against another build (here this one), in the same process, round by round.
    const paired = await withRepositoryBuild(() =>
      runHarness(
        ['--kinds', 'hook', '--rounds', '2', '--per-round', '8', '--json', '--against', 'dist'],
        120_000,
        'dist/bench/decision-cost.js',
      ),
    );
    expect({ code: paired.code, output: paired.code === 0 ? '' : paired.output }).toEqual({
      code: 0,
      output: '',
    });
    const ab = JSON.parse(paired.output) as {
      summary: { kind: string; bytes_written_median: number }[];
      against: { dist: string; summary: { kind: string; bytes_written_median: number }[] };
      cpu_ratio_per_round: Record<string, number[]>;
    };
    expect(ab.against.dist).toBe(join(ROOT, 'dist'));
    expect(ab.against.summary.map((s) => s.kind)).toEqual(['hook']);
    // The same build writes the same pages per decision on each ledger.
    expect(ab.against.summary[0]!.bytes_written_median).toBeGreaterThan(4096);
    expect(ab.cpu_ratio_per_round['hook']).toHaveLength(2);
    for (const ratio of ab.cpu_ratio_per_round['hook']!) expect(ratio).toBeGreaterThan(0);
  }, 300_000);

  it('refuses a --node that cannot open a database, before starting anything', async () => {
    await build();
    // A stand-in for a node line the SQLite addon crashes on (Node 20 with better-sqlite3 13).
    const fake = join(workDir, 'fake-node');
    writeFileSync(fake, '#!/bin/sh\nkill -SEGV $$\n');
    chmodSync(fake, 0o755);
    const run = await runHarness(['--smoke', '--node', fake, '--no-docs'], 30_000);
    expect(run.code).toBe(1);
    expect(run.output).toContain(`${fake} cannot open a database`);
    expect(run.output).toContain('killed by SIGSEGV');
    expect(run.output).not.toContain('[bench');
  }, 60_000);

  it('compares two configurations in alternating rounds (node-ab)', async () => {
    const out = join(workDir, 'node-ab.json');
    // B on a node binary other than the harness's (by path): it is checked, measured and
    // reported as such.
    const nodeB = join(workDir, 'node-b');
    symlinkSync(process.execPath, nodeB);
    const run = await withRepositoryBuild(async () => {
      await build();
      return runHarness(
        [
          '--smoke',
          '--only',
          'evaluate@empty',
          '--a',
          process.execPath,
          '--b',
          nodeB,
          '--b-no-start-flags',
          '--out',
          out,
        ],
        240_000,
        'dist/bench/node-ab.js',
      );
    });
    expect({ code: run.code, output: run.code === 0 ? '' : run.output }).toEqual({
      code: 0,
      output: '',
    });
    const ab = JSON.parse(readFileSync(out, 'utf8')) as {
      machine: { cpu_model: string; ed25519_native: { sign_us: number; verify_us: number } };
      rounds: {
        variant: string;
        results: {
          machine: { ed25519_native: { verify_us: number } };
          settings: { node_args: string[]; service_node: { version: string; path: string } };
          scenarios: Scenario[];
        };
      }[];
      summary: Record<string, Record<'A' | 'B', { cpu_us: number[]; peak_rss_mb: number }>>;
    };
    expect(ab.rounds.map((r) => r.variant)).toEqual(['A', 'B']);
    const start = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
        scripts: { start: string };
      }
    ).scripts.start
      .split(/\s+/)
      .filter((word) => word.startsWith('--'));
    expect(start.length).toBeGreaterThan(0);
    // A as npm start runs the service, B without its flags; both on the node given.
    expect(ab.rounds[0]!.results.settings.node_args).toEqual(start);
    expect(ab.rounds[1]!.results.settings.node_args).toEqual([]);
    expect(ab.rounds.map((r) => r.results.settings.service_node.path)).toEqual([null, nodeB]);
    for (const r of ab.rounds) {
      expect(r.results.machine.ed25519_native.verify_us).toBeGreaterThan(0);
      expect(r.results.settings.service_node.version).toBe(process.version);
      expect(r.results.scenarios.map((s) => s.id)).toEqual([
        'baseline-http',
        'baseline-express',
        'evaluate@empty',
      ]);
    }
    expect(ab.machine.cpu_model.length).toBeGreaterThan(0);
    expect(ab.machine.ed25519_native.verify_us).toBeGreaterThan(0);
    for (const variant of ['A', 'B'] as const) {
      expect(ab.summary['evaluate@empty']![variant].cpu_us).toHaveLength(1);
      expect(ab.summary['evaluate@empty']![variant].peak_rss_mb).toBeGreaterThan(0);
    }
    expect(run.output).toMatch(/\| evaluate@empty \| \d/);
  }, 300_000);
});
