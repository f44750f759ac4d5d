import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import { discoverPdp, type AuthzenClient } from '../../support/authzen-client.js';
import { expectError, ledgerState, signupAccount, type Json } from '../../support/api.js';
import { nobleVerifies, serverPublicKey } from '../../support/receipts.js';

// svc as an AuthZEN 1.0 PDP (contract §13), driven by a PEP client written from the
// specification (test/support/authzen-client.ts), over real HTTP on 127.0.0.1.

let t: TestApp;
let server: Server;
let pdp: string;
let apiKey: string;
let client: AuthzenClient;

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createNetServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });

beforeAll(async () => {
  const port = await freePort();
  pdp = `http://127.0.0.1:${port}`;
  t = buildTestApp({ config: { baseUrl: pdp } });
  server = await new Promise<Server>((resolve) => {
    const s = t.app.listen(port, '127.0.0.1', () => resolve(s));
  });
  apiKey = (await signupAccount(t)).apiKey;
  client = await discoverPdp(pdp, apiKey);
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await t.close();
});

const agent = { type: 'agent', id: 'deploy-bot', properties: { model: 'gpt-5' } };
const repo = {
  type: 'github',
  id: 'acme/api',
  properties: { repository: 'acme/api', branch: 'main' },
};

/** A receipt of the ledger, by id, and whether its signature verifies with @noble/ed25519. */
async function ledgerReceipt(id: string): Promise<{ receipt: Json; verifies: boolean }> {
  const res = await request(t.app).get(`/v1/receipts/${id}`).set('X-API-Key', apiKey);
  expect(res.status).toBe(200);
  const receipt = res.body.receipt as Json;
  return { receipt, verifies: await nobleVerifies(receipt, await serverPublicKey(t)) };
}

describe('AuthZEN metadata (§9)', () => {
  it('names the PDP and both evaluation endpoints, and no search endpoint', () => {
    expect(client.metadata).toEqual({
      policy_decision_point: pdp,
      access_evaluation_endpoint: `${pdp}/access/v1/evaluation`,
      access_evaluations_endpoint: `${pdp}/access/v1/evaluations`,
    });
  });
});

describe('one access evaluation (§6)', () => {
  it('permits an allowed action with a receipt on the ledger that verifies', async () => {
    const answer = await client.evaluation({
      subject: agent,
      action: { name: 'code_change' },
      resource: repo,
    });
    expect(answer.status).toBe(200);
    const body = answer.body as { decision: boolean; context: Record<string, unknown> };
    expect(body.decision).toBe(true);
    expect(body.context).toMatchObject({ verdict: 'ALLOWED', reason_user: 'Allowed by policy.' });
    const id = body.context.receipt_id as string;
    expect(body.context.receipt_url).toBe(`${pdp}/v1/receipts/${id}`);
    const { receipt, verifies } = await ledgerReceipt(id);
    expect(verifies).toBe(true);
    expect(receipt.subject).toMatchObject({
      entity: 'acme/api',
      agent: 'deploy-bot',
      action_type: 'code_change',
      target_system: 'github',
      repository: 'acme/api',
      branch: 'main',
    });
  });

  it('answers false for ESCALATED, with where to request approval', async () => {
    const answer = await client.evaluation({
      subject: { type: 'user', id: 'alice@acme.example' },
      action: { name: 'access_change' },
      resource: { type: 'iam', id: 'role/admin' },
    });
    const body = answer.body as { decision: boolean; context: Record<string, unknown> };
    expect(body.decision).toBe(false);
    const id = body.context.receipt_id as string;
    expect(body.context).toMatchObject({
      verdict: 'ESCALATED',
      approval: {
        request_url: `${pdp}/v1/receipts/${id}/disposition`,
        explorer_url: `${pdp}/explorer/receipts/${id}`,
      },
    });
    expect((await ledgerReceipt(id)).receipt.policy).toMatchObject({ verdict: 'ESCALATED' });
  });

  it('answers false for BLOCKED, with each failed rule in reason_admin', async () => {
    const answer = await client.evaluation({
      subject: agent,
      action: { name: 'deployment' },
      resource: { type: 'k8s', id: 'payments', properties: { environment: 'staging' } },
      context: {
        sources: [
          { id: 'ci-1', type: 'ci', uri: 'https://ci.example/1', confidence: 0.2, content: 'x' },
        ],
      },
    });
    const body = answer.body as { decision: boolean; context: Record<string, unknown> };
    expect(body.decision).toBe(false);
    expect(body.context.verdict).toBe('BLOCKED');
    expect(body.context.reason_admin).toEqual([expect.stringMatching(/^min_confidence: /)]);
    expect(body.context.reason_user).toBe('Denied by policy.');
  });

  it('answers a retried request with the same receipt and adds nothing to the ledger', async () => {
    const ask = {
      subject: agent,
      action: { name: 'merge' },
      resource: { ...repo, id: 'acme/api#12' },
      context: { time: '2026-11-28T10:00:00Z' },
    };
    const first = (await client.evaluation(ask)).body as { context: { receipt_id: string } };
    const before = await ledgerState(t);
    const again = (await client.evaluation(ask)).body as { context: { receipt_id: string } };
    expect(again.context.receipt_id).toBe(first.context.receipt_id);
    expect(await ledgerState(t)).toEqual(before);
  });

  it('previews a dry run without recording it', async () => {
    const before = await ledgerState(t);
    const answer = await client.evaluation({
      subject: agent,
      action: { name: 'infra_change' },
      resource: { type: 'terraform', id: 'vpc-main' },
      context: { dry_run: true },
    });
    expect(answer.status).toBe(200);
    const body = answer.body as { decision: boolean; context: Record<string, unknown> };
    expect(body.context).toMatchObject({ dry_run: true, verdict: 'ALLOWED' });
    expect(body.context.receipt_id).toBeUndefined();
    expect(await ledgerState(t)).toEqual(before);
  });

  it('ignores unknown members and properties it does not read (§10.1.1)', async () => {
    const answer = await client.evaluation({
      subject: { ...agent, properties: { department: 'Sales', model: 'gpt-5' } },
      action: { name: 'code_change', properties: { method: 'GET' } },
      resource: { ...repo, properties: { ...repo.properties, owner: 'bob' } },
      foo: 'bar',
      futureField: { nested: true },
    });
    expect(answer.status).toBe(200);
    expect((answer.body as { decision: boolean }).decision).toBe(true);
  });

  it('echoes X-Request-ID as sent, also a value svc would not log as its own', async () => {
    for (const id of ['bfe9eb29-ab87-4ca3-be83-a1d5d8305716', 'trace 42; span=7']) {
      const answer = await client.evaluation(
        { subject: agent, action: { name: 'code_change' }, resource: repo },
        { requestId: id },
      );
      expect(answer.requestId).toBe(id);
    }
    const missing = await client.evaluation(
      { action: { name: 'code_change' }, resource: repo },
      {
        requestId: 'err 1',
      },
    );
    expect(missing.status).toBe(400);
    expect(missing.requestId).toBe('err 1');
  });
});

