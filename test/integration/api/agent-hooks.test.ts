import { afterEach, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { parseEvent } from '@svc/hook';
import { verifyReceipt } from '@svc/verify';
import canonicalize from 'canonicalize';
import request from 'supertest';
import { loadConfig } from '../../../src/config/config.js';
import { buildToolCallClaim } from '../../../src/core/agent/tool-call-claim.js';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import {
  expectError,
  ledgerState,
  signupAccount,
  signupReviewer,
  type Json,
} from '../../support/api.js';
import { nobleVerifies, serverPublicKey } from '../../support/receipts.js';
import { EMPTY_OUTPUT, PRE_TOOL_OUTPUT } from '../../unit/hook/output-schemas.js';

// POST /v1/hooks/<harness> (contract §12): each harness's recorded events through the endpoint,
// answered in the harness's documented output shape, every decision a receipt that verifies.

const fixture = (path: string): Json =>
  JSON.parse(
    readFileSync(new URL(`../../fixtures/hooks/${path}`, import.meta.url), 'utf8'),
  ) as Json;
const digestOf = (value: unknown) =>
  `sha256:${createHash('sha256').update(canonicalize(value)!, 'utf8').digest('hex')}`;

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function world() {
  t = buildTestApp({ config: { baseUrl: 'https://svc.example' } });
  const agent = await signupAccount(t);
  return { t, key: agent.apiKey };
}

const hook = (app: TestApp, key: string, harness: string, body: unknown, query = '') =>
  request(app.app)
    .post(`/v1/hooks/${harness}${query}`)
    .set('X-API-Key', key)
    .send(body as object);

async function receiptOf(app: TestApp, id: string): Promise<Json> {
  const res = await request(app.app).get(`/v1/receipts/${id}`);
  expect(res.status).toBe(200);
  return res.body as Json;
}

// Copilot's input: toolArgs in camelCase, a JSON string in the docs' examples and an object
// from Copilot CLI 1.0.102; tool_input (an object) in PascalCase.
const copilotInput = (b: Json): unknown => {
  const args = 'toolArgs' in b ? b.toolArgs : b.tool_input;
  return typeof args === 'string' ? (JSON.parse(args) as unknown) : args;
};
const toolInput = (b: Json): unknown => b.tool_input;

// The pre-tool events captured from each running harness (README "Captured from a running
// harness" in each folder).
const CAPTURED_INPUT_OF: Record<string, (body: Json) => unknown> = {
  'claude-code': toolInput,
  codex: toolInput,
  'gemini-cli': toolInput,
  copilot: copilotInput,
};
const CAPTURED_PRE_TOOL = Object.entries(CAPTURED_INPUT_OF).flatMap(([harness, inputOf]) =>
  readdirSync(new URL(`../../fixtures/hooks/${harness}/`, import.meta.url))
    .filter((file) => /^(pre-tool-use|before-tool)\.(.*\.)?captured\.json$/.test(file))
    .sort()
    .map((file) => [harness, `${harness}/${file}`, inputOf] as [string, string, typeof inputOf]),
);

const PRE_TOOL: [string, string, (body: Json) => unknown][] = [
  ['claude-code', 'claude-code/pre-tool-use.bash.json', toolInput],
  ['codex', 'codex/pre-tool-use.bash.json', toolInput],
  ['gemini-cli', 'gemini-cli/before-tool.json', toolInput],
  ['cursor', 'cursor/before-shell-execution.json', (b) => ({ command: b.command })],
  ['copilot', 'copilot/pre-tool-use.json', copilotInput],
  ['copilot', 'copilot/pre-tool-use.pascal.json', copilotInput],
  ['mcp', 'mcp/pre-tool-use.json', toolInput],
  ...CAPTURED_PRE_TOOL,
];

describe('a pre-tool event of each harness', () => {
  it('includes the captured pre-tool events of the four harnesses that were run', () => {
    expect(new Set(CAPTURED_PRE_TOOL.map(([harness]) => harness))).toEqual(
      new Set(['claude-code', 'codex', 'gemini-cli', 'copilot']),
    );
    expect(CAPTURED_PRE_TOOL).toHaveLength(15);
  });

  it.each(PRE_TOOL)(
    '%s %s: answered in its own shape, with a receipt that verifies',
    async (harness, file, inputOf) => {
      const { t, key } = await world();
      const body = fixture(file);
      const res = await hook(t, key, harness, body);
      expect(res.status).toBe(200);
      expect(
        PRE_TOOL_OUTPUT[harness as keyof typeof PRE_TOOL_OUTPUT].safeParse(res.body).success,
      ).toBe(true);
      const exit = Number(res.headers['x-svc-hook-exit']);
      expect([0, 2]).toContain(exit);
      const { entries } = await ledgerState(t);
      expect(entries).toHaveLength(1);
      const stored = entries[0]!;
      expect(stored.claim.action).toMatchObject({ action_type: 'agent_execution' });
      const tool = (stored.claim.action as { tool: { input_digest: string; harness: string } })
        .tool;
      expect(tool.harness).toBe(harness);
      expect(tool.input_digest).toBe(digestOf(inputOf(body)));
      const receipt = (await receiptOf(t, stored.receipt.receipt_id)).receipt as Json;
      const publicKey = await serverPublicKey(t);
      expect(await nobleVerifies(receipt, publicKey)).toBe(true);
      // The portable verifier, as an auditor runs it offline: no check fails, and the
      // signature, the receipt's hashes and its policy binding pass.
      const verified = verifyReceipt(receipt, {
        publicKey,
        keyId: t.serverKey.keyId,
        ledgerHash: stored.receipt.chain.receipt_hash,
        expect: { policy: 'agent' },
      });
      expect(verified.checks.filter((c) => c.status === 'FAIL')).toEqual([]);
      expect(verified.valid).toBe(true);
      expect(verified.checks.filter((c) => c.status === 'PASS').map((c) => c.name)).toEqual(
        expect.arrayContaining(['signature_valid', 'hash_integrity', 'policy_binding']),
      );
      expect(JSON.stringify(res.body)).toContain(stored.receipt.receipt_id);
    },
  );

  // Each harness's pre-tool event, its command replaced, through its endpoint: what each of
  // the agent policy's three verdicts becomes in that harness's own answer. ESCALATED is an
  // ask only where the harness can ask its operator (docs/AGENTS.md), else a deny with the link.
  const COMMAND_OF: Record<string, [string, (body: Json, command: string) => Json]> = {
    'claude-code': [
      'claude-code/pre-tool-use.bash.json',
      (b, command) => ({ ...b, tool_input: { command } }),
    ],
    codex: ['codex/pre-tool-use.bash.json', (b, command) => ({ ...b, tool_input: { command } })],
    cursor: ['cursor/before-shell-execution.json', (b, command) => ({ ...b, command })],
    'gemini-cli': [
      'gemini-cli/before-tool.json',
      (b, command) => ({ ...b, tool_input: { command } }),
    ],
    copilot: [
      'copilot/pre-tool-use.json',
      (b, command) => ({ ...b, toolArgs: JSON.stringify({ command }) }),
    ],
  };
  const DECISION_OF: Record<string, (body: Json) => unknown> = {
    'claude-code': (b) => (b.hookSpecificOutput as Json | undefined)?.permissionDecision,
    codex: (b) => (b.hookSpecificOutput as Json | undefined)?.permissionDecision ?? 'allow',
    cursor: (b) => b.permission,
    'gemini-cli': (b) => b.decision,
    copilot: (b) => b.permissionDecision,
  };
  it.each([
    ['claude-code', 'allow', 'deny', 'ask'],
    ['codex', 'allow', 'deny', 'deny'],
    ['cursor', 'allow', 'deny', 'ask'],
    ['gemini-cli', 'allow', 'deny', 'deny'],
    ['copilot', 'allow', 'deny', 'deny'],
  ])('%s: ALLOWED is %s, BLOCKED %s and ESCALATED %s', async (harness, ...expected) => {
    const [file, withCommand] = COMMAND_OF[harness]!;
    const commands = [
      ['npm test', 'ALLOWED'],
      ['git push --force origin main', 'BLOCKED'],
      ['npm publish', 'ESCALATED'],
    ] as const;
    for (const [i, [command, verdict]] of commands.entries()) {
      const { t, key } = await world();
      const res = await hook(t, key, harness, withCommand(fixture(file), command));
      expect(res.status).toBe(200);
      expect(PRE_TOOL_OUTPUT[harness as keyof typeof PRE_TOOL_OUTPUT].parse(res.body)).toBeTruthy();
      expect({ command, decision: DECISION_OF[harness]!(res.body as Json) }).toEqual({
        command,
        decision: expected[i],
      });
      const [entry] = (await ledgerState(t)).entries;
      expect(entry!.receipt.policy.verdict).toBe(verdict);
      // A deny names the receipt, and an escalation's deny the page where a reviewer decides.
      if (expected[i] !== 'allow')
        expect(JSON.stringify(res.body)).toContain(entry!.receipt.receipt_id);
      await t.close();
    }
  });

  it('denies a force push to main under the agent policy, with the reason and the receipt', async () => {
    const { t, key } = await world();
    const res = await hook(t, key, 'codex', fixture('codex/pre-tool-use.bash.json'));
    expect(res.status).toBe(200);
    expect(res.body.hookSpecificOutput).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: expect.stringContaining('force'),
    });
    const [entry] = (await ledgerState(t)).entries;
    expect(entry!.receipt.policy.verdict).toBe('BLOCKED');
    expect(entry!.receipt.policy.name).toBe('agent');
  });

  it('answers the same event sent again, or twice at once, with its first decision; another input under the same id is a conflict', async () => {
    const { t, key } = await world();
    const event = fixture('claude-code/pre-tool-use.bash.json');
    const first = await hook(t, key, 'claude-code', event);
    expect(first.status).toBe(200);
    // Later: the claim's source now carries another arrival time.
    t.clock.advance(5_000);
    const again = await hook(t, key, 'claude-code', event);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    t.clock.advance(5_000);
    const twice = { ...event, tool_use_id: 'toolu_twice' };
    const [a, b] = await Promise.all([
      hook(t, key, 'claude-code', twice),
      hook(t, key, 'claude-code', twice),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body).toEqual(b.body);
    const { entries } = await ledgerState(t);
    expect(entries).toHaveLength(2);
    expect(JSON.stringify(first.body)).toContain(entries[0]!.receipt.receipt_id);
    expect(JSON.stringify(a.body)).toContain(entries[1]!.receipt.receipt_id);
    // The same id with another input is another call: refused, nothing written.
    const other = { ...event, tool_input: { command: 'npm run build' } };
    expectError(await hook(t, key, 'claude-code', other), 409, 'claim_conflict');
    expect((await ledgerState(t)).entries).toHaveLength(2);
    // A claim evaluated under the call's id with evidence of its own is not the call's decision.
    const parsed = parseEvent('claude-code', { ...event, tool_use_id: 'toolu_planted' });
    if (!parsed.ok) throw new Error(parsed.error);
    const { claim } = buildToolCallClaim({
      harness: 'claude-code',
      session: parsed.event.session,
      agent: parsed.event.agent,
      ...(parsed.event.model !== undefined && { agent_model: parsed.event.model }),
      tool_name: parsed.event.tool!.name,
      tool_input: parsed.event.tool!.input,
      tool_use_id: 'toolu_planted',
      captured_at: new Date(t.clock.now()).toISOString(),
    });
    const planted = {
      ...claim,
      policy: 'agent',
      sources: [
        ...claim.sources,
        { id: 'extra', type: 'manual', uri: 'urn:x', confidence: 1, content: 'x' },
      ],
    };
    const evaluated = await request(t.app).post('/v1/evaluate').set('X-API-Key', key).send(planted);
    expect(evaluated.status).toBe(200);
    t.clock.advance(5_000);
    const answered = await hook(t, key, 'claude-code', { ...event, tool_use_id: 'toolu_planted' });
    expectError(answered, 409, 'claim_conflict');
  });

  it("allows Codex's apply_patch inside the project, reading the patch's files as the call's paths", async () => {
    const { t, key } = await world();
    const patch = fixture('codex/pre-tool-use.apply-patch.json');
    const inside = await hook(t, key, 'codex', patch);
    expect(inside.status).toBe(200);
    expect(inside.body.hookSpecificOutput).toBeUndefined();
    const outsidePatch = '*** Begin Patch\n*** Add File: /etc/profile.d/x.sh\n+x\n*** End Patch\n';
    const outside = await hook(t, key, 'codex', {
      ...patch,
      tool_input: { command: outsidePatch },
      tool_use_id: 'call-apply-patch-2',
    });
    expect(outside.body.hookSpecificOutput).toMatchObject({ permissionDecision: 'deny' });
    const [first, second] = (await ledgerState(t)).entries;
    expect(first!.receipt.policy.verdict).toBe('ALLOWED');
    const summaryOf = (e: typeof first) =>
      (e!.claim.action as { tool: { summary: Record<string, unknown> } }).tool.summary;
    expect(summaryOf(first)).toEqual({ paths: ['hello.txt'] });
    // Outside the project: asked about, which Codex cannot ask, so denied with the review link.
    expect(second!.receipt.policy.verdict).toBe('ESCALATED');
    expect(summaryOf(second)).toEqual({ paths: ['/etc/profile.d/x.sh'] });
  });

  it('asks Claude Code before publishing a package, and denies where the harness cannot ask', async () => {
    const { t, key } = await world();
    const publish = {
      ...fixture('claude-code/pre-tool-use.bash.json'),
      tool_input: { command: 'npm publish' },
      tool_use_id: 'toolu_publish',
    };
    const ask = await hook(t, key, 'claude-code', publish);
    expect(ask.body.hookSpecificOutput).toMatchObject({ permissionDecision: 'ask' });
    const headless = await hook(
      t,
      key,
      'claude-code',
      { ...publish, tool_use_id: 'toolu_2' },
      '?ask=false',
    );
    expect(headless.body.hookSpecificOutput).toMatchObject({ permissionDecision: 'deny' });
    const verdicts = (await ledgerState(t)).entries.map((e) => e.receipt.policy.verdict);
    expect(verdicts).toEqual(['ESCALATED', 'ESCALATED']);
    // The reviewer's page shows what would run: the command, the digest, the session.
    const [first] = (await ledgerState(t)).entries;
    const page = await request(t.app).get(`/explorer/receipts/${first!.receipt.receipt_id}`);
    expect(page.text).toContain('Tool call');
    expect(page.text).toContain('npm publish');
    expect(page.text).toContain(digestOf({ command: 'npm publish' }));
    expect(page.text).toContain('href="/explorer/sessions/abc123"');
  });

  it('refuses an event its harness does not send, and an unknown harness, recording nothing', async () => {
    const { t, key } = await world();
    const before = await ledgerState(t);
    expectError(await hook(t, key, 'claude-code', { tool_name: 'Bash' }), 400, 'validation_failed');
    expectError(
      await hook(t, key, 'vim', fixture('claude-code/pre-tool-use.bash.json')),
      400,
      'validation_failed',
    );
    expectError(
      await request(t.app)
        .post('/v1/hooks/claude-code')
        .send(fixture('claude-code/pre-tool-use.bash.json')),
      401,
      'unauthorized',
    );
    expect(await ledgerState(t)).toEqual(before);
  });

  it.each([
    ['?policy=nope', 'policy: unknown policy "nope"'],
    ['?ask=maybe', 'ask: must be true or false'],
    ['?bogus=1', 'bogus: unknown parameter'],
    ['?event=', 'event: must name an event, e.g. PreToolUse'],
    ['?wait=0.5', 'wait: must be a whole number of seconds, 1 to 300'],
  ])('refuses a pre-tool event sent with %s, recording nothing', async (query, message) => {
    const { t, key } = await world();
    const before = await ledgerState(t);
    const event = fixture('claude-code/pre-tool-use.bash.json');
    const res = await hook(t, key, 'claude-code', event, query);
    expect(expectError(res, 400, 'validation_failed')).toBe(message);
    expect(await ledgerState(t)).toEqual(before);
  });

  it('decides under the policy ?policy= names, agent by default', async () => {
    const { t, key } = await world();
    const event = fixture('claude-code/pre-tool-use.bash.json');
    expect((await hook(t, key, 'claude-code', event)).status).toBe(200);
    const named = { ...event, tool_use_id: 'toolu_named' };
    expect((await hook(t, key, 'claude-code', named, '?policy=default')).status).toBe(200);
    const names = (await ledgerState(t)).entries.map((e) => e.receipt.policy.name);
    expect(names).toEqual(['agent', 'default']);
  });

  it('refuses a body that is not JSON, or holds an integer JSON cannot carry exactly, recording nothing', async () => {
    const { t, key } = await world();
    const before = await ledgerState(t);
    const post = (text: string) =>
      request(t.app)
        .post('/v1/hooks/claude-code')
        .set('X-API-Key', key)
        .set('Content-Type', 'application/json')
        .send(text);
    expectError(await post('{"session_id": "s", '), 400, 'malformed_json');
    const event = JSON.stringify({
      ...fixture('claude-code/pre-tool-use.bash.json'),
      tool_input: { command: 'ls', n: 1 },
    }).replace('"n":1', '"n":1152921504606846977');
    expect(expectError(await post(event), 400, 'validation_failed')).toMatch(
      /^tool_input\.n: integer outside the exactly representable range/,
    );
    expect(await ledgerState(t)).toEqual(before);
  });
});

