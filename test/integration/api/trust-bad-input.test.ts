import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import { expectError, ledgerState, newKey } from './helpers.js';

// The input paths the trust model added, each refused with a clear 4xx that changes nothing.
describe('bad input on the key and policy routes', () => {
  let t: TestApp;
  let key: string;
  beforeEach(async () => {
    t = buildTestApp();
    key = await newKey(t);
  });
  afterEach(() => t.close());

  it.each(['Bad%20Name', 'UPPER', '-starts-with-dash', 'x'.repeat(65)])(
    'GET and DELETE /v1/policies/%s: 400 validation_failed naming the parameter',
    async (name) => {
      const before = await ledgerState(t);
      const read = await request(t.app).get(`/v1/policies/${name}`);
      expect(expectError(read, 400, 'validation_failed')).toMatch(/^name: /);
      const removed = await request(t.app).delete(`/v1/policies/${name}`).set('X-API-Key', key);
      expect(expectError(removed, 400, 'validation_failed')).toMatch(/^name: /);
      expect(await ledgerState(t)).toEqual(before);
    },
  );

  it.each([
    [{ name: 'p', config: {}, overrides: 'loosen' }, /^overrides: /],
    [{ name: 'p', config: { minSources: -1 } }, /^config\.minSources: /],
    [{ name: 'p', config: {}, owner: 'someone-else' }, /"owner"/],
  ])('POST /v1/policies %j: 400 validation_failed, nothing created', async (body, message) => {
    const res = await request(t.app).post('/v1/policies').set('X-API-Key', key).send(body);
    expect(expectError(res, 400, 'validation_failed')).toMatch(message);
    const list = await request(t.app).get('/v1/policies').set('X-API-Key', key);
    expect(list.body.policies.map((p: { name: string }) => p.name)).toEqual([
      'default',
      'strict',
      'permissive',
    ]);
  });

  it('POST /v1/account/rotate with a non-JSON body is 415, and the key keeps working', async () => {
    const res = await request(t.app)
      .post('/v1/account/rotate')
      .set('X-API-Key', key)
      .set('Content-Type', 'text/plain')
      .send('rotate please');
    expectError(res, 415, 'unsupported_media_type');
    expect((await request(t.app).get('/v1/account').set('X-API-Key', key)).status).toBe(200);
  });

  it('rotate and revoke without a key are 401, and revoke of a revoked key is 401', async () => {
    expectError(await request(t.app).post('/v1/account/rotate'), 401, 'unauthorized');
    expectError(await request(t.app).delete('/v1/account'), 401, 'unauthorized');
    expect((await request(t.app).delete('/v1/account').set('X-API-Key', key)).status).toBe(200);
    expectError(
      await request(t.app).delete('/v1/account').set('X-API-Key', key),
      401,
      'unauthorized',
    );
  });
});
