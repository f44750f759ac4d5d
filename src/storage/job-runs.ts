import { clipText } from '../core/text.js';
import type { JobHandler, JobQueueOptions, JobResult } from '../ports/job-queue.js';
import { DEFAULT_RETENTION_MS } from './job-retention.js';

// What both job queues (sqlite/sqlite-job-queue.ts, mongo/agenda-job-queue.ts) decide alike:
// their options' defaults, a run's outcome and what of it is recorded.

const DEFAULTS = {
  pollIntervalMs: 1000,
  // Well above the longest handler (a webhook POST times out after 10 s), so a live worker
  // never loses a job it is still running.
  leaseMs: 60_000,
  concurrency: 4,
  retryDelaysMs: [60_000, 300_000, 1_800_000],
  retentionMs: DEFAULT_RETENTION_MS,
};

export type JobQueueSettings = typeof DEFAULTS;

/** The queue's options with the defaults filled in (the clock is kept apart). */
export const jobQueueSettings = (options: JobQueueOptions): JobQueueSettings => ({
  pollIntervalMs: options.pollIntervalMs ?? DEFAULTS.pollIntervalMs,
  leaseMs: options.leaseMs ?? DEFAULTS.leaseMs,
  concurrency: options.concurrency ?? DEFAULTS.concurrency,
  retryDelaysMs: options.retryDelaysMs ?? DEFAULTS.retryDelaysMs,
  retentionMs: options.retentionMs ?? DEFAULTS.retentionMs,
});

const MAX_ERROR_LENGTH = 1000;

/**
 * One run of a job: `run` calls its handler. Returning nothing is done; a throw is a retry
 * after the delay of this attempt (`retryDelaysMs[attempt - 1]`), failed once the delays run
 * out.
 */
export async function runHandler(
  run: () => Promise<JobResult | void>,
  attempt: number,
  retryDelaysMs: readonly number[],
  now: () => number,
): Promise<JobResult> {
  try {
    return (await run()) ?? { outcome: 'done' };
  } catch (error) {
    const delay = retryDelaysMs[attempt - 1];
    const message = error instanceof Error ? error.message : String(error);
    return delay === undefined
      ? { outcome: 'failed', error: message }
      : { outcome: 'retry', at: now() + delay, error: message };
  }
}

/** What a finished run records: the job's new state, when it is due again, its last error. */
export type RecordedOutcome =
  | { state: 'done'; finishedAt: number; lastError: null }
  | { state: 'pending'; runAt: number; lastError: string }
  | { state: 'failed'; finishedAt: number; lastError: string };

export function recordedOutcome(result: JobResult, now: number): RecordedOutcome {
  switch (result.outcome) {
    case 'done':
      return { state: 'done', finishedAt: now, lastError: null };
    case 'retry':
      // Never due again within the same instant, so runDue() cannot spin on one job.
      return {
        state: 'pending',
        runAt: Math.max(result.at, now + 1),
        lastError: clipText(result.error, MAX_ERROR_LENGTH),
      };
    case 'failed':
      return {
        state: 'failed',
        finishedAt: now,
        lastError: clipText(result.error, MAX_ERROR_LENGTH),
      };
  }
}

/**
 * A handler of one job name, as a queue keeps it beside the others: called with the jobs it
 * reads back under that name. Their payloads are the ones enqueue was given for the name,
 * typed by it (JobPayloads), so the handler's payload type holds for them.
 */
export const asStoredJobHandler = <N extends string>(handler: JobHandler<N>): JobHandler =>
  handler as JobHandler;