// Every recorded event of every harness (test/fixtures/hooks/<harness>/README.md says where
// each comes from), through the endpoint: its documented answer, or the 400 of an event the
// harness's schema does not allow.
const RECORDED = readdirSync(new URL('../../fixtures/hooks/', import.meta.url)).flatMap((harness) =>
  readdirSync(new URL(`../../fixtures/hooks/${harness}/`, import.meta.url))
    .filter((file) => file.endsWith('.json'))
    .map((file) => [harness, file] as [string, string]),
);

describe('every recorded event of every harness', () => {
  it.each(RECORDED)('%s %s', async (harness, file) => {
    const { t, key } = await world();
    const body = fixture(`${harness}/${file}`);
    const before = await ledgerState(t);
    const res = await hook(t, key, harness, body);
    const parsed = parseEvent(harness, body);
    if (!parsed.ok) {
      expect(expectError(res, 400, 'validation_failed')).toContain(parsed.error);
      expect(await ledgerState(t)).toEqual(before);
      return;
    }
    expect(res.status).toBe(200);
    const schema =
      parsed.event.kind === 'pre_tool'
        ? PRE_TOOL_OUTPUT[harness as keyof typeof PRE_TOOL_OUTPUT]
        : EMPTY_OUTPUT;
    expect(schema.safeParse(res.body).error).toBeUndefined();
    const { entries } = await ledgerState(t);
    const expected = parsed.event.kind === 'pre_tool' || parsed.event.kind === 'post_tool' ? 1 : 0;
    expect(entries).toHaveLength(expected);
  });
});

