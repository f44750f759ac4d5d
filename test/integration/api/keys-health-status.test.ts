import { createHash, createPublicKey } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import {
  expectCommonHeaders,
  expectError,
  ISO,
  type Json,
  ledgerState,
  newKey,
} from '../../support/api.js';
import { validClaim } from '../../support/claims.js';

describe('GET /v1/keys/server', () => {
  let t: TestApp;
  beforeEach(() => {
    t = buildTestApp();
  });
  afterEach(() => t.close());

  it('publishes the Ed25519 public key as SPKI PEM, text/plain, with its key id', async () => {
    const res = await request(t.app).get('/v1/keys/server');
    expect(res.status).toBe(200);
    expectCommonHeaders(res);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toMatch(
      /^-----BEGIN PUBLIC KEY-----\n[A-Za-z0-9+/=]{60}\n-----END PUBLIC KEY-----\n$/,
    );
    const key = createPublicKey(res.text);
    expect(key.asymmetricKeyType).toBe('ed25519');
    const der = key.export({ format: 'der', type: 'spki' });
    expect(new Uint8Array(der.subarray(12))).toEqual(t.serverKey.publicKeyRaw);
    expect(res.headers['x-svc-key-id']).toBe(
      `sha256:${createHash('sha256').update(der).digest('hex')}`,
    );
  });

  it('its key id is the key_id of the receipts it signs', async () => {
    const apiKey = await newKey(t);
    const evaluated = await request(t.app)
      .post('/v1/evaluate')
      .set('X-API-Key', apiKey)
      .send(validClaim());
    const res = await request(t.app).get('/v1/keys/server');
    expect(evaluated.body.receipt.attestations[0].key_id).toBe(res.headers['x-svc-key-id']);
  });

  it('is stable across requests and needs no key', async () => {
    const a = await request(t.app).get('/v1/keys/server');
    const b = await request(t.app).get('/v1/keys/server');
    expect(b.text).toBe(a.text);
    expect(b.headers['x-svc-key-id']).toBe(a.headers['x-svc-key-id']);
  });
});

describe('GET /health', () => {
  let t: TestApp;
  beforeEach(() => {
    t = buildTestApp();
  });
  afterEach(() => t.close());

  it('answers exactly {ok, service, version}', async () => {
    const res = await request(t.app).get('/health');
    expect(res.status).toBe(200);
    expectCommonHeaders(res);
    expect(res.body).toEqual({ ok: true, service: 'svc', version: '0.1.0' });
  });

  it('deep=true adds the store, signer and job-queue checks', async () => {
    const res = await request(t.app).get('/health').query({ deep: 'true' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ok: true,
      service: 'svc',
      version: '0.1.0',
      checks: {
        store: { ok: true, latency_ms: expect.any(Number) },
        signer: { ok: true, latency_ms: expect.any(Number) },
        jobs: { ok: true, latency_ms: expect.any(Number) },
      },
    });
  });

  it.each(['false', '1', 'TRUE', ''])('deep=%s is the shallow check', async (deep) => {
    const res = await request(t.app).get('/health').query({ deep });
    expect(res.body).toEqual({ ok: true, service: 'svc', version: '0.1.0' });
  });

  it('deep=true is 503 when the store fails; the shallow check stays 200', async () => {
    await t.store.close();
    const deep = await request(t.app).get('/health?deep=true');
    expect(deep.status).toBe(503);
    expectCommonHeaders(deep);
    expect(deep.body).toEqual({
      ok: false,
      service: 'svc',
      version: '0.1.0',
      checks: {
        store: { ok: false, latency_ms: expect.any(Number), error: expect.any(String) },
        signer: { ok: true, latency_ms: expect.any(Number) },
        // The embedded queue lives in the same file: it is down with the store.
        jobs: { ok: false, latency_ms: expect.any(Number), error: expect.any(String) },
      },
    });
    const shallow = await request(t.app).get('/health');
    expect(shallow.status).toBe(200);
    expect(shallow.body.ok).toBe(true);
  });
});

