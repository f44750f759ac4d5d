import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { EXIT_HEADER, answer } from '@svc/hook';
import { latencySummary, percentile, roundMs } from './latency.js';

// The command path of a hook decision: svc-hook started by the harness, the event on stdin,
// to its answer on stdout and its exit. svc is a local stand-in that answers at once, so the
// time measured is svc-hook's own: Node's start, reading stdin, one HTTP round trip, exit.
// Run: npm run bench:hook [-- <runs>]

// The repository root, from bench/ or from its build in dist/bench/.
const ROOT = fileURLToPath(new URL('..', import.meta.url)).replace(/dist\/$/, '');
const BIN = `${ROOT}packages/hook/bin/svc-hook.js`;
const EVENT = readFileSync(`${ROOT}test/fixtures/hooks/claude-code/pre-tool-use.bash.json`);
const RUNS = Number(process.argv[2] ?? 60);
const WARMUP = 5;

const allow = answer('claude-code', {
  verdict: 'ALLOWED',
  reasons: [],
  receipt_url: 'http://127.0.0.1/receipts/bench',
  can_ask: true,
});
const reply = JSON.stringify(allow.body);

function once(args: string[], env: NodeJS.ProcessEnv, stdin: Buffer): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { env, stdio: ['pipe', 'ignore', 'ignore'] });
  child.stdin.end(stdin);
  return new Promise((resolve, reject) =>
    child.on('close', (code) =>
      code === 0 ? resolve(performance.now() - started) : reject(new Error(`exit ${code}`)),
    ),
  );
}

const ms = (v: number) => roundMs(v, 1);
const summary = (times: number[]) => latencySummary(times, 1);

/**
 * svc-hook and a bare Node start, run in alternation so that both meet the same load on a
 * shared machine: the difference is what svc-hook adds to any command hook.
 */
async function series(env: NodeJS.ProcessEnv) {
  const hook = [BIN, 'claude-code'];
  const bare = ['-e', ''];
  for (let i = 0; i < WARMUP; i++) {
    await once(hook, env, EVENT);
    await once(bare, env, Buffer.alloc(0));
  }
  const hookTimes: number[] = [];
  const bareTimes: number[] = [];
  const added: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const h = await once(hook, env, EVENT);
    const b = await once(bare, env, Buffer.alloc(0));
    hookTimes.push(h);
    bareTimes.push(b);
    added.push(h - b);
  }
  return {
    runs: RUNS,
    svc_hook: summary(hookTimes),
    node_alone: summary(bareTimes),
    added_p50_ms: ms(
      percentile(
        [...added].sort((a, b) => a - b),
        50,
      ),
    ),
  };
}

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () =>
    res.writeHead(200, { 'content-type': 'application/json', [EXIT_HEADER]: '0' }).end(reply),
  );
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const env = {
  PATH: process.env['PATH'] ?? '',
  SVC_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
  SVC_API_KEY: 'svc_bench_key',
};
const result = await series(env);
server.close();
process.stdout.write(
  `${JSON.stringify({ bench: 'svc-hook', node: process.version, ...result }, null, 2)}\n`,
);
