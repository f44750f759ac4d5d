import { once } from 'node:events';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import { type Account, expectError, ledgerState, signupAccount } from '../../support/api.js';
import { validClaim } from '../../support/claims.js';

const ORIGIN = 'https://evil.example';

/** A POST through node:http, which (unlike supertest) can send a body with no Content-Type. */
async function rawPost(t: TestApp, path: string, body: string, key?: string) {
  const server = createServer(t.app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const { port } = server.address() as AddressInfo;
    const headers: Record<string, string> = { 'Content-Length': String(Buffer.byteLength(body)) };
    if (key) headers['X-API-Key'] = key;
    return await new Promise<{
      status: number;
      body: Record<string, unknown>;
      headers: Record<string, unknown>;
    }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', headers }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode!, body: JSON.parse(text), headers: res.headers }),
        );
      });
      req.on('error', reject);
      req.end(body);
    });
  } finally {
    server.close();
  }
}

describe('request bodies must be JSON: 415 unsupported_media_type otherwise', () => {
  let t: TestApp;
  let a: Account;
  beforeEach(async () => {
    t = buildTestApp();
    a = await signupAccount(t);
  });
  afterEach(() => t.close());

  /** Sends exactly these bytes with exactly this Content-Type (none when null). */
  const post = async (path: string, type: string | null, body: string, key?: string) => {
    if (type !== null) {
      const req = request(t.app).post(path).set('Content-Type', type);
      if (key) req.set('X-API-Key', key);
      return req.send(body);
    }
    return (await rawPost(t, path, body, key)) as unknown as request.Response;
  };

  it('the harvesting attack: a text/plain signup carrying valid JSON is 415, nothing issued', async () => {
    const before = await t.store.apiKeys.list();
    const res = await post(
      '/v1/signup',
      'text/plain',
      JSON.stringify({ email: 'victim@example.com' }),
    );
    expectError(res, 415, 'unsupported_media_type');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(JSON.stringify(res.body)).not.toMatch(/sk_svc_/);
    expect(await t.store.apiKeys.list()).toEqual(before);
    expect(await t.store.apiKeys.findActiveByEmail('victim@example.com')).toBeNull();
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['text/plain;charset=UTF-8', 'text/plain;charset=UTF-8'],
    ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded'],
    ['multipart/form-data', 'multipart/form-data; boundary=x'],
    ['application/octet-stream', 'application/octet-stream'],
    ['text/json', 'text/json'],
    ['no Content-Type', null],
  ])('evaluate with %s is 415 and writes nothing', async (_name, type) => {
    const before = await ledgerState(t);
    const res = await post('/v1/evaluate', type, JSON.stringify(validClaim()), a.apiKey);
    expectError(res, 415, 'unsupported_media_type');
    expect(await ledgerState(t)).toEqual(before);
  });

  it.each(['/v1/signup', '/v1/verify', '/v1/policies', '/v1/simulate'])(
    'POST %s with text/plain JSON is 415',
    async (path) => {
      const res = await post(path, 'text/plain', '{"email":"x@example.com"}', a.apiKey);
      expectError(res, 415, 'unsupported_media_type');
    },
  );

  it.each([
    ['application/json', 'application/json'],
    ['application/json; charset=utf-8', 'application/json; charset=utf-8'],
    ['application/merge-patch+json', 'application/merge-patch+json'],
    ['application/vnd.svc.claim+json', 'application/vnd.svc.claim+json'],
  ])('%s is accepted', async (_name, type) => {
    const res = await post('/v1/evaluate', type, JSON.stringify(validClaim()), a.apiKey);
    expect(res.status).toBe(200);
  });

  it('a POST without a body needs no Content-Type (rotate)', async () => {
    const res = await request(t.app).post('/v1/account/rotate').set('X-API-Key', a.apiKey);
    expect(res.status).toBe(201);
  });
});

