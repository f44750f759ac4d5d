import { afterEach, describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import request from 'supertest';
import { Writable } from 'node:stream';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { buildTestApp, type TestApp } from '../../support/harness.js';

/** A logger at `level` whose lines are collected, parsed, synchronously. */
function capturingLogger(level: string) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
      callback();
    },
  });
  return { logger: pino({ level }, stream), lines };
}

/** An app whose ledger statistics fail: GET /v1/ledger/stats answers 500. */
function appWithBrokenStats(level: string) {
  const { logger, lines } = capturingLogger(level);
  const store = openSqliteStore(':memory:');
  store.ledger.stats = () => Promise.reject(new Error('disk on fire'));
  return { t: buildTestApp({ store, logger }), lines };
}

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('request logging', () => {
  it('above info, logs nothing for a successful request and still sets the request id', async () => {
    const built = appWithBrokenStats('warn');
    t = built.t;
    const res = await request(t.app).get('/health').set('X-Request-Id', 'abc-123');
    expect(res.headers['x-request-id']).toBe('abc-123');
    expect(built.lines).toEqual([]);
  });

  it('above info, logs a failed request at error with its id, status and the error', async () => {
    const built = appWithBrokenStats('warn');
    t = built.t;
    const res = await request(t.app).get('/v1/ledger/stats').set('X-Request-Id', 'req-500');
    expect(res.status).toBe(500);
    expect(res.body.request_id).toBe('req-500');
    expect(built.lines).toHaveLength(1);
    expect(built.lines[0]).toMatchObject({
      level: 50,
      req: { id: 'req-500', method: 'GET', url: '/v1/ledger/stats' },
      res: { status: 500 },
      err: { message: 'disk on fire' },
    });
    // Headers carry API keys: never logged.
    expect(JSON.stringify(built.lines[0])).not.toContain('headers');
  });

  it('at silent, logs nothing even for a failure', async () => {
    const built = appWithBrokenStats('silent');
    t = built.t;
    expect((await request(t.app).get('/v1/ledger/stats')).status).toBe(500);
    expect(built.lines).toEqual([]);
  });

  it('at info, logs one line per request with the id of the response header', async () => {
    const built = appWithBrokenStats('info');
    t = built.t;
    const ok = await request(t.app).get('/health');
    const failed = await request(t.app).get('/v1/ledger/stats');
    const requests = built.lines.filter((l) => (l.req as { id?: unknown } | undefined)?.id);
    expect(requests).toHaveLength(2);
    expect(requests[0]).toMatchObject({
      level: 30,
      req: { id: ok.headers['x-request-id'] },
      res: { status: 200 },
    });
    expect(requests[1]).toMatchObject({
      level: 50,
      req: { id: failed.headers['x-request-id'] },
      res: { status: 500 },
    });
  });

  it('names the key by its public key_id, never by its account or its secret', async () => {
    const { logger, lines } = capturingLogger('info');
    const store = openSqliteStore(':memory:');
    t = buildTestApp({ store, logger });
    const signup = await request(t.app).post('/v1/signup').send({ email: 'log@example.com' });
    expect(signup.status).toBe(201);
    const { api_key: apiKey, key_id: keyId } = signup.body as { api_key: string; key_id: string };
    const [record] = await store.apiKeys.list();
    const account = await request(t.app).get('/v1/account').set('X-API-Key', apiKey);
    expect(account.status).toBe(200);
    const line = lines.find(
      (l) => (l.req as { id?: unknown } | undefined)?.id === account.headers['x-request-id'],
    );
    expect(keyId).toMatch(/^kid_/);
    expect(line).toMatchObject({ key_id: keyId, res: { status: 200 } });
    const text = JSON.stringify(lines);
    expect(text).not.toContain(apiKey);
    expect(text).not.toContain(record!.id);
    expect(text).not.toContain(record!.keyDigest);
  });

  it.each(['info', 'warn'])(
    'at %s, the deliberate 503 of checkout is no error: at info, without a stack',
    async (level) => {
      const { logger, lines } = capturingLogger(level);
      t = buildTestApp({ logger });
      const res = await request(t.app).post('/v1/checkout').send({});
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('payment_not_configured');
      expect(lines.filter((l) => (l.level as number) >= 40)).toEqual([]);
      expect(JSON.stringify(lines)).not.toMatch(/"stack"|"err"/);
      if (level === 'info')
        expect(lines).toContainEqual(expect.objectContaining({ level: 30, res: { status: 503 } }));
    },
  );
});
