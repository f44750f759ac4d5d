import type { Db } from 'mongodb';
import { MongoApiKeys } from '../../src/storage/mongo/mongo-api-keys.js';
import { MongoWebhooks } from '../../src/storage/mongo/mongo-webhooks.js';
import { mingoClient, mingoDb } from '../support/mingo-collections.js';
import { describeAccountsContract } from './accounts.contract.js';

// The MongoDB adapters' queries and updates, evaluated by mingo without a server: what the
// server would compute from them, and a transaction's all-or-nothing on the code path. The
// server's own atomicity and indexes are the MongoDB contract suite's (MONGODB_URI).
describeAccountsContract(
  'MongoDB adapters on mingo',
  async () => {
    const db = mingoDb();
    let refuse = false;
    const collection = db.collection.bind(db);
    const wrapped = {
      collection(name: string) {
        const c = collection(name);
        if (name !== 'webhook_receivers') return c;
        const refused = () => Promise.reject(new Error('receivers refused'));
        return new Proxy(c, {
          get: (target, prop, receiver) =>
            refuse && typeof prop === 'string' && prop.startsWith('update')
              ? refused
              : Reflect.get(target, prop, receiver),
        });
      },
    } as unknown as Db;
    const client = mingoClient(db);
    return {
      apiKeys: new MongoApiKeys(client, wrapped),
      webhooks: new MongoWebhooks(client, wrapped),
      failReceiverWrites: async () => {
        refuse = true;
      },
      close: async () => {},
    };
  },
  true,
);