describe('post-tool and session events', () => {
  it('records an outcome linked to its allowed decision, and the session is covered', async () => {
    const { t, key } = await world();
    const pre: Json = {
      ...fixture('claude-code/post-tool-use.write.json'),
      hook_event_name: 'PreToolUse',
    };
    delete pre.tool_response;
    pre.cwd = '/path/to';
    const decided = await hook(t, key, 'claude-code', pre);
    expect(decided.body.hookSpecificOutput).toMatchObject({ permissionDecision: 'allow' });
    const post = fixture('claude-code/post-tool-use.write.json');
    post.cwd = '/path/to';
    const done = await hook(t, key, 'claude-code', post);
    expect(done.status).toBe(200);
    expect(EMPTY_OUTPUT.safeParse(done.body).success).toBe(true);
    const ended = await hook(t, key, 'claude-code', fixture('claude-code/session-end.json'));
    expect(ended.status).toBe(200);
    const { entries } = await ledgerState(t);
    expect(entries).toHaveLength(2);
    expect(entries[1]!.receipt).toMatchObject({
      outcome: { parent_receipt_id: entries[0]!.receipt.receipt_id, status: 'succeeded' },
    });
    const session = await request(t.app).get('/v1/sessions/abc123');
    expect(session.status).toBe(200);
    expect(session.body.session).toMatchObject({
      covered: true,
      outcomes: 1,
      ran_without_allow: 0,
    });
    const page = await request(t.app).get('/explorer/sessions/abc123');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Session abc123');
    expect(page.text).toContain(entries[0]!.receipt.receipt_id);
  });

  it('pairs each Cursor outcome with its decision, so a Cursor session can be covered', async () => {
    const { t, key } = await world();
    const send = async (file: string, change: Json = {}, drop: string[] = []) => {
      const body: Json = { ...fixture(`cursor/${file}`), ...change };
      for (const k of drop) delete body[k];
      const res = await hook(t, key, 'cursor', body);
      expect(res.status).toBe(200);
      return res.body as Json;
    };
    expect(await send('session-start.json')).toEqual({});
    // A shell command, its outcome without the cwd the gate had.
    expect(await send('before-shell-execution.json')).toMatchObject({ permission: 'allow' });
    await send('after-shell-execution.json', {}, ['cwd']);
    // An MCP call: the gate names the server by its url, the outcome names no server.
    expect(await send('before-mcp-execution.json')).toMatchObject({ permission: 'allow' });
    await send('after-mcp-execution.json');
    // A file read: Cursor reports nothing after it.
    const readme = { file_path: '/path/to/project/README.md' };
    expect(await send('before-read-file.json', readme)).toMatchObject({ permission: 'allow' });
    // A write gated by preToolUse, reported by postToolUse; afterFileEdit records nothing.
    const write = fixture('cursor/post-tool-use.json');
    const pre = { hook_event_name: 'preToolUse', tool_input: write.tool_input };
    expect(
      await send('pre-tool-use.json', { ...pre, tool_name: 'Write', tool_use_id: 'tool-790' }),
    ).toMatchObject({ permission: 'allow' });
    await send('post-tool-use.json');
    expect(await send('after-file-edit.json')).toEqual({});
    expect(await send('session-end.json')).toEqual({});

    const { entries } = await ledgerState(t);
    const kinds = entries.map((e) => (e.receipt.outcome ? 'outcome' : e.receipt.policy.verdict));
    expect(kinds).toEqual([
      'ALLOWED',
      'outcome',
      'ALLOWED',
      'outcome',
      'ALLOWED',
      'ALLOWED',
      'outcome',
    ]);
    for (const [decision, outcome] of [
      [0, 1],
      [2, 3],
      [5, 6],
    ] as const)
      expect(entries[outcome]!.receipt.outcome).toMatchObject({
        parent_receipt_id: entries[decision]!.receipt.receipt_id,
        status: 'succeeded',
      });
    // The outcome names the MCP tool as its decision did, server included.
    expect(entries[3]!.claim.action).toMatchObject({
      tool: { name: 'mcp__localhost:3000__database_query' },
    });
    const session = await request(t.app).get('/v1/sessions/conv-123');
    expect(session.body.session).toMatchObject({
      harness: 'cursor',
      outcomes: 3,
      missing_outcomes: 0,
      ran_without_allow: 0,
      covered: true,
    });
  });

  it('an MCP outcome without its server does not pair with the same arguments to another tool', async () => {
    const { t, key } = await world();
    await hook(t, key, 'cursor', fixture('cursor/before-mcp-execution.json'));
    await hook(t, key, 'cursor', {
      ...fixture('cursor/after-mcp-execution.json'),
      tool_name: 'query',
    });
    const { entries } = await ledgerState(t);
    expect(entries).toHaveLength(2);
    expect(entries[1]!.receipt.policy.checks.map((c: { rule: string }) => c.rule)).toContain(
      'ran_without_allow',
    );
  });

  it('session start and end events open and close the session, and a resume opens it again', async () => {
    const { t, key } = await world();
    const before = await ledgerState(t);
    const start = await hook(t, key, 'claude-code', fixture('claude-code/session-start.json'));
    expect(start.status).toBe(200);
    expect(EMPTY_OUTPUT.safeParse(start.body).success).toBe(true);
    expect(await ledgerState(t)).toEqual(before);
    await hook(t, key, 'claude-code', fixture('claude-code/pre-tool-use.bash.json'), '?ask=false');
    const session = async () =>
      (await request(t.app).get('/v1/sessions/abc123')).body.session as Json;
    expect(await session()).toMatchObject({ started_at: expect.any(String), ended_at: null });
    const page = await request(t.app).get('/explorer/sessions/abc123');
    expect(page.text).toContain('open: no end event yet');
    await hook(t, key, 'claude-code', fixture('claude-code/session-end.json'));
    const ended = await session();
    expect(ended).toMatchObject({ ended_at: expect.any(String), end_reason: 'other' });
    expect(String(ended.ended_at) >= String(ended.started_at)).toBe(true);
    const closed = await request(t.app).get('/explorer/sessions/abc123');
    expect(closed.text).toMatch(/ended\s+<time[^>]*>[^<]*<\/time> \(other\)/);
    // Another key's events are not this session's.
    const other = await signupAccount(t);
    await hook(t, other.apiKey, 'claude-code', fixture('claude-code/session-start.json'));
    expect(await session()).toMatchObject({ end_reason: 'other' });
    await hook(t, key, 'claude-code', {
      ...fixture('claude-code/session-start.json'),
      source: 'resume',
    });
    expect(await session()).toMatchObject({ ended_at: null, end_reason: null });
    expect((await ledgerState(t)).entries).toHaveLength(1);
  });

  it('records an outcome of a call that was never allowed as ran_without_allow, loud on the session page', async () => {
    const { t, key } = await world();
    const post = { ...fixture('claude-code/post-tool-use.write.json'), session_id: 'sneaky' };
    await hook(t, key, 'claude-code', post);
    const [entry] = (await ledgerState(t)).entries;
    expect(entry!.receipt.policy).toMatchObject({ verdict: 'BLOCKED' });
    expect(entry!.receipt.policy.checks.map((c: { rule: string }) => c.rule)).toContain(
      'ran_without_allow',
    );
    const page = await request(t.app).get('/explorer/sessions/sneaky');
    expect(page.text).toContain('RAN WITHOUT ALLOW');
    expect(page.text).toContain('ran without an ALLOWED decision');
  });
});

