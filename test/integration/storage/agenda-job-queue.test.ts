import { afterAll, describe, expect, it } from '@jest/globals';
import { MongoClient } from 'mongodb';
// Loaded here once: Jest's ESM loader cannot link a package's bare node-builtin imports
// ('events') when the queue imports agenda dynamically in a test; plain Node can.
import 'agenda';
import '@agendajs/mongo-backend';
import { AgendaJobQueue } from '../../../src/storage/mongo/agenda-job-queue.js';
import { ManualClock } from '../../support/harness.js';

// Runs without a server: the queue's behaviour on MongoDB is the contract suite's
// (test/contract/mongodb.test.ts, with MONGODB_URI). Here: starting agenda against an
// address where nothing answers neither crashes the process nor hangs stop().
describe('agenda job queue without a reachable MongoDB', () => {
  // Port 9 (discard) on loopback: refused at once.
  const client = new MongoClient('mongodb://127.0.0.1:9/?directConnection=true', {
    serverSelectionTimeoutMS: 300,
  });
  afterAll(async () => {
    await client.close();
  });

  it('reports the failure through onError and stops cleanly', async () => {
    const errors: unknown[] = [];
    const queue = new AgendaJobQueue(
      client.db('svc_test'),
      { clock: new ManualClock(), pollIntervalMs: 50 },
      (error) => errors.push(error),
    );
    queue.handle('noop', async () => undefined);
    queue.start();
    const refused = () => errors.some((error) => /ECONNREFUSED/.test(String(error)));
    for (let waited = 0; !refused() && waited < 5000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await expect(queue.stop()).resolves.toBeUndefined();
    // Operations that waited on the same failed connection report it as a closed topology.
    expect(refused()).toBe(true);
    for (const error of errors) expect(String(error)).toMatch(/^Mongo\w*Error/);
  });

  it('answers a runDue without handlers with 0, touching nothing', async () => {
    const queue = new AgendaJobQueue(client.db('svc_test'), { clock: new ManualClock() });
    await expect(queue.runDue()).resolves.toBe(0);
    await queue.stop();
  });
});
