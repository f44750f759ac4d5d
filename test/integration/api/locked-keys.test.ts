import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { AUTH_CACHE_TTL_MS, ApiKeyService } from '../../../src/services/api-keys.js';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import {
  evaluate,
  expectError,
  ledgerState,
  signupAccount,
  textOf,
  uniqueEmail,
} from '../../support/api.js';
import { validClaim } from '../../support/claims.js';

describe('a key locked to a policy cannot shed its lock', () => {
  let t: TestApp;
  let keys: ApiKeyService;
  let locked: { apiKey: string; keyId: string; email: string };
  beforeEach(async () => {
    t = buildTestApp();
    keys = new ApiKeyService({ keys: t.store.apiKeys, clock: t.clock });
    const email = uniqueEmail('locked');
    const issued = await keys.create({ email, tier: 'pilot', lockedPolicy: 'strict' });
    locked = { apiKey: issued.apiKey, keyId: issued.record.keyId, email };
  });
  afterEach(() => t.close());

  const account = (key: string) => request(t.app).get('/v1/account').set('X-API-Key', key);
  const close = (key: string) => request(t.app).delete('/v1/account').set('X-API-Key', key);

  it('DELETE /v1/account of a locked key is 403 locked_key; the key, its lock and the ledger stay', async () => {
    expect((await evaluate(t, locked.apiKey, validClaim())).status).toBe(200);
    const before = await ledgerState(t);
    const keysBefore = await t.store.apiKeys.list();
    const res = await close(locked.apiKey);
    expectError(res, 403, 'locked_key');
    expect(Object.keys(res.body).sort()).toEqual(['code', 'error', 'request_id']);
    expect(res.body.error).toContain('operator');
    expect(await t.store.apiKeys.list()).toEqual(keysBefore);
    expect(await ledgerState(t)).toEqual(before);

    // Past the key cache's bound the key still works, still locked.
    t.clock.advance(AUTH_CACHE_TTL_MS + 1);
    const after = await account(locked.apiKey);
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ key_id: locked.keyId, locked_policy: 'strict' });
    const claim = await evaluate(t, locked.apiKey, validClaim({ policy: 'default' }));
    expect(claim.status).toBe(200);
    expect(claim.body.receipt.policy.name).toBe('strict');

    // And the address cannot sign up for an unlocked key meanwhile.
    const signup = await request(t.app).post('/v1/signup').send({ email: locked.email });
    expectError(signup, 409, 'email_registered');
    expect(textOf(signup)).not.toMatch(/sk_svc_/);
  });

  it('rotation keeps the lock, and the rotated key cannot close the account either', async () => {
    const rotated = await request(t.app).post('/v1/account/rotate').set('X-API-Key', locked.apiKey);
    expect(rotated.status).toBe(201);
    const fresh = rotated.body.api_key as string;
    expect((await account(fresh)).body.locked_policy).toBe('strict');
    expectError(await close(fresh), 403, 'locked_key');
    expect((await account(fresh)).status).toBe(200);
  });

  it('the operator revokes a locked key; its address then stays 409 at signup', async () => {
    expect(await keys.revoke(locked.keyId)).toBe(true);
    t.clock.advance(AUTH_CACHE_TTL_MS + 1);
    expectError(await account(locked.apiKey), 401, 'unauthorized');
    const before = await t.store.apiKeys.list();
    for (const email of [locked.email, ` ${locked.email.toUpperCase()} `]) {
      const signup = await request(t.app).post('/v1/signup').send({ email });
      expectError(signup, 409, 'email_registered');
      expect(textOf(signup)).not.toMatch(/sk_svc_/);
    }
    expect(await t.store.apiKeys.list()).toEqual(before);
  });

  it('once the operator lifts the lock, the key may close its own account', async () => {
    expect((await keys.unlock(locked.email))?.lockedPolicy).toBeNull();
    t.clock.advance(AUTH_CACHE_TTL_MS + 1);
    const res = await close(locked.apiKey);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ revoked: true, key_id: locked.keyId });
  });

  it('an unlocked key still closes its own account (200), and its address is then 409 at signup', async () => {
    const free = await signupAccount(t);
    expect((await close(free.apiKey)).status).toBe(200);
    expectError(await account(free.apiKey), 401, 'unauthorized');
    const signup = await request(t.app).post('/v1/signup').send({ email: free.email });
    expectError(signup, 409, 'email_registered');
  });
});
