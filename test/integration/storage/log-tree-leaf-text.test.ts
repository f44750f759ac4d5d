import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { receiptHashText } from '@svc/verify';
import { type ReceiptDraft, sealReceiptWithText } from '../../../src/core/receipt.js';
import type { AppendRequest } from '../../../src/ports/ledger-store.js';
import type { Store } from '../../../src/ports/store.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { makeClaim, signClaim } from '../../contract/ledger-fixtures.js';
import { newServerKey } from '../../support/harness.js';

// The evaluate path hands the store the text it hashed for chain.receipt_hash, and the SQLite
// tree takes it as the receipt's leaf instead of canonicalizing the receipt again.

const serverKey = newServerKey();
const log = 'svc/test';
const leafHashOf = (text: string) =>
  createHash('sha256')
    .update(Buffer.concat([Buffer.from([0]), Buffer.from(text, 'utf8')]))
    .digest();

/** An append whose build returns the sealed receipt with `text(hashText)` as its hash text. */
function request(text: (hashText: string) => string): AppendRequest {
  const signed = signClaim(makeClaim(), serverKey, { log });
  return {
    scope: signed.scope,
    claimId: signed.claim.claim_id,
    build: (head) => {
      const sealed = sealReceiptWithText(signed.receipt as ReceiptDraft, head, {
        signer: serverKey,
        log,
      });
      return {
        entry: { ...signed.entryAt(head), receipt: sealed.receipt },
        receiptHashText: text(sealed.hashText),
      };
    },
  };
}

describe('SQLite log tree leaf from the builder', () => {
  let store: Store;
  beforeEach(() => {
    store = openSqliteStore(':memory:');
  });
  afterEach(() => store.close());

  it('stores the leaf of the receipt hash text the builder gives', async () => {
    const result = await store.ledger.append(request((text) => text));
    expect(result.status).toBe('appended');
    const { receipt } = result.entry;
    const leaf = (await store.tree.hashes([{ level: 0, index: 0 }])).values().next().value;
    expect(Buffer.from(leaf!)).toEqual(leafHashOf(receiptHashText(receipt)));
  });

  it('refuses a hash text that is not the preimage of chain.receipt_hash and writes nothing', async () => {
    await store.ledger.append(request((text) => text));
    await expect(store.ledger.append(request((text) => `${text} `))).rejects.toThrow(
      'not the preimage of chain.receipt_hash',
    );
    expect((await store.ledger.head()).sequence).toBe(1);
    expect(await store.tree.size()).toBe(1);
    await expect(store.tree.hashes([{ level: 0, index: 1 }])).rejects.toThrow('no stored hash');
  });
});
