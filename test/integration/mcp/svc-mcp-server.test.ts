import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { verifyReceipt } from '@svc/verify';
import request from 'supertest';
import { z } from 'zod';
import { claimInputSchema } from '../../../src/core/claim-schema.js';
import { dispositionRequestSchema } from '../../../src/api/schemas/dispositions.js';
import { receiptParams, searchQuery } from '../../../src/api/schemas/ledger.js';
import { verifyQuerySchema } from '../../../src/api/schemas/verify.js';
import type { RouteDef } from '../../../src/api/route-table.js';
import { routesOfTools } from '../../../src/mcp/in-process.js';
import { MCP_TOOLS } from '../../../src/mcp/tools.js';
import { ledgerState, type Json } from '../../support/api.js';
import { escalatedClaim, validClaim } from '../../support/claims.js';
import { keyOfPem } from '../../support/receipts.js';
import { startLiveService, type LiveService } from '../../support/live-service.js';
import { transpileTree, type TranspiledTree } from '../../fixtures/transpile-tree.js';
import { childEnvBase } from '../../support/child-env.js';

// The CLI from the source, transpiled (no build needed: a clean clone has no dist/).
let tree: TranspiledTree;
let CLI: string;
const TOOLS = [
  'evaluate_claim',
  'simulate_claim',
  'verify_receipt',
  'get_receipt',
  'search_receipts',
  'request_disposition',
  'get_session',
];

let live: LiveService;
let agent: { apiKey: string; email: string };
let reviewer: { apiKey: string };
let agents = 0;
let publicKey: { raw: Uint8Array; keyId: string };

beforeAll(async () => {
  tree = transpileTree(['src/cli/svc.ts']);
  CLI = fileURLToPath(tree.url('src/cli/svc.ts'));
  live = await startLiveService();
  agent = await live.signup();
  reviewer = await live.signupReviewer();
  const pem = await request(live.t.app).get('/v1/keys/server');
  publicKey = keyOfPem(pem.text);
});
afterAll(async () => {
  await live.close();
  tree.cleanup();
});

/** The checks the portable verifier fails, against the ledger's stored hash ([] when valid). */
function portablyValid(receipt: Json) {
  const chain = receipt.chain as { receipt_hash: string; previous_receipt_hash: string | null };
  const result = verifyReceipt(receipt, {
    publicKey: publicKey.raw,
    keyId: publicKey.keyId,
    ledgerHash: chain.receipt_hash,
    previousLedgerHash: chain.previous_receipt_hash,
  });
  return result.valid ? [] : result.checks.filter((c) => c.status !== 'PASS');
}

const text = (result: CallToolResult) => (result.content[0] as { text: string }).text;
const bodyOf = (result: CallToolResult) => JSON.parse(text(result)) as Json;

