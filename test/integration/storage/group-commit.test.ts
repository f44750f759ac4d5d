import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { MAX_BATCH } from '../../../src/storage/sqlite/sqlite-ledger.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { newServerKey } from '../../support/harness.js';
import { appendRequest, makeClaim, signClaim } from '../../contract/ledger-fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-group-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SQLite group commit', () => {
  it('commits a burst in groups of at most MAX_BATCH and holds nothing back', async () => {
    const groups: number[] = [];
    const store = openSqliteStore(join(dir, 'ledger.db'), {
      onGroupCommit: (appends) => groups.push(appends),
    });
    try {
      const key = newServerKey();
      const burst = 3 * MAX_BATCH + 17;
      const requests = Array.from({ length: burst }, () =>
        appendRequest(signClaim(makeClaim(), key)),
      );
      const results = await Promise.all(requests.map((r) => store.ledger.append(r)));
      expect(results.every((r) => r.status === 'appended')).toBe(true);
      // Every append was committed in some group, none in a group over the bound, and appends
      // issued together did share commits.
      expect(groups.reduce((sum, n) => sum + n, 0)).toBe(burst);
      expect(Math.max(...groups)).toBeLessThanOrEqual(MAX_BATCH);
      expect(groups.length).toBeLessThan(burst / 2);
      expect((await store.ledger.head()).sequence).toBe(burst);

      // A lone append later is a group of its own: nothing was left queued.
      groups.length = 0;
      await store.ledger.append(appendRequest(signClaim(makeClaim(), key)));
      expect(groups).toEqual([1]);
    } finally {
      await store.close();
    }
  });
});
