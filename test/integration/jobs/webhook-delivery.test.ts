import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { DELIVERY_JOB } from '../../../src/ports/webhook-store.js';
import { createAesGcmBox } from '../../../src/secrets/key-encryption.js';
import type { ResolveHost } from '../../../src/services/webhook-url-guard.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { buildTestApp, ManualClock, newServerKey, type TestApp } from '../../support/harness.js';
import { startReceiver, type TestReceiver } from '../../support/webhook-receiver.js';
import { evaluateNew, expectError, type Json, newKey, UUID } from '../../support/api.js';
import { validClaim } from '../../support/claims.js';

const SECOND = 1000;
const DEFAULT_SCHEDULE = [60, 300, 1800, 7200, 21600];

interface Setup {
  t: TestApp;
  key: string;
  receiver: TestReceiver;
  logs: Json[];
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(
  options: {
    retryDelays?: number[];
    timeoutMs?: number;
    allowPrivate?: boolean;
    resolve?: ResolveHost;
    store?: TestApp['store'];
    clock?: ManualClock;
    receiver?: TestReceiver;
    serverKey?: TestApp['serverKey'];
  } = {},
): Promise<Setup> {
  const receiver = options.receiver ?? (await startReceiver());
  if (!options.receiver) cleanups.push(() => receiver.close());
  const logs: Json[] = [];
  const t = buildTestApp({
    // Near real time: standardwebhooks' verify refuses timestamps more than 5 minutes off.
    clock: options.clock ?? new ManualClock(Date.now()),
    store: options.store,
    serverKey: options.serverKey,
    config: {
      allowPrivateWebhookUrls: options.allowPrivate ?? true,
      webhookRetryDelays: options.retryDelays ?? DEFAULT_SCHEDULE,
    },
    webhookDelivery: {
      resolve: options.resolve,
      timeoutMs: options.timeoutMs,
      // The middle of the jitter band: every retry lands exactly on its scheduled delay.
      random: () => 0.5,
    },
    logger: pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) }),
  });
  cleanups.push(() => t.close());
  const key = await newKey(t, 'pilot');
  return { t, key, receiver, logs };
}

async function register(
  s: Setup,
  url = s.receiver.url,
): Promise<Json & { id: string; secret: string }> {
  const res = await request(s.t.app)
    .post('/v1/webhooks/outbound')
    .set('X-API-Key', s.key)
    .send({ url, event: 'receipt.created' });
  expect(res.status).toBe(201);
  return res.body;
}

/** A new receipt for the setup's key, which emits a receipt.created event. */
const evaluate = async (s: Setup, claim = validClaim()) =>
  (await evaluateNew(s.t, s.key, claim)) as Json & { receipt: Json };

