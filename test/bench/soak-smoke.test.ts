import { afterAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildWithBench, withRepositoryBuild } from '../support/build-lock.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const workDir = mkdtempSync(join(tmpdir(), 'svc-soak-smoke-test-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe('soak', () => {
  it('drives every kind of traffic at the built service and reports no abort', async () => {
    // The soak runs the service and the harness built as `npm run bench:soak` builds them, the
    // repository's own build: no other test file rewrites it while the soak runs.
    const out = join(workDir, 'soak.json');
    const { code, output } = await withRepositoryBuild(async () => {
      await buildWithBench();
      return new Promise<{ code: number; output: string }>((done) => {
        const child = spawn(
          process.execPath,
          [
            join(ROOT, 'dist/bench/soak.js'),
            '--duration',
            '4',
            '--connections',
            '2',
            '--drain',
            '5',
            '--out',
            out,
          ],
          { cwd: ROOT, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let text = '';
        child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
        const timer = setTimeout(() => child.kill('SIGTERM'), 100_000);
        child.on('exit', (exitCode) => {
          clearTimeout(timer);
          done({ code: exitCode ?? 1, output: text });
        });
      });
    });
    expect({ code, output: code === 0 ? '' : output }).toEqual({ code: 0, output: '' });
    expect(output).toMatch(/soak PASSED: Node v\d+/);

    const result = JSON.parse(readFileSync(out, 'utf8')) as {
      passed: boolean;
      node: string;
      settings: { workers: number };
      requests: Record<string, number>;
      aborts: unknown[];
      worker_restarts: unknown[];
      errors: number;
      shutdown: { code: number | null; signal: string | null };
      webhooks: { deliveries_received: number; bad_signatures: number };
      github_app: { deliveries_accepted: number };
    };
    expect(result).toMatchObject({
      passed: true,
      node: process.version,
      settings: { workers: 1 },
      aborts: [],
      worker_restarts: [],
      errors: 0,
      shutdown: { code: 0, signal: null },
    });
    for (const kind of ['evaluate', 'verify', 'read', 'search', 'explorer', 'github']) {
      expect({ kind, sent: result.requests[kind]! > 0 }).toEqual({ kind, sent: true });
    }
    // Receipts reached the loopback receiver, signed with the registered secret.
    expect(result.webhooks.deliveries_received).toBeGreaterThan(0);
    expect(result.webhooks.bad_signatures).toBe(0);
    expect(result.github_app.deliveries_accepted).toBeGreaterThan(0);
  }, 300_000);
});