async function httpClient(apiKey: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${live.url}/mcp`), {
      requestInit: { headers: { 'X-API-Key': apiKey } },
    }),
  );
  return client;
}

async function stdioClient(apiKey: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp'],
      env: { ...childEnvBase(), SVC_URL: live.url, SVC_API_KEY: apiKey },
      stderr: 'pipe',
    }),
  );
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;

/** The same tests, once per transport: both run the REST API's routes and schemas. */
describe.each([
  ['streamable HTTP at /mcp', httpClient],
  ['stdio (svc mcp)', stdioClient],
])('svc MCP server over %s', (_name, connect) => {
  let client: Client;
  beforeAll(async () => {
    client = await connect(agent.apiKey);
  });
  afterAll(async () => {
    await client.close();
  });

  it('reads an agent session through get_session', async () => {
    const sessionId = `mcp-session-${Math.random().toString(36).slice(2)}`;
    const hook = await fetch(`${live.url}/v1/hooks/claude-code`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': agent.apiKey },
      body: JSON.stringify({
        session_id: sessionId,
        transcript_path: '/tmp/t.jsonl',
        cwd: '/work/app',
        hook_event_name: 'PreToolUse',
        tool_name: 'Bash',
        tool_input: { command: 'npm test' },
        tool_use_id: 'toolu_mcp',
      }),
    });
    expect(hook.status).toBe(200);
    const session = await call(client, 'get_session', { id: sessionId });
    expect(session.isError).toBeFalsy();
    expect(bodyOf(session)).toMatchObject({
      session: { session_id: sessionId, harness: 'claude-code' },
      records: [{ kind: 'decision', tool_name: 'Bash' }],
    });
    const missing = await call(client, 'get_session', { id: 'no-such-session' });
    expect(bodyOf(missing)).toMatchObject({ code: 'not_found' });
  });

  it('lists the tools with input schemas made from the REST API zod schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
    const schemaOf = (name: string) => tools.find((t) => t.name === name)!.inputSchema;
    // Without the root's OpenAPI id, which would make the document a $ref.
    const json = (schema: z.ZodObject) => {
      const out = z.toJSONSchema(z.object(schema.shape), {
        io: 'input',
        unrepresentable: 'any',
      }) as Json;
      delete out.$schema;
      return out;
    };
    const claim = json(claimInputSchema);
    expect(schemaOf('evaluate_claim').properties).toEqual(claim.properties);
    expect(schemaOf('evaluate_claim').required).toEqual(claim.required);
    expect(schemaOf('simulate_claim').properties).toEqual(claim.properties);
    expect(schemaOf('get_receipt').properties).toEqual(json(receiptParams).properties);
    expect(schemaOf('search_receipts').properties).toEqual(json(searchQuery).properties);
    expect(schemaOf('request_disposition').properties).toEqual({
      ...(json(receiptParams).properties as Json),
      ...(json(dispositionRequestSchema).properties as Json),
    });
    expect(Object.keys(schemaOf('verify_receipt').properties!).sort()).toEqual(
      [...Object.keys(json(verifyQuerySchema).properties as Json), 'receipt'].sort(),
    );
  });

  it('evaluates a claim into a receipt the portable verifier accepts and the ledger holds', async () => {
    const before = await ledgerState(live.t);
    const agentName = `mcp-agent-${++agents}`;
    const claim = validClaim();
    (claim.action as Json).agent = agentName;
    const result = await call(client, 'evaluate_claim', claim);
    expect(result.isError).toBeFalsy();
    const receipt = bodyOf(result).receipt as Json & { receipt_id: string };
    expect(result.structuredContent).toEqual(bodyOf(result));
    const after = await ledgerState(live.t);
    expect(after.entries.length).toBe(before.entries.length + 1);
    // The ledger's own entry: the portable verifier checks the receipt against its hash.
    const entry = after.entries.at(-1)!.receipt as unknown as Json;
    expect(entry.receipt_id).toBe(receipt.receipt_id);
    expect(portablyValid(receipt)).toEqual([]);
    const stored = await request(live.t.app)
      .get(`/v1/receipts/${receipt.receipt_id}`)
      .set('X-API-Key', agent.apiKey);
    expect(stored.status).toBe(200);
    expect(stored.body.receipt).toEqual(receipt);

    // verify, fetch and search the same receipt through the tools
    const verified = bodyOf(await call(client, 'verify_receipt', { receipt }));
    expect(verified.valid).toBe(true);
    const fetched = bodyOf(await call(client, 'get_receipt', { id: receipt.receipt_id }));
    expect(fetched.receipt).toEqual(receipt);
    const found = bodyOf(await call(client, 'search_receipts', { agent: agentName, limit: 10 }));
    expect((found.receipts as Json[]).map((r) => r.receipt_id)).toEqual([receipt.receipt_id]);
  });

  it('simulates without writing to the ledger', async () => {
    const before = await ledgerState(live.t);
    const result = await call(client, 'simulate_claim', validClaim());
    expect(result.isError).toBeFalsy();
    expect((bodyOf(result).receipt as Json).chain).toBeNull();
    expect(await ledgerState(live.t)).toEqual(before);
  });

  it('a tampered receipt does not verify', async () => {
    const issued = await live.evaluate(agent.apiKey, validClaim());
    const receipt = structuredClone(issued.receipt) as Json;
    (receipt.policy as Json).verdict = 'BLOCKED';
    const verified = bodyOf(await call(client, 'verify_receipt', { receipt }));
    expect(verified.valid).toBe(false);
  });

  it('bad input is a tool error with the API error body and leaves the ledger unchanged', async () => {
    const before = await ledgerState(live.t);
    const bad = await call(client, 'evaluate_claim', { ...validClaim(), confidence: 'high' });
    expect(bad.isError).toBe(true);
    expect(bodyOf(bad)).toMatchObject({ code: 'validation_failed' });
    expect(String(bodyOf(bad).error)).toMatch(/confidence/);
    const unknownField = await call(client, 'evaluate_claim', { ...validClaim(), extra: 1 });
    expect(unknownField.isError).toBe(true);
    expect(bodyOf(unknownField)).toMatchObject({ code: 'validation_failed' });
    const missing = await call(client, 'get_receipt', { id: 'dr-01ARZ3NDEKTSV4RRFFQ69G5FAV' });
    expect(missing.isError).toBe(true);
    expect(bodyOf(missing)).toMatchObject({ code: 'not_found' });
    const badSearch = await call(client, 'search_receipts', { verdict: 'MAYBE' });
    expect(badSearch.isError).toBe(true);
    expect(bodyOf(badSearch)).toMatchObject({ code: 'validation_failed' });
    const notReviewer = await call(client, 'request_disposition', {
      id: 'dr-01ARZ3NDEKTSV4RRFFQ69G5FAV',
      decision: 'approve',
      reviewer: { id: 'x@example.com' },
      reason: 'ok',
    });
    expect(notReviewer.isError).toBe(true);
    expect(bodyOf(notReviewer)).toMatchObject({ code: 'forbidden' });
    expect(await ledgerState(live.t)).toEqual(before);
  });

  it('records a disposition on an escalated receipt for a reviewer key', async () => {
    const escalated = await live.evaluate(agent.apiKey, escalatedClaim());
    const parent = escalated.receipt as Json & { receipt_id: string };
    expect((parent.policy as Json).verdict).toBe('ESCALATED');
    const reviewerClient = await connect(reviewer.apiKey);
    try {
      const before = await ledgerState(live.t);
      const result = await call(reviewerClient, 'request_disposition', {
        id: parent.receipt_id,
        decision: 'approve',
        reviewer: { id: 'security-lead@acme.example' },
        reason: 'Reviewed against ticket SEC-12',
      });
      expect(result.isError).toBeFalsy();
      const disposition = bodyOf(result).receipt as Json;
      expect(portablyValid(disposition)).toEqual([]);
      expect((await ledgerState(live.t)).entries.length).toBe(before.entries.length + 1);
    } finally {
      await reviewerClient.close();
    }
  });
});

describe('POST /mcp authentication', () => {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'raw', version: '1' },
    },
  };
  const post = (key: string | null) => {
    const req = request(live.t.app)
      .post('/mcp')
      .set('Accept', 'application/json, text/event-stream');
    if (key !== null) req.set('X-API-Key', key);
    return req.send(initialize);
  };

  it('answers 401 unauthorized without a key, as the REST API does', async () => {
    const res = await post(null);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'unauthorized' });
    expect(typeof res.body.request_id).toBe('string');
  });

  it('answers 401 unauthorized with an invalid key', async () => {
    const res = await post('sk_svc_00000000-0000-4000-8000-000000000000');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'unauthorized' });
  });

  it('the SDK client cannot connect with an invalid key', async () => {
    await expect(httpClient('sk_svc_00000000-0000-4000-8000-000000000000')).rejects.toThrow();
  });

  it('answers tools/list to a plain JSON-RPC POST, as docs/MCP.md shows with curl', async () => {
    const res = await request(live.t.app)
      .post('/mcp')
      .set('X-API-Key', agent.apiKey)
      .set('Accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(res.status).toBe(200);
    expect(res.body.result.tools.map((t: Json) => t.name).sort()).toEqual([...TOOLS].sort());
  });

  it('answers 405 to GET: the server is stateless', async () => {
    const res = await request(live.t.app).get('/mcp').set('X-API-Key', agent.apiKey);
    expect(res.status).toBe(405);
    expect(res.body).toMatchObject({ code: 'method_not_allowed' });
  });
});

describe('the tools and the route table', () => {
  const routesLike = () =>
    MCP_TOOLS.map(
      (tool) =>
        ({
          method: tool.method,
          path: tool.path,
          params: tool.params,
          query: tool.query,
          body: tool.body,
        }) as unknown as RouteDef,
    );

  it('finds every tool its route, by method, path and the same zod objects', () => {
    expect([...routesOfTools(routesLike()).keys()]).toEqual([...MCP_TOOLS]);
  });

  it('refuses a tool whose route validates with another schema, or is gone', () => {
    const changed = routesLike();
    changed[0] = { ...changed[0]!, body: z.object({}) } as RouteDef;
    expect(() => routesOfTools(changed)).toThrow(/evaluate_claim/);
    expect(() => routesOfTools(routesLike().slice(1))).toThrow(/evaluate_claim/);
  });
});

describe('svc mcp configuration', () => {
  it('refuses to start without SVC_URL or SVC_API_KEY, naming the one missing', async () => {
    const run = (env: Record<string, string>) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          [CLI, 'mcp'],
          { env: { ...childEnvBase(), ...env } },
          (error, _stdout, stderr) => resolve({ code: error ? (error.code as number) : 0, stderr }),
        );
      });
    const noUrl = await run({ SVC_API_KEY: agent.apiKey });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toMatch(/SVC_URL/);
    const noKey = await run({ SVC_URL: live.url });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/SVC_API_KEY/);
  });
});

describe('private reads', () => {
  it('get_receipt over /mcp keeps to the key account when reads are private', async () => {
    const priv = await startLiveService({ config: { publicReads: false } });
    try {
      const owner = await priv.signup();
      const other = await priv.signup();
      const issued = await priv.evaluate(owner.apiKey, validClaim());
      const id = (issued.receipt as Json).receipt_id as string;
      const connectTo = async (key: string) => {
        const client = new Client({ name: 'test', version: '1.0.0' });
        await client.connect(
          new StreamableHTTPClientTransport(new URL(`${priv.url}/mcp`), {
            requestInit: { headers: { 'X-API-Key': key } },
          }),
        );
        return client;
      };
      const mine = await connectTo(owner.apiKey);
      const theirs = await connectTo(other.apiKey);
      try {
        expect((await call(mine, 'get_receipt', { id })).isError).toBeFalsy();
        const refused = await call(theirs, 'get_receipt', { id });
        expect(refused.isError).toBe(true);
        expect(bodyOf(refused)).toMatchObject({ code: 'not_found' });
      } finally {
        await mine.close();
        await theirs.close();
      }
    } finally {
      await priv.close();
    }
  });
});
