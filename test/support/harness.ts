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

/** A claim that passes the default policy; `overrides` replace top-level members. */
export function validClaim(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    claim_id: `claim-${Math.random().toString(36).slice(2)}`,
    entity: 'acme/web',
    claim: 'Merge PR #42 after CI passed',
    action: {
      action_type: 'merge',
      target_system: 'github',
      repository: 'acme/web',
      pull_request: 42,
      commit: 'a1b2c3d',
      branch: 'main',
      agent: 'coder-bot',
      agent_model: 'model-x',
    },
    sources: [
      {
        id: 'ci-1',
        type: 'ci',
        uri: 'https://ci.example/run/1',
        confidence: 0.9,
        content: 'all 312 tests pass',
      },
      {
        id: 'rev-1',
        type: 'code_review',
        uri: 'https://scm.example/pr/42#r1',
        confidence: 0.8,
        content: 'approved',
      },
    ],
    ...overrides,
  };
}
