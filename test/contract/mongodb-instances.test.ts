import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MongoClient } from 'mongodb';
import { verifyReceipt } from '@svc/verify';
import type { Store } from '../../src/ports/store.js';
import { openMongoStore } from '../../src/storage/mongo/mongo-store.js';
import { newServerKey } from '../support/harness.js';
import { appendRequest, makeClaim, signClaim } from './ledger-fixtures.js';

// jest.config.js moves MONGODB_URI here, out of the environment of the processes tests start.
const uri = process.env.SVC_TEST_MONGODB_URI;

// Several svc instances on one database: each store below has its own client, as separate
// processes would, so appends race for the head through MongoDB itself.
(uri ? describe : describe.skip)(
  uri
    ? 'MongoDB store shared by several instances'
    : 'MongoDB store shared by several instances (skipped: MONGODB_URI is not set)',
  () => {
    const database = `svc_instances_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
    const serverKey = newServerKey();
    const stores: Store[] = [];

    beforeAll(async () => {
      if (!uri) return;
      for (let i = 0; i < 3; i++) stores.push(await openMongoStore(uri, { database }));
    });

    afterAll(async () => {
      if (!uri) return;
      for (const store of stores) await store.close();
      const admin = await new MongoClient(uri).connect();
      await admin.db(database).dropDatabase();
      await admin.close();
    });

    it('keep one gap-free chain; every receipt signs the position it is stored at', async () => {
      const perInstance = 15;
      const signed = stores.map(() =>
        Array.from({ length: perInstance }, () => signClaim(makeClaim(), serverKey)),
      );
      const results = await Promise.all(
        stores.flatMap((store, i) => signed[i]!.map((s) => store.ledger.append(appendRequest(s)))),
      );
      expect(results.every((r) => r.status === 'appended')).toBe(true);

      const entries = await stores[0]!.ledger.list(0, 1000);
      const total = stores.length * perInstance;
      expect(entries.map((e) => e.receipt.chain.sequence)).toEqual(
        Array.from({ length: total }, (_, i) => i + 1),
      );
      entries.forEach((entry, i) => {
        const { receipt } = entry;
        const previous = i === 0 ? null : entries[i - 1]!.receipt.chain.receipt_hash;
        expect(receipt.chain.previous_receipt_hash).toBe(previous);
        // A loser of a race was built again at its new head: re-signed, not patched.
        const verdict = verifyReceipt(receipt, {
          publicKey: serverKey.publicKeyRaw,
          keyId: serverKey.keyId,
          ledgerHash: receipt.chain.receipt_hash,
          previousLedgerHash: previous,
        });
        expect(verdict.valid).toBe(true);
        expect(receipt.position).toMatchObject({
          sequence: receipt.chain.sequence,
          previous_receipt_hash: previous,
        });
      });
      // What each append answered is what the ledger holds.
      for (const result of results) {
        expect(await stores[1]!.ledger.getByReceiptId(result.entry.receipt.receipt_id)).toEqual(
          result.entry,
        );
      }
      expect((await stores[2]!.ledger.stats()).total).toBe(total);
    });

    it('answer one receipt for one claim_id appended by every instance at once', async () => {
      const claim = makeClaim();
      const results = await Promise.all(
        stores.map((store) => store.ledger.append(appendRequest(signClaim(claim, serverKey)))),
      );
      expect(results.filter((r) => r.status === 'appended')).toHaveLength(1);
      const ids = new Set(results.map((r) => r.entry.receipt.receipt_id));
      expect(ids.size).toBe(1);
    });
  },
);
