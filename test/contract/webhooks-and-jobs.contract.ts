import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { Job, JobQueue, JobQueueOptions } from '../../src/ports/job-queue.js';
import type { Store } from '../../src/ports/store.js';
import { DELIVERY_JOB, type WebhookReceiver } from '../../src/ports/webhook-store.js';
import { ManualClock, newServerKey } from '../support/harness.js';
import { appendRequest, makeClaim, signClaim } from './ledger-fixtures.js';

const ISSUED_AT = '2026-03-01T12:00:00.000Z';
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

const waitFor = async (done: () => Promise<boolean>) => {
  for (const deadline = Date.now() + 5000; !(await done());) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

let ids = 0;
const receiver = (owner: string, overrides: Partial<WebhookReceiver> = {}): WebhookReceiver => ({
  id: `wh_contract_${++ids}`,
  owner,
  url: `https://hooks.example.com/${ids}`,
  event: 'receipt.created',
  secretSealed: `sealed-${ids}`,
  status: 'active',
  createdAt: new Date(Date.parse(ISSUED_AT) - 1000 + ids).toISOString(),
  disabledAt: null,
  disabledReason: null,
  ...overrides,
});

/**
 * What every store backend must do for outbound webhooks: receivers and their deliveries
 * (WebhookStore), deliveries enqueued by the ledger append, and the job queue's semantics.
 */
export function describeWebhookAndJobContract(name: string, open: () => Promise<Store>): void {
  describe(`${name} webhook store and job queue contract`, () => {
    const serverKey = newServerKey();
    let store: Store;
    let clock: ManualClock;
    const queues: JobQueue[] = [];
    const queue = (options: Partial<JobQueueOptions> = {}) => {
      const q = store.openJobQueue({ clock, retryDelaysMs: [MINUTE], ...options });
      queues.push(q);
      return q;
    };
    const append = async (claimId = `c-${++ids}`) => {
      const signed = signClaim(makeClaim({ claimId }), serverKey, { issuedAt: ISSUED_AT });
      const result = await store.ledger.append(appendRequest(signed));
      expect(result.status).toBe('appended');
      return result.entry.receipt;
    };

    beforeEach(async () => {
      store = await open();
      clock = new ManualClock(Date.parse(ISSUED_AT));
    });
    afterEach(async () => {
      for (const q of queues.splice(0)) await q.stop();
      await store.close();
    });

    describe('receivers', () => {
      it('are listed and found for their owner only, oldest first', async () => {
        const a = receiver('k1');
        const b = receiver('k1');
        const c = receiver('k2');
        for (const r of [b, a, c])
          expect(await store.webhooks.insertReceiver(r, 20)).toBe('created');
        expect(await store.webhooks.listReceivers('k1')).toEqual([a, b]);
        expect(await store.webhooks.getReceiver('k1', a.id)).toEqual(a);
        expect(await store.webhooks.getReceiver('k2', a.id)).toBeNull();
        expect(await store.webhooks.listReceivers('nobody')).toEqual([]);
      });

      it('are limited per owner; deleted ones do not count', async () => {
        const first = receiver('k1');
        expect(await store.webhooks.insertReceiver(first, 2)).toBe('created');
        expect(await store.webhooks.insertReceiver(receiver('k1'), 2)).toBe('created');
        expect(await store.webhooks.insertReceiver(receiver('k1'), 2)).toBe('limit');
        expect(await store.webhooks.insertReceiver(receiver('k2'), 2)).toBe('created');
        expect(await store.webhooks.deleteReceiver('k1', first.id, ISSUED_AT)).toBe(true);
        expect(await store.webhooks.insertReceiver(receiver('k1'), 2)).toBe('created');
        expect(await store.webhooks.listReceivers('k1')).toHaveLength(2);
      });

      it('are deleted only by their owner, once', async () => {
        const r = receiver('k1');
        await store.webhooks.insertReceiver(r, 20);
        expect(await store.webhooks.deleteReceiver('k2', r.id, ISSUED_AT)).toBe(false);
        expect(await store.webhooks.deleteReceiver('k1', r.id, ISSUED_AT)).toBe(true);
        expect(await store.webhooks.deleteReceiver('k1', r.id, ISSUED_AT)).toBe(false);
        expect(await store.webhooks.getReceiver('k1', r.id)).toBeNull();
      });

      it('stay listed when disabled, with the reason', async () => {
        const r = receiver('k1');
        await store.webhooks.insertReceiver(r, 20);
        await store.webhooks.disableReceiver(r.id, 'gone', '2026-03-02T00:00:00.000Z');
        expect(await store.webhooks.getReceiver('k1', r.id)).toEqual({
          ...r,
          status: 'disabled',
          disabledAt: '2026-03-02T00:00:00.000Z',
          disabledReason: 'gone',
        });
      });
    });

    describe('deliveries', () => {
      it('are written by the append, one per active receiver, each a due job', async () => {
        const active = receiver('k1');
        const disabled = receiver('k1');
        const deleted = receiver('k2');
        for (const r of [active, disabled, deleted]) await store.webhooks.insertReceiver(r, 20);
        await store.webhooks.disableReceiver(disabled.id, 'gone', ISSUED_AT);
        await store.webhooks.deleteReceiver('k2', deleted.id, ISSUED_AT);
        const late = receiver('k3');

        const receipt = await append();
        await store.webhooks.insertReceiver(late, 20);

        const q = queue();
        const jobs: Job[] = [];
        q.handle(DELIVERY_JOB, async (job) => void jobs.push(job));
        expect(await q.stats(DELIVERY_JOB)).toMatchObject({ pending: 1 });
        expect(await q.runDue()).toBe(1);
        const deliveryId = (jobs[0]!.payload as { delivery_id: string }).delivery_id;
        const work = await store.webhooks.deliveryWork(deliveryId);
        expect(work).toEqual({
          delivery: {
            id: deliveryId,
            receiverId: active.id,
            receiptId: receipt.receipt_id,
            event: 'receipt.created',
            status: 'pending',
            attempts: 0,
            createdAt: ISSUED_AT,
            finishedAt: null,
          },
          receiver: active,
          receiptJson: JSON.stringify(receipt),
        });
        for (const r of [disabled, late]) {
          expect(await store.webhooks.listDeliveries(r.id, 10)).toEqual([]);
        }
        expect(await store.webhooks.deliveryWork('missing')).toBeNull();
      });

      it('are not written when the append is refused', async () => {
        await store.webhooks.insertReceiver(receiver('k1'), 20);
        await append('same-claim');
        const again = signClaim(makeClaim({ claimId: 'same-claim' }), serverKey);
        expect((await store.ledger.append(appendRequest(again))).status).toBe('exists');
        expect(await queue().stats(DELIVERY_JOB)).toMatchObject({ pending: 1 });
      });

      it('record attempts in order and the resulting status', async () => {
        const r = receiver('k1');
        await store.webhooks.insertReceiver(r, 20);
        await append();
        const { delivery } = (await store.webhooks.listDeliveries(r.id, 10))[0]!;
        const first = {
          deliveryId: delivery.id,
          attempt: 1,
          at: '2026-03-01T12:00:01.000Z',
          statusCode: 500,
          error: 'HTTP 500',
          durationMs: 12,
          nextAttemptAt: '2026-03-01T12:01:01.000Z',
        };
        await store.webhooks.recordAttempt(first, 'pending');
        const second = {
          ...first,
          attempt: 2,
          at: '2026-03-01T12:01:01.000Z',
          statusCode: 200,
          error: null,
          nextAttemptAt: null,
        };
        await store.webhooks.recordAttempt(second, 'delivered');
        const [listed] = await store.webhooks.listDeliveries(r.id, 10);
        expect(listed).toEqual({
          delivery: expect.objectContaining({
            id: delivery.id,
            status: 'delivered',
            attempts: 2,
            finishedAt: second.at,
          }),
          attempts: [first, second],
        });
        // A settled delivery is not reopened by finishDelivery.
        await store.webhooks.finishDelivery(delivery.id, 'failed', '2026-03-03T00:00:00.000Z');
        expect((await store.webhooks.deliveryWork(delivery.id))!.delivery.status).toBe('delivered');
      });

      it('of a deleted receiver are closed, and their work has no receiver', async () => {
        const r = receiver('k1');
        await store.webhooks.insertReceiver(r, 20);
        await append();
        const { delivery } = (await store.webhooks.listDeliveries(r.id, 10))[0]!;
        await store.webhooks.deleteReceiver('k1', r.id, '2026-03-02T00:00:00.000Z');
        const work = await store.webhooks.deliveryWork(delivery.id);
        expect(work!.receiver).toBeNull();
        expect(work!.delivery).toMatchObject({
          status: 'failed',
          finishedAt: '2026-03-02T00:00:00.000Z',
        });
      });

      it('are listed newest first, up to the limit', async () => {
        const r = receiver('k1');
        await store.webhooks.insertReceiver(r, 20);
        const receipts = [];
        for (let i = 0; i < 3; i++) {
          receipts.push(
            await (async () => {
              const signed = signClaim(makeClaim({ claimId: `n-${++ids}` }), serverKey, {
                issuedAt: new Date(Date.parse(ISSUED_AT) + i * 1000).toISOString(),
              });
              const result = await store.ledger.append(appendRequest(signed));
              return result.entry.receipt.receipt_id;
            })(),
          );
        }
        const listed = await store.webhooks.listDeliveries(r.id, 2);
        expect(listed.map((d) => d.delivery.receiptId)).toEqual([receipts[2], receipts[1]]);
      });

      it('stay listed, with their attempts, after their jobs are purged', async () => {
        const r = receiver('k1');
        await store.webhooks.insertReceiver(r, 20);
        await append();
        const q = queue({ retentionMs: DAY });
        q.handle(DELIVERY_JOB, async (job) => {
          const deliveryId = (job.payload as { delivery_id: string }).delivery_id;
          await store.webhooks.recordAttempt(
            {
              deliveryId,
              attempt: 1,
              at: ISSUED_AT,
              statusCode: 200,
              error: null,
              durationMs: 5,
              nextAttemptAt: null,
            },
            'delivered',
          );
        });
        expect(await q.runDue()).toBe(1);
        const before = await store.webhooks.listDeliveries(r.id, 10);
        expect(before[0]!.delivery.status).toBe('delivered');
        clock.advance(DAY + 1);
        expect(await q.purgeFinished()).toBe(1);
        expect(await store.webhooks.listDeliveries(r.id, 10)).toEqual(before);
        expect(await store.webhooks.deliveryWork(before[0]!.delivery.id)).not.toBeNull();
      });
    });

    describe('job queue', () => {
      it('keeps a long last error to 1,000 characters, never half an emoji', async () => {
        const q = queue();
        // 'a' then emoji: a cut in UTF-16 units would end in a lone surrogate.
        q.handle('t', async () => ({ outcome: 'failed', error: `a${'🚀'.repeat(2000)}` }));
        const { id } = await q.enqueue('t', null);
        expect(await q.runDue()).toBe(1);
        const { lastError } = (await q.get(id))!;
        expect(lastError).toBe(`a${'🚀'.repeat(999)}`);
      });

      it('enqueues, dedupes, respects runAt, retries and fails', async () => {
        const q = queue();
        const runs: [string, number][] = [];
        q.handle('t', async (job) => {
          runs.push([job.id, job.attempt]);
          throw new Error('nope');
        });
        const a = await q.enqueue('t', { a: 1 }, { dedupeKey: 'k' });
        expect(await q.enqueue('t', { a: 2 }, { dedupeKey: 'k' })).toEqual({
          id: a.id,
          created: false,
        });
        const later = await q.enqueue('t', null, { runAt: clock.now() + 2 * MINUTE });
        expect(await q.runDue()).toBe(1);
        expect(await q.get(a.id)).toMatchObject({ state: 'pending', lastError: 'nope' });
        clock.advance(MINUTE);
        expect(await q.runDue()).toBe(1);
        expect(await q.get(a.id)).toMatchObject({ state: 'failed', attempts: 2 });
        clock.advance(MINUTE);
        expect(await q.runDue()).toBe(1);
        expect(runs).toEqual([
          [a.id, 1],
          [a.id, 2],
          [later.id, 1],
        ]);
        expect(await q.stats('t')).toEqual({
          pending: 1,
          failed: 1,
          oldestPendingAgeMs: 2 * MINUTE,
        });
        expect(await q.get('999999')).toBeNull();
      });

      it('hands an unfinished job to another worker once its lease ran out', async () => {
        const dying = store.openJobQueue({ clock, leaseMs: MINUTE });
        queues.push(dying);
        dying.handle('w', () => new Promise(() => undefined));
        const { id } = await dying.enqueue('w', {});
        void dying.runDue();
        await new Promise((resolve) => setTimeout(resolve, 20));

        const survivor = store.openJobQueue({ clock, leaseMs: MINUTE });
        queues.push(survivor);
        const attempts: number[] = [];
        survivor.handle('w', async (job) => void attempts.push(job.attempt));
        expect(await survivor.runDue()).toBe(0);
        clock.advance(MINUTE);
        expect(await survivor.runDue()).toBe(1);
        expect(attempts).toEqual([2]);
        expect(await survivor.get(id)).toMatchObject({ state: 'done' });
      });

      it('purges done and failed jobs older than the retention, never pending ones', async () => {
        const q = queue({ retentionMs: DAY });
        q.handle('p', async (job) => {
          const { then } = job.payload as { then: string };
          if (then === 'fail') return { outcome: 'failed', error: 'gave up' };
          if (then === 'retry') return { outcome: 'retry', at: clock.now() + 2 * DAY, error: 'x' };
          return { outcome: 'done' };
        });
        const neverRun = await q.enqueue('unhandled', {});
        const oldDone = await q.enqueue('p', { then: 'done' });
        const oldFailed = await q.enqueue('p', { then: 'fail' });
        const retrying = await q.enqueue('p', { then: 'retry' });
        expect(await q.runDue()).toBe(3);
        clock.advance(60 * MINUTE);
        const young = await q.enqueue('p', { then: 'done' });
        expect(await q.runDue()).toBe(1);

        // Exactly the retention: kept; a millisecond more: gone.
        clock.advance(DAY - 60 * MINUTE);
        expect(await q.purgeFinished()).toBe(0);
        clock.advance(1);
        expect(await q.purgeFinished()).toBe(2);
        expect(await q.purgeFinished()).toBe(0);

        expect(await q.get(oldDone.id)).toBeNull();
        expect(await q.get(oldFailed.id)).toBeNull();
        expect(await q.get(young.id)).toMatchObject({ state: 'done' });
        expect(await q.get(neverRun.id)).toMatchObject({
          state: 'pending',
          createdAt: Date.parse(ISSUED_AT),
        });
        expect(await q.get(retrying.id)).toMatchObject({ state: 'pending', lastError: 'x' });
        expect(await q.stats()).toMatchObject({ pending: 2, failed: 0 });
      });

      it('frees the dedupe key of a purged job: the key enqueues a new job', async () => {
        const q = queue({ retentionMs: DAY });
        const runs: string[] = [];
        q.handle('gh', async (job) => void runs.push(job.id));
        const first = await q.enqueue('gh', { v: 1 }, { dedupeKey: 'delivery-1' });
        await q.runDue();
        expect(await q.enqueue('gh', { v: 2 }, { dedupeKey: 'delivery-1' })).toEqual({
          id: first.id,
          created: false,
        });
        clock.advance(DAY + 1);
        expect(await q.purgeFinished()).toBe(1);

        const again = await q.enqueue('gh', { v: 3 }, { dedupeKey: 'delivery-1' });
        expect(again).toEqual({ id: expect.any(String), created: true });
        expect(again.id).not.toBe(first.id);
        expect(await q.runDue()).toBe(1);
        expect(runs).toEqual([first.id, again.id]);
        expect(await q.get(again.id)).toMatchObject({ payload: { v: 3 }, dedupeKey: 'delivery-1' });
      });

      it('purges from its polling loop, at most once a minute', async () => {
        const worker = queue({ retentionMs: 1000 });
        worker.handle('p', async () => undefined);
        const finished = async () => {
          const { id } = await worker.enqueue('p', {});
          await worker.runDue();
          return id;
        };
        const early = await finished();
        clock.advance(2000);
        // A loop without handlers: it only purges, the first time once it runs.
        const loop = queue({ retentionMs: 1000, pollIntervalMs: 5 });
        loop.start();
        await waitFor(async () => (await worker.get(early)) === null);

        const late = await finished();
        clock.advance(2000);
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(await worker.get(late)).toMatchObject({ state: 'done' });
        clock.advance(MINUTE);
        await waitFor(async () => (await worker.get(late)) === null);
      });
    });
  });
}
