import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import { API_KEY, expectError, HOUR_MS, newKey, postRaw, uniqueEmail } from '../../support/api.js';
import { validClaim } from '../../support/claims.js';

const signup = (t: TestApp, body: unknown) =>
  request(t.app)
    .post('/v1/signup')
    .send(body as object);

describe('POST /v1/signup', () => {
  let t: TestApp;

  beforeEach(() => {
    t = buildTestApp();
  });
  afterEach(() => t.close());

  it('201 with exactly {api_key, key_id, message}; the key is sk_svc_<uuid> on the free tier', async () => {
    const res = await signup(t, { email: 'new@example.com' });
    expect(res.status).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(res.body).sort()).toEqual(['api_key', 'key_id', 'message']);
    expect(res.body.api_key).toMatch(API_KEY);
    expect(res.body.key_id).toMatch(/^kid_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(res.body.message).toBe(
      'API key created on the free tier (100 requests per hour). Send it as "X-API-Key: <key>". It is shown only now: store it.',
    );
    const record = await t.store.apiKeys.findActiveByEmail('new@example.com');
    expect(record).toMatchObject({ email: 'new@example.com', tier: 'free' });
    // The raw key is never stored.
    expect(JSON.stringify(record)).not.toContain(res.body.api_key);
  });

  it('an email that has a key is 409 email_registered with no key, case and white space ignored', async () => {
    const first = await signup(t, { email: 'Same@Example.com' });
    expect(first.status).toBe(201);
    for (const email of [
      'same@example.com',
      'SAME@EXAMPLE.COM',
      '  same@example.com',
      'same@example.com \t',
      ' Same@Example.Com\n',
    ]) {
      const again = await signup(t, { email });
      expect(expectError(again, 409, 'email_registered')).toMatch(/already has an API key/);
      expect(JSON.stringify(again.body)).not.toContain('sk_svc_');
    }
    const account = await request(t.app).get('/v1/account').set('X-API-Key', first.body.api_key);
    expect(account.body.email).toBe('same@example.com');
  });

  it('different emails get different keys', async () => {
    const a = await signup(t, { email: 'a@example.com' });
    const b = await signup(t, { email: 'b@example.com' });
    expect(a.body.api_key).not.toBe(b.body.api_key);
  });

  it('a repeated signup for an enterprise key reveals nothing and changes nothing', async () => {
    const key = await newKey(t, 'enterprise', 'upgraded@example.com');
    const again = await signup(t, { email: ' UPGRADED@example.com ' });
    expectError(again, 409, 'email_registered');
    expect(JSON.stringify(again.body)).not.toContain(key);
    const account = await request(t.app).get('/v1/account').set('X-API-Key', key);
    expect(account.body.tier).toBe('enterprise');
  });

  it('the new key works at once', async () => {
    const { body } = await signup(t, { email: uniqueEmail() });
    const res = await request(t.app)
      .post('/v1/evaluate')
      .set('X-API-Key', body.api_key)
      .send(validClaim());
    expect(res.status).toBe(200);
  });

  it.each([
    ['not an address', { email: 'not-an-email' }, 'email: must be an e-mail address'],
    ['no domain', { email: 'user@' }, 'email: must be an e-mail address'],
    ['two @', { email: 'a@b@example.com' }, 'email: must be an e-mail address'],
    ['inner white space', { email: 'a b@example.com' }, 'email: must be an e-mail address'],
    ['empty', { email: '' }, 'email: must be an e-mail address'],
    ['only white space', { email: '   ' }, 'email: must be an e-mail address'],
    ['a number', { email: 42 }, 'email: Invalid input: expected string, received number'],
    ['null', { email: null }, 'email: Invalid input: expected string, received null'],
    ['missing', {}, 'email: Invalid input: expected string, received undefined'],
    ['an array body', ['a@example.com'], '(root): Invalid input: expected object, received array'],
    ['a string body', 'a@example.com', '(root): Invalid input: expected object, received string'],
  ])('400 validation_failed for %s', async (_name, body, message) => {
    const res = await postRaw(t, '/v1/signup', null, JSON.stringify(body));
    expect(expectError(res, 400, 'validation_failed')).toBe(message);
  });

  it('400 for an address over 254 characters', async () => {
    const res = await signup(t, { email: `${'a'.repeat(64)}@${'b'.repeat(190)}.com` });
    expect(expectError(res, 400, 'validation_failed')).toMatch(/^email: /);
  });

  it('400 for unknown members', async () => {
    const res = await signup(t, { email: 'x@example.com', tier: 'enterprise' });
    expect(expectError(res, 400, 'validation_failed')).toMatch(/^\(root\): .*"tier"/);
    expect(await t.store.apiKeys.findActiveByEmail('x@example.com')).toBeNull();
  });

  it('400 for an empty body, malformed_json for a broken one', async () => {
    expectError(await request(t.app).post('/v1/signup'), 400, 'validation_failed');
    expectError(await postRaw(t, '/v1/signup', null, '{"email":'), 400, 'malformed_json');
  });
});

