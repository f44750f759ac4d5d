import { describe, it } from '@jest/globals';
import type { Store } from '../../src/ports/store.js';
import { describeStoreContract } from './ledger-store.contract.js';

const uri = process.env.MONGODB_URI;

// Becomes the adapter's opener once src/storage/mongo exists; until then there is nothing to
// run the contract against, with or without a server.
const openMongoStore = null as ((uri: string) => Promise<Store>) | null;

const skipReason = !uri
  ? 'MONGODB_URI is not set'
  : !openMongoStore
    ? 'there is no MongoDB store adapter yet'
    : null;

(skipReason === null ? describe : describe.skip)(
  skipReason === null ? 'MongoDB' : `MongoDB (skipped: ${skipReason})`,
  () => {
    if (uri && openMongoStore) {
      describeStoreContract('MongoDB', () => openMongoStore(uri));
    } else {
      // A skipped describe needs one case for the reason to show in the report.
      it('runs the store contract against a MongoDB server', () => {});
    }
  },
);
