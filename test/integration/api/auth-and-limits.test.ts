import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { AUTH_CACHE_TTL_MS } from '../../../src/services/api-keys.js';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import {
  expectCommonHeaders,
  expectError,
  HOUR_MS,
  ledgerState,
  newKey,
  uniqueEmail,
} from '../../support/api.js';
import { validClaim } from '../../support/claims.js';

const account = (t: TestApp, key: string) =>
  request(t.app).get('/v1/account').set('X-API-Key', key);
const limitHeaders = (res: request.Response) => ({
  limit: res.headers['x-ratelimit-limit'],
  remaining: res.headers['x-ratelimit-remaining'],
});

describe('authentication', () => {
  let t: TestApp;
  let key: string;

  beforeEach(async () => {
    t = buildTestApp();
    key = await newKey(t, 'free', 'auth@example.com');
  });
  afterEach(() => t.close());

  it('accepts the key as X-API-Key', async () => {
    const res = await account(t, key);
    expect(res.status).toBe(200);
    expect(res.body.email).toBe('auth@example.com');
  });

  it.each(['Bearer', 'bearer', 'BEARER'])(
    'accepts the key as Authorization: %s',
    async (scheme) => {
      const res = await request(t.app).get('/v1/account').set('Authorization', `${scheme} ${key}`);
      expect(res.status).toBe(200);
      expect(res.body.email).toBe('auth@example.com');
    },
  );

  it('both forms count against the same key budget', async () => {
    const a = await account(t, key);
    const b = await request(t.app).get('/v1/account').set('Authorization', `Bearer ${key}`);
    expect(Number(b.headers['x-ratelimit-remaining'])).toBe(
      Number(a.headers['x-ratelimit-remaining']) - 1,
    );
  });

  it.each([
    ['POST', '/v1/evaluate'],
    ['POST', '/v1/simulate'],
    ['GET', '/v1/account'],
  ])('%s %s without a key is 401 and writes nothing', async (method, path) => {
    const before = await ledgerState(t);
    const req =
      method === 'POST' ? request(t.app).post(path).send(validClaim()) : request(t.app).get(path);
    const res = await req;
    expect(expectError(res, 401, 'unauthorized')).toBe(
      'API key required: send "X-API-Key: <key>" or "Authorization: Bearer <key>"',
    );
    expectCommonHeaders(res);
    expect(await ledgerState(t)).toEqual(before);
  });

  it.each([
    ['an unknown well-formed key', { 'X-API-Key': `sk_svc_${randomUUID()}` }, 'Invalid API key'],
    ['a malformed key', { 'X-API-Key': 'not-a-key' }, 'Invalid API key'],
    ['an empty X-API-Key', { 'X-API-Key': '' }, 'Invalid API key'],
    ['a key with another prefix', { 'X-API-Key': `sk_live_${randomUUID()}` }, 'Invalid API key'],
    [
      'an unknown Bearer key',
      { Authorization: `Bearer sk_svc_${randomUUID()}` },
      'Invalid API key',
    ],
    [
      'Authorization: Basic',
      { Authorization: 'Basic dXNlcjpwYXNz' },
      'Authorization must be "Bearer <API key>"',
    ],
    [
      'a Bearer without token',
      { Authorization: 'Bearer' },
      'Authorization must be "Bearer <API key>"',
    ],
    [
      'a bare key in Authorization',
      { Authorization: 'sk_svc_x' },
      'Authorization must be "Bearer <API key>"',
    ],
  ])('%s is 401', async (_name, headers, message) => {
    const before = await ledgerState(t);
    const res = await request(t.app).post('/v1/evaluate').set(headers).send(validClaim());
    expect(expectError(res, 401, 'unauthorized')).toBe(message);
    expectCommonHeaders(res);
    expect(await ledgerState(t)).toEqual(before);
  });

  it('the upper-cased form of a valid key is not a key', async () => {
    const res = await account(t, key.toUpperCase());
    expectError(res, 401, 'unauthorized');
  });

  it('an invalid key is refused even on endpoints that need none', async () => {
    const res = await request(t.app).get('/v1/status').set('X-API-Key', 'sk_svc_nope');
    expectError(res, 401, 'unauthorized');
  });

  it('public endpoints need no key', async () => {
    const evaluated = await request(t.app)
      .post('/v1/evaluate')
      .set('X-API-Key', key)
      .send(validClaim());
    expect(evaluated.status).toBe(200);
    const responses = await Promise.all([
      request(t.app).get('/health'),
      request(t.app).get('/v1/status'),
      request(t.app).post('/v1/signup').send({ email: uniqueEmail() }),
      request(t.app).post('/v1/verify').send(evaluated.body.receipt),
      request(t.app).get('/v1/keys/server'),
      request(t.app).get('/v1/ledger/stats'),
    ]);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 201, 200, 200, 200]);
    expect(responses[3]!.body.valid).toBe(true);
  });

  it('X-API-Key wins over Authorization when both are sent', async () => {
    const res = await request(t.app)
      .get('/v1/account')
      .set('X-API-Key', key)
      .set('Authorization', 'Basic dXNlcjpwYXNz');
    expect(res.status).toBe(200);
  });

  it('invalid keys spend the address budget, then get 429', async () => {
    const small = buildTestApp({ config: { anonLimitPerHour: 3 } });
    try {
      const valid = await newKey(small, 'free', 'still-works@example.com'); // spends 1
      const remaining: unknown[] = [];
      for (const headers of [
        { 'X-API-Key': `sk_svc_${randomUUID()}` },
        { Authorization: 'Basic dXNlcjpwYXNz' },
      ]) {
        const res = await request(small.app).get('/v1/account').set(headers);
        expectError(res, 401, 'unauthorized');
        expect(res.headers['x-ratelimit-limit']).toBe('3');
        remaining.push(res.headers['x-ratelimit-remaining']);
      }
      expect(remaining).toEqual(['1', '0']);

      const guess = await request(small.app).get('/v1/account').set('X-API-Key', 'sk_svc_guess');
      expectError(guess, 429, 'rate_limited');
      expect(guess.headers['retry-after']).toBe('3600');
      // The address is out of budget for anonymous requests too…
      expectError(await request(small.app).get('/v1/status'), 429, 'rate_limited');
      // …but a valid key has its own budget.
      const ok = await account(small, valid);
      expect(ok.status).toBe(200);
      expect(limitHeaders(ok)).toEqual({ limit: '100', remaining: '99' });
    } finally {
      await small.close();
    }
  });
});