// One session of each harness as captured from the running harness (README "Captured from a
// running harness"), replayed in the order the harness sent its events: the events svc does
// not use are answered {} and record nothing, each call's decision and outcome are recorded
// in order and paired, and the session is covered, started and (where the harness has a
// session end event) ended. Codex has no session end event.
const CAPTURED_SESSIONS: [string, string, [file: string, outcome?: 'succeeded' | 'failed'][]][] = [
  [
    'claude-code',
    'claude -p',
    [
      ['session-start'],
      ['pre-tool-use.bash'],
      ['post-tool-use.bash', 'succeeded'],
      ['session-end'],
    ],
  ],
  [
    'codex',
    'codex exec',
    [
      ['session-start'],
      ['user-prompt-submit'],
      ['pre-tool-use.bash'],
      ['post-tool-use.bash', 'succeeded'],
      ['stop'],
    ],
  ],
  [
    'gemini-cli',
    'gemini -p',
    [
      ['session-start'],
      ['before-agent'],
      ['before-tool'],
      ['after-tool', 'succeeded'],
      ['after-agent'],
      ['session-end'],
    ],
  ],
  [
    'copilot',
    'copilot -p, hooks in camelCase',
    [
      ['session-start'],
      ['pre-tool-use.bash'],
      ['post-tool-use.bash', 'succeeded'],
      ['session-end'],
    ],
  ],
  [
    'copilot',
    'copilot -p, hooks in PascalCase',
    [
      ['session-start.pascal'],
      ['pre-tool-use.bash.pascal'],
      ['post-tool-use.bash.pascal', 'succeeded'],
      ['pre-tool-use.create-failing.pascal'],
      ['post-tool-use-failure.create.pascal', 'failed'],
      ['session-end.pascal'],
    ],
  ],
];

