import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nock from 'nock';
import request from 'supertest';
import { parsePublicKeyPem } from '@svc/verify';
import type { WorkflowContext } from '../../../action/src/claim.js';
import { backoffMs, retryAfterMs } from '../../../action/src/http.js';
import type { ActionInputs } from '../../../action/src/inputs.js';
import { runWith, type ActionDeps } from '../../../action/src/main.js';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import { validClaim } from '../../support/claims.js';

const API = 'https://svc.test';
const CONTEXT: WorkflowContext = {
  repository: 'acme/web',
  eventName: 'pull_request',
  sha: 'a'.repeat(40),
  ref: 'refs/pull/1/merge',
  actor: 'bot',
  workflow: 'gate',
  job: 'gate',
  action: '__svc',
  runId: 1,
  runAttempt: 1,
  serverUrl: 'https://github.com',
  pullRequest: null,
};

// runWith() in-process with svc stubbed by nock: which answers are retried, how long it waits
// (sleep is injected and recorded, so nothing waits), and what the step says.
describe('the Action against 429, 503, 400 and 401', () => {
  let t: TestApp;
  let workspace: string;
  let claim: Record<string, unknown>;
  let evaluation: string;
  let sleeps: number[];
  let logs: string[];

  beforeAll(async () => {
    nock.disableNetConnect();
    nock.enableNetConnect('127.0.0.1');
    t = buildTestApp();
    workspace = mkdtempSync(join(tmpdir(), 'svc-action-retries-'));
    const signup = await request(t.app).post('/v1/signup').send({ email: 'retries@example.com' });
    claim = validClaim();
    const res = await request(t.app)
      .post('/v1/evaluate')
      .set('X-API-Key', signup.body.api_key as string)
      .send(claim);
    expect(res.status).toBe(200);
    evaluation = res.text;
  });
  afterEach(() => nock.cleanAll());
  afterAll(async () => {
    nock.enableNetConnect();
    rmSync(workspace, { recursive: true, force: true });
    await t.close();
  });

  const inputs = (extra: Partial<ActionInputs> = {}): ActionInputs => ({
    apiUrl: API,
    apiKey: 'sk_svc_test',
    mode: 'evaluate',
    claim,
    receiptFile: null,
    policy: null,
    policyConfig: null,
    expect: {},
    publicKey: parsePublicKeyPem(t.serverKey.publicKeyPem),
    keyFingerprint: null,
    failOn: 'not-allowed',
    witnessState: null,
    workspace,
    ...extra,
  });
  const deps = (): ActionDeps => {
    sleeps = [];
    logs = [];
    return {
      info: (m) => logs.push(m),
      warning: (m) => logs.push(`warning: ${m}`),
      setOutput: () => undefined,
      appendSummary: async () => undefined,
      context: CONTEXT,
      http: {
        fetch: globalThis.fetch,
        sleep: async (ms) => {
          sleeps.push(ms);
        },
        random: () => 0.5,
        log: (m) => logs.push(m),
      },
    };
  };
  const error = (status: number, code: string) => ({ error: `${code} happened`, code });

  it('retries 503 with backoff and 429 after its Retry-After, then succeeds', async () => {
    const scope = nock(API)
      .post('/v1/evaluate')
      .reply(503, error(503, 'unavailable'))
      .post('/v1/evaluate')
      .reply(429, error(429, 'rate_limited'), { 'Retry-After': '3' })
      .post('/v1/evaluate')
      .reply(200, evaluation, { 'Content-Type': 'application/json' });
    const outcome = await runWith(inputs(), deps());
    expect(outcome).toMatchObject({ verdict: 'ALLOWED', valid: true });
    expect(sleeps).toEqual([1000, 3000]);
    expect(logs).toContain('svc answered 503; attempt 2 of 4 in 1.0 s');
    expect(logs).toContain('svc answered 429; attempt 3 of 4 in 3.0 s');
    scope.done();
  });

  it('gives up after 4 attempts, waiting about 1, 2 and 4 s between them', async () => {
    let requests = 0;
    nock(API)
      .post('/v1/evaluate')
      .times(5)
      .reply(() => {
        requests += 1;
        return [503, error(503, 'unavailable')];
      });
    await expect(runWith(inputs(), deps())).rejects.toThrow(
      'svc is unavailable (503 unavailable: unavailable happened) and still was after 4 attempts.',
    );
    expect(requests).toBe(4);
    expect(sleeps).toEqual([1000, 2000, 4000]);
  });

  it('says when a 429 persists, honouring each Retry-After', async () => {
    const scope = nock(API)
      .post('/v1/evaluate')
      .times(4)
      .reply(429, error(429, 'rate_limited'), { 'Retry-After': '1' });
    await expect(runWith(inputs(), deps())).rejects.toThrow(
      /rate-limiting this API key .* after 4 attempts; wait for the hourly window/,
    );
    expect(sleeps).toEqual([1000, 1000, 1000]);
    scope.done();
  });

  it('does not wait out a Retry-After longer than a minute', async () => {
    const scope = nock(API)
      .post('/v1/evaluate')
      .reply(429, error(429, 'rate_limited'), { 'Retry-After': '3600' });
    await expect(runWith(inputs(), deps())).rejects.toThrow(/asks to retry after 3600 s/);
    expect(sleeps).toEqual([]);
    scope.done();
  });

  it.each([
    [
      400,
      'validation_failed',
      /svc refused the evaluate request \(400 validation_failed: validation_failed happened\)\. Not retried/,
    ],
    [401, 'unauthorized', /401: the API key is missing or wrong\. .*Not retried/],
  ])('never retries %d', async (status, code, message) => {
    let requests = 0;
    nock(API)
      .post('/v1/evaluate')
      .times(2)
      .reply(() => {
        requests += 1;
        return [status, error(status, code)];
      });
    await expect(runWith(inputs(), deps())).rejects.toThrow(message);
    expect(requests).toBe(1);
    expect(sleeps).toEqual([]);
  });

  it('retries the key fetch as well, and checks the fetched key against the pin', async () => {
    const scope = nock(API)
      .post('/v1/evaluate')
      .reply(200, evaluation, { 'Content-Type': 'application/json' })
      // An svc from before the key history: the pin is checked against its one server key.
      .get('/v1/keys')
      .reply(404, error(404, 'not_found'))
      .get('/v1/keys/server')
      .reply(503, error(503, 'unavailable'))
      .get('/v1/keys/server')
      .reply(200, t.serverKey.publicKeyPem, { 'Content-Type': 'text/plain' });
    const outcome = await runWith(
      inputs({ publicKey: null, keyFingerprint: t.serverKey.keyId }),
      deps(),
    );
    expect(outcome.valid).toBe(true);
    expect(sleeps).toEqual([1000]);
    scope.done();
  });

  it('fails a receipt for a claim other than the one it sent', async () => {
    nock(API).post('/v1/evaluate').reply(200, evaluation, { 'Content-Type': 'application/json' });
    const other = { ...claim, claim: 'Something else' };
    await expect(runWith(inputs({ claim: other, failOn: 'never' }), deps())).rejects.toThrow(
      /commits to other inputs than the claim this step sent/,
    );
  });
});

describe('retry timing', () => {
  it('backs off about 1, 2, 4 and 8 s, each within ±25 %', () => {
    expect([1, 2, 3, 4].map((n) => backoffMs(n, () => 0.5))).toEqual([1000, 2000, 4000, 8000]);
    expect(backoffMs(1, () => 0)).toBe(750);
    expect(backoffMs(3, () => 0.999999)).toBe(5000);
  });

  it('reads Retry-After as seconds or an HTTP date, and ignores anything else', () => {
    const now = Date.parse('2026-01-15T10:00:00Z');
    expect(retryAfterMs('7', now)).toBe(7000);
    expect(retryAfterMs('Thu, 15 Jan 2026 10:00:05 GMT', now)).toBe(5000);
    expect(retryAfterMs('Thu, 15 Jan 2026 09:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('soon', now)).toBeNull();
    expect(retryAfterMs('-3', now)).toBeNull();
    expect(retryAfterMs(null, now)).toBeNull();
  });
});