describe('a tool name as the action: a tool-call claim (contract §12, §13)', () => {
  it('decides the tool call on its properties under the agent policy, in the named session', async () => {
    const force = await client.evaluation({
      subject: agent,
      action: { name: 'Bash', properties: { command: 'git push --force origin main' } },
      resource: repo,
      context: { session: { id: 'sess-az', cwd: '/work/api' } },
    });
    const body = force.body as { decision: boolean; context: Record<string, unknown> };
    expect(body).toMatchObject({ decision: false, context: { verdict: 'BLOCKED' } });
    const stored = (await ledgerReceipt(body.context.receipt_id as string)).receipt;
    expect(stored.policy).toMatchObject({ name: 'agent' });
    const read = await client.evaluation({
      subject: agent,
      action: { name: 'Read', properties: { file_path: '/work/api/src/index.ts' } },
      resource: repo,
      context: { session: { id: 'sess-az', cwd: '/work/api' } },
    });
    expect(read.body).toMatchObject({ decision: true, context: { verdict: 'ALLOWED' } });
    const session = await request(t.app).get('/v1/sessions/sess-az');
    expect(session.body.session).toMatchObject({ harness: 'authzen' });
    expect(session.body.records).toHaveLength(2);
  });
});

describe('errors (§10.1.2): a 4xx with the reason, the ledger unchanged', () => {
  const post = (body: string, contentType = 'application/json', key: string | null = apiKey) => {
    const r = request(t.app).post('/access/v1/evaluation').set('Content-Type', contentType);
    return (key ? r.set('Authorization', `Bearer ${key}`) : r).send(body);
  };
  const valid = { subject: agent, action: { name: 'code_change' }, resource: repo };

  it.each([
    ['a missing subject', { action: valid.action, resource: repo }, 'subject'],
    ['a missing resource id', { ...valid, resource: { type: 'github' } }, 'resource.id'],
    ['a missing action name', { ...valid, action: {} }, 'action.name'],
    ['a subject that is a string', { ...valid, subject: 'alice' }, 'subject'],
    ['an action name that is a number', { ...valid, action: { name: 123 } }, 'action.name'],
    [
      'a repository property that is not a string',
      { ...valid, resource: { ...repo, properties: { repository: 7 } } },
      'resource.properties.repository',
    ],
  ])('refuses %s with 400', async (_what, body, field) => {
    const before = await ledgerState(t);
    const res = await post(JSON.stringify(body));
    expect(expectError(res, 400, 'validation_failed')).toContain(field);
    expect(await ledgerState(t)).toEqual(before);
  });

  it('refuses malformed JSON, an empty body and another media type with 400', async () => {
    const before = await ledgerState(t);
    expectError(await post('{"subject":'), 400, 'malformed_json');
    expectError(await post(''), 400, 'validation_failed');
    expectError(await post(JSON.stringify(valid), 'text/plain'), 400, 'validation_failed');
    expect(await ledgerState(t)).toEqual(before);
  });

  it('answers the search APIs it does not offer with 404 (§9.1)', async () => {
    for (const kind of ['subject', 'resource', 'action']) {
      const res = await request(t.app)
        .post(`/access/v1/search/${kind}`)
        .set('Authorization', `Bearer ${apiKey}`)
        .send({ subject: agent });
      expectError(res, 404, 'not_found');
    }
  });

  it('refuses a request without a valid key with 401', async () => {
    expectError(await post(JSON.stringify(valid), 'application/json', null), 401, 'unauthorized');
    expectError(
      await post(JSON.stringify(valid), 'application/json', 'sk_svc_nope'),
      401,
      'unauthorized',
    );
  });

  it('refuses a policy that does not exist with 400, as evaluate does', async () => {
    const before = await ledgerState(t);
    const res = await post(JSON.stringify({ ...valid, context: { policy: 'no-such-policy' } }));
    expect(expectError(res, 400, 'validation_failed')).toContain('no-such-policy');
    expect(await ledgerState(t)).toEqual(before);
  });
});

