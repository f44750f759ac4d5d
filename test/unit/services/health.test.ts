import { describe, expect, it } from '@jest/globals';
import type { JobQueue } from '../../../src/ports/job-queue.js';
import type { Store } from '../../../src/ports/store.js';
import { HealthService, STORE_WRITE_PROBE_INTERVAL_MS } from '../../../src/services/health.js';
import { ManualClock, newServerKey } from '../../support/harness.js';

/** A store whose probe writes are counted and settle when the test says so. */
function probedStore() {
  const writes: { at: string; resolve(): void; reject(error: Error): void }[] = [];
  let reads = 0;
  const store = {
    ping: async () => void reads++,
    probeWrite: (at: string) =>
      new Promise<void>((resolve, reject) => {
        writes.push({ at, resolve, reject });
      }),
  } as unknown as Store;
  return { store, writes, reads: () => reads };
}

/** Lets the check that was started reach the store. */
const tick = () => new Promise((resolve) => setImmediate(resolve));

const jobs = { stats: async () => ({}) } as unknown as JobQueue;

describe('deep health writes to the store at most once per interval', () => {
  it("writes the time of the service's clock", async () => {
    const { store, writes } = probedStore();
    const clock = new ManualClock(Date.parse('2030-06-01T12:00:00.000Z'));
    const health = new HealthService({ store, serverKey: newServerKey(), clock, jobs });
    const first = health.deepChecks();
    await tick();
    writes[0]!.resolve();
    await first;
    clock.advance(STORE_WRITE_PROBE_INTERVAL_MS);
    const second = health.deepChecks();
    await tick();
    writes[1]!.resolve();
    await second;
    expect(writes.map((w) => w.at)).toEqual([
      '2030-06-01T12:00:00.000Z',
      new Date(
        Date.parse('2030-06-01T12:00:00.000Z') + STORE_WRITE_PROBE_INTERVAL_MS,
      ).toISOString(),
    ]);
  });

  it('checks in a loop share one write; the next interval writes again', async () => {
    const { store, writes, reads } = probedStore();
    const clock = new ManualClock();
    const health = new HealthService({ store, serverKey: newServerKey(), clock, jobs });

    const first = health.deepChecks();
    await tick();
    writes[0]!.resolve();
    expect((await first).store.ok).toBe(true);
    for (let i = 0; i < 5; i++) {
      clock.advance(STORE_WRITE_PROBE_INTERVAL_MS / 10);
      expect((await health.deepChecks()).store.ok).toBe(true);
    }
    expect(writes).toHaveLength(1);
    // Every check still reads.
    expect(reads()).toBe(6);

    clock.advance(STORE_WRITE_PROBE_INTERVAL_MS / 2);
    const next = health.deepChecks();
    await tick();
    expect(writes).toHaveLength(2);
    writes[1]!.reject(new Error('disk I/O error'));
    expect((await next).store).toEqual({
      ok: false,
      latency_ms: expect.any(Number),
      error: 'disk I/O error',
    });
    // A failure is reported for the rest of its interval too, without writing again.
    expect((await health.deepChecks()).store.error).toBe('disk I/O error');
    expect(writes).toHaveLength(2);
  });

  it('starts no write while one is still running, however long ago it started', async () => {
    const { store, writes } = probedStore();
    const clock = new ManualClock();
    const deps = { store, serverKey: newServerKey(), clock, jobs, timeoutMs: 20 };
    const health = new HealthService(deps);
    expect((await health.deepChecks()).store.error).toBe('timed out');
    clock.advance(10 * STORE_WRITE_PROBE_INTERVAL_MS);
    expect((await health.deepChecks()).store.error).toBe('timed out');
    expect(writes).toHaveLength(1);

    // Once it ended, the next check writes again (given time enough on a busy machine: the
    // service reads its timeout at each check).
    deps.timeoutMs = 60_000;
    writes[0]!.resolve();
    await tick();
    const next = health.deepChecks();
    await tick();
    expect(writes).toHaveLength(2);
    writes[1]!.resolve();
    expect((await next).store.ok).toBe(true);
  });
});