describe('CORS by route', () => {
  let t: TestApp;
  let a: Account;
  beforeEach(async () => {
    t = buildTestApp();
    a = await signupAccount(t);
  });
  afterEach(() => t.close());

  const preflight = (path: string, method: string, headers = 'content-type') =>
    request(t.app)
      .options(path)
      .set('Origin', ORIGIN)
      .set('Access-Control-Request-Method', method)
      .set('Access-Control-Request-Headers', headers);

  const allowedHeaders = (res: request.Response) =>
    String(res.headers['access-control-allow-headers'] ?? '').toLowerCase();

  it.each(['/v1/ledger/stats', '/v1/keys/server', '/health'])(
    'GET %s (unauthenticated read) allows any origin',
    async (path) => {
      const res = await request(t.app).get(path).set('Origin', ORIGIN);
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe('*');
    },
  );

  it.each(['/v1/ledger/stats', '/v1/keys/server', '/health'])(
    'the preflight of GET %s allows any origin',
    async (path) => {
      const pre = await preflight(path, 'GET');
      expect(pre.status).toBeLessThan(300);
      expect(pre.headers['access-control-allow-origin']).toBe('*');
    },
  );

  it('POST /v1/verify and its preflight allow any origin, without key headers', async () => {
    const res = await request(t.app).post('/v1/verify').set('Origin', ORIGIN).send({});
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const pre = await preflight('/v1/verify', 'POST');
    expect(pre.status).toBeLessThan(300);
    expect(pre.headers['access-control-allow-origin']).toBe('*');
    expect(allowedHeaders(pre)).toContain('content-type');
    expect(allowedHeaders(pre)).not.toContain('x-api-key');
    expect(allowedHeaders(pre)).not.toContain('authorization');
  });

  it('a preflight asking for X-API-Key is not granted it', async () => {
    for (const path of ['/v1/verify', '/v1/ledger/stats', '/v1/evaluate', '/v1/account']) {
      const pre = await preflight(path, 'POST', 'x-api-key, authorization, content-type');
      expect(allowedHeaders(pre)).not.toContain('x-api-key');
      expect(allowedHeaders(pre)).not.toContain('authorization');
    }
  });

  it.each([
    ['POST', '/v1/signup'],
    ['POST', '/v1/evaluate'],
    ['GET', '/v1/account'],
    ['POST', '/v1/account/rotate'],
  ])(
    '%s %s: no Access-Control-Allow-Origin on the answer nor the preflight',
    async (method, path) => {
      const pre = await preflight(path, method);
      expect(pre.headers['access-control-allow-origin']).toBeUndefined();
      expect(pre.headers['access-control-allow-methods']).toBeUndefined();
    },
  );

  it('signup, evaluate and account answers carry no Access-Control-Allow-Origin', async () => {
    const signup = await request(t.app)
      .post('/v1/signup')
      .set('Origin', ORIGIN)
      .send({ email: 'cors@example.com' });
    expect(signup.status).toBe(201);
    expect(signup.headers['access-control-allow-origin']).toBeUndefined();
    const evaluated = await request(t.app)
      .post('/v1/evaluate')
      .set('Origin', ORIGIN)
      .set('X-API-Key', a.apiKey)
      .send(validClaim());
    expect(evaluated.status).toBe(200);
    expect(evaluated.headers['access-control-allow-origin']).toBeUndefined();
    const account = await request(t.app)
      .get('/v1/account')
      .set('Origin', ORIGIN)
      .set('X-API-Key', a.apiKey);
    expect(account.status).toBe(200);
    expect(account.headers['access-control-allow-origin']).toBeUndefined();
    // Errors of those routes are not readable cross-origin either.
    const refused = await request(t.app).get('/v1/account').set('Origin', ORIGIN);
    expect(refused.status).toBe(401);
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('Access-Control-Allow-Headers never lists X-API-Key or Authorization, on any answer', async () => {
    const answers = await Promise.all([
      request(t.app).get('/v1/ledger/stats').set('Origin', ORIGIN),
      request(t.app).get('/health').set('Origin', ORIGIN),
      preflight('/v1/ledger/stats', 'GET'),
      preflight('/v1/keys/server', 'GET'),
      preflight('/health', 'GET'),
    ]);
    for (const res of answers) {
      expect(allowedHeaders(res)).not.toContain('x-api-key');
      expect(allowedHeaders(res)).not.toContain('authorization');
    }
  });
});

describe('security headers (helmet) on every response', () => {
  let t: TestApp;
  let a: Account;
  beforeEach(async () => {
    t = buildTestApp();
    a = await signupAccount(t);
  });
  afterEach(() => t.close());

  it('nosniff, a CSP with frame-ancestors none, a Referrer-Policy: on successes and errors', async () => {
    const answers = [
      await request(t.app).get('/health'),
      await request(t.app).get('/v1/ledger/stats'),
      await request(t.app).get('/v1/keys/server'),
      await request(t.app).get('/v1/account').set('X-API-Key', a.apiKey),
      await request(t.app).post('/v1/evaluate').set('X-API-Key', a.apiKey).send(validClaim()),
      await request(t.app).get('/v1/account'),
      await request(t.app).get('/v1/no-such-thing'),
      await request(t.app).delete('/v1/ledger/stats'),
      await request(t.app).post('/v1/signup').set('Content-Type', 'text/plain').send('{}'),
      await request(t.app).get('/docs/'),
    ];
    for (const res of answers) {
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
      expect(res.headers['referrer-policy']).toBeDefined();
      expect(res.headers['x-powered-by']).toBeUndefined();
    }
  });
});

describe('405 for a known path with the wrong method; 404 for unknown paths', () => {
  let t: TestApp;
  beforeEach(() => {
    t = buildTestApp();
  });
  afterEach(() => t.close());

  const allow = (res: request.Response) =>
    String(res.headers.allow ?? '')
      .split(',')
      .map((m) => m.trim().toUpperCase());

  it('GET /v1/evaluate: 405 method_not_allowed, Allow includes POST', async () => {
    const res = await request(t.app).get('/v1/evaluate');
    expectError(res, 405, 'method_not_allowed');
    expect(allow(res)).toContain('POST');
    expect(allow(res)).not.toContain('GET');
  });

  it('DELETE /v1/ledger/stats: 405, Allow includes GET', async () => {
    const res = await request(t.app).delete('/v1/ledger/stats');
    expectError(res, 405, 'method_not_allowed');
    expect(allow(res)).toContain('GET');
    expect(allow(res)).not.toContain('DELETE');
  });

  it.each([
    ['put', '/v1/signup', 'POST'],
    ['delete', '/v1/verify', 'POST'],
    ['post', '/v1/keys/server', 'GET'],
    ['put', '/v1/account', 'GET'],
    ['patch', '/v1/policies', 'GET'],
  ] as const)('%s %s: 405 with Allow listing %s', async (method, path, expected) => {
    const res = await request(t.app)[method](path);
    expectError(res, 405, 'method_not_allowed');
    expect(allow(res)).toContain(expected);
  });

  it('/v1/policies/:name lists GET and DELETE', async () => {
    const res = await request(t.app).put('/v1/policies/strict');
    expectError(res, 405, 'method_not_allowed');
    expect(allow(res)).toEqual(expect.arrayContaining(['GET', 'DELETE']));
  });

  it('/v1/account lists GET and DELETE', async () => {
    const res = await request(t.app).put('/v1/account');
    expect(allow(res)).toEqual(expect.arrayContaining(['GET', 'DELETE']));
  });

  it('unknown paths stay 404', async () => {
    for (const [method, path] of [
      ['get', '/v1/nothing'],
      ['post', '/v1/evaluates'],
      ['delete', '/v2/evaluate'],
    ] as const) {
      expectError(await request(t.app)[method](path), 404, 'not_found');
    }
  });

  it('a 405 writes nothing', async () => {
    const before = await ledgerState(t);
    await request(t.app).put('/v1/evaluate').send(validClaim());
    expect(await ledgerState(t)).toEqual(before);
  });
});

describe('trust proxy by hop count: a spoofed leftmost X-Forwarded-For gives no extra signups', () => {
  let t: TestApp;
  beforeEach(() => {
    t = buildTestApp({ config: { trustProxy: 1, signupLimitPerHour: 2 } });
  });
  afterEach(() => t.close());

  it('five signups, spoofed leftmost addresses, same proxy-appended address: 2 succeed, 3 are 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await request(t.app)
        .post('/v1/signup')
        .set('X-Forwarded-For', `198.51.100.${i + 1}, 203.0.113.7`)
        .send({ email: `spoof-${i}@example.com` });
      statuses.push(res.status);
      if (res.status === 429) expectError(res, 429, 'rate_limited');
    }
    expect(statuses).toEqual([201, 201, 429, 429, 429]);
    expect(await t.store.apiKeys.list()).toHaveLength(2);
  });

  it('another real client (another rightmost address) has its own allowance', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await request(t.app)
        .post('/v1/signup')
        .set('X-Forwarded-For', '203.0.113.7')
        .send({ email: `first-${i}@example.com` });
      expect(res.status).toBe(201);
    }
    const other = await request(t.app)
      .post('/v1/signup')
      .set('X-Forwarded-For', '198.51.100.1, 203.0.113.8')
      .send({ email: 'second@example.com' });
    expect(other.status).toBe(201);
  });
});

describe('trust proxy by address: loopback trusted, the first untrusted hop from the right is the client', () => {
  let t: TestApp;
  beforeEach(() => {
    t = buildTestApp({ config: { trustProxy: ['loopback'], signupLimitPerHour: 2 } });
  });
  afterEach(() => t.close());

  it('spoofed leftmost addresses do not give extra signups', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await request(t.app)
        .post('/v1/signup')
        .set('X-Forwarded-For', `198.51.100.${i + 1}, 203.0.113.7`)
        .send({ email: `loop-${i}@example.com` });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([201, 201, 429, 429]);
  });
});

describe('no trusted proxy (the default): X-Forwarded-For is ignored', () => {
  let t: TestApp;
  beforeEach(() => {
    t = buildTestApp({ config: { trustProxy: false, signupLimitPerHour: 2 } });
  });
  afterEach(() => t.close());

  it('spoofed addresses give no extra signups', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await request(t.app)
        .post('/v1/signup')
        .set('X-Forwarded-For', `198.51.100.${i + 1}`)
        .send({ email: `noproxy-${i}@example.com` });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([201, 201, 429, 429]);
  });
});
