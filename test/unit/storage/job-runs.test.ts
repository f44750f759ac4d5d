import { describe, expect, it } from '@jest/globals';
import { DEFAULT_RETENTION_MS } from '../../../src/storage/job-retention.js';
import { jobQueueSettings, recordedOutcome, runHandler } from '../../../src/storage/job-runs.js';

const NOW = 1_700_000_000_000;
const now = () => NOW;
const clock = { now };

describe('what both job queues decide alike', () => {
  it('options left out take the defaults; given ones are kept', () => {
    expect(jobQueueSettings({ clock })).toEqual({
      pollIntervalMs: 1000,
      leaseMs: 60_000,
      concurrency: 4,
      retryDelaysMs: [60_000, 300_000, 1_800_000],
      retentionMs: DEFAULT_RETENTION_MS,
    });
    expect(jobQueueSettings({ clock, leaseMs: 5, retryDelaysMs: [] })).toMatchObject({
      leaseMs: 5,
      retryDelaysMs: [],
      concurrency: 4,
    });
  });

  it('a handler returning nothing is done; what it returns is its outcome', async () => {
    expect(await runHandler(async () => undefined, 1, [10], now)).toEqual({ outcome: 'done' });
    const retry = { outcome: 'retry' as const, at: NOW + 5, error: 'later' };
    expect(await runHandler(async () => retry, 1, [10], now)).toEqual(retry);
  });

  it('a throw is retried after the delay of its attempt, then failed', async () => {
    const boom = async () => {
      throw new Error('boom');
    };
    expect(await runHandler(boom, 1, [10, 20], now)).toEqual({
      outcome: 'retry',
      at: NOW + 10,
      error: 'boom',
    });
    expect(await runHandler(boom, 2, [10, 20], now)).toMatchObject({ at: NOW + 20 });
    expect(await runHandler(boom, 3, [10, 20], now)).toEqual({ outcome: 'failed', error: 'boom' });
  });

  it('a synchronous throw while building the job is a failed run too, not an escape', async () => {
    const result = await runHandler(
      () => JSON.parse('{not json') as Promise<undefined>,
      1,
      [],
      now,
    );
    expect(result).toMatchObject({ outcome: 'failed' });
  });

  it('a retry is never due in the same instant, and errors are clipped on code points', () => {
    expect(recordedOutcome({ outcome: 'retry', at: NOW - 50, error: 'x' }, NOW)).toEqual({
      state: 'pending',
      runAt: NOW + 1,
      lastError: 'x',
    });
    expect(recordedOutcome({ outcome: 'done' }, NOW)).toEqual({
      state: 'done',
      finishedAt: NOW,
      lastError: null,
    });
    const failed = recordedOutcome({ outcome: 'failed', error: `a${'🚀'.repeat(2000)}` }, NOW);
    expect(failed).toEqual({ state: 'failed', finishedAt: NOW, lastError: `a${'🚀'.repeat(999)}` });
  });
});
