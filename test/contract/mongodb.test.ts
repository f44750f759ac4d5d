import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { MongoClient } from 'mongodb';
// Loaded here once, for the case that starts a queue's loop: Jest's ESM loader cannot link a
// package's bare node-builtin imports ('events') when the queue imports agenda dynamically.
import 'agenda';
import '@agendajs/mongo-backend';
import type { Store } from '../../src/ports/store.js';
import { MissingLedgerError } from '../../src/storage/missing-ledger.js';
import { openMongoStore } from '../../src/storage/mongo/mongo-store.js';
import { describeAccountsContract } from './accounts.contract.js';
import { describeStoreContract } from './ledger-store.contract.js';
import { describeLogTreeContract } from './log-tree.contract.js';
import { describeSigningKeyContract } from './signing-key-store.contract.js';
import { describeSessionContract } from './sessions.contract.js';
import { describeWebhookAndJobContract } from './webhooks-and-jobs.contract.js';
import { describeWebhookScopeContract } from './webhook-scope.contract.js';

// Set in CI (a single-node replica set); locally: MONGODB_URI=mongodb://... npm test.
// jest.config.js moves MONGODB_URI here, out of the environment of the processes tests start.
const uri = process.env.SVC_TEST_MONGODB_URI;

// One fresh database per case, dropped afterwards, so cases never see each other's data.
const databases: string[] = [];
let admin: MongoClient | undefined;

afterEach(async () => {
  if (!uri || databases.length === 0) return;
  admin ??= await new MongoClient(uri, { serverSelectionTimeoutMS: 10_000 }).connect();
  for (const name of databases.splice(0)) await admin.db(name).dropDatabase();
});

afterAll(async () => {
  await admin?.close();
});

async function openFresh(webhookScope: 'all' | 'owner' = 'all'): Promise<Store> {
  const database = `svc_contract_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  databases.push(database);
  return openMongoStore(uri!, { database, webhookScope });
}

(uri ? describe : describe.skip)(
  uri ? 'MongoDB' : 'MongoDB (skipped: MONGODB_URI is not set)',
  () => {
    if (uri) {
      describeStoreContract('MongoDB', () => openFresh());
      describeLogTreeContract('MongoDB', () => openFresh());
      describeSigningKeyContract('MongoDB', () => openFresh());
      describeSessionContract('MongoDB', () => openFresh());
      describeWebhookAndJobContract('MongoDB', () => openFresh());
      describeWebhookScopeContract('MongoDB', openFresh);
      describeAccountsContract('MongoDB', async () => {
        const store = await openFresh();
        return { apiKeys: store.apiKeys, webhooks: store.webhooks, close: () => store.close() };
      });

      it('mustExist refuses a database without a ledger and creates nothing in it', async () => {
        const database = `svc_contract_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
        databases.push(database);
        await expect(openMongoStore(uri, { database, mustExist: true })).rejects.toThrow(
          MissingLedgerError,
        );
        admin ??= await new MongoClient(uri, { serverSelectionTimeoutMS: 10_000 }).connect();
        expect(await admin.db(database).listCollections().toArray()).toEqual([]);
        // Once the service has set it up, it opens.
        await (await openMongoStore(uri, { database })).close();
        await (await openMongoStore(uri, { database, mustExist: true })).close();
      });

      it('the probe write is an upsert that stays: one record, the time of the last probe', async () => {
        const store = await openFresh();
        try {
          const probes = () =>
            admin!.db(databases.at(-1)).collection('health_probe').find().toArray();
          admin ??= await new MongoClient(uri, { serverSelectionTimeoutMS: 10_000 }).connect();
          await store.probeWrite('2026-01-15T10:00:00.000Z');
          const [first, ...others] = await probes();
          expect(others).toEqual([]);
          expect(first).toEqual({ _id: 'probe', at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) });
          expect(first).toEqual({ _id: 'probe', at: '2026-01-15T10:00:00.000Z' });
          await new Promise((resolve) => setTimeout(resolve, 5));
          await store.probeWrite('2026-01-15T10:00:05.000Z');
          const after = await probes();
          expect(after).toHaveLength(1);
          expect(after[0]!.at > first!.at).toBe(true);
          expect(after[0]!.at).toBe('2026-01-15T10:00:05.000Z');
        } finally {
          await store.close();
        }
      });
    } else {
      // A skipped describe needs one case for the reason to show in the report.
      it('runs the store contract against a MongoDB server', () => {});
    }
  },
);
