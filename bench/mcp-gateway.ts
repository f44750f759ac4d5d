import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StdioClientTransport,
  getDefaultEnvironment,
} from '@modelcontextprotocol/sdk/client/stdio.js';
import { latencySummary, roundMs } from './latency.js';

// The MCP gateway's overhead on a forwarded tools/call over stdio: the SDK's client calls the
// reference "everything" server's echo directly and through `svc mcp-gateway`, in
// alternation so both meet the same load. svc is a local stand-in that answers at once, so
// the difference is the gateway's own: one more stdio hop each way, the line guard, the
// decision's HTTP round trip and the outcome's digest. svc's own decision time is the hook
// endpoint's (npm run bench, agent-requests); with SVC_URL and SVC_API_KEY set, a real svc
// decides instead. Run: npm run bench:mcp-gateway [-- <calls>]

const ROOT = fileURLToPath(new URL('..', import.meta.url)).replace(/dist\/$/, '');
const SVC = `${ROOT}dist/src/cli/svc.js`;
const require = createRequire(import.meta.url);
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const CALLS = Number(process.argv[2] ?? 400);
const WARMUP = 30;

const ALLOW = JSON.stringify({
  decision: 'allow',
  verdict: 'ALLOWED',
  reason: 'svc: allowed (receipt dr-bench)',
  receipt_id: 'dr-bench',
});

const ms = (v: number) => roundMs(v, 2);
const summary = (times: number[]) => latencySummary(times, 2);

async function client(command: string, args: string[], env: Record<string, string>) {
  const c = new Client({ name: 'bench', version: '1.0.0' });
  await c.connect(
    new StdioClientTransport({
      command,
      args,
      env: { ...getDefaultEnvironment(), ...env },
      stderr: 'ignore',
    }),
  );
  return c;
}

async function main() {
  let decisions = 0;
  const svc = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      decisions++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(ALLOW);
    });
  });
  await new Promise<void>((resolve) => svc.listen(0, '127.0.0.1', resolve));
  // SVC_URL and SVC_API_KEY set: a real svc decides (and records) every call instead.
  const url = process.env.SVC_URL ?? `http://127.0.0.1:${(svc.address() as AddressInfo).port}`;
  const key = process.env.SVC_API_KEY ?? 'sk_bench';
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-gateway-'));
  const config = join(dir, 'mcp.json');
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: { everything: { command: process.execPath, args: [EVERYTHING] } },
    }),
  );
  const direct = await client(process.execPath, [EVERYTHING], {});
  const gated = await client(process.execPath, [SVC, 'mcp-gateway', '--config', config], {
    SVC_URL: url,
    SVC_API_KEY: key,
  });
  const call = (c: Client, name: string, i: number) => {
    const started = performance.now();
    return c.callTool({ name, arguments: { message: `m${i}` } }).then((r) => {
      if (r.isError) throw new Error(JSON.stringify(r.content));
      return performance.now() - started;
    });
  };
  for (let i = 0; i < WARMUP; i++) {
    await call(direct, 'echo', i);
    await call(gated, 'everything__echo', i);
  }
  const directTimes: number[] = [];
  const gatedTimes: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    directTimes.push(await call(direct, 'echo', i));
    gatedTimes.push(await call(gated, 'everything__echo', i));
  }
  await direct.close();
  await gated.close();
  svc.close();
  rmSync(dir, { recursive: true, force: true });
  const d = summary(directTimes);
  const g = summary(gatedTimes);
  process.stdout.write(
    `${JSON.stringify(
      {
        calls: CALLS,
        direct: d,
        through_gateway: g,
        overhead_p50_ms: ms(g.p50_ms - d.p50_ms),
        svc: process.env.SVC_URL ? 'real' : 'stand-in',
        stand_in_requests: decisions,
      },
      null,
      2,
    )}\n`,
  );
}

await main();
