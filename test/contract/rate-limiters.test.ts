import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { MongoClient } from 'mongodb';
import { HOUR_MS } from '../../src/ports/rate-limiter.js';
import type { Store } from '../../src/ports/store.js';
import { SlidingWindowLimiter } from '../../src/services/rate-limiter.js';
import { MongoWindowLimiter } from '../../src/storage/mongo/mongo-rate-limiter.js';
import { openMongoStore } from '../../src/storage/mongo/mongo-store.js';
import { SqliteWindowLimiter } from '../../src/storage/sqlite/sqlite-rate-limiter.js';
import { ManualClock } from '../support/harness.js';
import { mingoDb } from '../support/mingo-collections.js';
import {
  describeRateLimiterContract,
  describeSharedLimiterContract,
  type LimiterBackend,
} from './rate-limiter.contract.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-limiters-'));
let files = 0;

describeRateLimiterContract('In-memory', async () => async (clock) => {
  const limiter = new SlidingWindowLimiter(clock);
  return Object.assign(limiter, { close() {} });
});

// Every handle opens the file anew, as each worker process does.
const sqlite: LimiterBackend = async () => {
  const file = join(dir, `limits-${files++}.db`);
  return async (clock) => new SqliteWindowLimiter(file, clock);
};
describeRateLimiterContract('SQLite', sqlite);
describeSharedLimiterContract('SQLite', sqlite);

// The MongoDB limiter's update pipeline, evaluated by mingo here (no MongoDB server runs on
// every machine); against a real server below.
describeRateLimiterContract('MongoDB update pipeline (mingo)', async () => {
  const db = mingoDb();
  return async (clock) => new MongoWindowLimiter(db, clock);
});

it('MongoDB windows expire by the server clock, an hour after their newest request', async () => {
  const db = mingoDb();
  // A test clock far in the past: an expiry taken from it would be due at once.
  const limiter = new MongoWindowLimiter(db, new ManualClock());
  const before = Date.now();
  await limiter.consume('key:a', 5);
  const doc = await db
    .collection<{ _id: string; expires_at: Date }>('rate_windows')
    .findOne({ _id: 'key:a' });
  // A BSON date (the TTL monitor ignores other types); from another realm under Jest.
  expect(Object.prototype.toString.call(doc!.expires_at)).toBe('[object Date]');
  expect(doc!.expires_at.getTime()).toBeGreaterThanOrEqual(before + HOUR_MS);
  expect(doc!.expires_at.getTime()).toBeLessThanOrEqual(Date.now() + HOUR_MS);
});

// jest.config.js moves MONGODB_URI here, out of the environment of the processes tests start.
const uri = process.env.SVC_TEST_MONGODB_URI;
const databases: string[] = [];
const stores: Store[] = [];

// Every handle is a store of its own (its own client), as each instance is.
const mongo: LimiterBackend = async () => {
  const database = `svc_limits_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  databases.push(database);
  return async (clock) => {
    const store = await openMongoStore(uri!, { database });
    stores.push(store);
    return store.openSharedRateLimiter!(clock);
  };
};

if (uri) {
  describeRateLimiterContract('MongoDB', mongo);
  describeSharedLimiterContract('MongoDB', mongo);
} else {
  describe.skip('MongoDB rate limiter (skipped: MONGODB_URI is not set)', () => {
    it('keeps windows shared by every instance', () => {});
  });
}

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  for (const store of stores.splice(0)) await store.close();
  if (!uri || databases.length === 0) return;
  const admin = await new MongoClient(uri, { serverSelectionTimeoutMS: 10_000 }).connect();
  for (const name of databases) await admin.db(name).dropDatabase();
  await admin.close();
});
