import { afterEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { buildTestApp, ManualClock, type TestApp } from '../../support/harness.js';
import { startReceiver, type TestReceiver } from '../../support/webhook-receiver.js';
import { newKey } from '../../support/api.js';
import { validClaim } from '../../support/claims.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tenants(webhookScope: 'all' | 'owner') {
  const t: TestApp = buildTestApp({
    store: openSqliteStore(':memory:', { webhookScope }),
    clock: new ManualClock(Date.now()),
    config: { allowPrivateWebhookUrls: true, publicReads: webhookScope === 'all' },
  });
  cleanups.push(() => t.close());
  const receivers: TestReceiver[] = [];
  const keys: string[] = [];
  for (let i = 0; i < 2; i++) {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const key = await newKey(t, 'pilot');
    const res = await request(t.app)
      .post('/v1/webhooks/outbound')
      .set('X-API-Key', key)
      .send({ url: receiver.url, event: 'receipt.created' });
    expect(res.status).toBe(201);
    receivers.push(receiver);
    keys.push(key);
  }
  const evaluate = async (key: string) => {
    const res = await request(t.app).post('/v1/evaluate').set('X-API-Key', key).send(validClaim());
    expect(res.status).toBe(200);
    return res.body.receipt.receipt_id as string;
  };
  return { t, receivers, keys, evaluate };
}

const receivedIds = (receiver: TestReceiver) =>
  receiver.received.map((d) => (JSON.parse(d.body) as { receipt_id: string }).receipt_id);

describe('outbound webhooks and tenancy', () => {
  it('with public reads, every receiver gets every receipt', async () => {
    const { t, receivers, keys, evaluate } = await tenants('all');
    const a = await evaluate(keys[0]!);
    const b = await evaluate(keys[1]!);
    await t.jobs.runDue();
    for (const receiver of receivers) expect(receivedIds(receiver).sort()).toEqual([a, b].sort());
  });

  it("with private reads, a receiver gets only its own account's receipts", async () => {
    const { t, receivers, keys, evaluate } = await tenants('owner');
    const a = await evaluate(keys[0]!);
    const b = await evaluate(keys[1]!);
    await t.jobs.runDue();
    expect(receivedIds(receivers[0]!)).toEqual([a]);
    expect(receivedIds(receivers[1]!)).toEqual([b]);
  });

  it('revoking the account disables its receivers: nothing more reaches them', async () => {
    const { t, receivers, keys, evaluate } = await tenants('all');
    const revoked = await request(t.app).delete('/v1/account').set('X-API-Key', keys[0]!);
    expect(revoked.status).toBe(200);
    const b = await evaluate(keys[1]!);
    await t.jobs.runDue();
    expect(receivedIds(receivers[0]!)).toEqual([]);
    expect(receivedIds(receivers[1]!)).toEqual([b]);
  });
});
