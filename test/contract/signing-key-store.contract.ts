import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { KeyRevocation, SigningKeyRecord } from '@svc/verify';
import type { ServerKey } from '../../src/ports/signer.js';
import type { SigningKeyState } from '../../src/ports/signing-key-store.js';
import type { Store } from '../../src/ports/store.js';
import { SigningKeyService } from '../../src/services/signing-keys.js';
import { ManualClock, newServerKey } from '../support/harness.js';
import { appendRequest, makeClaim, signClaim } from './ledger-fixtures.js';

const ORIGIN = 'svc.example/ledger';

/** A history record written straight through the port, without the service's rules. */
const record = (key: ServerKey, fields: Partial<SigningKeyRecord> = {}): SigningKeyRecord => ({
  key_id: key.keyId,
  public_key_pem: key.publicKeyPem,
  verifier_key: null,
  status: 'current',
  first_sequence: 1,
  last_sequence: null,
  activated_at: '2026-01-01T00:00:00.000Z',
  retired_at: null,
  revoked_from_sequence: null,
  revoked_at: null,
  transition: null,
  revocation: null,
  ...fields,
});

/** A revocation statement as the port stores it (the store checks no signature). */
const revocationOf = (keyId: string): KeyRevocation => ({
  statement: {
    type: 'svc-key-revocation-v1',
    log: ORIGIN,
    key_id: keyId,
    revoked_from_sequence: 1,
    signer_key_id: keyId,
    issued_at: '2026-01-02T00:00:00.000Z',
  },
  signature: 'AA==',
});

