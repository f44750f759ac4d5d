import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import express from 'express';
import helmet from 'helmet';
import request from 'supertest';
import { SECURITY_HEADER_OPTIONS } from '../../../src/api/middleware/security-headers.js';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import {
  expectCommonHeaders,
  expectError,
  ledgerState,
  newKey,
  postRaw,
  type Res,
  UUID,
} from '../../support/api.js';
import { validClaim } from '../../support/claims.js';

describe('headers and error envelope', () => {
  let t: TestApp;
  let key: string;

  beforeEach(async () => {
    t = buildTestApp();
    key = await newKey(t);
  });
  afterEach(() => t.close());

  describe('every response carries version, request id, rate-limit and CORS headers', () => {
    const cases: [string, () => Promise<Res>, number][] = [
      ['GET /health', () => request(t.app).get('/health'), 200],
      ['GET /health?deep=true', () => request(t.app).get('/health?deep=true'), 200],
      ['GET /v1/status', () => request(t.app).get('/v1/status'), 200],
      ['GET /v1/ledger/stats', () => request(t.app).get('/v1/ledger/stats'), 200],
      ['GET /v1/keys/server', () => request(t.app).get('/v1/keys/server'), 200],
      [
        'POST /v1/signup',
        () => request(t.app).post('/v1/signup').send({ email: 'h@example.com' }),
        201,
      ],
      ['GET /v1/account', () => request(t.app).get('/v1/account').set('X-API-Key', key), 200],
      [
        'POST /v1/evaluate',
        () => request(t.app).post('/v1/evaluate').set('X-API-Key', key).send(validClaim()),
        200,
      ],
      [
        'POST /v1/simulate',
        () => request(t.app).post('/v1/simulate').set('X-API-Key', key).send(validClaim()),
        200,
      ],
      ['POST /v1/verify', () => request(t.app).post('/v1/verify').send({}), 200],
      ['unknown route (404)', () => request(t.app).get('/v1/nope'), 404],
      ['missing key (401)', () => request(t.app).post('/v1/evaluate').send(validClaim()), 401],
      [
        'invalid key (401)',
        () => request(t.app).get('/v1/account').set('X-API-Key', 'sk_svc_nope'),
        401,
      ],
      [
        'Authorization: Basic (401)',
        () => request(t.app).get('/v1/account').set('Authorization', 'Basic dTpw'),
        401,
      ],
      ['malformed JSON (400)', () => postRaw(t, '/v1/evaluate', key, '{"claim_id":'), 400],
      [
        'body over 1 MiB (413)',
        () => postRaw(t, '/v1/verify', null, JSON.stringify({ pad: 'x'.repeat(1024 * 1024) })),
        413,
      ],
      [
        'preflight (204)',
        () =>
          request(t.app)
            .options('/v1/evaluate')
            .set('Origin', 'https://app.example')
            .set('Access-Control-Request-Method', 'POST')
            .set('Access-Control-Request-Headers', 'X-API-Key, Content-Type'),
        204,
      ],
    ];

    it.each(cases)('%s', async (_name, send, status) => {
      const res = await send();
      expect(res.status).toBe(status);
      expectCommonHeaders(res);
      if (status >= 400) expectError(res, status, res.body.code);
    });

    it('429 responses carry them too, with Retry-After', async () => {
      const small = buildTestApp({ config: { anonLimitPerHour: 1 } });
      try {
        expect((await request(small.app).get('/v1/status')).status).toBe(200);
        const res = await request(small.app).get('/v1/status');
        expectError(res, 429, 'rate_limited');
        expectCommonHeaders(res);
        expect(res.headers['x-ratelimit-limit']).toBe('1');
        expect(res.headers['x-ratelimit-remaining']).toBe('0');
        expect(res.headers['retry-after']).toBe('3600');
      } finally {
        await small.close();
      }
    });

    it('CORS exposes the service headers to browsers', async () => {
      const res = await request(t.app).get('/v1/status').set('Origin', 'https://app.example');
      const exposed = String(res.headers['access-control-expose-headers'])
        .split(',')
        .map((h) => h.trim().toLowerCase());
      for (const header of [
        'x-request-id',
        'x-svc-version',
        'x-svc-spec',
        'x-svc-key-id',
        'x-ratelimit-limit',
        'x-ratelimit-remaining',
        'retry-after',
        'idempotent-replay',
      ]) {
        expect(exposed).toContain(header);
      }
    });
  });

  describe('CORS preflight', () => {
    it('answers 204 with the allowed methods and headers and an empty body for /v1/verify', async () => {
      const res = await request(t.app)
        .options('/v1/verify')
        .set('Origin', 'https://app.example')
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'Content-Type');
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-allow-methods']).toBe('POST,OPTIONS');
      const allowed = String(res.headers['access-control-allow-headers']).toLowerCase();
      for (const header of ['content-type', 'x-request-id']) expect(allowed).toContain(header);
      // A page on another origin cannot send a key through its visitor's browser.
      for (const header of ['x-api-key', 'authorization']) expect(allowed).not.toContain(header);
    });

    it.each([
      ['/v1/evaluate', 'POST'],
      ['/v1/simulate', 'POST'],
      ['/v1/signup', 'POST'],
      ['/v1/account', 'GET'],
      ['/v1/account/rotate', 'POST'],
      ['/v1/policies', 'POST'],
    ])('grants no cross-origin access to %s %s (key routes and signup)', async (path, method) => {
      const preflight = await request(t.app)
        .options(path)
        .set('Origin', 'https://app.example')
        .set('Access-Control-Request-Method', method);
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
      const actual =
        method === 'GET'
          ? await request(t.app)
              .get(path)
              .set('Origin', 'https://app.example')
              .set('X-API-Key', key)
          : await request(t.app)
              .post(path)
              .set('Origin', 'https://app.example')
              .set('X-API-Key', key)
              .send({});
      expect(actual.headers['access-control-allow-origin']).toBeUndefined();
    });

    it.each([
      ['GET', '/v1/ledger/stats'],
      ['GET', '/v1/keys/server'],
      ['GET', '/health'],
      ['GET', '/v1/receipts/search'],
      ['POST', '/v1/verify'],
    ])('grants cross-origin reads of %s %s, errors included', async (method, path) => {
      const res =
        method === 'GET'
          ? await request(t.app).get(path).set('Origin', 'https://app.example')
          : await postRaw(t, path, null, '{').set('Origin', 'https://app.example');
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-expose-headers']).toContain('X-Request-Id');
    });

    it('answers 204 on any path, even unknown ones, without running a handler or granting access', async () => {
      const before = await ledgerState(t);
      for (const path of ['/v1/verify', '/v1/signup', '/health', '/v1/does-not-exist']) {
        const res = await request(t.app)
          .options(path)
          .set('Origin', 'https://app.example')
          .set('Access-Control-Request-Method', 'POST');
        expect(res.status).toBe(204);
        expectCommonHeaders(res);
        expect(res.headers['access-control-allow-origin']).toBe(
          path === '/v1/verify' ? '*' : undefined,
        );
      }
      expect(await ledgerState(t)).toEqual(before);
    });

    it('does not spend the rate-limit budget', async () => {
      const first = await request(t.app).get('/v1/status');
      const remaining = Number(first.headers['x-ratelimit-remaining']);
      for (let i = 0; i < 5; i++) {
        const res = await request(t.app)
          .options('/v1/status')
          .set('Origin', 'https://app.example')
          .set('Access-Control-Request-Method', 'GET');
        expect(res.status).toBe(204);
        expect(Number(res.headers['x-ratelimit-remaining'])).toBe(remaining);
      }
      const next = await request(t.app).get('/v1/status');
      expect(Number(next.headers['x-ratelimit-remaining'])).toBe(remaining - 1);
    });

    it('is still answered when the address budget is exhausted', async () => {
      const small = buildTestApp({ config: { anonLimitPerHour: 1 } });
      try {
        await request(small.app).get('/v1/status');
        expect((await request(small.app).get('/v1/status')).status).toBe(429);
        const res = await request(small.app)
          .options('/v1/status')
          .set('Origin', 'https://app.example')
          .set('Access-Control-Request-Method', 'GET');
        expect(res.status).toBe(204);
        expect(res.headers['x-ratelimit-remaining']).toBe('0');
      } finally {
        await small.close();
      }
    });
  });

  describe('X-Request-Id', () => {
    it('echoes a safe caller id in the header and in error bodies', async () => {
      const id = 'trace-01.AZ_az:09@host/x+y=z';
      const ok = await request(t.app).get('/v1/status').set('X-Request-Id', id);
      expect(ok.headers['x-request-id']).toBe(id);
      const failed = await request(t.app).get('/v1/nope').set('X-Request-Id', id);
      expect(failed.headers['x-request-id']).toBe(id);
      expect(expectError(failed, 404, 'not_found')).toContain('/v1/nope');
      expect(failed.body.request_id).toBe(id);
    });

    it('accepts 128 characters and refuses 129', async () => {
      const max = 'a'.repeat(128);
      expect((await request(t.app).get('/health').set('X-Request-Id', max)).headers).toMatchObject({
        'x-request-id': max,
      });
      const res = await request(t.app)
        .get('/health')
        .set('X-Request-Id', max + 'a');
      expect(res.headers['x-request-id']).toMatch(UUID);
    });

    it.each([
      ['white space', 'has space'],
      ['a quote', 'a"b'],
      ['a semicolon', 'a;b'],
      ['non-ASCII', 'caf\u00e9'],
      ['a comma', 'a,b'],
    ])('replaces an id containing %s with a fresh one', async (_what, id) => {
      const res = await request(t.app)
        .post('/v1/evaluate')
        .set('X-Request-Id', id)
        .send(validClaim());
      expect(res.headers['x-request-id']).toMatch(UUID);
      expect(res.headers['x-request-id']).not.toBe(id);
      expect(expectError(res, 401, 'unauthorized')).toBeTruthy();
    });

    it('generates a distinct id per request when none is sent', async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 5; i++) {
        const res = await request(t.app).get('/health');
        expect(res.headers['x-request-id']).toMatch(UUID);
        ids.add(res.headers['x-request-id'] as string);
      }
      expect(ids.size).toBe(5);
    });
  });

  describe('errors', () => {
    it('404 for an unknown route names the method and path', async () => {
      const res = await request(t.app).get('/v1/unknown-thing');
      expect(expectError(res, 404, 'not_found')).toBe('No route for GET /v1/unknown-thing');
    });

    it('405 with Allow for a known path with another method', async () => {
      const res = await request(t.app).get('/v1/evaluate').set('X-API-Key', key);
      expect(expectError(res, 405, 'method_not_allowed')).toBe(
        'GET is not allowed on /v1/evaluate; use POST',
      );
      expect(res.headers.allow).toBe('POST, OPTIONS');
      const post = await request(t.app).post('/health').send({});
      expectError(post, 405, 'method_not_allowed');
      expect(post.headers.allow).toBe('GET, HEAD, OPTIONS');
      const del = await request(t.app).delete('/v1/ledger/stats');
      expectError(del, 405, 'method_not_allowed');
      expect(del.headers.allow).toBe('GET, HEAD, OPTIONS');
      const receipt = await request(t.app).put('/v1/receipts/dr-x');
      expectError(receipt, 405, 'method_not_allowed');
      // Unknown paths stay 404.
      expectError(await request(t.app).delete('/v1/nothing-here'), 404, 'not_found');
    });

    it.each(['/v1/signup', '/v1/evaluate', '/v1/simulate', '/v1/verify'])(
      'POST %s answers malformed_json for a body that is not JSON',
      async (path) => {
        for (const text of ['{', '{"a":1,}', "{'a':1}", 'NaN', 'undefined', '[1,]']) {
          const res = await postRaw(t, path, key, text);
          expect(expectError(res, 400, 'malformed_json')).toMatch(/^Request body is not valid/);
        }
      },
    );

    it('malformed_json also when the body is not UTF-8', async () => {
      const res = await postRaw(
        t,
        '/v1/verify',
        null,
        Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      );
      expectError(res, 400, 'malformed_json');
    });

    it('POST bodies must be sent as application/json or +json: anything else is 415', async () => {
      const claim = validClaim();
      const before = await ledgerState(t);
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
        const res = await request(t.app)
          .post('/v1/evaluate')
          .set('X-API-Key', key)
          .set('Content-Type', type)
          .send(JSON.stringify(claim));
        expectError(res, 415, 'unsupported_media_type');
      }
      // The harvesting attack: a page posts text/plain, which browsers send without preflight.
      const signup = await request(t.app)
        .post('/v1/signup')
        .set('Content-Type', 'text/plain')
        .send('{"email":"victim@example.com"}');
      expectError(signup, 415, 'unsupported_media_type');
      const untyped = await request(t.app)
        .post('/v1/signup')
        .serialize((data: unknown) => data as string)
        .send('{"email":"victim@example.com"}' as unknown as object)
        .unset('Content-Type');
      expectError(untyped, 415, 'unsupported_media_type');
      expect(await ledgerState(t)).toEqual(before);
      expect(await t.store.apiKeys.findActiveByEmail('victim@example.com')).toBeNull();
      for (const type of ['application/json; charset=utf-8', 'application/vnd.svc+json']) {
        const res = await request(t.app)
          .post('/v1/simulate')
          .set('X-API-Key', key)
          .set('Content-Type', type)
          .send(JSON.stringify(claim));
        expect(res.status).toBe(200);
        expect(res.body.claim).toEqual(claim);
      }
    });

    it('an empty POST body is a validation failure, not malformed JSON', async () => {
      const res = await request(t.app).post('/v1/evaluate').set('X-API-Key', key);
      expect(expectError(res, 400, 'validation_failed')).toMatch(/^\(root\): /);
    });

    it('500 is generic: no internals leak', async () => {
      await t.store.close();
      const res = await request(t.app).get('/v1/status');
      expect(expectError(res, 500, 'internal')).toBe('Internal server error');
      expect(JSON.stringify(res.body)).not.toMatch(/database|sqlite|stack|at /i);
      expectCommonHeaders(res);
    });

    it('500 while the key cannot be looked up still carries every header', async () => {
      await t.store.close();
      const res = await request(t.app)
        .post('/v1/evaluate')
        .set('X-API-Key', key)
        .send(validClaim());
      expect(expectError(res, 500, 'internal')).toBe('Internal server error');
      expectCommonHeaders(res);
    });

    it('413 payload_too_large names the limit', async () => {
      const res = await postRaw(t, '/v1/signup', null, `"${'x'.repeat(1024 * 1024)}"`);
      expect(expectError(res, 413, 'payload_too_large')).toBe('Request body exceeds 1 MiB');
    });
  });

  describe('versioning', () => {
    it('reports 0.1.0 and spec 1.0 in headers and in /health and /v1/status', async () => {
      const health = await request(t.app).get('/health');
      expect(health.body.version).toBe('0.1.0');
      const status = await request(t.app).get('/v1/status');
      expect(status.body).toMatchObject({ version: '0.1.0', spec_version: '1.0' });
    });

    it('every path except /health is under /v1', async () => {
      for (const [method, path] of [
        ['post', '/evaluate'],
        ['post', '/simulate'],
        ['post', '/verify'],
        ['post', '/signup'],
        ['get', '/status'],
        ['get', '/keys/server'],
        ['get', '/v1/health'],
        ['get', '/v2/status'],
      ] as const) {
        const res = await request(t.app)[method](path).set('X-API-Key', key);
        expectError(res, 404, 'not_found');
      }
    });

    it('receipts declare the signing contract receipt-core-v2', async () => {
      const res = await request(t.app)
        .post('/v1/evaluate')
        .set('X-API-Key', key)
        .send(validClaim());
      expect(res.body.receipt.signed_fields.contract).toBe('receipt-core-v2');
    });
  });
});