describe('several access evaluations (§7)', () => {
  const three = (semantic?: string) => ({
    subject: agent,
    resource: repo,
    ...(semantic ? { options: { evaluations_semantic: semantic } } : {}),
    evaluations: [
      { action: { name: 'code_change' } },
      { action: { name: 'access_change' } },
      { action: { name: 'merge' } },
    ],
  });
  type Answers = { evaluations: { decision: boolean; context: Record<string, unknown> }[] };

  it('answers every evaluation in order under execute_all (the default)', async () => {
    for (const semantic of [undefined, 'execute_all']) {
      const answer = await client.evaluations(three(semantic));
      expect(answer.status).toBe(200);
      const { evaluations } = answer.body as Answers;
      expect(evaluations.map((e) => [e.decision, e.context.verdict])).toEqual([
        [true, 'ALLOWED'],
        [false, 'ESCALATED'],
        [true, 'ALLOWED'],
      ]);
      expect(new Set(evaluations.map((e) => e.context.receipt_id)).size).toBe(3);
    }
  });

  it('stops at the first deny under deny_on_first_deny, recording nothing after it', async () => {
    const body = { ...three('deny_on_first_deny'), resource: { type: 'github', id: 'acme/deny' } };
    const before = (await ledgerState(t)).head.sequence;
    const { evaluations } = (await client.evaluations(body)).body as Answers;
    expect(evaluations.map((e) => e.decision)).toEqual([true, false]);
    const { head, entries } = await ledgerState(t);
    expect(head.sequence - before).toBe(2);
    const recorded = entries.slice(-2).map((e) => e.receipt.receipt_id);
    expect(recorded).toEqual(evaluations.map((e) => e.context.receipt_id));
  });

  it('stops at the first permit under permit_on_first_permit', async () => {
    const body = {
      subject: agent,
      resource: repo,
      options: { evaluations_semantic: 'permit_on_first_permit' },
      evaluations: [
        { action: { name: 'access_change' } },
        { action: { name: 'code_change' }, resource: { type: 'github', id: 'acme/web' } },
        { action: { name: 'merge' } },
      ],
    };
    const { evaluations } = (await client.evaluations(body)).body as Answers;
    expect(evaluations.map((e) => e.decision)).toEqual([false, true]);
  });

  it('lets an evaluation override the defaults, context included', async () => {
    const body = {
      subject: agent,
      action: { name: 'deployment' },
      resource: { type: 'k8s', id: 'payments', properties: { environment: 'production' } },
      context: { policy: 'default' },
      evaluations: [
        {},
        { resource: { type: 'k8s', id: 'payments', properties: { environment: 'staging' } } },
        { context: { policy: 'no-such-policy' } },
      ],
    };
    const { evaluations } = (await client.evaluations(body)).body as Answers;
    expect(evaluations[0]).toMatchObject({ decision: false, context: { verdict: 'ESCALATED' } });
    expect(evaluations[1]).toMatchObject({ decision: true, context: { verdict: 'ALLOWED' } });
    expect(evaluations[2]).toEqual({
      decision: false,
      context: { error: { status: 400, message: expect.stringContaining('no-such-policy') } },
    });
  });

  it('answers a request without evaluations as one evaluation', async () => {
    const answer = await client.evaluations({
      subject: agent,
      action: { name: 'code_change' },
      resource: repo,
      evaluations: [],
    });
    expect(answer.body).toMatchObject({ decision: true, context: { verdict: 'ALLOWED' } });
  });

  it('refuses an evaluation that lacks a member the defaults do not give, recording nothing', async () => {
    const before = await ledgerState(t);
    const answer = await client.evaluations({
      subject: agent,
      evaluations: [{ action: { name: 'code_change' }, resource: repo }, { resource: repo }],
    });
    expect(answer.status).toBe(400);
    expect(JSON.stringify(answer.body)).toContain('evaluations.1: action required');
    expect(await ledgerState(t)).toEqual(before);
  });

  it('refuses more than 64 evaluations and an unknown semantic with 400', async () => {
    const many = { ...three(), evaluations: Array.from({ length: 65 }, () => ({})) };
    expect((await client.evaluations({ ...many, action: { name: 'merge' } })).status).toBe(400);
    expect((await client.evaluations(three('first_wins'))).status).toBe(400);
  });
});