describe('a session captured from each running harness, replayed', () => {
  it.each(CAPTURED_SESSIONS)('%s (%s)', async (harness, _run, events) => {
    const { t, key } = await world();
    const bodies = events.map(([file]) => fixture(`${harness}/${file}.captured.json`));
    const ids = new Set(bodies.map((b) => b.session_id ?? b.sessionId));
    expect(ids.size).toBe(1);
    const [id] = [...ids] as string[];
    const decisions: string[] = [];
    for (const [i, [file, outcome]] of events.entries()) {
      t.clock.advance(1_000);
      const body = bodies[i]!;
      const res = await hook(t, key, harness, body);
      expect({ file, status: res.status }).toEqual({ file, status: 200 });
      const parsed = parseEvent(harness, body);
      if (!parsed.ok) throw new Error(`${file}: ${parsed.error}`);
      const entries = (await ledgerState(t)).entries;
      if (parsed.event.kind === 'pre_tool') {
        expect(
          PRE_TOOL_OUTPUT[harness as keyof typeof PRE_TOOL_OUTPUT].parse(res.body),
        ).toBeTruthy();
        expect(entries.at(-1)!.receipt.policy.verdict).toBe('ALLOWED');
        expect(JSON.stringify(res.body)).toContain(entries.at(-1)!.receipt.receipt_id);
        decisions.push(entries.at(-1)!.receipt.receipt_id);
      } else {
        expect(res.body).toEqual({});
        if (parsed.event.kind === 'post_tool')
          expect(entries.at(-1)!.receipt.outcome).toMatchObject({
            parent_receipt_id: decisions.at(-1),
            status: outcome,
          });
      }
    }
    const calls = events.filter(([, outcome]) => outcome).length;
    expect(decisions).toHaveLength(calls);

    const res = await request(t.app).get(`/v1/sessions/${id}`).set('X-API-Key', key);
    expect(res.status).toBe(200);
    const { session, records } = res.body as { session: Json; records: Json[] };
    const ends = events.some(([file]) => file.startsWith('session-end'));
    expect(session).toMatchObject({
      session_id: id,
      harness,
      decisions: { ALLOWED: calls, BLOCKED: 0, ESCALATED: 0 },
      outcomes: calls,
      missing_outcomes: 0,
      ran_without_allow: 0,
      covered: true,
      started_at: expect.any(String),
      ended_at: ends ? expect.any(String) : null,
    });
    if (ends) expect(String(session.ended_at) > String(session.started_at)).toBe(true);
    // Each call's decision, then its outcome naming it, in the order the harness sent them.
    expect(records.map((r) => [r.kind, r.parent_receipt_id, r.ran_without_allow])).toEqual(
      decisions.flatMap((decision) => [
        ['decision', null, false],
        ['outcome', decision, false],
      ]),
    );
    expect(records.filter((r) => r.kind === 'decision').map((r) => r.receipt_id)).toEqual(
      decisions,
    );
    for (const [i, decision] of decisions.entries()) {
      const [made, done] = [records[2 * i]!, records[2 * i + 1]!];
      expect(made.verdict).toBe('ALLOWED');
      expect(done.receipt_id).not.toBe(decision);
      expect([done.tool_name, done.input_digest]).toEqual([made.tool_name, made.input_digest]);
    }
  });
});