describe('GET /v1/account', () => {
  let t: TestApp;

  beforeEach(() => {
    t = buildTestApp();
  });
  afterEach(() => t.close());

  it('requires a key', async () => {
    expectError(await request(t.app).get('/v1/account'), 401, 'unauthorized');
  });

  it('reports tier, rate-limit status and usage', async () => {
    const createdAt = new Date(t.clock.now()).toISOString();
    const key = await newKey(t, 'free', 'Acct@Example.com');
    t.clock.advance(5_000);
    const res = await request(t.app).get('/v1/account').set('X-API-Key', key);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      key_id: expect.stringMatching(/^kid_[0-9A-HJKMNP-TV-Z]{26}$/),
      email: 'acct@example.com',
      locked_policy: null,
      tier: 'free',
      limit: 100,
      remaining: 99,
      window_seconds: 3600,
      reset_at: new Date(t.clock.now() + HOUR_MS).toISOString(),
      usage: { requests_in_window: 1, receipts_issued: 0 },
      created_at: createdAt,
    });
    expect(res.headers['x-ratelimit-remaining']).toBe('99');
  });

  it('counts requests in the window and receipts issued (not simulations, not replays)', async () => {
    const key = await newKey(t);
    const claim = validClaim();
    const send = (path: string, body: object) =>
      request(t.app).post(path).set('X-API-Key', key).send(body);
    expect((await send('/v1/evaluate', claim)).status).toBe(200);
    expect((await send('/v1/evaluate', claim)).headers['idempotent-replay']).toBe('true');
    expect((await send('/v1/evaluate', validClaim())).status).toBe(200);
    expect((await send('/v1/simulate', validClaim())).status).toBe(200);
    expect((await send('/v1/evaluate', {})).status).toBe(400);
    const res = await request(t.app).get('/v1/account').set('X-API-Key', key);
    expect(res.body.usage).toEqual({ requests_in_window: 6, receipts_issued: 2 });
    expect(res.body.remaining).toBe(94);

    // Receipts of another key are not this key's.
    const other = await newKey(t);
    const otherAccount = await request(t.app).get('/v1/account').set('X-API-Key', other);
    expect(otherAccount.body.usage).toEqual({ requests_in_window: 1, receipts_issued: 0 });
  });

  it('the window empties an hour later; receipts issued stay', async () => {
    const key = await newKey(t);
    await request(t.app).post('/v1/evaluate').set('X-API-Key', key).send(validClaim());
    t.clock.advance(HOUR_MS);
    const res = await request(t.app).get('/v1/account').set('X-API-Key', key);
    expect(res.body).toMatchObject({
      remaining: 99,
      reset_at: new Date(t.clock.now() + HOUR_MS).toISOString(),
      usage: { requests_in_window: 1, receipts_issued: 1 },
    });
  });

  it('pilot and enterprise tiers', async () => {
    const pilot = await request(t.app)
      .get('/v1/account')
      .set('Authorization', `Bearer ${await newKey(t, 'pilot')}`);
    expect(pilot.body).toMatchObject({ tier: 'pilot', limit: 10_000, remaining: 9_999 });

    const enterprise = await request(t.app)
      .get('/v1/account')
      .set('X-API-Key', await newKey(t, 'enterprise', 'big@example.com'));
    expect(enterprise.body).toEqual({
      key_id: expect.any(String),
      email: 'big@example.com',
      locked_policy: null,
      tier: 'enterprise',
      limit: 'unlimited',
      remaining: 'unlimited',
      window_seconds: 3600,
      reset_at: null,
      usage: { requests_in_window: 0, receipts_issued: 0 },
      created_at: expect.any(String),
    });
  });
});
