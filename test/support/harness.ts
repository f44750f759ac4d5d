import { generateKeyPairSync } from 'node:crypto';
import { pino } from 'pino';
import type { Express } from 'express';
import { createApp, type AppDeps } from '../../src/app.js';
import type { Clock } from '../../src/ports/clock.js';
import type { JobQueue } from '../../src/ports/job-queue.js';
import type { ServerKey } from '../../src/ports/signer.js';
import type { Store } from '../../src/ports/store.js';
import { createAesGcmBox } from '../../src/secrets/key-encryption.js';
import { serverKeyFrom } from '../../src/secrets/server-key.js';
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

/** An app over a fresh in-memory store, silent logs, generous anonymous limits unless given. */
export function buildTestApp(
  options: {
    store?: Store;
    serverKey?: ServerKey;
    clock?: ManualClock;
    config?: Partial<AppDeps['config']>;
    webhookDelivery?: AppDeps['webhookDelivery'];
    logger?: AppDeps['logger'];
    limiter?: AppDeps['limiter'];
    logOrigin?: string;
    explorerScript?: string;
  } = {},
): TestApp {
  const store = options.store ?? openSqliteStore(':memory:');
  const serverKey = options.serverKey ?? newServerKey();
  const clock = options.clock ?? new ManualClock();
  const jobs = store.openJobQueue({ clock });
  const app = createApp({
    config: {
      anonLimitPerHour: 10_000,
      signupLimitPerHour: 1_000,
      trustProxy: false,
      publicReads: true,
      ...options.config,
    },
    store,
    serverKey,
    box: createAesGcmBox(Buffer.alloc(32, 7)),
    clock,
    logger: options.logger ?? pino({ level: 'silent' }),
    jobs,
    webhookDelivery: options.webhookDelivery,
    limiter: options.limiter,
    logOrigin: options.logOrigin,
    explorerScript: options.explorerScript,
  });
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