describe('the HEAD a call left (?git_head=)', () => {
  const HEAD = 'c0ffee'.repeat(6) + 'c0ff';

  it("is signed in the outcome's claim and finds the session by commit", async () => {
    const { t, key } = await world();
    const pre: Json = {
      ...fixture('claude-code/post-tool-use.write.json'),
      hook_event_name: 'PreToolUse',
    };
    delete pre.tool_response;
    pre.cwd = '/path/to';
    // On a pre-tool event it is ignored: the call has not run yet.
    await hook(t, key, 'claude-code', pre, `?git_head=${HEAD}`);
    const post = { ...fixture('claude-code/post-tool-use.write.json'), cwd: '/path/to' };
    const done = await hook(t, key, 'claude-code', post, `?git_head=${HEAD}`);
    expect(done.status).toBe(200);
    const { entries } = await ledgerState(t);
    expect(entries).toHaveLength(2);
    expect(entries[0]!.claim.action).not.toHaveProperty('git_head');
    expect(entries[1]!.claim.action).toMatchObject({ git_head: HEAD });
    // The claim is what inputs_hash covers, and the signature covers inputs_hash.
    expect(entries[1]!.receipt.evidence.inputs_hash).toBe(digestOf(entries[1]!.claim));
    expect(await t.store.sessions.commitReports([HEAD], 10)).toEqual([
      expect.objectContaining({ commit: HEAD, session_id: 'abc123' }),
    ]);
  });

  it('refuses a HEAD that is no commit id, recording nothing', async () => {
    const { t, key } = await world();
    const post = fixture('claude-code/post-tool-use.write.json');
    for (const bad of ['HEAD', 'C0FFEE'.repeat(6) + 'C0FF', 'abc']) {
      const res = await hook(t, key, 'claude-code', post, `?git_head=${bad}`);
      expectError(res, 400, 'validation_failed');
    }
    expect((await ledgerState(t)).entries).toHaveLength(0);
  });
});

