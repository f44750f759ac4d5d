import { createHash, randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { ApiKeyRecord, ApiKeyStore } from '../../src/ports/api-key-store.js';
import type { WebhookReceiver, WebhookStore } from '../../src/ports/webhook-store.js';

export interface AccountStores {
  apiKeys: ApiKeyStore;
  webhooks: WebhookStore;
  /**
   * Makes every later write of a webhook receiver fail, where the backend's test can (to see
   * that a revocation whose second half fails leaves nothing of its first half).
   */
  failReceiverWrites?: () => Promise<void>;
  close(): Promise<void>;
}

const CREATED = '2026-01-15T10:00:00.000Z';
const AT = '2026-02-01T00:00:00.000Z';
const REASON = 'account revoked';

const key = (overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
  id: randomUUID(),
  keyId: `kid_${randomUUID().replace(/-/g, '').slice(0, 26).toUpperCase()}`,
  email: `${randomUUID()}@example.com`,
  keyDigest: createHash('sha256').update(randomUUID()).digest('hex'),
  tier: 'pilot',
  lockedPolicy: null,
  reader: 'own',
  reviewer: false,
  createdAt: CREATED,
  updatedAt: CREATED,
  revokedAt: null,
  ...overrides,
});

let ids = 0;
const receiver = (owner: string): WebhookReceiver => ({
  id: `wh_account_${++ids}`,
  owner,
  url: `https://hooks.example.com/${ids}`,
  event: 'receipt.created',
  secretSealed: `sealed-${ids}`,
  status: 'active',
  createdAt: new Date(Date.parse(CREATED) + ids).toISOString(),
  disabledAt: null,
  disabledReason: null,
});

/**
 * Closing an account, on every backend: `revokeAccount` revokes the key and disables the
 * account's webhook receivers in one transaction, or changes nothing.
 */
export function describeAccountsContract(
  name: string,
  open: () => Promise<AccountStores>,
  /** Whether `open` gives stores with `failReceiverWrites`. */
  canFail = false,
): void {
  describe(`${name} account revocation`, () => {
    let stores: AccountStores | undefined;
    afterEach(async () => {
      await stores?.close();
      stores = undefined;
    });

    /** Two accounts with two receivers each; the first account's second receiver disabled. */
    const setup = async () => {
      stores = await open();
      const s = stores;
      const mine = key();
      const theirs = key();
      for (const k of [mine, theirs]) expect(await s.apiKeys.insertIfAbsent(k)).toEqual(k);
      const receivers = [receiver(mine.id), receiver(mine.id), receiver(theirs.id)];
      for (const r of receivers) expect(await s.webhooks.insertReceiver(r, 20)).toBe('created');
      await s.webhooks.disableReceiver(receivers[1]!.id, 'failing', CREATED);
      const state = async () => ({
        keys: await Promise.all([mine, theirs].map((k) => s.apiKeys.findByKeyId(k.keyId))),
        mine: await s.webhooks.listReceivers(mine.id),
        theirs: await s.webhooks.listReceivers(theirs.id),
      });
      return { s, mine, theirs, receivers, state };
    };

    it('keys and receivers read back as they were written', async () => {
      const { s, mine, receivers } = await setup();
      expect(await s.apiKeys.findByKeyId(mine.keyId)).toEqual(mine);
      expect(await s.apiKeys.findByDigest(mine.keyDigest)).toEqual(mine);
      expect(await s.webhooks.listReceivers(mine.id)).toEqual([
        receivers[0],
        { ...receivers[1], status: 'disabled', disabledAt: CREATED, disabledReason: 'failing' },
      ]);
      expect(await s.webhooks.getReceiver(mine.id, receivers[0]!.id)).toEqual(receivers[0]);
    });

    it("revokes the key and disables the account's active receivers, no one else's", async () => {
      const { s, mine, theirs, receivers, state } = await setup();
      const before = await state();
      expect(await s.apiKeys.revokeAccount(mine.keyId, REASON, AT)).toEqual({
        receiversDisabled: 1,
      });
      const after = await state();
      expect(after.keys).toEqual([{ ...mine, revokedAt: AT, updatedAt: AT }, theirs]);
      expect(await s.apiKeys.findActiveByEmail(mine.email)).toBeNull();
      expect(after.mine).toEqual([
        { ...receivers[0], status: 'disabled', disabledAt: AT, disabledReason: REASON },
        // Already disabled: its time and reason stay.
        before.mine[1],
      ]);
      expect(after.theirs).toEqual(before.theirs);
    });

    it('a key that is not active is null and changes nothing: revoked already, or unknown', async () => {
      const { s, mine, state } = await setup();
      expect(await s.apiKeys.revokeAccount(mine.keyId, REASON, AT)).not.toBeNull();
      const before = await state();
      const later = '2026-03-01T00:00:00.000Z';
      expect(await s.apiKeys.revokeAccount(mine.keyId, 'again', later)).toBeNull();
      expect(await s.apiKeys.revokeAccount('kid_unknown', REASON, later)).toBeNull();
      expect(await state()).toEqual(before);
    });

    it('an account without receivers is revoked with none disabled', async () => {
      stores = await open();
      const lone = key();
      await stores.apiKeys.insertIfAbsent(lone);
      expect(await stores.apiKeys.revokeAccount(lone.keyId, REASON, AT)).toEqual({
        receiversDisabled: 0,
      });
      expect((await stores.apiKeys.findByKeyId(lone.keyId))!.revokedAt).toBe(AT);
    });

    (canFail ? it : it.skip)(
      canFail
        ? 'all or nothing: when the receivers cannot be written, the key stays active'
        : 'all or nothing (skipped: this backend cannot be made to refuse one write)',
      async () => {
        const { s, mine, state } = await setup();
        await s.failReceiverWrites!();
        const before = await state();
        // The driver's error may come from another realm, which toThrow() does not see as one.
        await expect(s.apiKeys.revokeAccount(mine.keyId, REASON, AT)).rejects.toHaveProperty(
          'message',
        );
        expect(await state()).toEqual(before);
        expect(await s.apiKeys.findActiveByEmail(mine.email)).toEqual(mine);
      },
    );
  });
}
