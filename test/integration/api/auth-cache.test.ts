import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { ApiKeyService, AUTH_CACHE_TTL_MS } from '../../../src/services/api-keys.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { buildTestApp, ManualClock, type TestApp } from '../../support/harness.js';
import { newKey } from '../../support/api.js';

const EMAIL = 'cache@example.com';
const account = (t: TestApp, key: string) =>
  request(t.app).get('/v1/account').set('X-API-Key', key);
const at = (t: TestApp) => new Date(t.clock.now()).toISOString();

// Changes made straight in the store stand for another process: the operator CLI or another
// worker on the same data directory. This process learns of them only when its cached record
// expires.
describe('cached authentication', () => {
  let t: TestApp;
  let key: string;

  beforeEach(async () => {
    t = buildTestApp();
    key = await newKey(t, 'free', EMAIL);
    // Authenticated once: the record is cached from here on.
    expect((await account(t, key)).body.tier).toBe('free');
  });
  afterEach(() => t.close());

  it('a tier changed elsewhere applies once the cached record expires, not before', async () => {
    await t.store.apiKeys.setTier(EMAIL, 'pilot', at(t));
    t.clock.advance(AUTH_CACHE_TTL_MS - 1);
    const stale = await account(t, key);
    expect(stale.body.tier).toBe('free');
    expect(stale.headers['x-ratelimit-limit']).toBe('100');
    t.clock.advance(1);
    const fresh = await account(t, key);
    expect(fresh.body.tier).toBe('pilot');
    expect(fresh.headers['x-ratelimit-limit']).toBe('10000');
  });

  it('a key revoked elsewhere is refused once the cached record expires, not before', async () => {
    const record = await t.store.apiKeys.findActiveByEmail(EMAIL);
    expect(await t.store.apiKeys.revoke(record!.keyId, at(t))).toBe(true);
    t.clock.advance(AUTH_CACHE_TTL_MS - 1);
    expect((await account(t, key)).status).toBe(200);
    t.clock.advance(1);
    expect((await account(t, key)).status).toBe(401);
  });

  it('DELETE /v1/account through this process refuses the key at once', async () => {
    const res = await request(t.app).delete('/v1/account').set('X-API-Key', key);
    expect(res.status).toBe(200);
    expect((await account(t, key)).status).toBe(401);
  });

  it('POST /v1/account/rotate through this process refuses the old key at once', async () => {
    const res = await request(t.app).post('/v1/account/rotate').set('X-API-Key', key);
    expect(res.status).toBe(201);
    expect((await account(t, key)).status).toBe(401);
    expect((await account(t, res.body.api_key as string)).status).toBe(200);
  });
});

describe('ApiKeyService cache bound', () => {
  it('keeps at most maxKeys records, dropping the least recently used', async () => {
    const store = openSqliteStore(':memory:');
    const clock = new ManualClock();
    const keys = new ApiKeyService({ keys: store.apiKeys, clock, cache: { maxKeys: 3 } });
    const issued = [];
    for (let i = 0; i < 5; i++) issued.push((await keys.signup(`k${i}@example.com`)).apiKey);
    for (const raw of issued) expect(await keys.authenticate(raw)).not.toBeNull();
    expect(keys.cachedKeys).toBe(3);
    // Key 0 was evicted: revoked in the store, it is refused at once, without waiting.
    const first = await store.apiKeys.findActiveByEmail('k0@example.com');
    await store.apiKeys.revoke(first!.keyId, new Date(clock.now()).toISOString());
    expect(await keys.authenticate(issued[0]!)).toBeNull();
    // Key 4, the most recently used, is still served from the cache after a revocation elsewhere.
    const last = await store.apiKeys.findActiveByEmail('k4@example.com');
    await store.apiKeys.revoke(last!.keyId, new Date(clock.now()).toISOString());
    expect(await keys.authenticate(issued[4]!)).not.toBeNull();
    expect(keys.cachedKeys).toBeLessThanOrEqual(3);
    await store.close();
  });

  it('with a TTL of 0 asks the store every time', async () => {
    const store = openSqliteStore(':memory:');
    const clock = new ManualClock();
    const keys = new ApiKeyService({ keys: store.apiKeys, clock, cache: { ttlMs: 0 } });
    const { apiKey, record } = await keys.signup('nocache@example.com');
    expect(await keys.authenticate(apiKey)).not.toBeNull();
    await store.apiKeys.revoke(record.keyId, new Date(clock.now()).toISOString());
    expect(await keys.authenticate(apiKey)).toBeNull();
    expect(keys.cachedKeys).toBe(0);
    await store.close();
  });
});