describe('an answer that waits for a reviewer (?wait=)', () => {
  async function escalatedWhileWaiting(decision: 'approve' | 'reject', query = '?wait=20') {
    const { t, key } = await world();
    const reviewer = await signupReviewer(t);
    const publish = {
      ...fixture('codex/pre-tool-use.bash.json'),
      tool_input: { command: 'npm publish' },
    };
    // Codex cannot ask: the answer waits, while a reviewer decides in the explorer or the API.
    const pending = hook(t, key, 'codex', publish, query).then((res) => res);
    let escalated: string | undefined;
    while (!escalated) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      escalated = (await ledgerState(t)).entries[0]?.receipt.receipt_id;
    }
    const decided = await request(t.app)
      .post(`/v1/receipts/${escalated}/disposition`)
      .set('X-API-Key', reviewer.apiKey)
      .send({ decision, reason: 'release 1.2.0', reviewer: { id: 'sam' } });
    expect(decided.status).toBe(201);
    const res = await pending;
    expect(res.status).toBe(200);
    return { t, res, escalated, disposition: decided.body.receipt.receipt_id as string };
  }

  it('approved meanwhile, the call is decided again citing the approval, and allowed', async () => {
    const { t, res, disposition } = await escalatedWhileWaiting('approve');
    // Codex's allow: no decision of its own, the receipt named to the user.
    expect(res.body.hookSpecificOutput).toBeUndefined();
    expect(res.body.systemMessage).toContain(`allowed by approval ${disposition}`);
    const { entries } = await ledgerState(t);
    expect(entries.map((e) => e.receipt.policy.verdict)).toEqual([
      'ESCALATED',
      'ALLOWED',
      'ALLOWED',
    ]);
    // The second decision cites the approval in its signed claim.
    expect(entries[2]!.claim.sources).toContainEqual(
      expect.objectContaining({ id: 'svc-approval', uri: `urn:svc:receipt:${disposition}` }),
    );
    expect(JSON.stringify(res.body)).toContain(entries[2]!.receipt.receipt_id);
    const receipt = (await receiptOf(t, entries[2]!.receipt.receipt_id)).receipt as Json;
    expect(await nobleVerifies(receipt, await serverPublicKey(t))).toBe(true);
  });

  it("rejected meanwhile, the call is denied with the reviewer's reason", async () => {
    const { t, res, escalated, disposition } = await escalatedWhileWaiting('reject');
    expect(res.body.hookSpecificOutput).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: expect.stringContaining(
        `reviewer sam rejected this call: release 1.2.0 (disposition ${disposition})`,
      ),
    });
    expect(JSON.stringify(res.body)).toContain(escalated);
    expect((await ledgerState(t)).entries).toHaveLength(2);
  });

  it('with no decision in time, denies naming where to decide; a harness that can ask is asked at once', async () => {
    const { t, key } = await world();
    const publish = {
      ...fixture('codex/pre-tool-use.bash.json'),
      tool_input: { command: 'npm publish' },
    };
    const started = performance.now();
    const res = await hook(t, key, 'codex', publish, '?wait=1');
    expect(performance.now() - started).toBeGreaterThanOrEqual(900);
    expect(res.body.hookSpecificOutput).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: expect.stringContaining('/explorer/receipts/'),
    });
    const claude = {
      ...fixture('claude-code/pre-tool-use.bash.json'),
      tool_input: { command: 'npm publish' },
    };
    const asked = await hook(t, key, 'claude-code', claude, '?wait=300');
    expect(asked.body.hookSpecificOutput).toMatchObject({ permissionDecision: 'ask' });
    expect((await ledgerState(t)).entries.map((e) => e.receipt.policy.verdict)).toEqual([
      'ESCALATED',
      'ESCALATED',
    ]);
  });

  it('at most 16 answers of one account wait at once, and a harness that leaves frees its place', async () => {
    const { t, key } = await world();
    const other = (await signupAccount(t)).apiKey;
    const reviewer = await signupReviewer(t);
    const publish = (tag: string) => ({
      ...fixture('codex/pre-tool-use.bash.json'),
      tool_use_id: `call_${tag}`,
      tool_input: { command: `npm publish --tag ${tag}` },
    });
    const waiting = Array.from({ length: 16 }, (_, i) =>
      hook(t, key, 'codex', publish(`w${i}`), '?wait=300'),
    );
    let settled = 0;
    const done = waiting.map((r) =>
      r.then(
        () => settled++,
        () => settled++,
      ),
    );
    while ((await ledgerState(t)).entries.length < 16)
      await new Promise((resolve) => setTimeout(resolve, 20));
    // The 17th of this account is answered at once; the 16 still wait.
    const extra = await hook(t, key, 'codex', publish('extra'), '?wait=300');
    expect(extra.body.hookSpecificOutput).toMatchObject({ permissionDecision: 'deny' });
    expect(settled).toBe(0);
    // Another account still waits, until its reviewer decides.
    const theirs = hook(t, other, 'codex', publish('theirs'), '?wait=300').then((r) => r);
    while ((await ledgerState(t)).entries.length < 18)
      await new Promise((resolve) => setTimeout(resolve, 20));
    const escalatedOf = async (tag: string) =>
      (await ledgerState(t)).entries.find((e) => e.claim.claim.includes(`--tag ${tag}`))!.receipt
        .receipt_id;
    const approve = async (tag: string) =>
      request(t.app)
        .post(`/v1/receipts/${await escalatedOf(tag)}/disposition`)
        .set('X-API-Key', reviewer.apiKey)
        .send({ decision: 'approve', reason: 'ok', reviewer: { id: 'sam' } });
    expect((await approve('theirs')).status).toBe(201);
    expect((await theirs).body.systemMessage).toContain('allowed by approval');
    expect(settled).toBe(0);
    // The 16 leave: their places are free again, and a new call of this account waits.
    for (const r of waiting) r.abort();
    await Promise.all(done);
    const next = hook(t, key, 'codex', publish('next'), '?wait=300').then((r) => r);
    let escalated: string | undefined;
    while (!escalated) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      escalated = (await ledgerState(t)).entries.find((e) => e.claim.claim.includes('--tag next'))
        ?.receipt.receipt_id;
    }
    expect((await approve('next')).status).toBe(201);
    expect((await next).body.systemMessage).toContain('allowed by approval');
  });

  it('refuses a wait that is not 1 to 300 whole seconds, recording nothing', async () => {
    const { t, key } = await world();
    const publish = fixture('codex/pre-tool-use.bash.json');
    for (const bad of ['0', '301', '1.5', 'x', '-1'])
      expectError(await hook(t, key, 'codex', publish, `?wait=${bad}`), 400, 'validation_failed');
    expect((await ledgerState(t)).entries).toHaveLength(0);
  });
});

describe('SVC_AGENT_STORE_INPUTS', () => {
  const stored = async (env: Record<string, string>) => {
    const { agentStoreInputs } = loadConfig(env);
    t = buildTestApp({ config: { baseUrl: 'https://svc.example', agentStoreInputs } });
    const key = (await signupAccount(t)).apiKey;
    const body = fixture('claude-code/pre-tool-use.bash.json');
    expect((await hook(t, key, 'claude-code', body)).status).toBe(200);
    const [entry] = (await ledgerState(t)).entries;
    const tool = (entry!.claim.action as { tool: Json }).tool;
    expect(tool.input_digest).toBe(digestOf(body.tool_input));
    const receipt = (await receiptOf(t, entry!.receipt.receipt_id)).receipt as Json;
    expect(await nobleVerifies(receipt, await serverPublicKey(t))).toBe(true);
    return { tool, input: body.tool_input };
  };

  it('keeps only the digest and the summary by default', async () => {
    const { tool } = await stored({});
    expect(tool).not.toHaveProperty('input');
    expect(tool.summary).toMatchObject({ command: expect.any(String) });
  });

  it('keeps the raw input in the signed claim when set to true', async () => {
    const { tool, input } = await stored({ SVC_AGENT_STORE_INPUTS: 'true' });
    expect(tool.input).toEqual(input);
  });
});

