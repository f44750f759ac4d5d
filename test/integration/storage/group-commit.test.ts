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

  it('counts in the aggregates exactly the appends a group committed, summed per row', async () => {
    const groups: number[] = [];
    const store = openSqliteStore(join(dir, 'aggregates.db'), {
      onGroupCommit: (appends) => groups.push(appends),
    });
    try {
      const key = newServerKey();
      const claims = [
        makeClaim({ kind: 'allowed', agent: 'agent-a', repository: 'org/one' }),
        makeClaim({ kind: 'blocked', agent: 'agent-a', repository: 'org/one' }),
        makeClaim({ kind: 'escalated', agent: 'agent-b', repository: 'org/two' }),
        makeClaim({ kind: 'allowed', agent: 'agent-a', repository: 'org/two' }),
        makeClaim({ kind: 'non_deterministic', agent: null, repository: 'org/one' }),
      ];
      const requests = claims.map((claim) => appendRequest(signClaim(claim, key)));
      // A request of the same group that fails: rolled back alone, and never counted.
      const ghost = appendRequest(
        signClaim(makeClaim({ agent: 'agent-ghost', repository: 'org/ghost' }), key),
      );
      const failing = {
        ...ghost,
        build: () => {
          throw new Error('the evaluation failed');
        },
      };
      const settled = await Promise.allSettled(
        [...requests.slice(0, 2), failing, ...requests.slice(2)].map((r) => store.ledger.append(r)),
      );
      expect(groups).toEqual([6]);
      expect(settled.map((r) => r.status)).toEqual([
        'fulfilled',
        'fulfilled',
        'rejected',
        'fulfilled',
        'fulfilled',
        'fulfilled',
      ]);

      // The aggregates, against a recount of the receipts the ledger holds.
      const entries = await store.ledger.list(0, 100);
      expect(entries).toHaveLength(5);
      const receipts = entries.map((e) => e.receipt);
      const count = (pick: (r: (typeof receipts)[number]) => boolean) =>
        receipts.filter(pick).length;
      const totals = await store.queries.totals();
      expect(totals.total).toBe(5);
      expect(totals.by_verdict).toEqual({
        ALLOWED: count((r) => r.policy.verdict === 'ALLOWED'),
        BLOCKED: count((r) => r.policy.verdict === 'BLOCKED'),
        ESCALATED: count((r) => r.policy.verdict === 'ESCALATED'),
      });
      expect(totals.by_verdict.ALLOWED + totals.by_verdict.BLOCKED).toBeGreaterThan(0);
      const repositories = await store.queries.repositories({ limit: 10 });
      expect(repositories.map((r) => [r.repository, r.total, r.last_receipt.sequence])).toEqual([
        [
          'org/one',
          3,
          Math.max(
            ...receipts
              .filter((r) => r.subject.repository === 'org/one')
              .map((r) => r.chain.sequence),
          ),
        ],
        [
          'org/two',
          2,
          Math.max(
            ...receipts
              .filter((r) => r.subject.repository === 'org/two')
              .map((r) => r.chain.sequence),
          ),
        ],
      ]);
      const agents = await store.queries.agents({ limit: 10 });
      const ofAgent = (agent: string) => receipts.filter((r) => r.subject.agent === agent);
      expect(agents.map((a) => [a.agent, a.total, a.first_seen, a.last_seen])).toEqual(
        ['agent-a', 'agent-b'].map((agent) => [
          agent,
          ofAgent(agent).length,
          ofAgent(agent)[0]!.issued_at,
          ofAgent(agent).at(-1)!.issued_at,
        ]),
      );
      // Each submitter scope's aggregates hold its own receipts only, summed the same way.
      for (const scope of new Set(requests.map((r) => r.scope))) {
        const own = await store.queries.totals(scope);
        expect(own.total).toBe(entries.filter((_, i) => requests[i]!.scope === scope).length);
      }
      // A later group adds to the same rows.
      await store.ledger.append(
        appendRequest(signClaim(makeClaim({ agent: 'agent-b', repository: 'org/two' }), key)),
      );
      expect((await store.queries.totals()).total).toBe(6);
      expect(
        (await store.queries.agents({ limit: 10 })).find((a) => a.agent === 'agent-b')!.total,
      ).toBe(2);
    } finally {
      await store.close();
    }
  });
});
