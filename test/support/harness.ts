import { generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import { pino } from 'pino';
import type { Express } from 'express';
import { createApp } from '../../src/app.js';
import { createLedgerRuntime, type LedgerRuntimeDeps } from '../../src/runtime/ledger-runtime.js';
import type { Clock } from '../../src/ports/clock.js';
import type { JobQueue, JobQueueOptions } from '../../src/ports/job-queue.js';
import type { ServerKey } from '../../src/ports/signer.js';
import type { Store } from '../../src/ports/store.js';
import { createAesGcmBox, loadKeyEncryptionSecret } from '../../src/secrets/key-encryption.js';
import { loadServerKey, serverKeyFrom } from '../../src/secrets/server-key.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(public ms = Date.parse('2026-01-15T10:00:00.000Z')) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

/**
 * System time that a test can still move forward by hand: for an app that shares its data
 * with child processes (the CLI, other writers), which run on the real clock.
 */
export class SystemTimeClock extends ManualClock {
  private readonly startedAt = Date.now();
  constructor() {
    super(Date.now());
  }
  override now(): number {
    return this.ms + (Date.now() - this.startedAt);
  }
}

export const newServerKey = (): ServerKey =>
  serverKeyFrom(generateKeyPairSync('ed25519').privateKey);

export interface TestApp {
  app: Express;
  store: Store;
  serverKey: ServerKey;
  clock: ManualClock;
  /** The app's job queue (never started here): run due deliveries with `jobs.runDue()`. */
  jobs: JobQueue;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /**
   * A data directory as the service leaves it: the app opens its ledger.db and reads the
   * signing key and key-encryption secret from it, as server.ts does (creating them when
   * absent). For a restart on the same data, or an app beside the CLI working on it.
   */
  dataDir?: string;
  store?: Store;
  serverKey?: ServerKey;
  box?: LedgerRuntimeDeps['box'];
  clock?: ManualClock;
  config?: Partial<LedgerRuntimeDeps['config']>;
  /** The job queue's retry schedule (the store's default otherwise). */
  retryDelaysMs?: JobQueueOptions['retryDelaysMs'];
  webhookDelivery?: LedgerRuntimeDeps['webhookDelivery'];
  githubOctokit?: LedgerRuntimeDeps['githubOctokit'];
  logger?: LedgerRuntimeDeps['logger'];
  limiter?: LedgerRuntimeDeps['limiter'];
  logOrigin?: string;
  explorerScript?: string;
}

/**
 * The one way tests build the app: over a fresh in-memory store (or the given store or data
 * directory), silent logs, generous anonymous and signup limits unless `config` says otherwise.
 * `close()` stops the job queue and closes the store, also a store that was passed in.
 */
export function buildTestApp(options: TestAppOptions = {}): TestApp {
  const { dataDir } = options;
  const store = options.store ?? openSqliteStore(dataDir ? join(dataDir, 'ledger.db') : ':memory:');
  const serverKey =
    options.serverKey ?? (dataDir ? loadServerKey({ dataDir }).key : newServerKey());
  const box =
    options.box ??
    createAesGcmBox(dataDir ? loadKeyEncryptionSecret({ dataDir }).secret : Buffer.alloc(32, 7));
  const clock = options.clock ?? new ManualClock();
  const jobs = store.openJobQueue({
    clock,
    ...(options.retryDelaysMs ? { retryDelaysMs: options.retryDelaysMs } : {}),
  });
  const runtime = createLedgerRuntime({
    config: {
      anonLimitPerHour: 10_000,
      signupLimitPerHour: 1_000,
      trustProxy: false,
      publicReads: true,
      ...options.config,
    },
    store,
    serverKey,
    box,
    clock,
    logger: options.logger ?? pino({ level: 'silent' }),
    jobs,
    webhookDelivery: options.webhookDelivery,
    githubOctokit: options.githubOctokit,
    limiter: options.limiter,
    logOrigin: options.logOrigin,
  });
  const app = createApp(runtime, { explorerScript: options.explorerScript });
  return {
    app,
    store,
    serverKey,
    clock,
    jobs,
    close: async () => {
      await jobs.stop();
      await store.close();
    },
  };
}
