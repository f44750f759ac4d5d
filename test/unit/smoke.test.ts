import { describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { buildTestApp } from '../support/harness.js';
import { validClaim } from '../support/claims.js';

describe('harness', () => {
  it('signs up, evaluates and verifies', async () => {
    const t = buildTestApp();
    const signup = await request(t.app).post('/v1/signup').send({ email: 'a@example.com' });
    expect(signup.status).toBe(201);
    const evaluated = await request(t.app)
      .post('/v1/evaluate')
      .set('X-API-Key', signup.body.api_key)
      .send(validClaim());
    expect(evaluated.status).toBe(200);
    const verified = await request(t.app).post('/v1/verify').send(evaluated.body.receipt);
    expect(verified.body.valid).toBe(true);
    await t.close();
  });
});
