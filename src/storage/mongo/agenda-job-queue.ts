import { randomUUID } from 'node:crypto';
import type { Agenda, AgendaBackend, Job as AgendaJob } from 'agenda';
import { ObjectId, type Collection, type Db, type Filter, type WithId } from 'mongodb';
import type { Clock } from '../../ports/clock.js';
import type {
  EnqueueOptions,
  EnqueueResult,
  Job,
  JobHandler,
  JobPayload,
  JobQueue,
  JobQueueOptions,
  JobRecord,
  JobResult,
  JobStats,
} from '../../ports/job-queue.js';
import { COLLECTIONS, isDuplicateOn } from './documents.js';
import { newJobDocument, type JobDocument } from './job-documents.js';
import { PURGE_BATCH, PurgeSchedule } from '../job-retention.js';
import {
  asStoredJobHandler,
  jobQueueSettings,
  recordedOutcome,
  runHandler,
  type JobQueueSettings,
} from '../job-runs.js';

/** Pause before starting agenda again after it could not start. */
const START_RETRY_MS = 5000;

const isObjectIdHex = (id: string) => /^[0-9a-f]{24}$/i.test(id);

/**
 * The job queue when svc runs on MongoDB: agenda (with its MongoDB backend) polls, locks and
 * runs the jobs, in its own collection `agendaJobs`, shared by every instance.
 *
 * - A job document carries agenda's fields and, under `svc`, this queue's state (pending,
 *   done, failed), attempts, last error and dedupe key; agenda never writes `svc`.
 * - The lease is agenda's lock: `lockedAt`, expired after `leaseMs` (agenda's lock
 *   lifetime); a job whose worker died is then taken again by any instance (at-least-once).
 * - Retries and failures follow JobQueueOptions, not agenda's backoff: the handler never
 *   throws into agenda; the queue records the outcome and, for a retry, sets `nextRunAt`.
 * - Dedupe keys are a partial unique index on `svc.dedupeKey`.
 * - `runDue` claims due jobs itself with the injected clock, in the same documents and with the
 *   same lease rule, so tests need neither real time nor agenda's timers.
 * - Finished jobs are purged by a timer of this queue beside agenda's loop, while agenda runs
 *   (agenda's own purge knows nothing of `svc.state`), with the injected clock.
 *
 * agenda is imported only when the queue starts, and only on this path: the embedded mode
 * never loads it.
 */
export class AgendaJobQueue implements JobQueue {
  private readonly clock: Clock;
  private readonly options: JobQueueSettings;
  /** Identifies this worker in `lastModifiedBy`. */
  private readonly owner = `svc-${randomUUID()}`;
  private readonly handlers = new Map<string, JobHandler>();
  private readonly jobs: Collection<JobDocument>;
  private agenda: Agenda | undefined;
  private starting: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private purgeTimer: NodeJS.Timeout | undefined;
  private readonly purges: PurgeSchedule;
  private started = false;

