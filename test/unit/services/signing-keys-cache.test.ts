import { describe, expect, it } from '@jest/globals';
import { SigningKeyService } from '../../../src/services/signing-keys.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { ManualClock, newServerKey } from '../../support/harness.js';

const ORIGIN = 'svc.example/log';

describe('the key history as verify reads it', () => {
  it("answers from its copy for cacheMs, then sees another process's change", async () => {
    const store = openSqliteStore(':memory:');
    const clock = new ManualClock();
    try {
      const first = newServerKey();
      const cli = new SigningKeyService({ store: store.signingKeys, clock, origin: ORIGIN });
      await cli.register(first);
      const reader = new SigningKeyService({
        store: store.signingKeys,
        clock,
        origin: ORIGIN,
        cacheMs: 5_000,
      });
      expect(await reader.keyIds()).toEqual([first.keyId]);

      const next = newServerKey();
      await cli.rotate(first, next);
      clock.advance(4_999);
      expect(await reader.keyIds()).toEqual([first.keyId]);
      expect((await reader.verificationKeys()).map((k) => k.record.status)).toEqual(['current']);
      clock.advance(1);
      expect(await reader.keyIds()).toEqual([first.keyId, next.keyId]);
      expect((await reader.verificationKeys()).map((k) => k.record.status)).toEqual([
        'retired',
        'current',
      ]);
    } finally {
      await store.close();
    }
  });

  it('sees its own changes at once, and reads every time without cacheMs', async () => {
    const store = openSqliteStore(':memory:');
    const clock = new ManualClock();
    try {
      const first = newServerKey();
      const own = new SigningKeyService({
        store: store.signingKeys,
        clock,
        origin: ORIGIN,
        cacheMs: 60_000,
      });
      await own.register(first);
      expect(await own.keyIds()).toEqual([first.keyId]);
      const next = newServerKey();
      await own.rotate(first, next);
      expect(await own.keyIds()).toEqual([first.keyId, next.keyId]);

      const live = new SigningKeyService({ store: store.signingKeys, clock, origin: ORIGIN });
      expect(await live.keyIds()).toEqual([first.keyId, next.keyId]);
      await own.rotate(next, newServerKey());
      expect(await live.keyIds()).toHaveLength(3);
    } finally {
      await store.close();
    }
  });
});
