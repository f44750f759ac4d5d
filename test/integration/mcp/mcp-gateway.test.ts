import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StdioClientTransport,
  getDefaultEnvironment,
} from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  ErrorCode,
  LATEST_PROTOCOL_VERSION,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import canonicalize from 'canonicalize';
import request from 'supertest';
import { transpileTree, type TranspiledTree } from '../../fixtures/transpile-tree.js';
import { ledgerState } from '../../support/api.js';
import { startLiveService, type LiveService } from '../../support/live-service.js';
import { AGENT_CONFIG } from '../../support/policies.js';
import { nobleVerifies, serverPublicKey } from '../../support/receipts.js';
import { freePort } from '../../support/server-process.js';

// svc mcp-gateway as an MCP client runs it: a child process on stdio, driven by the SDK's own
// Client, in front of the reference "everything" server from the npm registry (and a small
// server that crashes), asking the in-process svc on 127.0.0.1 before every tool call.

const require = createRequire(import.meta.url);
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const CRASHING = fileURLToPath(new URL('../../fixtures/mcp/crashing-server.mjs', import.meta.url));
const CLIENT = { name: 'gateway-test-client', version: '1.0.0' };
const POLICY = 'mcp-gateway-test';
// Long enough for any echo on a loaded machine, short enough for the hang test.
const CALL_TIMEOUT_MS = 5000;

const digestOf = (value: unknown) =>
  `sha256:${createHash('sha256').update(canonicalize(value)!, 'utf8').digest('hex')}`;

let tree: TranspiledTree;
let live: LiveService;
let apiKey: string;
let dir: string;
let configPath: string;
let svcJs: string;

/** The gateway as a client starts it, with svc's URL, key and policy in its environment. */
function gatewayArgs(extra: string[] = []) {
  return [
    svcJs,
    'mcp-gateway',
    '--config',
    configPath,
    '--call-timeout',
    String(CALL_TIMEOUT_MS),
    ...extra,
  ];
}
function gatewayEnv(env: Record<string, string> = {}) {
  return {
    ...getDefaultEnvironment(),
    SVC_URL: live.url,
    SVC_API_KEY: apiKey,
    SVC_POLICY: POLICY,
    ...env,
  };
}

async function connect(env: Record<string, string> = {}, args: string[] = []): Promise<Client> {
  const client = new Client(CLIENT);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: gatewayArgs(args),
    env: gatewayEnv(env),
    stderr: 'ignore',
  });
  await client.connect(transport);
  return client;
}

const textOf = (result: unknown) =>
  ((result as CallToolResult).content as Array<{ type: string; text?: string }>)
    .map((c) => c.text ?? '')
    .join('\n');

/** The ledger's entries once it holds `count` of them (outcomes are recorded after the result). */
async function entriesWhen(count: number) {
  for (let i = 0; i < 100; i++) {
    const { entries } = await ledgerState(live.t);
    if (entries.length >= count) return entries;
    await new Promise((r) => setTimeout(r, 50));
  }
  return (await ledgerState(live.t)).entries;
}

/**
 * The ledger once the outcomes of earlier calls, recorded after their answers, have landed:
 * its length has not changed for half a second.
 */
async function settledLedger() {
  let last = -1;
  for (let i = 0; i < 100; i++) {
    const state = await ledgerState(live.t);
    if (state.entries.length === last) return state;
    last = state.entries.length;
    await new Promise((r) => setTimeout(r, 500));
  }
  return ledgerState(live.t);
}

/**
 * The outcome of the latest decision on `tool`: outcomes are recorded after the answer goes
 * back, so they are found by their decision, not by their place in the ledger.
 */