describe('rate limits', () => {
  let t: TestApp;

  beforeEach(() => {
    t = buildTestApp();
  });
  afterEach(() => t.close());

  it('free: 100 requests an hour, then 429 with Retry-After; the refused request writes nothing', async () => {
    const key = await newKey(t);
    for (let i = 1; i <= 100; i++) {
      const res = await account(t, key);
      expect(res.status).toBe(200);
      expect(limitHeaders(res)).toEqual({ limit: '100', remaining: String(100 - i) });
    }
    const before = await ledgerState(t);
    const refused = await request(t.app)
      .post('/v1/evaluate')
      .set('X-API-Key', key)
      .send(validClaim());
    expect(expectError(refused, 429, 'rate_limited')).toBe(
      'Rate limit of 100 requests per hour exceeded; retry in 3600 s',
    );
    expect(refused.headers['retry-after']).toBe('3600');
    expect(limitHeaders(refused)).toEqual({ limit: '100', remaining: '0' });
    expectCommonHeaders(refused);
    expect(await ledgerState(t)).toEqual(before);
  });

  it('every kind of request with a key counts, failures included; /health does not', async () => {
    const key = await newKey(t);
    const seen: string[] = [];
    const record = (res: request.Response) =>
      seen.push(res.headers['x-ratelimit-remaining'] as string);
    record(await request(t.app).post('/v1/evaluate').set('X-API-Key', key).send(validClaim()));
    record(await request(t.app).post('/v1/simulate').set('X-API-Key', key).send(validClaim()));
    record(await request(t.app).post('/v1/evaluate').set('X-API-Key', key).send({}));
    record(await request(t.app).get('/v1/status').set('X-API-Key', key));
    record(await request(t.app).get('/v1/nope').set('X-API-Key', key));
    record(await request(t.app).get('/health').set('X-API-Key', key));
    record(await request(t.app).get('/health?deep=true').set('X-API-Key', key));
    record(await account(t, key));
    expect(seen).toEqual(['99', '98', '97', '96', '95', '95', '95', '94']);
  });

  it('the window slides: requests leave it one hour after they were made', async () => {
    const key = await newKey(t);
    const t0 = t.clock.now();
    for (let i = 0; i < 50; i++) expect((await account(t, key)).status).toBe(200);
    t.clock.advance(30 * 60 * 1000);
    for (let i = 0; i < 50; i++) expect((await account(t, key)).status).toBe(200);

    const full = await account(t, key);
    expectError(full, 429, 'rate_limited');
    expect(full.headers['retry-after']).toBe('1800');

    t.clock.ms = t0 + HOUR_MS - 1;
    const almost = await account(t, key);
    expectError(almost, 429, 'rate_limited');
    expect(almost.headers['retry-after']).toBe('1');

    t.clock.ms = t0 + HOUR_MS;
    const passed = await account(t, key);
    expect(passed.status).toBe(200);
    // A fixed window would start over at 99; the sliding one still holds the later 50.
    expect(limitHeaders(passed)).toEqual({ limit: '100', remaining: '49' });
    expect(passed.body.usage.requests_in_window).toBe(51);

    for (let i = 0; i < 49; i++) expect((await account(t, key)).status).toBe(200);
    const fullAgain = await account(t, key);
    expectError(fullAgain, 429, 'rate_limited');
    expect(fullAgain.headers['retry-after']).toBe('1800');

    t.clock.ms = t0 + 2 * HOUR_MS + 30 * 60 * 1000;
    const empty = await account(t, key);
    expect(limitHeaders(empty)).toEqual({ limit: '100', remaining: '99' });
  });

  it('refused requests do not extend the window', async () => {
    const key = await newKey(t);
    for (let i = 0; i < 100; i++) await account(t, key);
    for (let i = 0; i < 5; i++) {
      t.clock.advance(60_000);
      expect((await account(t, key)).status).toBe(429);
    }
    t.clock.advance(HOUR_MS - 5 * 60_000);
    const res = await account(t, key);
    expect(res.status).toBe(200);
    expect(res.headers['x-ratelimit-remaining']).toBe('99');
  });

  it('keys have separate budgets', async () => {
    const a = await newKey(t);
    const b = await newKey(t);
    for (let i = 0; i < 100; i++) await account(t, a);
    expect((await account(t, a)).status).toBe(429);
    const other = await account(t, b);
    expect(other.status).toBe(200);
    expect(other.headers['x-ratelimit-remaining']).toBe('99');
  });

  it('pilot: a 10,000 request cap that decrements', async () => {
    const key = await newKey(t, 'pilot');
    for (let i = 1; i <= 150; i++) {
      const res = await account(t, key);
      expect(res.status).toBe(200);
      expect(limitHeaders(res)).toEqual({ limit: '10000', remaining: String(10_000 - i) });
    }
    const res = await account(t, key);
    expect(res.body).toMatchObject({ tier: 'pilot', limit: 10_000, remaining: 9849 });
  });

  it('a tier change applies once the cached key record expires, with the window kept', async () => {
    const email = uniqueEmail();
    const key = await newKey(t, 'free', email);
    for (let i = 0; i < 100; i++) await account(t, key);
    expect((await account(t, key)).status).toBe(429);
    await t.store.apiKeys.setTier(email, 'pilot', new Date(t.clock.now()).toISOString());
    t.clock.advance(AUTH_CACHE_TTL_MS);
    const res = await account(t, key);
    expect(res.status).toBe(200);
    expect(limitHeaders(res)).toEqual({ limit: '10000', remaining: '9899' });
  });

  it('enterprise: unlimited', async () => {
    const key = await newKey(t, 'enterprise');
    for (let i = 0; i < 150; i++) {
      const res = await account(t, key);
      expect(res.status).toBe(200);
      expect(limitHeaders(res)).toEqual({ limit: 'unlimited', remaining: 'unlimited' });
    }
    const evaluated = await request(t.app)
      .post('/v1/evaluate')
      .set('X-API-Key', key)
      .send(validClaim());
    expect(limitHeaders(evaluated)).toEqual({ limit: 'unlimited', remaining: 'unlimited' });
  });

  it('unauthenticated requests are limited per address by anonLimitPerHour', async () => {
    const small = buildTestApp({ config: { anonLimitPerHour: 5 } });
    try {
      for (let i = 1; i <= 5; i++) {
        const res = await request(small.app).get('/v1/ledger/stats');
        expect(res.status).toBe(200);
        expect(limitHeaders(res)).toEqual({ limit: '5', remaining: String(5 - i) });
      }
      const refused = await request(small.app).post('/v1/verify').send({});
      expect(expectError(refused, 429, 'rate_limited')).toMatch(
        /^Rate limit of 5 requests per hour/,
      );
      expect(refused.headers['retry-after']).toBe('3600');
      // /health never spends the budget and is answered even when it is exhausted.
      const health = await request(small.app).get('/health');
      expect(health.status).toBe(200);
      expect(limitHeaders(health)).toEqual({ limit: '5', remaining: '0' });
      small.clock.advance(HOUR_MS);
      expect((await request(small.app).get('/v1/status')).status).toBe(200);
    } finally {
      await small.close();
    }
  });

  it('/health does not spend the address budget', async () => {
    const small = buildTestApp({ config: { anonLimitPerHour: 2 } });
    try {
      for (let i = 0; i < 10; i++) {
        const res = await request(small.app).get(i % 2 ? '/health?deep=true' : '/health');
        expect(res.status).toBe(200);
        expect(limitHeaders(res)).toEqual({ limit: '2', remaining: '2' });
      }
    } finally {
      await small.close();
    }
  });

  it('signups are limited per address by signupLimitPerHour, repeats included', async () => {
    const small = buildTestApp({ config: { signupLimitPerHour: 2 } });
    try {
      const first = await request(small.app).post('/v1/signup').send({ email: 's@example.com' });
      expect(first.status).toBe(201);
      expect(limitHeaders(first)).toEqual({ limit: '2', remaining: '1' });
      // A refused repeat spends the budget too: addresses cannot be probed for free.
      const repeat = await request(small.app).post('/v1/signup').send({ email: 's@example.com' });
      expectError(repeat, 409, 'email_registered');
      const refused = await request(small.app).post('/v1/signup').send({ email: 't@example.com' });
      expect(expectError(refused, 429, 'rate_limited')).toBe(
        'Rate limit of 2 signups per hour exceeded; retry in 3600 s',
      );
      expect(refused.headers['retry-after']).toBe('3600');
      expect(await small.store.apiKeys.findActiveByEmail('t@example.com')).toBeNull();
      // Other anonymous requests are not affected by the signup budget.
      expect((await request(small.app).get('/v1/status')).status).toBe(200);
      small.clock.advance(HOUR_MS);
      const later = await request(small.app).post('/v1/signup').send({ email: 't@example.com' });
      expect(later.status).toBe(201);
    } finally {
      await small.close();
    }
  });
});

describe('when the rate-limit windows cannot be read (their store is down)', () => {
  const down = async (): Promise<never> => {
    throw new Error('windows unavailable');
  };
  let t: TestApp;
  beforeEach(() => {
    t = buildTestApp({ limiter: { consume: down, peek: down } });
  });
  afterEach(async () => {
    await t.close();
  });

  it('health still answers, without budget headers: liveness does not depend on them', async () => {
    const res = await request(t.app).get('/health');
    expect(res.status).toBe(200);
    expect(res.body.ok).toBe(true);
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('preflights still answer', async () => {
    const res = await request(t.app)
      .options('/v1/verify')
      .set('Origin', 'https://example.com')
      .set('Access-Control-Request-Method', 'POST');
    expect(res.status).toBe(204);
  });

  it('a request that spends the budget fails closed, without leaking the cause', async () => {
    const res = await request(t.app).post('/v1/verify').send({});
    expectError(res, 500, 'internal');
    expect(JSON.stringify(res.body)).not.toContain('windows unavailable');
  });
});
