import { afterEach, describe, expect, it } from '@jest/globals';
import type { Store } from '../../src/ports/store.js';
import type { WebhookReceiver } from '../../src/ports/webhook-store.js';
import { newServerKey } from '../support/harness.js';
import { appendRequest, makeClaim, signClaim } from './ledger-fixtures.js';

const AT = '2026-03-01T12:00:00.000Z';

let ids = 0;
const receiver = (owner: string): WebhookReceiver => ({
  id: `wh_scope_${++ids}`,
  owner,
  url: `https://hooks.example.com/${ids}`,
  event: 'receipt.created',
  secretSealed: `sealed-${ids}`,
  status: 'active',
  createdAt: new Date(Date.parse(AT) - 1000 + ids).toISOString(),
  disabledAt: null,
  disabledReason: null,
});

/**
 * Webhook tenancy every backend must have: with the 'owner' scope a receipt reaches only the
 * receivers of the account that asked for it; `disableOwned` stops all of an account's.
 * `open(scope)` gives a fresh store with that fan-out scope.
 */
export function describeWebhookScopeContract(
  name: string,
  open: (webhookScope: 'all' | 'owner') => Promise<Store>,
): void {
  describe(`${name} webhook fan-out scope`, () => {
    const serverKey = newServerKey();
    let store: Store | undefined;
    afterEach(async () => {
      await store?.close();
      store = undefined;
    });

    const setup = async (scope: 'all' | 'owner') => {
      store = await open(scope);
      const mine = receiver('acct-1');
      const theirs = receiver('acct-2');
      for (const r of [mine, theirs]) await store.webhooks.insertReceiver(r, 20);
      return { store, mine, theirs };
    };
    const append = async (s: Store, apiKeyId: string | null) => {
      const signed = signClaim(makeClaim(), serverKey, { apiKeyId, issuedAt: AT });
      expect((await s.ledger.append(appendRequest(signed))).status).toBe('appended');
    };
    const delivered = async (s: Store, r: WebhookReceiver) =>
      (await s.webhooks.listDeliveries(r.id, 10)).length;

    it("'all' sends every receipt to every active receiver", async () => {
      const { store: s, mine, theirs } = await setup('all');
      await append(s, 'acct-1');
      await append(s, null);
      expect([await delivered(s, mine), await delivered(s, theirs)]).toEqual([2, 2]);
    });

    it("'owner' sends a receipt only to its own account's receivers, and a keyless one to none", async () => {
      const { store: s, mine, theirs } = await setup('owner');
      await append(s, 'acct-1');
      await append(s, null);
      expect([await delivered(s, mine), await delivered(s, theirs)]).toEqual([1, 0]);
    });

    it("disableOwned disables the account's active receivers only, once", async () => {
      const { store: s, mine, theirs } = await setup('all');
      const second = receiver('acct-1');
      await s.webhooks.insertReceiver(second, 20);
      expect(await s.webhooks.disableOwned('acct-1', 'account revoked', AT)).toBe(2);
      expect(await s.webhooks.disableOwned('acct-1', 'account revoked', AT)).toBe(0);
      expect(await s.webhooks.getReceiver('acct-1', mine.id)).toMatchObject({
        status: 'disabled',
        disabledReason: 'account revoked',
        disabledAt: AT,
      });
      expect(await s.webhooks.getReceiver('acct-2', theirs.id)).toMatchObject({
        status: 'active',
      });
      await append(s, 'acct-1');
      expect([await delivered(s, mine), await delivered(s, theirs)]).toEqual([0, 1]);
    });
  });
}