async function outcomeOfLatest(tool: string) {
  for (let i = 0; i < 100; i++) {
    const { entries } = await ledgerState(live.t);
    const decision = entries
      .filter(
        (e) =>
          (e.claim.action as { tool?: { name?: string } } | undefined)?.tool?.name === tool &&
          !e.receipt.outcome,
      )
      .at(-1);
    const outcome =
      decision &&
      entries.find((e) => e.receipt.outcome?.parent_receipt_id === decision.receipt.receipt_id);
    if (outcome) return { decision: decision!, outcome };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no outcome of a decision on ${tool}`);
}

beforeAll(async () => {
  tree = transpileTree(['src/cli/svc.ts']);
  svcJs = fileURLToPath(tree.url('src/cli/svc.ts'));
  live = await startLiveService();
  ({ apiKey } = await live.signup());
  const created = await request(live.t.app)
    .post('/v1/policies')
    .set('X-API-Key', apiKey)
    .send({
      name: POLICY,
      config: {
        ...AGENT_CONFIG,
        rules: [
          ...(AGENT_CONFIG.rules ?? []),
          {
            name: 'no-environment',
            description: "Reading the server's environment may expose secrets.",
            if: { tool: 'mcp__everything__get-env' },
            require: { never: true },
            on_fail: 'block',
          },
          {
            name: 'sums-need-approval',
            description: 'A person approves every sum.',
            if: { tool: 'mcp__everything__get-sum' },
            require: { never: true },
            on_fail: 'escalate',
          },
        ],
      },
    });
  expect(created.status).toBe(201);
  dir = mkdtempSync(join(tmpdir(), 'svc-mcp-gateway-'));
  configPath = join(dir, 'mcp.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      mcpServers: {
        everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
        crashing: { command: process.execPath, args: [CRASHING] },
      },
    }),
  );
}, 60_000);

afterAll(async () => {
  await live?.close();
  tree?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('svc mcp-gateway in front of the reference MCP servers', () => {
  let client: Client;
  beforeAll(async () => {
    client = await connect();
  }, 60_000);
  afterAll(async () => {
    await client?.close();
  });

  it('lists every upstream tool as <server>__<tool>, and passes resources and prompts through', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(['everything__echo', 'everything__get-sum', 'crashing__crash']),
    );
    expect(names.every((n) => /^(everything|crashing)__/.test(n))).toBe(true);
    const echo = tools.find((t) => t.name === 'everything__echo')!;
    expect(echo.inputSchema.properties).toHaveProperty('message');
    const { resources } = await client.listResources();
    expect(resources.length).toBeGreaterThan(0);
    const read = await client.readResource({ uri: resources[0]!.uri });
    expect(read.contents[0]!.uri).toBe(resources[0]!.uri);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toContain('everything__simple-prompt');
    const prompt = await client.getPrompt({ name: 'everything__simple-prompt' });
    expect(prompt.messages.length).toBeGreaterThan(0);
    expect(client.getServerVersion()?.name).toBe('svc-mcp-gateway');
  });

  it('forwards an allowed call and records its decision and its outcome, each a verifying receipt', async () => {
    const before = (await ledgerState(live.t)).entries.length;
    const result = (await client.callTool({
      name: 'everything__echo',
      arguments: { message: 'hello' },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('Echo: hello');
    const meta = result._meta?.['svc/decision'] as { verdict: string; receipt_id: string };
    expect(meta.verdict).toBe('ALLOWED');

    const entries = await entriesWhen(before + 2);
    const [decision, outcome] = entries.slice(before);
    expect(decision!.receipt.receipt_id).toBe(meta.receipt_id);
    expect(decision!.receipt.policy.verdict).toBe('ALLOWED');
    expect(decision!.claim.action).toMatchObject({
      action_type: 'agent_execution',
      agent: CLIENT.name,
      tool: {
        harness: 'mcp',
        name: 'mcp__everything__echo',
        input_digest: digestOf({ message: 'hello' }),
        summary: { mcp_server: 'everything', mcp_tool: 'echo' },
      },
      session: { harness: 'mcp', id: expect.stringMatching(/^mcp-gw-/) },
    });
    expect(outcome!.receipt).toMatchObject({
      outcome: { parent_receipt_id: meta.receipt_id, status: 'succeeded' },
    });
    const key = await serverPublicKey(live.t);
    expect(await nobleVerifies(decision!.receipt, key)).toBe(true);
    expect(await nobleVerifies(outcome!.receipt, key)).toBe(true);
  });

  it('denies a blocked call with a tool error giving the reason and the receipt; nothing reaches the server', async () => {
    const before = (await ledgerState(live.t)).entries.length;
    const result = (await client.callTool({
      name: 'everything__get-env',
      arguments: {},
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toContain('svc: blocked');
    expect(text).toContain("Reading the server's environment may expose secrets.");
    expect(text).not.toContain('PATH');
    const entries = await entriesWhen(before + 1);
    expect(entries).toHaveLength(before + 1);
    const decision = entries[before]!;
    expect(decision.receipt.policy.verdict).toBe('BLOCKED');
    expect(text).toContain(decision.receipt.receipt_id);
    // No outcome follows a call that was not made.
    await new Promise((r) => setTimeout(r, 300));
    expect((await ledgerState(live.t)).entries).toHaveLength(before + 1);
  });

  it('answers an escalated call with the approval link, and runs that exact call once after a reviewer approves', async () => {
    const before = (await ledgerState(live.t)).entries.length;
    const sum = { name: 'everything__get-sum', arguments: { a: 1, b: 2 } };
    const first = (await client.callTool(sum)) as CallToolResult;
    expect(first.isError).toBe(true);
    const text = textOf(first);
    expect(text).toContain('needs approval');
    const meta = first._meta?.['svc/decision'] as {
      verdict: string;
      receipt_id: string;
      receipt_url: string;
    };
    expect(meta.verdict).toBe('ESCALATED');
    expect(text).toContain(`a reviewer can approve it at ${meta.receipt_url}`);
    expect(meta.receipt_url).toContain(`/explorer/receipts/${meta.receipt_id}`);

    // Changed arguments are another call: still escalated.
    const other = (await client.callTool({ ...sum, arguments: { a: 2, b: 2 } })) as CallToolResult;
    expect(other.isError).toBe(true);

    const reviewer = await live.signupReviewer();
    const approved = await request(live.t.app)
      .post(`/v1/receipts/${meta.receipt_id}/disposition`)
      .set('X-API-Key', reviewer.apiKey)
      .send({ decision: 'approve', reason: 'one sum is fine', reviewer: { id: 'sam' } });
    expect(approved.status).toBe(201);

    const again = (await client.callTool(sum)) as CallToolResult;
    expect(again.isError).toBeFalsy();
    expect(textOf(again)).toContain('3');
    expect((again._meta?.['svc/decision'] as { verdict: string }).verdict).toBe('ALLOWED');
    // Once: the approval is used up.
    const third = (await client.callTool(sum)) as CallToolResult;
    expect(third.isError).toBe(true);
    expect(textOf(third)).toContain('needs approval');

    const entries = await entriesWhen(before + 6);
    const verdicts = entries.slice(before).map((e) => e.receipt.policy.verdict);
    // escalated, escalated (other input), the disposition, allowed, its outcome, escalated.
    expect(verdicts).toEqual([
      'ESCALATED',
      'ESCALATED',
      'ALLOWED',
      'ALLOWED',
      'ALLOWED',
      'ESCALATED',
    ]);
    // The allowed call cites the reviewer's disposition (contract §12, argument-bound approval).
    const disposition = entries[before + 2]!.receipt.receipt_id;
    expect(JSON.stringify(entries[before + 3]!.claim)).toContain(disposition);
  });

  it('reports an upstream that crashes mid-call as a tool error, stays up, and starts it again', async () => {
    const before = (await ledgerState(live.t)).entries.length;
    const crashed = (await client.callTool({
      name: 'crashing__crash',
      arguments: {},
    })) as CallToolResult;
    expect(crashed.isError).toBe(true);
    expect(textOf(crashed)).toMatch(/the server "crashing" failed: .*Connection closed/);
    const echo = (await client.callTool({
      name: 'everything__echo',
      arguments: { message: 'still here' },
    })) as CallToolResult;
    expect(textOf(echo)).toBe('Echo: still here');
    const restarted = (await client.callTool({
      name: 'crashing__echo',
      arguments: { message: 'back' },
    })) as CallToolResult;
    expect(restarted.isError).toBeFalsy();
    expect(textOf(restarted)).toBe('echo: back');
    // The crashed call was allowed, so its failure is its outcome.
    await entriesWhen(before + 6);
    const { decision, outcome } = await outcomeOfLatest('mcp__crashing__crash');
    expect(decision.receipt.policy.verdict).toBe('ALLOWED');
    expect(outcome.receipt.outcome).toMatchObject({
      parent_receipt_id: decision.receipt.receipt_id,
      status: 'failed',
    });
  });

  it("passes the upstream's progress notifications of an allowed call to the client", async () => {
    const before = (await ledgerState(live.t)).entries.length;
    const progress: number[] = [];
    const result = (await client.callTool(
      {
        name: 'everything__trigger-long-running-operation',
        arguments: { duration: 0.4, steps: 2 },
      },
      undefined,
      { onprogress: (p) => void progress.push(p.progress) },
    )) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain('Long running operation completed');
    // Relayed in order; on a loaded machine the last one can still trail the result, which a
    // client drops (the gateway sends every notification it has before the result).
    expect(progress.length).toBeGreaterThan(0);
    expect(progress).toEqual([1, 2].slice(0, progress.length));
    // Its decision and its outcome.
    await entriesWhen(before + 2);
  });

  it('reports an upstream that hangs past the call timeout as a tool error, and stays up', async () => {
    const started = Date.now();
    const slow = (await client.callTool({
      name: 'everything__trigger-long-running-operation',
      arguments: { duration: 30, steps: 1 },
    })) as CallToolResult;
    expect(Date.now() - started).toBeLessThan(CALL_TIMEOUT_MS + 5000);
    expect(slow.isError).toBe(true);
    expect(textOf(slow)).toContain(`did not answer within ${CALL_TIMEOUT_MS} ms`);
    const echo = (await client.callTool({
      name: 'everything__echo',
      arguments: { message: 'after' },
    })) as CallToolResult;
    expect(textOf(echo)).toBe('Echo: after');
    const { outcome } = await outcomeOfLatest('mcp__everything__trigger-long-running-operation');
    expect(outcome.receipt.outcome).toMatchObject({ status: 'failed' });
  }, 30_000);

  it('refuses oversized arguments with a clear tool error, before asking svc: the ledger is unchanged', async () => {
    const before = await settledLedger();
    const big = (await client.callTool({
      name: 'everything__echo',
      arguments: { message: 'x'.repeat(1_100_000) },
    })) as CallToolResult;
    expect(big.isError).toBe(true);
    expect(textOf(big)).toMatch(
      /arguments are 1100\d+ bytes of JSON, more than the gateway's limit of \d+; the call was not made/,
    );
    expect((await ledgerState(live.t)).head).toEqual(before.head);
  });

  it('answers an unknown tool with a JSON-RPC error, recording nothing', async () => {
    const before = await settledLedger();
    await expect(
      client.callTool({ name: 'everything__no-such-tool', arguments: {} }),
    ).rejects.toMatchObject({
      code: ErrorCode.InvalidParams,
    });
    await expect(client.callTool({ name: 'nowhere__echo', arguments: {} })).rejects.toMatchObject({
      code: ErrorCode.InvalidParams,
    });
    expect((await ledgerState(live.t)).head).toEqual(before.head);
  });
});

describe('svc mcp-gateway hiding the tools the policy blocks by name', () => {
  const listed = async (client: Client) => (await client.listTools()).tools.map((t) => t.name);

  it('leaves a tool the policy blocks by name out of tools/list, recording nothing; a call of it is still denied', async () => {
    const client = await connect();
    try {
      const before = await ledgerState(live.t);
      const names = await listed(client);
      // Blocked by the rule no-environment; get-sum's rule escalates, which hides nothing.
      expect(names).not.toContain('everything__get-env');
      expect(names).toEqual(
        expect.arrayContaining(['everything__echo', 'everything__get-sum', 'crashing__crash']),
      );
      // Asked once per tool, by dry runs: the ledger is unchanged, and again when listed again.
      expect(await listed(client)).toEqual(names);
      expect((await ledgerState(live.t)).head).toEqual(before.head);

      const result = (await client.callTool({
        name: 'everything__get-env',
        arguments: {},
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain('svc: blocked');
      expect(textOf(result)).toContain("Reading the server's environment may expose secrets.");
      const entries = await entriesWhen(before.entries.length + 1);
      expect(entries[before.entries.length]!.receipt.policy.verdict).toBe('BLOCKED');
    } finally {
      await client.close();
    }
  }, 30_000);

  it('lists it under the built-in agent policy, and with --show-all-tools', async () => {
    const agentPolicy = await connect({ SVC_POLICY: '' });
    const showAll = await connect({}, ['--show-all-tools']);
    try {
      expect(await listed(agentPolicy)).toContain('everything__get-env');
      expect(await listed(showAll)).toContain('everything__get-env');
    } finally {
      await agentPolicy.close();
      await showAll.close();
    }
  }, 30_000);

  it('lists every tool when svc cannot be asked (calls still fail closed)', async () => {
    const port = await freePort();
    const client = await connect({ SVC_URL: `http://127.0.0.1:${port}` });
    try {
      expect(await listed(client)).toEqual(
        expect.arrayContaining(['everything__get-env', 'everything__echo']),
      );
      const result = (await client.callTool({
        name: 'everything__get-env',
        arguments: {},
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain('the call was not made');
    } finally {
      await client.close();
    }
  }, 30_000);
});

describe('svc mcp-gateway when svc cannot decide', () => {
  it('fails closed: the call is refused with a tool error naming the problem, and never reaches the server', async () => {
    const port = await freePort();
    const client = await connect({ SVC_URL: `http://127.0.0.1:${port}` });
    try {
      const before = await settledLedger();
      const result = (await client.callTool({
        name: 'everything__echo',
        arguments: { message: 'hi' },
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain(`svc cannot be reached at http://127.0.0.1:${port}`);
      expect(textOf(result)).toContain('the call was not made');
      expect(textOf(result)).not.toContain('Echo');
      expect((await ledgerState(live.t)).head).toEqual(before.head);
    } finally {
      await client.close();
    }
  }, 30_000);

  it('fails closed when svc refuses the key', async () => {
    const client = await connect({ SVC_API_KEY: 'sk_svc_00000000-0000-4000-8000-000000000000' });
    try {
      const result = (await client.callTool({
        name: 'everything__echo',
        arguments: { message: 'hi' },
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/svc answered HTTP 401/);
    } finally {
      await client.close();
    }
  }, 30_000);
});

describe('svc mcp-gateway in front of a streamable HTTP server', () => {
  it('forwards an allowed call to a server given by its url', async () => {
    const port = await freePort();
    const server = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
      env: { ...getDefaultEnvironment(), PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const httpConfig = join(dir, 'http.json');
    writeFileSync(
      httpConfig,
      JSON.stringify({ mcpServers: { remote: { url: `http://127.0.0.1:${port}/mcp` } } }),
    );
    let client: Client | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        let log = '';
        server.stderr.setEncoding('utf8').on('data', (chunk: string) => {
          log += chunk;
          if (log.includes('listening')) resolve();
        });
        server.on('exit', () => reject(new Error(`the HTTP server exited: ${log}`)));
      });
      client = new Client(CLIENT);
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [svcJs, 'mcp-gateway', '--config', httpConfig],
          env: gatewayEnv(),
          stderr: 'ignore',
        }),
      );
      const result = (await client.callTool({
        name: 'remote__echo',
        arguments: { message: 'over http' },
      })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toBe('Echo: over http');
      const { entries } = await ledgerState(live.t);
      expect(entries.some((e) => JSON.stringify(e.claim).includes('mcp__remote__echo'))).toBe(true);
    } finally {
      await client?.close();
      server.kill();
    }
  }, 30_000);
});

describe('svc mcp-gateway on the wire', () => {
  /** The gateway with raw lines written to its stdin and its stdout read line by line. */
  function rawGateway() {
    const child = spawn(process.execPath, gatewayArgs(), {
      env: gatewayEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    let buffer = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      let at: number;
      while ((at = buffer.indexOf('\n')) >= 0) {
        lines.push(buffer.slice(0, at));
        buffer = buffer.slice(at + 1);
      }
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const next = async (): Promise<Record<string, unknown>> => {
      for (let i = 0; i < 200 && lines.length === 0; i++)
        await new Promise((r) => setTimeout(r, 25));
      const line = lines.shift();
      if (line === undefined) throw new Error(`no answer; stderr: ${stderr}`);
      return JSON.parse(line) as Record<string, unknown>;
    };
    return { child, next, send: (text: string) => child.stdin.write(text), stderr: () => stderr };
  }

  it('answers malformed and oversized messages with JSON-RPC errors, logs on stderr only, and stays up', async () => {
    const gw = rawGateway();
    try {
      gw.send('this is not json\n');
      expect(await gw.next()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
      gw.send('{"jsonrpc":"2.0","id":5,"method":7}\n');
      expect(await gw.next()).toMatchObject({
        id: 5,
        error: { code: -32600, message: expect.stringContaining('method') },
      });
      gw.send('[{"jsonrpc":"2.0","id":6,"method":"ping"}]\n');
      expect(await gw.next()).toMatchObject({
        id: null,
        error: { code: -32600, message: expect.stringContaining('batches') },
      });
      gw.send(
        `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"${'x'.repeat(5 * 1024 * 1024)}"}}\n`,
      );
      expect(await gw.next()).toMatchObject({
        id: null,
        error: { code: -32600, message: expect.stringContaining('larger than') },
      });
      gw.send(
        `${JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: LATEST_PROTOCOL_VERSION,
            capabilities: {},
            clientInfo: CLIENT,
          },
        })}\n`,
      );
      const init = await gw.next();
      expect(init).toMatchObject({
        id: 1,
        result: {
          protocolVersion: LATEST_PROTOCOL_VERSION,
          serverInfo: { name: 'svc-mcp-gateway' },
        },
      });
      expect(gw.stderr()).toContain('refused a message');
    } finally {
      gw.child.kill();
    }
  }, 30_000);
});

describe('svc mcp-gateway --help and bad usage', () => {
  const run = (args: string[], env: Record<string, string> = gatewayEnv()) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [svcJs, 'mcp-gateway', ...args], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
      child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });

  it('prints its usage with --help', async () => {
    const out = await run(['--help']);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('Usage: svc mcp-gateway --config <file>');
    expect(out.stdout).toContain('SVC_API_KEY');
  });

  it.each<[string, string[], Record<string, string> | undefined, string]>([
    ['no --config', [], undefined, 'mcp-gateway needs --config <file>'],
    [
      'a missing file',
      ['--config', '/nonexistent/mcp.json'],
      undefined,
      'cannot read /nonexistent/mcp.json',
    ],
    [
      'no SVC_URL',
      ['--config', 'x'],
      { ...getDefaultEnvironment(), SVC_API_KEY: 'k' },
      'set SVC_URL',
    ],
  ])('exits 2 with %s', async (_what, args, env, message) => {
    const out = await run(args, env ?? gatewayEnv());
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(message);
    expect(out.stdout).toBe('');
  });
});