describe('GET /v1/status and GET /v1/ledger/stats', () => {
  let t: TestApp;
  let key: string;
  const startedAt = '2026-01-15T10:00:00.000Z';

  beforeEach(async () => {
    t = buildTestApp();
    key = await newKey(t, 'enterprise');
  });
  afterEach(() => t.close());

  const evaluate = (claim: Json) =>
    request(t.app).post('/v1/evaluate').set('X-API-Key', key).send(claim);

  /** One receipt of each outcome: ALLOWED/ACCEPTED, BLOCKED, ESCALATED, NON_DETERMINISTIC. */
  async function fillLedger() {
    const claims = [
      validClaim(),
      validClaim({
        policyConfig: { minSources: 5 },
        action: {
          action_type: 'merge',
          target_system: 'gitlab',
          agent: 'b-bot',
          repository: 'z/z',
        },
      }),
      validClaim({
        action: { action_type: 'access_change', target_system: 'iam', agent: 'a-bot' },
      }),
      validClaim({ expected_replay_match: false }),
    ];
    for (const claim of claims) expect((await evaluate(claim)).status).toBe(200);
    await request(t.app).post('/v1/simulate').set('X-API-Key', key).send(validClaim());
  }

  it('status on an empty ledger', async () => {
    t.clock.advance(90_500);
    const res = await request(t.app).get('/v1/status');
    expect(res.status).toBe(200);
    expectCommonHeaders(res);
    expect(res.body).toEqual({
      service: 'svc',
      version: '0.1.0',
      spec_version: '1.0',
      started_at: startedAt,
      uptime_seconds: 90,
      receipts: { total: 0, accepted: 0, blocked: 0, escalated: 0, non_deterministic: 0 },
      memory: {
        rss_bytes: expect.any(Number),
        heap_used_bytes: expect.any(Number),
        heap_total_bytes: expect.any(Number),
      },
      runtime: {
        name: 'node',
        version: process.version,
        platform: process.platform,
        arch: process.arch,
      },
      store: 'sqlite',
    });
    expect(res.body.started_at).toMatch(ISO);
  });

  it('status counts receipts by outcome; simulations are not counted', async () => {
    await fillLedger();
    const res = await request(t.app).get('/v1/status');
    expect(res.body.receipts).toEqual({
      total: 4,
      accepted: 1,
      blocked: 1,
      escalated: 1,
      non_deterministic: 1,
    });
  });

  it('ledger stats on an empty ledger', async () => {
    const res = await request(t.app).get('/v1/ledger/stats');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      total: 0,
      accepted: 0,
      blocked: 0,
      escalated: 0,
      non_deterministic: 0,
      rejected: 0,
      allowed: 0,
      by_verdict: { ALLOWED: 0, BLOCKED: 0, ESCALATED: 0 },
      dispositions: { approved: 0, rejected: 0, pending: 0 },
      by_admissibility: { ACCEPTED: 0, NON_DETERMINISTIC: 0, REJECTED: 0 },
      agents: [],
      repositories: [],
      head: { sequence: 0, receipt_hash: null },
    });
  });

  it('ledger stats: totals, the agents and repositories seen, and the head', async () => {
    await fillLedger();
    const res = await request(t.app).get('/v1/ledger/stats');
    const { head, stats } = await ledgerState(t);
    expect(res.body).toEqual({
      total: 4,
      accepted: 1,
      blocked: 1,
      escalated: 1,
      non_deterministic: 1,
      rejected: 2,
      allowed: 2,
      by_verdict: { ALLOWED: 2, BLOCKED: 1, ESCALATED: 1 },
      // The one escalation is not decided yet.
      dispositions: { approved: 0, rejected: 0, pending: 1 },
      by_admissibility: { ACCEPTED: 1, NON_DETERMINISTIC: 1, REJECTED: 2 },
      agents: ['a-bot', 'b-bot', 'coder-bot'],
      repositories: ['acme/web', 'z/z'],
      head: { sequence: 4, receipt_hash: head.receipt_hash },
    });
    expect(res.body).toMatchObject({
      total: stats.total,
      by_verdict: stats.by_verdict,
      by_admissibility: stats.by_admissibility,
      agents: stats.agents,
      repositories: stats.repositories,
    });
  });

  it('both need no key; a failing store is a 500 with the error envelope', async () => {
    expect((await request(t.app).get('/v1/status')).status).toBe(200);
    expect((await request(t.app).get('/v1/ledger/stats')).status).toBe(200);
    await t.store.close();
    expectError(await request(t.app).get('/v1/ledger/stats'), 500, 'internal');
  });
});
