import type { Clock } from './clock.js';

export type JsonValue =
  null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * The payload of each job name the service runs: enqueue and handle are typed by the name, so
 * a payload crosses the queue without a cast. A new job adds its name and payload here.
 */
export interface JobPayloads {
  /** One webhook delivery to a receiver (jobs/webhook-delivery.ts), enqueued in the append. */
  'webhook.deliver': { delivery_id: string };
  /** One GitHub App webhook delivery, its signature checked (github/webhook-route.ts). */
  'github.delivery': { id: string; name: string; payload: JsonValue };
  /** A disposition of an escalated deployment receipt, to answer on GitHub (deployment-flow.ts). */
  'github.deployment-answer': { parent_receipt_id: string };
}

export type JobName = keyof JobPayloads;

/** The queue's name for a verified GitHub App delivery. */
export const GITHUB_DELIVERY_JOB = 'github.delivery' satisfies JobName;
export const GITHUB_DEPLOYMENT_ANSWER_JOB = 'github.deployment-answer' satisfies JobName;

/** The payload of a job name; a name outside JobPayloads (a test's) carries any JSON. */
export type JobPayload<N extends string> = N extends JobName ? JobPayloads[N] : JsonValue;

/** One run of a job, as a handler sees it. */
export interface Job<N extends string = string> {
  id: string;
  name: N;
  payload: JobPayload<N>;
  /** 1 on the first run. Counts every run, also one cut short by a crash. */
  attempt: number;
  /** When the job was due (ms since the epoch). */
  runAt: number;
  createdAt: number;
}

/**
 * What a handler decides. Returning nothing means done; throwing means a failed run that the
 * queue retries on its own schedule (JobQueueOptions.retryDelaysMs), then records as failed.
 */
export type JobResult =
  | { outcome: 'done' }
  | { outcome: 'retry'; at: number; error: string }
  | { outcome: 'failed'; error: string };

export type JobHandler<N extends string = string> = (job: Job<N>) => Promise<JobResult | void>;

export interface EnqueueOptions {
  /**
   * At most one job holds a key: enqueueing a key that exists writes nothing and answers
   * `created: false` with the existing job's id. A purged job (retentionMs) frees its key.
   */
  dedupeKey?: string;
  /** Not before this time (ms since the epoch); default now. */
  runAt?: number;
}

export interface EnqueueResult {
  id: string;
  created: boolean;
}

export type JobState = 'pending' | 'done' | 'failed';

export interface JobRecord {
  id: string;
  name: string;
  payload: JsonValue;
  state: JobState;
  attempts: number;
  runAt: number;
  createdAt: number;
  finishedAt: number | null;
  lastError: string | null;
  dedupeKey: string | null;
}

export interface JobStats {
  /** Jobs not finished yet: due, scheduled for a retry, or running. */
  pending: number;
  /** Jobs that failed permanently and are not purged yet. */
  failed: number;
  /** Age of the oldest pending job (now − its creation), or null when none is pending. */
  oldestPendingAgeMs: number | null;
}

export interface JobQueueOptions {
  clock: Clock;
  /** Pause of the polling loop when nothing is due. */
  pollIntervalMs?: number;
  /** How long a claimed job belongs to one worker; a job whose lease ran out is taken over. */
  leaseMs?: number;
  /** Jobs one worker runs at once. */
  concurrency?: number;
  /** Delays after the 1st, 2nd, ... failed run of a handler that throws; then failed. */
  retryDelaysMs?: number[];
  /**
   * How long a finished (done or failed) job is kept after its finishedAt; the polling loop
   * then deletes it. Pending jobs are never deleted. Default 7 days.
   */
  retentionMs?: number;
}

/**
 * Durable named jobs with at-least-once execution: a job runs until its handler finishes it,
 * and a run cut short (crash, kill) is run again once its lease expires. Handlers must
 * therefore be idempotent.
 */
export interface JobQueue {
  enqueue<N extends string>(
    name: N,
    payload: JobPayload<N>,
    options?: EnqueueOptions,
  ): Promise<EnqueueResult>;
  /** Registers the handler of a job name; a worker claims only names it has handlers for. */
  handle<N extends string>(name: N, handler: JobHandler<N>): void;
  /** Starts the polling loop. */
  start(): void;
  /** Stops claiming and resolves once the jobs already running have finished. */
  stop(): Promise<void>;
  /** Runs the jobs due now, one after another, without the polling loop; answers how many ran. */
  runDue(limit?: number): Promise<number>;
  stats(name?: string): Promise<JobStats>;
  get(id: string): Promise<JobRecord | null>;
  /**
   * Deletes the finished jobs older than the retention, in bounded batches; answers how many
   * this call deleted. The polling loop runs it about once a minute; safe to run from several
   * processes at once.
   */
  purgeFinished(): Promise<number>;
}