  constructor(
    private readonly db: Db,
    options: JobQueueOptions,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {
    this.clock = options.clock;
    this.options = jobQueueSettings(options);
    this.jobs = db.collection<JobDocument>(COLLECTIONS.jobs);
    this.purges = new PurgeSchedule(this.clock, () => this.purgeFinished(), onError);
  }

  async enqueue<N extends string>(
    name: N,
    payload: JobPayload<N>,
    options: EnqueueOptions = {},
  ): Promise<EnqueueResult> {
    const now = this.clock.now();
    for (let tries = 1; ; tries++) {
      const doc = newJobDocument(name, payload, {
        dedupeKey: options.dedupeKey,
        runAt: options.runAt ?? now,
        createdAt: now,
      });
      try {
        const { insertedId } = await this.jobs.insertOne(doc);
        return { id: insertedId.toHexString(), created: true };
      } catch (error) {
        if (options.dedupeKey === undefined || !isDuplicateOn(error, 'dedupe')) throw error;
        const existing = await this.jobs.findOne(
          { 'svc.dedupeKey': options.dedupeKey },
          { projection: { _id: 1 } },
        );
        if (existing) return { id: existing._id.toHexString(), created: false };
        // Purged between the insert and the read: the key is free again, insert once more.
        if (tries === 3) throw error;
      }
    }
  }

  handle<N extends string>(name: N, handler: JobHandler<N>): void {
    if (this.handlers.has(name)) throw new TypeError(`a handler for "${name}" is registered`);
    this.handlers.set(name, asStoredJobHandler(handler));
    if (this.agenda) this.define(this.agenda, name);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.launch();
    // Only while agenda runs: when MongoDB is away, agenda's start failures are reported
    // already.
    this.purgeTimer = setInterval(() => {
      if (this.agenda) this.purges.poke();
    }, this.options.pollIntervalMs).unref();
  }

  private launch(): void {
    this.starting = this.startAgenda().catch((error: unknown) => {
      this.onError(error);
      // Deliveries must not stop for good because MongoDB was away for a moment: try again
      // for as long as the queue should run.
      if (this.started) this.retry = setTimeout(() => this.launch(), START_RETRY_MS).unref();
    });
  }

  private async startAgenda(): Promise<void> {
    const [{ Agenda }, { MongoBackend }] = await Promise.all([
      import('agenda'),
      import('@agendajs/mongo-backend'),
    ]);
    // The Db of the store's connected client: agenda opens no connection of its own. Agenda's
    // constructor calls backend.connect() without handling a rejection, which would crash
    // the process when MongoDB is unreachable: connect here, where a failure is an error we
    // report, and hand agenda a backend whose connect() has nothing left to do.
    const mongoBackend = new MongoBackend({
      mongo: this.db,
      collection: COLLECTIONS.jobs,
      // Its lookup index is created with the store's (mongo-store.ts).
      ensureIndex: false,
    });
    // The repository alone: the backend's connect() would also set up agenda's job log (a
    // collection and its indexes), which is off here.
    await mongoBackend.repository.connect();
    const backend: AgendaBackend = {
      name: mongoBackend.name,
      get repository() {
        return mongoBackend.repository;
      },
      get logger() {
        return mongoBackend.logger;
      },
      notificationChannel: undefined,
      // The store owns the client and closes it.
      ownsConnection: false,
      connect: async () => undefined,
      disconnect: async () => undefined,
    };
    const agenda = new Agenda({
      backend,
      name: this.owner,
      processEvery: this.options.pollIntervalMs,
      defaultConcurrency: this.options.concurrency,
      maxConcurrency: this.options.concurrency,
      // Without a lock limit, the first instance to poll locks every due job and holds those it
      // cannot start yet until their leases run out; other instances could not help.
      lockLimit: this.options.concurrency,
      defaultLockLimit: this.options.concurrency,
      // The queue's lease, not agenda's own default lifetime of 10 minutes.
      defaultLockLifetime: this.options.leaseMs,
    });
    agenda.on('error', (error: Error) => this.onError(error));
    for (const name of this.handlers.keys()) this.define(agenda, name);
    if (!this.started) return;
    this.agenda = agenda;
    try {
      await agenda.start();
    } catch (error) {
      this.agenda = undefined;
      throw error;
    }
    this.purges.poke();
  }

  private define(agenda: Agenda, name: string): void {
    agenda.define(
      name,
      async (agendaJob: AgendaJob) => {
        try {
          const id = new ObjectId(String(agendaJob.attrs._id));
          // agenda has locked the job; count the run before it starts, so a crash counts too.
          const doc = await this.jobs.findOneAndUpdate(
            { _id: id, 'svc.state': 'pending' },
            { $inc: { 'svc.attempts': 1 } },
            { returnDocument: 'after' },
          );
          if (!doc) return; // finished meanwhile (a run that outlived its lease): nothing to do
          const result = await this.execute(doc);
          // Under the lease agenda took: a run that outlived it records nothing over the run of
          // the instance that took the job over.
          // A null lease too: agenda's own save after an overrun run clears the lock of the
          // instance that took the job over, whose result must still be recorded then.
          const lockedAt = agendaJob.attrs.lockedAt;
          const retryAt = await this.finish(
            id,
            lockedAt ? { lockedAt: { $in: [lockedAt, null] } } : {},
            result,
          );
          // agenda saves its own fields after the processor returns: nextRunAt null (a
          // one-time job, never picked again) unless a retry is due.
          agendaJob.attrs.nextRunAt = retryAt === null ? null : new Date(retryAt);
        } catch (error) {
          // The outcome could not be recorded (MongoDB unavailable). Thrown into agenda, the
          // job would be saved unlocked with no next run, pending forever: run it again after
          // a lease instead (at-least-once).
          this.onError(error);
          agendaJob.attrs.nextRunAt = new Date(this.clock.now() + this.options.leaseMs);
        }
      },
      { concurrency: this.options.concurrency, lockLifetime: this.options.leaseMs },
    );
  }

  async stop(): Promise<void> {
    this.started = false;
    clearTimeout(this.retry);
    clearInterval(this.purgeTimer);
    this.purgeTimer = undefined;
    await this.starting;
    this.starting = undefined;
    await this.purges.settled();
    const agenda = this.agenda;
    this.agenda = undefined;
    // Stops polling and waits for the jobs already running; the store's client stays open.
    if (!agenda) return;
    await agenda.drain({ closeConnection: false });
    // Jobs locked but not started are released now, not when their lease runs out.
    try {
      await this.jobs.updateMany(
        // nextRunAt null: running, maybe past its lease; agenda's own unlock leaves those too.
        {
          lastModifiedBy: this.owner,
          'svc.state': 'pending',
          lockedAt: { $ne: null },
          nextRunAt: { $ne: null },
        },
        { $set: { lockedAt: null } },
      );
    } catch (error) {
      this.onError(error);
    }
  }

  async runDue(limit = 1000): Promise<number> {
    let ran = 0;
    while (ran < limit && this.handlers.size > 0) {
      const now = this.clock.now();
      const lockedAt = new Date(now);
      const doc = await this.jobs.findOneAndUpdate(
        {
          name: { $in: [...this.handlers.keys()] },
          disabled: { $ne: true },
          'svc.state': 'pending',
          // agenda's own rule: due and unlocked, or locked longer ago than the lease.
          $or: [
            { lockedAt: null, nextRunAt: { $lte: lockedAt } },
            { lockedAt: { $lte: new Date(now - this.options.leaseMs) } },
          ],
        },
        {
          $set: { lockedAt, nextRunAt: null, lastModifiedBy: this.owner },
          $inc: { 'svc.attempts': 1 },
        },
        { sort: { nextRunAt: 1, _id: 1 }, returnDocument: 'after' },
      );
      if (!doc) break;
      const result = await this.execute(doc);
      // Conditional on still holding the lease: a worker that overran it must not overwrite
      // what the worker that took the job over decided.
      await this.finish(doc._id, { lockedAt }, result);
      ran++;
    }
    return ran;
  }

  private async execute(doc: WithId<JobDocument>): Promise<JobResult> {
    const job: Job = {
      id: doc._id.toHexString(),
      name: doc.name,
      payload: doc.data,
      attempt: doc.svc.attempts,
      runAt: doc.svc.runAt,
      createdAt: doc.svc.createdAt,
    };
    const handler = this.handlers.get(doc.name);
    return runHandler(
      async () => {
        if (!handler) throw new Error(`no handler for "${doc.name}"`);
        return handler(job);
      },
      job.attempt,
      this.options.retryDelaysMs,
      () => this.clock.now(),
    );
  }

  /** Records the outcome; answers when the job is due again, or null. */
  private async finish(
    id: ObjectId,
    lease: { lockedAt?: Date | { $in: (Date | null)[] } },
    result: JobResult,
  ): Promise<number | null> {
    const filter = { _id: id, 'svc.state': 'pending' as const, ...lease };
    const outcome = recordedOutcome(result, this.clock.now());
    if (outcome.state === 'pending') {
      await this.jobs.updateOne(filter, {
        $set: {
          'svc.runAt': outcome.runAt,
          'svc.lastError': outcome.lastError,
          lockedAt: null,
          nextRunAt: new Date(outcome.runAt),
        },
      });
      return outcome.runAt;
    }
    await this.jobs.updateOne(filter, {
      $set: {
        'svc.state': outcome.state,
        'svc.finishedAt': outcome.finishedAt,
        'svc.lastError': outcome.lastError,
        lockedAt: null,
        nextRunAt: null,
      },
    });
    return null;
  }

  async purgeFinished(): Promise<number> {
    // Served by the index state_finished. Repeated in each delete, so a document that another
    // instance changed or deleted meanwhile is left alone (deleteMany has no limit of its own).
    const old: Filter<JobDocument> = {
      'svc.state': { $in: ['done', 'failed'] },
      'svc.finishedAt': { $lt: this.clock.now() - this.options.retentionMs },
    };
    let deleted = 0;
    for (;;) {
      const batch = await this.jobs
        .find(old, { projection: { _id: 1 }, limit: PURGE_BATCH })
        .toArray();
      if (batch.length === 0) return deleted;
      const { deletedCount } = await this.jobs.deleteMany({
        ...old,
        _id: { $in: batch.map((doc) => doc._id) },
      });
      deleted += deletedCount;
      if (batch.length < PURGE_BATCH) return deleted;
    }
  }

  async stats(name?: string): Promise<JobStats> {
    const byName = name === undefined ? {} : { name };
    const pending = await this.jobs.countDocuments({ ...byName, 'svc.state': 'pending' });
    const failed = await this.jobs.countDocuments({ ...byName, 'svc.state': 'failed' });
    const oldest =
      pending === 0
        ? null
        : await this.jobs.findOne(
            { ...byName, 'svc.state': 'pending' },
            { sort: { 'svc.createdAt': 1 }, projection: { 'svc.createdAt': 1 } },
          );
    return {
      pending,
      failed,
      oldestPendingAgeMs: oldest ? Math.max(0, this.clock.now() - oldest.svc.createdAt) : null,
    };
  }

  async get(id: string): Promise<JobRecord | null> {
    if (!isObjectIdHex(id)) return null;
    const doc = await this.jobs.findOne({ _id: new ObjectId(id) });
    if (!doc) return null;
    return {
      id: doc._id.toHexString(),
      name: doc.name,
      payload: doc.data,
      state: doc.svc.state,
      attempts: doc.svc.attempts,
      runAt: doc.svc.runAt,
      createdAt: doc.svc.createdAt,
      finishedAt: doc.svc.finishedAt,
      lastError: doc.svc.lastError,
      dedupeKey: doc.svc.dedupeKey ?? null,
    };
  }
}
