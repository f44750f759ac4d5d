import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createAesGcmBox } from '../../../src/secrets/key-encryption.js';
import type { ResolveHost } from '../../../src/services/webhook-url-guard.js';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import { expectError, newKey, uniqueEmail } from '../../support/api.js';

const PATH = '/v1/webhooks/outbound';
const URL_OK = 'https://hooks.example.com/svc';
const DNS: Record<string, string[]> = {
  'hooks.example.com': ['93.184.216.34'],
  'sneaky.example.com': ['93.184.216.34', '192.168.0.10'],
};
const resolve: ResolveHost = async (host) =>
  (DNS[host] ?? []).map((address) => ({ address, family: 4 }));

let t: TestApp;
let key: string;
let email: string;

beforeEach(async () => {
  t = buildTestApp({ webhookDelivery: { resolve } });
  email = uniqueEmail('hooks');
  key = await newKey(t, 'pilot', email);
});
afterEach(() => t.close());

const post = (body: unknown, k: string | null = key) => {
  const req = request(t.app).post(PATH);
  if (k) req.set('X-API-Key', k);
  return req.send(body as object);
};

describe('POST /v1/webhooks/outbound', () => {
  it('registers a receiver and shows its secret once, stored sealed', async () => {
    const res = await post({ url: URL_OK, event: 'receipt.created' });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['created_at', 'event', 'id', 'secret', 'url']);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^wh_[0-9a-f-]{36}$/),
      url: URL_OK,
      event: 'receipt.created',
      created_at: new Date(t.clock.now()).toISOString(),
    });
    const secret = res.body.secret as string;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);

    const owner = (await t.store.apiKeys.findActiveByEmail(email))!.id;
    const stored = await t.store.webhooks.getReceiver(owner, res.body.id);
    expect(stored).toMatchObject({ owner, url: URL_OK, status: 'active' });
    expect(stored!.secretSealed).not.toContain(secret.slice(6, 20));
    // The harness's box: the sealed secret opens only under its own receiver's context.
    const box = createAesGcmBox(Buffer.alloc(32, 7));
    expect(box.open(stored!.secretSealed, `webhook:${res.body.id}`)).toBe(secret);
    expect(() => box.open(stored!.secretSealed, 'webhook:wh_other')).toThrow();

    const second = await post({ url: URL_OK, event: 'receipt.created' });
    expect(second.body.secret).not.toBe(secret);
    const list = await request(t.app).get(PATH).set('X-API-Key', key);
    expect(JSON.stringify(list.body)).not.toContain(secret);
    expect(JSON.stringify(list.body)).not.toContain('secret');
  });

  it('needs an API key', async () => {
    expectError(await post({ url: URL_OK, event: 'receipt.created' }, null), 401, 'unauthorized');
    expectError(await request(t.app).get(PATH), 401, 'unauthorized');
    expectError(await request(t.app).delete(`${PATH}/wh_x`), 401, 'unauthorized');
  });

  it.each([
    [{ url: URL_OK, event: 'receipt.updated' }, 'event: must be "receipt.created", the only event'],
    [{ url: URL_OK }, 'event:'],
    [{ event: 'receipt.created' }, 'url:'],
    [{ url: URL_OK, event: 'receipt.created', extra: 1 }, 'extra'],
    [{ url: 42, event: 'receipt.created' }, 'url:'],
    [{ url: `https://hooks.example.com/${'a'.repeat(2048)}`, event: 'receipt.created' }, 'url:'],
  ])('refuses %j with 400 validation_failed', async (body, message) => {
    const res = await post(body);
    expect(expectError(res, 400, 'validation_failed')).toContain(message);
  });

  it.each([
    ['http://hooks.example.com/svc', 'url: must use https'],
    ['https://127.0.0.1/', '127.0.0.1 is a loopback address'],
    ['https://2130706433/', '127.0.0.1 is a loopback address'],
    ['https://0x7f.1/', '127.0.0.1 is a loopback address'],
    ['https://[::ffff:127.0.0.1]/', '127.0.0.1 is a loopback address'],
    ['https://[::1]/', '::1 is a loopback address'],
    ['https://[::1:127.0.0.1]/', '::1:7f00:1 is not a global unicast address (outside 2000::/3)'],
    ['https://[1::127.0.0.1]/', '1::7f00:1 is not a global unicast address (outside 2000::/3)'],
    [
      'https://[2002:808:808::1]/',
      '2002:808:808::1 is a special-purpose (6to4, 2002::/16) address',
    ],
    ['https://10.1.2.3/', '10.1.2.3 is a private address'],
    ['https://192.168.0.1/', '192.168.0.1 is a private address'],
    ['https://169.254.169.254/latest/', '169.254.169.254 is a cloud metadata address'],
    ['https://[fd00:ec2::254]/', 'fd00:ec2::254 is a cloud metadata address'],
    ['https://[fe80::1]/', 'fe80::1 is a link-local address'],
    ['https://[fc00::5]/', 'fc00::5 is a unique-local address'],
    ['https://100.64.1.1/', '100.64.1.1 is a carrier-grade NAT address'],
    ['https://224.0.0.251/', '224.0.0.251 is a multicast address'],
    ['https://0.0.0.0/', '0.0.0.0 is an unspecified address'],
    ['https://sneaky.example.com/', '192.168.0.10 is a private address'],
    ['https://unknown.example.com/', 'url: unknown.example.com does not resolve'],
    ['https://u:p@hooks.example.com/', 'url: must not contain credentials'],
  ])('refuses %s at registration', async (url, reason) => {
    const res = await post({ url, event: 'receipt.created' });
    expect(expectError(res, 400, 'validation_failed')).toContain(reason);
    expect((await request(t.app).get(PATH).set('X-API-Key', key)).body.receivers).toEqual([]);
  });

  // IPv6 forms that carry an IPv4 address are judged by the address they carry.
  const EMBEDDED_METADATA = [
    ['[::a9fe:a9fe]', '::a9fe:a9fe is an IPv4-compatible address'],
    ['[::ffff:0:a9fe:a9fe]', '::ffff:0:a9fe:a9fe is an IPv4-translated address'],
    ['[64:ff9b::a9fe:a9fe]', '64:ff9b::a9fe:a9fe is a NAT64 address'],
    ['[64:ff9b:1:a9fe:a9:fe00::]', '64:ff9b:1:a9fe:a9:fe00:: is a NAT64 address'],
    ['[2002:a9fe:a9fe::1]', '2002:a9fe:a9fe::1 is a 6to4 address'],
    ['[2001:0:4136:e378:8000:63bf:5601:5601]', 'is a Teredo address'],
  ];
  const EMBEDDED_PRIVATE = [
    ['[::127.0.0.1]', '::7f00:1 is an IPv4-compatible address embedding 127.0.0.1, a loopback'],
    ['[::a00:7]', '::a00:7 is an IPv4-compatible address embedding 10.0.0.7, a private address'],
    ['[::ffff:0:a00:7]', 'is an IPv4-translated address embedding 10.0.0.7, a private address'],
    ['[64:ff9b::7f00:1]', '64:ff9b::7f00:1 is a NAT64 address embedding 127.0.0.1, a loopback'],
    ['[64:ff9b:1:a00:0:700::]', 'is a NAT64 address embedding 10.0.0.7, a private address'],
    ['[2002:a00:7::]', '2002:a00:7:: is a 6to4 address embedding 10.0.0.7, a private address'],
    ['[2001:0:4136:e378:8000:63bf:80ff:fffe]', 'a Teredo address embedding 127.0.0.1, a loopback'],
  ];
  const EMBEDDED_PUBLIC = [
    '[::808:808]',
    '[64:ff9b::808:808]',
    '[64:ff9b:1:808:8:800::]',
    '[2002:808:808::1]',
    '[2001:0:4136:e378:8000:63bf:f7f7:f7f7]',
  ];

  it.each([
    ...EMBEDDED_METADATA.map(([host, reason]) => [
      host,
      `${reason} embedding 169.254.169.254, a cloud metadata address`,
    ]),
    ...EMBEDDED_PRIVATE,
  ])('refuses https://%s/ at registration by the IPv4 address it embeds', async (host, reason) => {
    const res = await post({ url: `https://${host}/hook`, event: 'receipt.created' });
    const message = expectError(res, 400, 'validation_failed');
    expect(message).toMatch(/^url: .+ is refused: /);
    expect(message).toContain(reason);
    expect((await request(t.app).get(PATH).set('X-API-Key', key)).body.receivers).toEqual([]);
  });

  it('refuses metadata addresses in embedding IPv6 forms even when private URLs are allowed', async () => {
    const lenient = buildTestApp({
      config: { allowPrivateWebhookUrls: true },
      webhookDelivery: { resolve },
    });
    try {
      const own = await newKey(lenient, 'pilot');
      for (const [host, reason] of EMBEDDED_METADATA) {
        const res = await request(lenient.app)
          .post(PATH)
          .set('X-API-Key', own)
          .send({ url: `http://${host!}/latest/meta-data/`, event: 'receipt.created' });
        expect(expectError(res, 400, 'validation_failed')).toContain(
          `${reason!} embedding 169.254.169.254, a cloud metadata address`,
        );
      }
      // Private and loopback ones are allowed there, as their IPv4 addresses are.
      for (const [host] of EMBEDDED_PRIVATE) {
        const res = await request(lenient.app)
          .post(PATH)
          .set('X-API-Key', own)
          .send({ url: `http://${host!}:8080/hook`, event: 'receipt.created' });
        expect({ host, status: res.status }).toEqual({ host, status: 201 });
      }
      const listed = await request(lenient.app).get(PATH).set('X-API-Key', own);
      expect(listed.body.receivers).toHaveLength(EMBEDDED_PRIVATE.length);
    } finally {
      await lenient.close();
    }
  });

  it('refuses embedding IPv6 forms even when their IPv4 address is public: none is global unicast outside the special-purpose registry', async () => {
    for (const host of EMBEDDED_PUBLIC) {
      const res = await post({ url: `https://${host}/hook`, event: 'receipt.created' });
      expect({ host, status: res.status }).toEqual({ host, status: 400 });
      expect(res.body.error).toMatch(/not a global unicast address|a special-purpose/);
    }
    expect((await request(t.app).get(PATH).set('X-API-Key', key)).body.receivers).toEqual([]);
  });

  it('allows at most 20 receivers per key', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await post({ url: `${URL_OK}/${i}`, event: 'receipt.created' });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const refused = await post({ url: URL_OK, event: 'receipt.created' });
    expect(expectError(refused, 409, 'receiver_limit')).toBe(
      'An API key may register at most 20 webhook receivers; delete one first',
    );
    // Another key has its own allowance.
    const other = await newKey(t, 'pilot');
    expect((await post({ url: URL_OK, event: 'receipt.created' }, other)).status).toBe(201);
    // Deleting one frees a place.
    await request(t.app).delete(`${PATH}/${ids[0]}`).set('X-API-Key', key).expect(204);
    expect((await post({ url: URL_OK, event: 'receipt.created' })).status).toBe(201);
    const list = await request(t.app).get(PATH).set('X-API-Key', key);
    expect(list.body.receivers).toHaveLength(20);
  });
});