describe('the repository a session works in (?repository=)', () => {
  it('is signed in each call and lists the session by it', async () => {
    const { t, key } = await world();
    const pre = fixture('claude-code/pre-tool-use.bash.json');
    const res = await hook(t, key, 'claude-code', pre, '?repository=acme/web');
    expect(res.status).toBe(200);
    const other = { ...pre, session_id: 'elsewhere', tool_use_id: 'toolu_other' };
    await hook(t, key, 'claude-code', other);
    const [entry] = (await ledgerState(t)).entries;
    expect(entry!.claim.action).toMatchObject({ repository: 'acme/web' });
    expect(entry!.claim.entity).toBe('acme/web');
    const listed = await request(t.app).get('/v1/sessions?repo=acme/web');
    expect(listed.status).toBe(200);
    expect(listed.body.sessions.map((s: Json) => [s.session_id, s.repository])).toEqual([
      ['abc123', 'acme/web'],
    ]);
  });

  it('refuses one that is no repository path, recording nothing', async () => {
    const { t, key } = await world();
    const pre = fixture('claude-code/pre-tool-use.bash.json');
    for (const bad of [
      'web',
      'acme/we%20b',
      '/acme/web',
      'acme//web',
      'a'.repeat(200) + '/' + 'b'.repeat(60),
    ])
      expectError(
        await hook(t, key, 'claude-code', pre, `?repository=${bad}`),
        400,
        'validation_failed',
      );
    expect((await ledgerState(t)).entries).toHaveLength(0);
  });
});

describe('an approval bound to the exact call (contract §12)', () => {
  it('lets the approved input run once in that session, and nothing else', async () => {
    const { t, key } = await world();
    const reviewer = await signupReviewer(t);
    const publish = (id: string, command = 'npm publish', session = 'abc123') => ({
      ...fixture('claude-code/pre-tool-use.bash.json'),
      session_id: session,
      tool_input: { command },
      tool_use_id: id,
    });
    await hook(t, key, 'claude-code', publish('toolu_a'));
    const [escalated] = (await ledgerState(t)).entries;
    expect(escalated!.receipt.policy.verdict).toBe('ESCALATED');
    const approved = await request(t.app)
      .post(`/v1/receipts/${escalated!.receipt.receipt_id}/disposition`)
      .set('X-API-Key', reviewer.apiKey)
      .send({
        decision: 'approve',
        reason: 'release 1.2.0',
        reviewer: { id: 'sam' },
      });
    expect(approved.status).toBe(201);
    const oneByte = await hook(t, key, 'claude-code', publish('toolu_b0', 'npm publish '));
    expect(oneByte.body.hookSpecificOutput).toMatchObject({ permissionDecision: 'ask' });
    const again = await hook(t, key, 'claude-code', publish('toolu_b'));
    const disposition = (await ledgerState(t)).entries.find((e) => e.receipt.disposition);
    expect(again.body.hookSpecificOutput).toMatchObject({
      permissionDecision: 'allow',
      permissionDecisionReason: expect.stringContaining(
        `allowed by approval ${disposition!.receipt.receipt_id} of this exact call`,
      ),
    });
    const changed = await hook(t, key, 'claude-code', publish('toolu_c', 'npm publish --tag next'));
    expect(changed.body.hookSpecificOutput).toMatchObject({ permissionDecision: 'ask' });
    const otherSession = await hook(
      t,
      key,
      'claude-code',
      publish('toolu_d', 'npm publish', 'other'),
    );
    expect(otherSession.body.hookSpecificOutput).toMatchObject({ permissionDecision: 'ask' });
    const secondUse = await hook(t, key, 'claude-code', publish('toolu_e'));
    expect(secondUse.body.hookSpecificOutput).toMatchObject({ permissionDecision: 'ask' });
  });

  it.each([
    ['an hour unless set', {}, 3_600_000],
    ['SVC_AGENT_APPROVAL_TTL when set', { SVC_AGENT_APPROVAL_TTL: '120' }, 120_000],
  ])('lasts %s', async (_name, env, ttlMs) => {
    const ttl = loadConfig(env).agentApprovalTtlMs!;
    expect(ttl).toBe(ttlMs);
    t = buildTestApp({ config: { baseUrl: 'https://svc.example', agentApprovalTtlMs: ttl } });
    const app = t;
    const key = (await signupAccount(app)).apiKey;
    const reviewer = await signupReviewer(app);
    let call = 0;
    const publish = () =>
      hook(app, key, 'claude-code', {
        ...fixture('claude-code/pre-tool-use.bash.json'),
        tool_input: { command: 'npm publish' },
        tool_use_id: `toolu_ttl_${call++}`,
      });
    const approveLast = async () => {
      const escalated = (await ledgerState(app)).entries.at(-1)!;
      expect(escalated.receipt.policy.verdict).toBe('ESCALATED');
      const res = await request(app.app)
        .post(`/v1/receipts/${escalated.receipt.receipt_id}/disposition`)
        .set('X-API-Key', reviewer.apiKey)
        .send({ decision: 'approve', reason: 'release', reviewer: { id: 'sam' } });
      expect(res.status).toBe(201);
    };
    const decision = async () =>
      ((await publish()).body.hookSpecificOutput as Json).permissionDecision;
    // Asked again a second before the approval expires: allowed by it.
    await publish();
    await approveLast();
    app.clock.advance(ttlMs - 1_000);
    expect(await decision()).toBe('allow');
    // Asked again a second after: asked about again, as if never approved.
    await publish();
    await approveLast();
    app.clock.advance(ttlMs + 1_000);
    expect(await decision()).toBe('ask');
  });
});