/** The signing-key history port (ports/signing-key-store.ts) as every store keeps it. */
export function describeSigningKeyContract(name: string, open: () => Promise<Store>): void {
  describe(`${name} signing-key history contract`, () => {
    let store: Store;
    // One instant for every change: the order of keys must not rest on timestamps.
    const clock = new ManualClock();
    const service = () =>
      new SigningKeyService({ store: store.signingKeys, clock, origin: ORIGIN });
    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    const append = (key: ServerKey) =>
      store.ledger.append(appendRequest(signClaim(makeClaim(), key)));

    it('starts empty; a change that writes nothing leaves it empty', async () => {
      expect(await store.signingKeys.list()).toEqual([]);
      let seen: SigningKeyState | undefined;
      expect(
        await store.signingKeys.change((state) => {
          seen = state;
          return {};
        }),
      ).toEqual([]);
      expect(seen).toMatchObject({ history: [], head: 0 });
      expect(seen!.receiptKeyRuns()).toEqual([]);
    });

    it('shows decide the head and the runs of receipts by key, in sequence order', async () => {
      const [a, b] = [newServerKey(), newServerKey()];
      for (const key of [a, a, a, b, b, a]) await append(key);
      const issued = (await store.ledger.list(0, 10)).map((e) => e.receipt.issued_at);
      let head = -1;
      let runs: ReturnType<SigningKeyState['receiptKeyRuns']> = [];
      await store.signingKeys.change((state) => {
        head = state.head;
        runs = state.receiptKeyRuns();
        return {};
      });
      expect(head).toBe(6);
      expect(runs).toEqual([
        { key_id: a.keyId, first_sequence: 1, last_sequence: 3, first_issued_at: issued[0] },
        { key_id: b.keyId, first_sequence: 4, last_sequence: 5, first_issued_at: issued[3] },
        { key_id: a.keyId, first_sequence: 6, last_sequence: 6, first_issued_at: issued[5] },
      ]);
    });

    it('keeps records exactly as written, transition included', async () => {
      const [a, b] = [newServerKey(), newServerKey()];
      await service().register(a);
      await append(a);
      const history = await service().rotate(a, b);
      expect(history).toEqual(await store.signingKeys.list());
      expect(history.map((k) => [k.key_id, k.status, k.first_sequence, k.last_sequence])).toEqual([
        [a.keyId, 'retired', 1, 1],
        [b.keyId, 'current', 2, null],
      ]);
      expect(history[1]!.transition).toEqual({
        statement: {
          type: 'svc-key-transition-v1',
          log: ORIGIN,
          previous_key_id: a.keyId,
          new_key_id: b.keyId,
          new_public_key: Buffer.from(b.publicKeyRaw).toString('base64'),
          first_sequence: 2,
          issued_at: new Date(clock.now()).toISOString(),
        },
        signature: expect.any(String),
      });
      expect(history[0]).toEqual({
        ...record(a, {
          verifier_key: expect.stringMatching(/^svc\.example\/ledger\+[0-9a-f]{8}\+/) as never,
          status: 'retired',
          last_sequence: 1,
          activated_at: new Date(clock.now()).toISOString(),
          retired_at: new Date(clock.now()).toISOString(),
        }),
      });
    });

    it('lists keys sharing a first_sequence in the order they were added', async () => {
      // Rotations with no receipt between them: every key starts at sequence 1, same instant.
      const keys = Array.from({ length: 5 }, () => newServerKey());
      await service().register(keys[0]!);
      for (let i = 1; i < keys.length; i++) await service().rotate(keys[i - 1]!, keys[i]!);
      const history = await store.signingKeys.list();
      expect(history.map((k) => k.key_id)).toEqual(keys.map((k) => k.keyId));
      expect(history.map((k) => [k.first_sequence, k.last_sequence, k.status])).toEqual([
        [1, 0, 'retired'],
        [1, 0, 'retired'],
        [1, 0, 'retired'],
        [1, 0, 'retired'],
        [1, null, 'current'],
      ]);
    });

    it('refuses appends signed by a key that is no longer current, and leaves the ledger as it was', async () => {
      const [a, b] = [newServerKey(), newServerKey()];
      await service().register(a);
      await append(a);
      await service().rotate(a, b);
      await expect(append(a)).rejects.toMatchObject({ code: 'unavailable' });
      expect((await store.ledger.head()).sequence).toBe(1);
      await append(b);
      expect((await store.ledger.head()).sequence).toBe(2);
    });

    it('allows each transition once: retire, revoke; a decide that throws writes nothing', async () => {
      const [a, b] = [newServerKey(), newServerKey()];
      await store.signingKeys.change(() => ({ insert: [record(a)] }));
      const at = '2026-01-02T00:00:00.000Z';
      await store.signingKeys.change(() => ({
        retire: { key_id: a.keyId, last_sequence: 0, retired_at: at },
        insert: [record(b, { activated_at: at })],
      }));
      // A key already retired cannot be retired again, nor can one never added.
      await expect(
        store.signingKeys.change(() => ({
          retire: { key_id: a.keyId, last_sequence: 3, retired_at: at },
        })),
      ).rejects.toHaveProperty('message', expect.any(String));
      await expect(
        store.signingKeys.change(() => ({
          revoke: {
            key_id: 'sha256:unknown',
            revoked_from_sequence: 1,
            revoked_at: at,
            revocation: revocationOf('sha256:unknown'),
          },
        })),
      ).rejects.toHaveProperty('message', expect.any(String));
      await store.signingKeys.change(() => ({
        revoke: {
          key_id: a.keyId,
          revoked_from_sequence: 1,
          revoked_at: at,
          revocation: revocationOf(a.keyId),
        },
      }));
      await expect(
        store.signingKeys.change(() => ({
          revoke: {
            key_id: a.keyId,
            revoked_from_sequence: 1,
            revoked_at: at,
            revocation: revocationOf(a.keyId),
          },
        })),
      ).rejects.toHaveProperty('message', expect.any(String));
      // A key_id is added once.
      await expect(
        store.signingKeys.change(() => ({ insert: [record(b, { first_sequence: 2 })] })),
      ).rejects.toHaveProperty('message', expect.any(String));
      await expect(
        store.signingKeys.change(() => {
          throw new Error('decided against it');
        }),
      ).rejects.toHaveProperty('message', 'decided against it');
      const history = await store.signingKeys.list();
      expect(
        history.map((k) => [k.key_id, k.status, k.last_sequence, k.revoked_from_sequence]),
      ).toEqual([
        [a.keyId, 'revoked', 0, 1],
        [b.keyId, 'current', null, null],
      ]);
      // Revoking the current key keeps it revoked when it is later retired.
      await store.signingKeys.change(() => ({
        revoke: {
          key_id: b.keyId,
          revoked_from_sequence: 1,
          revoked_at: at,
          revocation: revocationOf(b.keyId),
        },
      }));
      await store.signingKeys.change(() => ({
        retire: { key_id: b.keyId, last_sequence: 0, retired_at: at },
      }));
      expect((await store.signingKeys.list())[1]).toMatchObject({
        status: 'revoked',
        last_sequence: 0,
        retired_at: at,
      });
    });
  });
}
