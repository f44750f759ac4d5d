import type { JobPayload, JobState, JsonValue } from '../../ports/job-queue.js';

/**
 * A job as stored in agenda's collection (`agendaJobs`): agenda's own fields, so its
 * processor finds, locks and runs the job, plus `svc`, the queue's bookkeeping, which agenda
 * never writes (its state saves touch only its own fields).
 */
export interface JobDocument {
  name: string;
  /** The job's payload. */
  data: JsonValue;
  type: 'normal';
  priority: number;
  /** When agenda should run it next; null while it runs and once it is finished. */
  nextRunAt: Date | null;
  /** The lease: set when a worker takes the job, expired after the lock lifetime. */
  lockedAt: Date | null;
  lastModifiedBy: string | null;
  disabled: boolean;
  svc: {
    state: JobState;
    attempts: number;
    /** When the job is (or was last) due, ms since the epoch. */
    runAt: number;
    createdAt: number;
    finishedAt: number | null;
    lastError: string | null;
    /** Absent without one: the unique index on it is partial. */
    dedupeKey?: string;
  };
}

/**
 * The one way a job enters the collection: used by the job queue and by the ledger, which
 * enqueues webhook deliveries inside its append transaction.
 */
export function newJobDocument<N extends string>(
  name: N,
  payload: JobPayload<N>,
  options: { dedupeKey?: string; runAt: number; createdAt: number },
): JobDocument {
  return {
    name,
    data: payload,
    type: 'normal',
    priority: 0,
    nextRunAt: new Date(options.runAt),
    lockedAt: null,
    lastModifiedBy: null,
    disabled: false,
    svc: {
      state: 'pending',
      attempts: 0,
      runAt: options.runAt,
      createdAt: options.createdAt,
      finishedAt: null,
      lastError: null,
      ...(options.dedupeKey === undefined ? {} : { dedupeKey: options.dedupeKey }),
    },
  };
}