async function deliveries(s: Setup, id: string) {
  const res = await request(s.t.app)
    .get(`/v1/webhooks/outbound/${id}/deliveries`)
    .set('X-API-Key', s.key);
  expect(res.status).toBe(200);
  return res.body as {
    receiver: Json;
    deliveries: (Json & { attempts: Json[] })[];
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('receipt.created deliveries', () => {
  it('POST the receipt exactly as evaluate returned it, with both signatures', async () => {
    const s = await setup();
    const hook = await register(s);
    const evaluated = await evaluate(s);
    // Nothing is sent by evaluate itself: the delivery waits in the queue for a worker.
    expect(s.receiver.received).toHaveLength(0);
    expect(await s.t.jobs.runDue()).toBe(1);

    expect(s.receiver.received).toHaveLength(1);
    const [got] = s.receiver.received;
    expect(got).toMatchObject({ method: 'POST', path: '/hook' });
    expect(got!.body).toBe(JSON.stringify(evaluated.receipt));
    expect(JSON.parse(got!.body)).toEqual(evaluated.receipt);
    const h = got!.headers;
    expect(h['content-type']).toBe('application/json');
    expect(h['x-svc-event']).toBe('receipt.created');
    expect(h['x-svc-delivery']).toMatch(UUID);
    expect(h['webhook-id']).toBe(h['x-svc-delivery']);
    expect(h['webhook-timestamp']).toBe(String(Math.floor(s.t.clock.now() / 1000)));

    // X-Svc-Signature-256: HMAC-SHA256 of the raw body under the secret as shown.
    const expected = `sha256=${createHmac('sha256', hook.secret).update(got!.body).digest('hex')}`;
    const header = String(h['x-svc-signature-256']);
    expect(header.length).toBe(expected.length);
    expect(timingSafeEqual(Buffer.from(header), Buffer.from(expected))).toBe(true);

    // Standard Webhooks, checked with the reference library and by hand.
    const standard = {
      'webhook-id': String(h['webhook-id']),
      'webhook-timestamp': String(h['webhook-timestamp']),
      'webhook-signature': String(h['webhook-signature']),
    };
    expect(new Webhook(hook.secret).verify(got!.body, standard)).toEqual(evaluated.receipt);
    expect(() => new Webhook(hook.secret).verify(`${got!.body} `, standard)).toThrow();
    const keyBytes = Buffer.from(hook.secret.slice('whsec_'.length), 'base64');
    const signed = `${standard['webhook-id']}.${standard['webhook-timestamp']}.${got!.body}`;
    expect(standard['webhook-signature']).toBe(
      `v1,${createHmac('sha256', keyBytes).update(signed).digest('base64')}`,
    );

    const listed = await deliveries(s, hook.id);
    expect(listed.deliveries).toEqual([
      {
        id: h['x-svc-delivery'],
        receipt_id: evaluated.receipt.receipt_id,
        event: 'receipt.created',
        status: 'delivered',
        created_at: evaluated.receipt.issued_at,
        finished_at: iso(s.t.clock.now()),
        attempts: [
          {
            attempt: 1,
            at: iso(s.t.clock.now()),
            status_code: 200,
            error: null,
            duration_ms: expect.any(Number),
            next_attempt_at: null,
          },
        ],
      },
    ]);
    expect(await s.t.jobs.stats()).toEqual({ pending: 0, failed: 0, oldestPendingAgeMs: null });
  });

  it('emit nothing for simulate, idempotent replays or receipts older than the receiver', async () => {
    const s = await setup();
    const claim = validClaim();
    await evaluate(s, claim);
    const hook = await register(s);
    const simulated = await request(s.t.app)
      .post('/v1/simulate')
      .set('X-API-Key', s.key)
      .send(validClaim());
    expect(simulated.status).toBe(200);
    const replay = await request(s.t.app).post('/v1/evaluate').set('X-API-Key', s.key).send(claim);
    expect(replay.headers['idempotent-replay']).toBe('true');

    expect(await s.t.jobs.stats()).toMatchObject({ pending: 0 });
    expect(await s.t.jobs.runDue()).toBe(0);
    expect(s.receiver.received).toHaveLength(0);
    expect((await deliveries(s, hook.id)).deliveries).toEqual([]);

    const later = await evaluate(s);
    expect(await s.t.jobs.runDue()).toBe(1);
    expect(s.receiver.received.map((r) => JSON.parse(r.body).receipt_id)).toEqual([
      later.receipt.receipt_id,
    ]);
  });

  it('deliver one receipt to every active receiver, each with its own delivery id', async () => {
    const s = await setup();
    const other = await startReceiver();
    cleanups.push(() => other.close());
    const a = await register(s);
    const b = await register(s, other.url);
    await evaluate(s);
    expect(await s.t.jobs.runDue()).toBe(2);
    const [ga, gb] = [s.receiver.received[0]!, other.received[0]!];
    expect(ga.body).toBe(gb.body);
    expect(ga.headers['webhook-id']).not.toBe(gb.headers['webhook-id']);
    // Each is signed with its own receiver's secret.
    const sig = (secret: string, body: string) =>
      `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    expect(ga.headers['x-svc-signature-256']).toBe(sig(a.secret, ga.body));
    expect(gb.headers['x-svc-signature-256']).toBe(sig(b.secret, gb.body));
  });

  it('retry after a 500 on the schedule and deliver, with the same webhook-id', async () => {
    const s = await setup();
    s.receiver.respondWith((n) => (n === 0 ? 500 : 200));
    const hook = await register(s);
    await evaluate(s);
    const first = s.t.clock.now();
    expect(await s.t.jobs.runDue()).toBe(1);

    let listed = await deliveries(s, hook.id);
    expect(listed.deliveries[0]).toMatchObject({
      status: 'pending',
      finished_at: null,
      attempts: [
        {
          attempt: 1,
          status_code: 500,
          error: 'HTTP 500',
          next_attempt_at: iso(first + 60 * SECOND),
        },
      ],
    });
    s.t.clock.advance(60 * SECOND - 1);
    expect(await s.t.jobs.runDue()).toBe(0);
    s.t.clock.advance(1);
    expect(await s.t.jobs.runDue()).toBe(1);

    const [one, two] = s.receiver.received;
    expect(two!.headers['webhook-id']).toBe(one!.headers['webhook-id']);
    expect(two!.headers['x-svc-delivery']).toBe(one!.headers['x-svc-delivery']);
    expect(two!.body).toBe(one!.body);
    listed = await deliveries(s, hook.id);
    expect(listed.deliveries[0]).toMatchObject({ status: 'delivered' });
    expect(listed.deliveries[0]!.attempts.map((a) => [a.status_code, a.error])).toEqual([
      [500, 'HTTP 500'],
      [200, null],
    ]);

    // One structured line for the failed attempt, none for the successful one.
    const failures = s.logs.filter((l) => l.msg === 'webhook delivery attempt failed');
    expect(failures).toEqual([
      expect.objectContaining({
        level: 40,
        delivery_id: one!.headers['webhook-id'],
        receiver_id: hook.id,
        attempt: 1,
        status_code: 500,
        error: 'HTTP 500',
        next_attempt_at: iso(first + 60 * SECOND),
      }),
    ]);
    expect(JSON.stringify(s.logs)).not.toContain(hook.secret);
  });

  it('disable the receiver on 410 and send it nothing more', async () => {
    const s = await setup();
    s.receiver.respondWith(() => 410);
    const hook = await register(s);
    await evaluate(s);
    expect(await s.t.jobs.runDue()).toBe(1);
    const listed = await deliveries(s, hook.id);
    expect(listed.receiver).toMatchObject({
      status: 'disabled',
      disabled_reason: 'receiver answered 410 Gone',
    });
    expect(listed.deliveries[0]).toMatchObject({
      status: 'failed',
      attempts: [{ status_code: 410, error: 'HTTP 410', next_attempt_at: null }],
    });

    await evaluate(s);
    s.t.clock.advance(24 * 3600 * SECOND);
    expect(await s.t.jobs.runDue()).toBe(0);
    expect(s.receiver.received).toHaveLength(1);
    const list = await request(s.t.app).get('/v1/webhooks/outbound').set('X-API-Key', s.key);
    expect(list.body.receivers).toEqual([
      expect.objectContaining({ id: hook.id, status: 'disabled' }),
    ]);
  });

  it('not follow a 302, and count it as a failed attempt', async () => {
    const s = await setup();
    s.receiver.respondWith((_n, req, res) => {
      if (req.path !== '/hook') return 200;
      res.writeHead(302, { Location: '/elsewhere' });
      return 302;
    });
    const hook = await register(s);
    await evaluate(s);
    expect(await s.t.jobs.runDue()).toBe(1);
    expect(s.receiver.received.map((r) => r.path)).toEqual(['/hook']);
    const [delivery] = (await deliveries(s, hook.id)).deliveries;
    expect(delivery).toMatchObject({
      status: 'pending',
      attempts: [
        {
          status_code: 302,
          error: 'redirect not followed (HTTP 302)',
          next_attempt_at: iso(s.t.clock.now() + 60 * SECOND),
        },
      ],
    });
  });

  it('mark a delivery to a receiver that never answers failed after the schedule', async () => {
    const s = await setup({ retryDelays: [60, 300], timeoutMs: 150 });
    s.receiver.respondWith(() => 'hang');
    const hook = await register(s);
    await evaluate(s);
    expect(await s.t.jobs.runDue()).toBe(1);
    s.t.clock.advance(60 * SECOND);
    expect(await s.t.jobs.runDue()).toBe(1);
    s.t.clock.advance(300 * SECOND);
    expect(await s.t.jobs.runDue()).toBe(1);
    s.t.clock.advance(30 * 24 * 3600 * SECOND);
    expect(await s.t.jobs.runDue()).toBe(0);

    expect(s.receiver.received).toHaveLength(3);
    const [delivery] = (await deliveries(s, hook.id)).deliveries;
    expect(delivery!.status).toBe('failed');
    expect(
      delivery!.attempts.map((a) => [a.status_code, a.error, a.next_attempt_at === null]),
    ).toEqual([
      [null, 'timed out after 150 ms', false],
      [null, 'timed out after 150 ms', false],
      [null, 'timed out after 150 ms', true],
    ]);
    expect(await s.t.jobs.stats()).toEqual({ pending: 0, failed: 1, oldestPendingAgeMs: null });
    expect(s.logs.filter((l) => l.level === 40).map((l) => l.msg)).toEqual([
      'webhook delivery attempt failed',
      'webhook delivery attempt failed',
      'webhook delivery failed; giving up',
    ]);
  });

  it('give up on an always-failing receiver after the default schedule, with metrics', async () => {
    const s = await setup();
    s.receiver.respondWith(() => 503);
    const hook = await register(s);
    await evaluate(s);
    s.t.clock.advance(30 * SECOND);
    const before = await request(s.t.app).get('/v1/metrics');
    expect(before.text).toMatch(/^svc_webhook_queue_depth 1$/m);
    expect(before.text).toMatch(/^svc_webhook_oldest_pending_age_seconds 30$/m);

    expect(await s.t.jobs.runDue()).toBe(1);
    for (const delay of DEFAULT_SCHEDULE) {
      s.t.clock.advance(delay * SECOND - 1);
      expect(await s.t.jobs.runDue()).toBe(0);
      s.t.clock.advance(1);
      expect(await s.t.jobs.runDue()).toBe(1);
    }
    expect(s.receiver.received).toHaveLength(6);
    const [delivery] = (await deliveries(s, hook.id)).deliveries;
    expect(delivery!.status).toBe('failed');
    expect(delivery!.attempts).toHaveLength(6);

    const after = await request(s.t.app).get('/v1/metrics');
    expect(after.text).toMatch(/^svc_webhook_delivery_attempts_total\{outcome="retrying"\} 5$/m);
    expect(after.text).toMatch(/^svc_webhook_delivery_attempts_total\{outcome="failed"\} 1$/m);
    expect(after.text).toMatch(/^svc_webhook_queue_depth 0$/m);
  });

  it('still deliver a receipt written just before a crash, after a restart', async () => {
    const root = mkdtempSync(join(tmpdir(), 'svc-webhook-crash-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const file = join(root, 'ledger.db');
    const serverKey = newServerKey();
    const clock = new ManualClock(Date.now());
    const first = await setup({ store: openSqliteStore(file), serverKey, clock });
    const hook = await register(first);
    const evaluated = await evaluate(first);
    // The process dies before any worker ran: only the ledger file remains.
    await first.t.close();

    const second = await setup({
      store: openSqliteStore(file),
      serverKey,
      clock,
      receiver: first.receiver,
    });
    second.t.jobs.start();
    const deadline = Date.now() + 5000;
    while (first.receiver.received.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await second.t.jobs.stop();
    expect(first.receiver.received).toHaveLength(1);
    const got = first.receiver.received[0]!;
    expect(got.body).toBe(JSON.stringify(evaluated.receipt));
    expect(got.headers['x-svc-signature-256']).toBe(
      `sha256=${createHmac('sha256', hook.secret).update(got.body).digest('hex')}`,
    );
  });

  it('stop sending to a receiver once it is deleted', async () => {
    const s = await setup();
    const hook = await register(s);
    await evaluate(s);
    const del = await request(s.t.app)
      .delete(`/v1/webhooks/outbound/${hook.id}`)
      .set('X-API-Key', s.key);
    expect(del.status).toBe(204);
    expect(await s.t.jobs.runDue()).toBe(1);
    expect(s.receiver.received).toHaveLength(0);
    expect(await s.t.jobs.stats()).toEqual({ pending: 0, failed: 0, oldestPendingAgeMs: null });
  });
});

describe('delivery edge cases', () => {
  it('send nothing when a job runs again for a delivery already settled', async () => {
    const s = await setup();
    const hook = await register(s);
    await evaluate(s);
    expect(await s.t.jobs.runDue()).toBe(1);
    const [delivery] = (await deliveries(s, hook.id)).deliveries;
    // What a worker that died after sending but before finishing its job would leave behind.
    await s.t.jobs.enqueue(DELIVERY_JOB, { delivery_id: delivery!.id as string });
    expect(await s.t.jobs.runDue()).toBe(1);
    expect(s.receiver.received).toHaveLength(1);
    expect((await deliveries(s, hook.id)).deliveries[0]!.attempts).toHaveLength(1);
  });

  it('record a failed attempt when the receiver secret cannot be opened', async () => {
    const s = await setup();
    const hook = await register(s);
    await evaluate(s);
    // The same data under another key-encryption secret (an operator changed it).
    const { jobs } = buildTestApp({
      store: s.t.store,
      serverKey: s.t.serverKey,
      box: createAesGcmBox(Buffer.alloc(32, 9)),
      clock: s.t.clock,
      config: { allowPrivateWebhookUrls: true },
      webhookDelivery: { random: () => 0.5 },
    });
    // Only its job queue stops here: the store is s.t's, closed with it.
    cleanups.push(() => jobs.stop());
    expect(await jobs.runDue()).toBe(1);
    expect(s.receiver.received).toHaveLength(0);
    expect((await deliveries(s, hook.id)).deliveries[0]).toMatchObject({
      status: 'pending',
      attempts: [{ status_code: null, error: 'the receiver secret cannot be opened' }],
    });
  });

  it('bound a hanging DNS answer by the attempt timeout', async () => {
    let hang = false;
    const resolve: ResolveHost = (host) =>
      hang
        ? new Promise(() => undefined)
        : Promise.resolve(host ? [{ address: '93.184.216.34', family: 4 }] : []);
    const s = await setup({ allowPrivate: false, resolve, timeoutMs: 100 });
    const hook = await register(s, 'https://slow-dns.example.test/hook');
    hang = true;
    await evaluate(s);
    expect(await s.t.jobs.runDue()).toBe(1);
    expect((await deliveries(s, hook.id)).deliveries[0]!.attempts[0]).toMatchObject({
      status_code: null,
      error: 'refused: url: resolving the host timed out after 100 ms',
    });
  });
});

describe('the SSRF guard at delivery time', () => {
  it('refuses a host that resolves to a private address after registration', async () => {
    let answer = '93.184.216.34';
    const resolve: ResolveHost = async (host) =>
      host === 'hooks.example.test' ? [{ address: answer, family: 4 }] : [];
    const s = await setup({ allowPrivate: false, resolve });
    const hook = await register(s, `https://hooks.example.test:${s.receiver.port}/hook`);
    answer = '127.0.0.1';
    await evaluate(s);
    expect(await s.t.jobs.runDue()).toBe(1);
    expect(s.receiver.received).toHaveLength(0);
    const [delivery] = (await deliveries(s, hook.id)).deliveries;
    expect(delivery).toMatchObject({
      status: 'pending',
      attempts: [
        {
          status_code: null,
          error: 'refused: url: hooks.example.test is refused: 127.0.0.1 is a loopback address',
        },
      ],
    });
  });

  // A public name whose DNS answer turns, after registration, into an IPv6 form carrying a
  // refused IPv4 address: the attempt is refused before any connection is made.
  const metadataForms = [
    ['::a9fe:a9fe', 'an IPv4-compatible'],
    ['64:ff9b::a9fe:a9fe', 'a NAT64'],
    ['64:ff9b:1:a9fe:a9:fe00::', 'a NAT64'],
    ['2002:a9fe:a9fe::1', 'a 6to4'],
    ['2001:0:4136:e378:8000:63bf:5601:5601', 'a Teredo'],
  ];
  const privateForms = [
    ['::7f00:1', 'an IPv4-compatible address embedding 127.0.0.1, a loopback address'],
    ['::a00:7', 'an IPv4-compatible address embedding 10.0.0.7, a private address'],
    ['64:ff9b::7f00:1', 'a NAT64 address embedding 127.0.0.1, a loopback address'],
    ['2002:a00:7::', 'a 6to4 address embedding 10.0.0.7, a private address'],
    [
      '2001:0:4136:e378:8000:63bf:80ff:fffe',
      'a Teredo address embedding 127.0.0.1, a loopback address',
    ],
  ];

  async function attemptsAfterRebinding(allowPrivate: boolean, address: string) {
    let answer = { address: '93.184.216.34', family: 4 as 4 | 6 };
    const resolve: ResolveHost = async (host) => (host === 'hooks.example.test' ? [answer] : []);
    const s = await setup({ allowPrivate, resolve });
    const hook = await register(s, `https://hooks.example.test:${s.receiver.port}/hook`);
    answer = { address, family: 6 };
    await evaluate(s);
    expect(await s.t.jobs.runDue()).toBe(1);
    expect(s.receiver.received).toHaveLength(0);
    const [delivery] = (await deliveries(s, hook.id)).deliveries;
    expect(delivery!.status).toBe('pending');
    return delivery!.attempts.map((a) => [a.status_code, a.error]);
  }

  it.each(metadataForms)(
    'refuses a host that now resolves to %s (169.254.169.254), private URLs allowed or not',
    async (address, form) => {
      for (const allowPrivate of [false, true]) {
        expect(await attemptsAfterRebinding(allowPrivate, address!)).toEqual([
          [
            null,
            `refused: url: hooks.example.test is refused: ${address} is ${form} address ` +
              'embedding 169.254.169.254, a cloud metadata address',
          ],
        ]);
      }
    },
  );

  // ::/8 forms outside global unicast (2000::/3) that ipaddr.js does not name as special.
  it.each(['::1:7f00:1', '1::7f00:1', '400::1'])(
    'refuses a host that now resolves to %s, outside global unicast, when private URLs are refused',
    async (address) => {
      expect(await attemptsAfterRebinding(false, address)).toEqual([
        [
          null,
          `refused: url: hooks.example.test is refused: ${address} is not a global unicast address (outside 2000::/3)`,
        ],
      ]);
    },
  );

  it.each(privateForms)(
    'refuses a host that now resolves to %s when private URLs are refused',
    async (address, reason) => {
      expect(await attemptsAfterRebinding(false, address!)).toEqual([
        [null, `refused: url: hooks.example.test is refused: ${address} is ${reason}`],
      ]);
    },
  );

  it('connects to the address it checked, not to a second DNS answer', async () => {
    const calls: string[] = [];
    const resolve: ResolveHost = async (host) => {
      calls.push(host);
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const s = await setup({ resolve });
    // receiver.invalid cannot resolve through the system's DNS: the send reaching the local
    // receiver shows the connection went to the checked address.
    await register(s, `http://receiver.invalid:${s.receiver.port}/hook`);
    await evaluate(s);
    expect(await s.t.jobs.runDue()).toBe(1);
    expect(s.receiver.received).toHaveLength(1);
    expect(s.receiver.received[0]!.headers.host).toBe(`receiver.invalid:${s.receiver.port}`);
    expect(calls).toEqual(['receiver.invalid', 'receiver.invalid']);
  });
});

describe('GET /health?deep=true', () => {
  it('reports a failing job queue as down with 503', async () => {
    const s = await setup();
    const stats = s.t.jobs.stats.bind(s.t.jobs);
    s.t.jobs.stats = () => Promise.reject(new Error('queue unreachable'));
    const res = await request(s.t.app).get('/health?deep=true');
    expect(res.status).toBe(503);
    expect(res.body.checks).toMatchObject({
      store: { ok: true },
      jobs: { ok: false, error: 'queue unreachable' },
    });
    s.t.jobs.stats = stats;
    expectError(
      await request(s.t.app)
        .get('/v1/webhooks/outbound/wh_nope/deliveries')
        .set('X-API-Key', s.key),
      404,
      'not_found',
    );
  });
});