describe('security headers', () => {
  let t: TestApp;
  beforeEach(() => {
    t = buildTestApp();
  });
  afterEach(() => t.close());

  // The headers helmet itself sets with the service's settings, in its order, on a bare app.
  const helmetHeaders = async (): Promise<[string, string][]> => {
    const bare = express();
    bare.use(helmet(SECURITY_HEADER_OPTIONS));
    bare.get('/health', (_req, res) => void res.json({ status: 'ok' }));
    const res = await request(bare).get('/health');
    return pairs(rawHeaders(res)).filter(
      ([name]) =>
        ![
          'content-type',
          'content-length',
          'date',
          'connection',
          'keep-alive',
          'etag',
          'x-powered-by',
        ].includes(name.toLowerCase()),
    );
  };
  // The headers as sent, in order (supertest's response keeps Node's message as `res`).
  const rawHeaders = (res: request.Response) =>
    (res as unknown as { res: { rawHeaders: string[] } }).res.rawHeaders;
  const pairs = (raw: string[]): [string, string][] =>
    raw.flatMap((value, i) => (i % 2 === 0 ? [[value, raw[i + 1]!] as [string, string]] : []));

  it.each([
    ['GET /health', () => request(t.app).get('/health')],
    ['POST /v1/verify', () => request(t.app).post('/v1/verify').send({})],
    ['GET /v1/nope (404)', () => request(t.app).get('/v1/nope')],
    ['POST /v1/evaluate without a key (401)', () => request(t.app).post('/v1/evaluate').send({})],
  ])(
    '%s carries exactly helmet’s headers, in its order, after the version and request id',
    async (_name, send) => {
      const expected = await helmetHeaders();
      expect(expected.length).toBeGreaterThanOrEqual(10);
      const got = pairs(rawHeaders(await send()));
      const names = got.map(([name]) => name);
      const first = names.indexOf(expected[0]![0]);
      expect(names.slice(first - 3, first)).toEqual([
        'X-Svc-Version',
        'X-Svc-Spec',
        'X-Request-Id',
      ]);
      expect(got.slice(first, first + expected.length)).toEqual(expected);
      expect(names).not.toContain('X-Powered-By');
    },
  );
});