describe('listing and removing receivers', () => {
  it('lists only the caller’s receivers, oldest first, without secrets', async () => {
    const a = (await post({ url: URL_OK, event: 'receipt.created' })).body;
    t.clock.advance(1000);
    const b = (await post({ url: `${URL_OK}/b`, event: 'receipt.created' })).body;
    const other = await newKey(t, 'pilot');
    await post({ url: `${URL_OK}/theirs`, event: 'receipt.created' }, other);

    const res = await request(t.app).get(PATH).set('X-API-Key', key);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      receivers: [a, b].map((r) => ({
        id: r.id,
        url: r.url,
        event: 'receipt.created',
        status: 'active',
        created_at: r.created_at,
        disabled_at: null,
        disabled_reason: null,
      })),
    });
  });

  it('answers 404 for another key’s receiver, to list deliveries or delete', async () => {
    const mine = (await post({ url: URL_OK, event: 'receipt.created' })).body;
    const other = await newKey(t, 'pilot');
    const theirs = (await post({ url: URL_OK, event: 'receipt.created' }, other)).body;

    expectError(
      await request(t.app).delete(`${PATH}/${theirs.id}`).set('X-API-Key', key),
      404,
      'not_found',
    );
    expectError(
      await request(t.app).get(`${PATH}/${theirs.id}/deliveries`).set('X-API-Key', key),
      404,
      'not_found',
    );
    // Exactly like an id that does not exist.
    const missing = await request(t.app).delete(`${PATH}/wh_missing`).set('X-API-Key', key);
    expectError(missing, 404, 'not_found');
    const listed = await request(t.app).get(PATH).set('X-API-Key', other);
    expect(listed.body.receivers.map((r: { id: string }) => r.id)).toEqual([theirs.id]);

    const del = await request(t.app).delete(`${PATH}/${mine.id}`).set('X-API-Key', key);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expectError(
      await request(t.app).delete(`${PATH}/${mine.id}`).set('X-API-Key', key),
      404,
      'not_found',
    );
    expect((await request(t.app).get(PATH).set('X-API-Key', key)).body.receivers).toEqual([]);
  });

  it('validates the deliveries query', async () => {
    const mine = (await post({ url: URL_OK, event: 'receipt.created' })).body;
    const res = await request(t.app)
      .get(`${PATH}/${mine.id}/deliveries`)
      .query({ limit: 0 })
      .set('X-API-Key', key);
    expectError(res, 400, 'validation_failed');
    const ok = await request(t.app).get(`${PATH}/${mine.id}/deliveries`).set('X-API-Key', key);
    expect(ok.status).toBe(200);
    expect(ok.body.deliveries).toEqual([]);
  });

  it('are described in the OpenAPI document', async () => {
    const doc = (await request(t.app).get('/v1/openapi.json')).body;
    expect(Object.keys(doc.paths[PATH]).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths[`${PATH}/{id}`])).toEqual(['delete']);
    expect(Object.keys(doc.paths[`${PATH}/{id}/deliveries`])).toEqual(['get']);
    expect(Object.keys(doc.paths[PATH].post.responses)).toEqual(
      expect.arrayContaining(['201', '400', '401', '409']),
    );
    expect(doc.paths[`${PATH}/{id}`].delete.responses['204']).toBeDefined();
  });
});
