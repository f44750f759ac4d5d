import { createHash, randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { receiptHash } from '@svc/verify';
import type { ChainHead } from '../../src/core/receipt.js';
import type { PolicyRecord } from '../../src/ports/policy-store.js';
import type { ApiKeyRecord } from '../../src/ports/api-key-store.js';
import type { AppendRequest, AppendResult, LedgerEntry } from '../../src/ports/ledger-store.js';
import type { ReceiptFilter, SequencePage } from '../../src/ports/ledger-queries.js';
import type { Store } from '../../src/ports/store.js';
import { newServerKey } from '../support/harness.js';
import {
  appendRequest,
  dispositionRequest,
  makeClaim,
  signClaim,
  type ClaimOptions,
  type SignedClaim,
} from './ledger-fixtures.js';

const EMPTY_HEAD: ChainHead = { sequence: 0, receipt_hash: null };
const OTHER_HASH = `sha256:${'ab'.repeat(32)}`;

function appended(result: AppendResult): LedgerEntry {
  expect(result.status).toBe('appended');
  return result.entry;
}

/**
 * A driver's errors may belong to another realm than the test's (a native addon loaded once
 * per process), where `rejects.toThrow()` does not see an Error: rely on the message only.
 */
async function expectRejected(promise: Promise<unknown>, message?: string): Promise<void> {
  await expect(promise).rejects.toHaveProperty(
    'message',
    message === undefined ? expect.any(String) : expect.stringContaining(message),
  );
}

/**
 * The behaviour every Store backend must have. `open` gives a fresh, empty store for each
 * case; the suite closes it.
 */
export function describeStoreContract(name: string, open: () => Promise<Store>): void {
  describe(`${name} store contract`, () => {
    const serverKey = newServerKey();
    let store: Store;

    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    const sign = (options: ClaimOptions & { apiKeyId?: string | null } = {}): SignedClaim =>
      signClaim(makeClaim(options), serverKey, { apiKeyId: options.apiKeyId ?? null });

    const append = async (signed: SignedClaim = sign()): Promise<LedgerEntry> =>
      appended(await store.ledger.append(appendRequest(signed)));

    async function appendMany(n: number): Promise<LedgerEntry[]> {
      const entries: LedgerEntry[] = [];
      for (let i = 0; i < n; i++) entries.push(await append());
      return entries;
    }

    /** Everything an append could change, to show that a failed one changed none of it. */
    const snapshot = async () => ({
      head: await store.ledger.head(),
      entries: await store.ledger.list(0, 1000),
      stats: await store.ledger.stats(),
    });

    it('answers a trivial ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    describe('ledger', () => {
      it('an empty ledger has head {sequence: 0, receipt_hash: null}', async () => {
        expect(await store.ledger.head()).toEqual(EMPTY_HEAD);
        expect(await store.ledger.list(0, 10)).toEqual([]);
      });

      it('append places each receipt after the head and links it to the previous one', async () => {
        const entries = await appendMany(3);
        entries.forEach((entry, i) => {
          expect(entry.receipt.chain).toEqual({
            sequence: i + 1,
            previous_receipt_hash: i === 0 ? null : entries[i - 1]!.receipt.chain.receipt_hash,
            receipt_hash: receiptHash(entry.receipt),
          });
        });
        expect(await store.ledger.head()).toEqual({
          sequence: 3,
          receipt_hash: entries[2]!.receipt.chain.receipt_hash,
        });
      });

      it('build receives the current head', async () => {
        const first = appendRequest(sign());
        const e1 = appended(await store.ledger.append(first));
        expect(first.heads.at(-1)).toEqual(EMPTY_HEAD);

        const second = appendRequest(sign());
        appended(await store.ledger.append(second));
        expect(second.heads.at(-1)).toEqual({
          sequence: 1,
          receipt_hash: e1.receipt.chain.receipt_hash,
        });
      });

      it('append answers the entry as built and stored', async () => {
        const signed = sign({ apiKeyId: 'key-1' });
        const entry = await append(signed);
        expect(entry).toEqual(signed.entryAt(EMPTY_HEAD));
        expect(await store.ledger.getByReceiptId(signed.receipt.receipt_id)).toEqual(entry);
      });

      it('appending a claim_id already in the ledger answers exists with the stored entry and writes nothing', async () => {
        const claim = makeClaim();
        const original = await append(signClaim(claim, serverKey));
        const before = await snapshot();

        const again = signClaim(claim, serverKey, { apiKeyId: 'key-2', scope: 'test' });
        const result = await store.ledger.append(appendRequest(again));

        expect(result).toEqual({ status: 'exists', entry: original });
        expect(await snapshot()).toEqual(before);
        expect(await store.ledger.getByReceiptId(again.receipt.receipt_id)).toBeNull();
      });

      it('keeps claim_ids per scope: the same claim_id in another scope is a second receipt', async () => {
        const claim = makeClaim();
        const first = await append(signClaim(claim, serverKey, { scope: 'key:a' }));
        const second = await append(signClaim(claim, serverKey, { scope: 'key:b' }));
        expect(second.receipt.receipt_id).not.toBe(first.receipt.receipt_id);
        expect(await store.ledger.getByClaimId('key:a', claim.claim_id)).toEqual(first);
        expect(await store.ledger.getByClaimId('key:b', claim.claim_id)).toEqual(second);
        expect(await store.ledger.getByClaimId('key:c', claim.claim_id)).toBeNull();
      });

      it('stores v2 receipts whose signed position is the stored one, and v1 receipts beside them', async () => {
        await append(signClaim(makeClaim(), serverKey, { contract: 'v1' }));
        const v2 = await append(sign());
        const v1 = await append(signClaim(makeClaim(), serverKey, { contract: 'v1' }));
        expect(v2.receipt.position).toEqual({
          log: 'svc/test',
          sequence: 2,
          previous_receipt_hash: (await store.ledger.list(0, 1))[0]!.receipt.chain.receipt_hash,
        });
        expect(v1.receipt.chain.previous_receipt_hash).toBe(v2.receipt.chain.receipt_hash);
        expect(await store.ledger.receiptHashAt(2)).toBe(v2.receipt.chain.receipt_hash);
        expect(await store.ledger.receiptHashAt(4)).toBeNull();
      });

      it('round trips entries by receipt id and claim id, and the stored receipt hash', async () => {
        const entries = await appendMany(3);
        for (const entry of entries) {
          const { receipt_id, claim_id, chain } = entry.receipt;
          expect(await store.ledger.getByReceiptId(receipt_id)).toEqual(entry);
          expect(await store.ledger.getByClaimId('test', claim_id)).toEqual(entry);
          expect(await store.ledger.receiptHashOf(receipt_id)).toBe(chain.receipt_hash);
        }
      });

      it('reads what verify compares in one call: the hash and sequence of an id, the hash at another sequence', async () => {
        const [first, second, third] = await appendMany(3);
        const hash = (e: typeof first) => e!.receipt.chain.receipt_hash;
        expect(await store.ledger.verificationHashes(second!.receipt.receipt_id, 1)).toEqual({
          receiptHash: hash(second),
          sequence: 2,
          previousHash: hash(first),
        });
        expect(await store.ledger.verificationHashes(third!.receipt.receipt_id, null)).toEqual({
          receiptHash: hash(third),
          sequence: 3,
          previousHash: null,
        });
        expect(await store.ledger.verificationHashes(`dr-${randomUUID()}`, 3)).toEqual({
          receiptHash: null,
          sequence: null,
          previousHash: hash(third),
        });
        expect(await store.ledger.verificationHashes(null, 9)).toEqual({
          receiptHash: null,
          sequence: null,
          previousHash: null,
        });
      });

      it('answers null for receipt ids and claim ids it does not hold', async () => {
        const entry = await append();
        expect(await store.ledger.getByReceiptId(`dr-${randomUUID()}`)).toBeNull();
        expect(await store.ledger.getByClaimId('test', 'claim-unknown')).toBeNull();
        expect(await store.ledger.receiptHashOf(`dr-${randomUUID()}`)).toBeNull();
        // Ids are exact keys, not prefixes or patterns.
        expect(await store.ledger.getByReceiptId(entry.receipt.receipt_id.slice(0, -1))).toBeNull();
        expect(
          await store.ledger.getByClaimId('test', entry.receipt.claim_id.toUpperCase()),
        ).toBeNull();
      });

      it('lists entries after a sequence, in sequence order, at most limit of them', async () => {
        const entries = await appendMany(5);
        const sequences = (list: LedgerEntry[]) => list.map((e) => e.receipt.chain.sequence);

        expect(await store.ledger.list(0, 100)).toEqual(entries);
        expect(sequences(await store.ledger.list(0, 2))).toEqual([1, 2]);
        expect(sequences(await store.ledger.list(2, 2))).toEqual([3, 4]);
        expect(sequences(await store.ledger.list(4, 2))).toEqual([5]);
        expect(sequences(await store.ledger.list(3, 1))).toEqual([4]);
        expect(await store.ledger.list(5, 2)).toEqual([]);
        expect(await store.ledger.list(99, 2)).toEqual([]);
        expect(await store.ledger.list(0, 0)).toEqual([]);

        const paged: LedgerEntry[] = [];
        for (let after = 0; ;) {
          const page = await store.ledger.list(after, 2);
          if (page.length === 0) break;
          paged.push(...page);
          after = page.at(-1)!.receipt.chain.sequence;
        }
        expect(paged).toEqual(entries);
      });

      it('stats of an empty ledger are all zero', async () => {
        expect(await store.ledger.stats()).toEqual({
          total: 0,
          by_verdict: { ALLOWED: 0, BLOCKED: 0, ESCALATED: 0 },
          by_admissibility: { ACCEPTED: 0, NON_DETERMINISTIC: 0, REJECTED: 0 },
          agents: [],
          repositories: [],
        });
      });

      it('stats count by verdict and admissibility and list distinct agents and repositories', async () => {
        const entries = [
          await append(sign({ kind: 'allowed', agent: 'bot-a', repository: 'acme/one' })),
          await append(sign({ kind: 'allowed', agent: 'bot-b', repository: 'acme/one' })),
          await append(sign({ kind: 'blocked', agent: 'bot-a', repository: 'acme/two' })),
          await append(sign({ kind: 'escalated', agent: null, repository: null })),
          await append(sign({ kind: 'non_deterministic', agent: 'bot-c', repository: 'acme/3' })),
        ];
        // The fixtures give the outcomes they are named after.
        expect(
          entries.map((e) => [e.receipt.policy.verdict, e.receipt.admissibility.status]),
        ).toEqual([
          ['ALLOWED', 'ACCEPTED'],
          ['ALLOWED', 'ACCEPTED'],
          ['BLOCKED', 'REJECTED'],
          ['ESCALATED', 'REJECTED'],
          ['ALLOWED', 'NON_DETERMINISTIC'],
        ]);

        const stats = await store.ledger.stats();
        expect(stats.total).toBe(5);
        expect(stats.by_verdict).toEqual({ ALLOWED: 3, BLOCKED: 1, ESCALATED: 1 });
        expect(stats.by_admissibility).toEqual({ ACCEPTED: 2, NON_DETERMINISTIC: 1, REJECTED: 2 });
        expect([...stats.agents].sort()).toEqual(['bot-a', 'bot-b', 'bot-c']);
        expect([...stats.repositories].sort()).toEqual(['acme/3', 'acme/one', 'acme/two']);
      });

      it('counts receipts per API key', async () => {
        await append(sign({ apiKeyId: 'key-1' }));
        await append(sign({ apiKeyId: 'key-2' }));
        await append(sign({ apiKeyId: 'key-1' }));
        await append(sign({ apiKeyId: null }));
        expect(await store.ledger.countByApiKey('key-1')).toBe(2);
        expect(await store.ledger.countByApiKey('key-2')).toBe(1);
        expect(await store.ledger.countByApiKey('key-3')).toBe(0);
      });

      it('50 concurrent appends get sequences 1..50 without gaps, each linked to the one before', async () => {
        const signed = Array.from({ length: 50 }, () => sign());
        const results = await Promise.all(signed.map((s) => store.ledger.append(appendRequest(s))));
        expect(results.every((r) => r.status === 'appended')).toBe(true);

        const entries = await store.ledger.list(0, 100);
        expect(entries.map((e) => e.receipt.chain.sequence)).toEqual(
          Array.from({ length: 50 }, (_, i) => i + 1),
        );
        entries.forEach((entry, i) => {
          expect(entry.receipt.chain.previous_receipt_hash).toBe(
            i === 0 ? null : entries[i - 1]!.receipt.chain.receipt_hash,
          );
        });
        expect(new Set(entries.map((e) => e.receipt.claim_id))).toEqual(
          new Set(signed.map((s) => s.claim.claim_id)),
        );
        expect((await store.ledger.head()).sequence).toBe(50);
      });
    });

    describe('summaries', () => {
      it('agree with a recount of the receipts after appends issued together, failures included', async () => {
        const kinds = ['allowed', 'blocked', 'escalated', 'non_deterministic'] as const;
        const requests: AppendRequest[] = [];
        for (let i = 0; i < 60; i++) {
          const signed = sign({
            kind: kinds[i % kinds.length],
            agent: i % 5 === 0 ? null : `agent-${i % 3}`,
            repository: i % 7 === 0 ? null : `org/repo-${i % 4}`,
          });
          requests.push(
            i % 9 === 4
              ? {
                  scope: signed.scope,
                  claimId: signed.claim.claim_id,
                  build: () => {
                    throw new Error('build failed');
                  },
                }
              : appendRequest(signed),
          );
        }
        // Issued together, as concurrent requests are: a store may commit them as one group.
        const results = await Promise.allSettled(requests.map((r) => store.ledger.append(r)));
        expect(results.filter((r) => r.status === 'rejected')).toHaveLength(7);
        const entries = await store.ledger.list(0, 1000);
        expect(entries).toHaveLength(53);

        const byVerdict = (list: LedgerEntry[]) => ({
          ALLOWED: list.filter((e) => e.receipt.policy.verdict === 'ALLOWED').length,
          BLOCKED: list.filter((e) => e.receipt.policy.verdict === 'BLOCKED').length,
          ESCALATED: list.filter((e) => e.receipt.policy.verdict === 'ESCALATED').length,
        });
        const byStatus = (list: LedgerEntry[]) => ({
          ACCEPTED: list.filter((e) => e.receipt.admissibility.status === 'ACCEPTED').length,
          NON_DETERMINISTIC: list.filter(
            (e) => e.receipt.admissibility.status === 'NON_DETERMINISTIC',
          ).length,
          REJECTED: list.filter((e) => e.receipt.admissibility.status === 'REJECTED').length,
        });
        const names = (pick: (e: LedgerEntry) => string | undefined) =>
          [...new Set(entries.map(pick).filter((n) => n !== undefined))].sort();
        const repositories = names((e) => e.receipt.subject.repository);
        const agents = names((e) => e.receipt.subject.agent);

        expect(await store.queries.totals()).toEqual({
          total: 53,
          by_verdict: byVerdict(entries),
          by_admissibility: byStatus(entries),
          agents: agents.length,
          repositories: repositories.length,
        });
        const repositorySummaries = await store.queries.repositories({ limit: 100 });
        expect(repositorySummaries.map((r) => r.repository)).toEqual(repositories);
        for (const summary of repositorySummaries) {
          const own = entries.filter((e) => e.receipt.subject.repository === summary.repository);
          const last = own.at(-1)!.receipt;
          expect(summary).toEqual({
            repository: summary.repository,
            total: own.length,
            by_verdict: byVerdict(own),
            by_admissibility: byStatus(own),
            last_receipt: {
              receipt_id: last.receipt_id,
              sequence: last.chain.sequence,
              issued_at: last.issued_at,
            },
          });
        }
        const agentSummaries = await store.queries.agents({ limit: 100 });
        expect(agentSummaries.map((a) => a.agent)).toEqual(agents);
        for (const summary of agentSummaries) {
          const own = entries.filter((e) => e.receipt.subject.agent === summary.agent);
          expect(summary).toMatchObject({
            total: own.length,
            by_verdict: byVerdict(own),
            by_admissibility: byStatus(own),
            models: ['model-x'],
            first_seen: own[0]!.receipt.issued_at,
            last_seen: own.at(-1)!.receipt.issued_at,
          });
        }
        const day = entries[0]!.receipt.issued_at.slice(0, 10);
        const until = new Date(Date.parse(day) + 2 * 86_400_000).toISOString().slice(0, 10);
        const timeline = await store.queries.timeline({ since: day, until });
        const counted = timeline.reduce((sum, row) => sum + row.count, 0);
        expect(counted).toBe(53);
        for (const row of timeline) {
          expect(row.count).toBe(
            entries.filter(
              (e) =>
                e.receipt.issued_at.startsWith(row.day) && e.receipt.policy.verdict === row.verdict,
            ).length,
          );
        }
      });
    });

    describe('reads within one submitter scope (private reads)', () => {
      it('every read of a scope answers exactly a recount of that scope’s receipts', async () => {
        const kinds = ['allowed', 'blocked', 'escalated', 'non_deterministic'] as const;
        const scopes = ['key:acct-a', 'key:acct-b', 'app:1:77'];
        const requests: AppendRequest[] = [];
        for (let i = 0; i < 45; i++) {
          const claim = makeClaim({
            kind: kinds[i % kinds.length],
            agent: i % 5 === 0 ? null : `agent-${i % 3}`,
            repository: i % 7 === 0 ? null : `org/repo-${i % 4}`,
          });
          const scope = scopes[i % scopes.length]!;
          const apiKeyId = scope.startsWith('key:') ? scope.slice(4) : null;
          requests.push(appendRequest(signClaim(claim, serverKey, { apiKeyId, scope })));
        }
        const results = await Promise.all(requests.map((r) => store.ledger.append(r)));
        const scopeOf = new Map(
          results.map((r, i) => [r.entry.receipt.receipt_id, requests[i]!.scope]),
        );
        const all = await store.ledger.list(0, 1000);
        const count = <T>(list: LedgerEntry[], pick: (e: LedgerEntry) => T, value: T) =>
          list.filter((e) => pick(e) === value).length;
        const verdicts = (list: LedgerEntry[]) => ({
          ALLOWED: count(list, (e) => e.receipt.policy.verdict, 'ALLOWED'),
          BLOCKED: count(list, (e) => e.receipt.policy.verdict, 'BLOCKED'),
          ESCALATED: count(list, (e) => e.receipt.policy.verdict, 'ESCALATED'),
        });
        const statuses = (list: LedgerEntry[]) => ({
          ACCEPTED: count(list, (e) => e.receipt.admissibility.status, 'ACCEPTED'),
          NON_DETERMINISTIC: count(
            list,
            (e) => e.receipt.admissibility.status,
            'NON_DETERMINISTIC',
          ),
          REJECTED: count(list, (e) => e.receipt.admissibility.status, 'REJECTED'),
        });
        for (const scope of [...scopes, 'key:nobody']) {
          const own = all.filter((e) => scopeOf.get(e.receipt.receipt_id) === scope);
          const ids = own.map((e) => e.receipt.receipt_id);
          const names = (pick: (e: LedgerEntry) => string | undefined) =>
            [...new Set(own.map(pick).filter((n) => n !== undefined))].sort();
          const repositories = names((e) => e.receipt.subject.repository);
          const agents = names((e) => e.receipt.subject.agent);

          expect(await store.queries.totals(scope)).toEqual({
            total: own.length,
            by_verdict: verdicts(own),
            by_admissibility: statuses(own),
            agents: agents.length,
            repositories: repositories.length,
          });
          expect(await store.ledger.stats(scope)).toEqual({
            total: own.length,
            by_verdict: verdicts(own),
            by_admissibility: statuses(own),
            agents,
            repositories,
          });
          const repositorySummaries = await store.queries.repositories({ limit: 100 }, scope);
          expect(repositorySummaries.map((r) => r.repository)).toEqual(repositories);
          for (const summary of repositorySummaries) {
            const of = own.filter((e) => e.receipt.subject.repository === summary.repository);
            expect(summary).toEqual({
              repository: summary.repository,
              total: of.length,
              by_verdict: verdicts(of),
              by_admissibility: statuses(of),
              last_receipt: {
                receipt_id: of.at(-1)!.receipt.receipt_id,
                sequence: of.at(-1)!.receipt.chain.sequence,
                issued_at: of.at(-1)!.receipt.issued_at,
              },
            });
          }
          const page = await store.queries.repositories({ limit: 1, after: 'org/repo-0' }, scope);
          expect(page.map((r) => r.repository)).toEqual(
            repositories.filter((r) => r > 'org/repo-0').slice(0, 1),
          );
          const agentSummaries = await store.queries.agents({ limit: 100 }, scope);
          expect(agentSummaries.map((a) => a.agent)).toEqual(agents);
          for (const summary of agentSummaries) {
            const of = own.filter((e) => e.receipt.subject.agent === summary.agent);
            expect(summary).toEqual({
              agent: summary.agent,
              total: of.length,
              by_verdict: verdicts(of),
              by_admissibility: statuses(of),
              models: ['model-x'],
              first_seen: of[0]!.receipt.issued_at,
              last_seen: of.at(-1)!.receipt.issued_at,
            });
          }
          const day = all[0]!.receipt.issued_at.slice(0, 10);
          const until = new Date(Date.parse(day) + 2 * 86_400_000).toISOString().slice(0, 10);
          const timeline = await store.queries.timeline({ since: day, until, scope });
          expect(timeline.reduce((sum, row) => sum + row.count, 0)).toBe(own.length);
          const repo = await store.queries.timeline({
            since: day,
            until,
            scope,
            repository: 'org/repo-1',
          });
          expect(repo.reduce((sum, row) => sum + row.count, 0)).toBe(
            count(own, (e) => e.receipt.subject.repository, 'org/repo-1'),
          );
          expect(await store.queries.countSince(all[0]!.receipt.issued_at, scope)).toEqual({
            ...verdicts(own),
            total: own.length,
          });

          const listed = await store.queries.searchJson({ scope }, { limit: 100, order: 'asc' });
          expect(listed.map((r) => JSON.parse(r.json.toString('utf8')).receipt_id)).toEqual(ids);
          expect(listed.map((r) => r.receiptId)).toEqual(ids);
          const blocked = await store.queries.search(
            { scope, verdict: 'BLOCKED' },
            { limit: 100, order: 'desc' },
          );
          expect(blocked.map((r) => r.receipt_id)).toEqual(
            own
              .filter((e) => e.receipt.policy.verdict === 'BLOCKED')
              .map((e) => e.receipt.receipt_id)
              .reverse(),
          );
          const everyId = all.map((e) => e.receipt.receipt_id);
          expect(
            (await store.queries.getMany(everyId, scope)).map((e) => e.receipt.receipt_id),
          ).toEqual(ids);
          const history = await store.queries.pullRequestHistory('org/repo-1', '42', 100, scope);
          expect(history.map((e) => e.receipt.receipt_id)).toEqual(
            own
              .filter((e) => e.receipt.subject.repository === 'org/repo-1')
              .map((e) => e.receipt.receipt_id),
          );
        }
        // Without a scope, every receipt, as before.
        expect((await store.queries.getMany(all.map((e) => e.receipt.receipt_id))).length).toBe(45);
        expect((await store.queries.totals()).total).toBe(45);
        expect((await store.ledger.stats()).total).toBe(45);
      });
    });

    describe('search with words', () => {
      const TEXTS = [
        'Merge PR 7 hotfix after CI passed',
        'Schema migration for billing',
        'Security patch in login',
        'Feature flag for search',
        'Hotfix the schema of billing',
      ];
      const AGENTS = ['bot-a', 'bot-b', null, 'bot-c'];
      const REPOSITORIES = ['acme/one', 'acme/two', null];
      const KINDS = ['allowed', 'blocked', 'escalated', 'non_deterministic'] as const;
      const T0 = Date.UTC(2026, 0, 10);
      const at = (hours: number) => new Date(T0 + hours * 3_600_000).toISOString();

      async function seedWords(): Promise<LedgerEntry[]> {
        const entries: LedgerEntry[] = [];
        for (let i = 0; i < 30; i++) {
          const claim = makeClaim({
            kind: KINDS[i % KINDS.length]!,
            agent: AGENTS[i % AGENTS.length]!,
            repository: REPOSITORIES[i % REPOSITORIES.length]!,
          });
          const signed = signClaim({ ...claim, claim: TEXTS[i % TEXTS.length]! }, serverKey, {
            issuedAt: at(i),
          });
          entries.push(await append(signed));
        }
        return entries;
      }

      // The reference: every word begins a word of the claim text, entity, repository or agent.
      const wordsOf = (text: string) =>
        text
          .toLowerCase()
          .split(/[^a-z0-9]+/)
          .filter(Boolean);
      const matches = (entry: LedgerEntry, filter: ReceiptFilter): boolean => {
        const { receipt, claim } = entry;
        const indexed = [
          claim.claim,
          claim.entity,
          receipt.subject.repository ?? '',
          receipt.subject.agent ?? '',
        ].flatMap(wordsOf);
        return (
          wordsOf(filter.q ?? '').every((w) => indexed.some((t) => t.startsWith(w))) &&
          (filter.agent === undefined || receipt.subject.agent === filter.agent) &&
          (filter.repository === undefined || receipt.subject.repository === filter.repository) &&
          (filter.verdict === undefined || receipt.policy.verdict === filter.verdict) &&
          (filter.status === undefined || receipt.admissibility.status === filter.status) &&
          (filter.since === undefined || receipt.issued_at >= filter.since) &&
          (filter.until === undefined || receipt.issued_at < filter.until)
        );
      };

      const WORDS = ['hotfix', 'schema migration', 'SECURITY patch', 'fea fl', 'hot sch', 'b'];
      const FILTERS: ReceiptFilter[] = [
        {},
        { agent: 'bot-a' },
        { agent: 'bot-c' },
        { repository: 'acme/two' },
        { verdict: 'ALLOWED' },
        { verdict: 'BLOCKED' },
        { status: 'NON_DETERMINISTIC' },
        { since: at(10) },
        { until: at(20) },
        { agent: 'bot-b', verdict: 'ALLOWED', since: at(3), until: at(27) },
      ];

      it('answers the words and every filter, newest first or oldest first, page by page', async () => {
        const entries = await seedWords();
        for (const q of WORDS) {
          for (const more of FILTERS) {
            const filter = { q, ...more };
            const expected = entries
              .filter((e) => matches(e, filter))
              .map((e) => e.receipt.chain.sequence);
            for (const order of ['desc', 'asc'] as const) {
              const all = order === 'desc' ? [...expected].reverse() : expected;
              expect({
                filter,
                order,
                all: await sequencesOf(filter, { limit: 100, order }),
              }).toEqual({ filter, order, all });
              // Pages of 3, each continuing after the last sequence of the one before.
              const pages: number[][] = [];
              let after: number | undefined;
              for (;;) {
                const page = await sequencesOf(filter, { limit: 3, order, after });
                if (page.length === 0) break;
                pages.push(page);
                after = page[page.length - 1];
              }
              const chunks = Array.from({ length: Math.ceil(all.length / 3) }, (_, k) =>
                all.slice(3 * k, 3 * k + 3),
              );
              expect({ filter, order, pages }).toEqual({ filter, order, pages: chunks });
              // A cursor in the middle of the ledger, matching or not.
              for (const cursor of [15, 16]) {
                const rest = all.filter((s) => (order === 'desc' ? s < cursor : s > cursor));
                expect({
                  filter,
                  order,
                  cursor,
                  page: await sequencesOf(filter, { limit: 4, order, after: cursor }),
                }).toEqual({ filter, order, cursor, page: rest.slice(0, 4) });
              }
            }
          }
        }
        // The cases are not vacuous.
        expect(entries.filter((e) => matches(e, { q: 'hotfix', agent: 'bot-a' }))).not.toEqual([]);
        expect(entries.filter((e) => matches(e, { q: 'fea fl', verdict: 'BLOCKED' }))).not.toEqual(
          [],
        );
      });

      const sequencesOf = async (filter: ReceiptFilter, page: SequencePage) =>
        (await store.queries.search(filter, page)).map((r) => r.chain.sequence);
    });

    describe('deployment receipts', () => {
      /** A deployment claim of `repository` to `environment`, appended in `scope`. */
      const deploy = (repository: string, environment: string | undefined, scope = 'test') => {
        const claim = makeClaim({ repository, agent: null });
        return append(
          signClaim(
            {
              ...claim,
              action: {
                ...claim.action!,
                action_type: 'deployment',
                ...(environment === undefined ? {} : { environment }),
              },
            },
            serverKey,
            { scope },
          ),
        );
      };
      const sequencesOf = async (filter: ReceiptFilter, page: SequencePage) =>
        (await store.queries.search(filter, page)).map((r) => r.chain.sequence);

      it('finds deployments, and one repository’s environment, newest first, page by page and in a scope', async () => {
        const seqOf = (e: LedgerEntry) => e.receipt.chain.sequence;
        const prod1 = await deploy('acme/web', 'production');
        await append(sign({ repository: 'acme/web' }));
        const staging = await deploy('acme/web', 'staging');
        const otherRepo = await deploy('acme/api', 'production');
        // An environment whose name is markup and a path: matched exactly, as any string.
        const odd = await deploy('acme/web', '<b>prod/eu</b>');
        const prod2 = await deploy('acme/web', 'production', 'app:1:2');
        const unnamed = await deploy('acme/web', undefined);
        const desc = { limit: 10, order: 'desc' as const };

        expect(await sequencesOf({ action_type: 'deployment' }, desc)).toEqual(
          [prod1, staging, otherRepo, odd, prod2, unnamed].map(seqOf).reverse(),
        );
        const production = { repository: 'acme/web', environment: 'production' };
        expect(await sequencesOf(production, desc)).toEqual([seqOf(prod2), seqOf(prod1)]);
        expect(
          await sequencesOf({ ...production, action_type: 'deployment' }, { ...desc, limit: 1 }),
        ).toEqual([seqOf(prod2)]);
        expect(await sequencesOf(production, { ...desc, after: seqOf(prod2) })).toEqual([
          seqOf(prod1),
        ]);
        expect(await sequencesOf(production, { limit: 10, order: 'asc' })).toEqual([
          seqOf(prod1),
          seqOf(prod2),
        ]);
        expect(
          await sequencesOf({ repository: 'acme/web', environment: '<b>prod/eu</b>' }, desc),
        ).toEqual([seqOf(odd)]);
        expect(await sequencesOf({ repository: 'acme/web', environment: 'prod' }, desc)).toEqual(
          [],
        );
        // Within one submitter scope only its own receipts.
        expect(await sequencesOf({ ...production, scope: 'app:1:2' }, desc)).toEqual([
          seqOf(prod2),
        ]);
        expect(await sequencesOf({ action_type: 'deployment', scope: 'test' }, desc)).toEqual(
          [prod1, staging, otherRepo, odd, unnamed].map(seqOf).reverse(),
        );
      });
    });

    describe('dispositions', () => {
      it('stores a disposition after its parent and finds it by the parent', async () => {
        const parent = await append(sign({ kind: 'escalated' }));
        const other = await append(sign({ kind: 'escalated' }));
        const result = await store.ledger.append(
          dispositionRequest(parent, serverKey, { scope: 'key:reviewer' }),
        );
        const disposition = appended(result);
        expect(disposition.receipt.chain.sequence).toBe(3);
        expect(disposition.receipt.disposition).toMatchObject({
          parent_receipt_id: parent.receipt.receipt_id,
          parent_receipt_hash: parent.receipt.chain.receipt_hash,
        });
        expect(await store.ledger.dispositionsOf([parent.receipt.receipt_id])).toEqual([
          disposition,
        ]);
        expect(
          await store.ledger.dispositionsOf([other.receipt.receipt_id, parent.receipt.receipt_id]),
        ).toEqual([disposition]);
        expect(await store.ledger.dispositionsOf([other.receipt.receipt_id, 'dr-none'])).toEqual(
          [],
        );
        expect(await store.ledger.dispositionsOf([])).toEqual([]);
        expect(await store.ledger.getByReceiptId(disposition.receipt.receipt_id)).toEqual(
          disposition,
        );
      });

      it('holds one disposition per parent: a second, from any scope, answers exists and writes nothing', async () => {
        const parent = await append(sign({ kind: 'escalated' }));
        const first = appended(
          await store.ledger.append(dispositionRequest(parent, serverKey, { scope: 'key:a' })),
        );
        const before = await snapshot();
        for (const scope of ['key:a', 'key:b']) {
          const again = await store.ledger.append(
            dispositionRequest(parent, serverKey, { scope, decision: 'reject' }),
          );
          expect(again).toEqual({ status: 'exists', entry: first });
        }
        expect(await snapshot()).toEqual(before);
      });

      it('counts decisions by decision, ledger-wide or on the escalations of one scope', async () => {
        const ofA = [
          await append(signClaim(makeClaim({ kind: 'escalated' }), serverKey, { scope: 'key:a' })),
          await append(signClaim(makeClaim({ kind: 'escalated' }), serverKey, { scope: 'key:a' })),
        ];
        const ofB = await append(
          signClaim(makeClaim({ kind: 'escalated' }), serverKey, { scope: 'key:b' }),
        );
        expect(await store.ledger.dispositionCounts()).toEqual({ approve: 0, reject: 0 });
        await store.ledger.append(dispositionRequest(ofA[0]!, serverKey, { scope: 'key:r' }));
        await store.ledger.append(
          dispositionRequest(ofA[1]!, serverKey, { scope: 'key:r', decision: 'reject' }),
        );
        await store.ledger.append(dispositionRequest(ofB, serverKey, { scope: 'key:a' }));
        expect(await store.ledger.dispositionCounts()).toEqual({ approve: 2, reject: 1 });
        expect(await store.ledger.dispositionCounts('key:a')).toEqual({ approve: 1, reject: 1 });
        expect(await store.ledger.dispositionCounts('key:b')).toEqual({ approve: 1, reject: 0 });
        expect(await store.ledger.dispositionCounts('key:r')).toEqual({ approve: 0, reject: 0 });
      });

      it('of dispositions of one parent appended together, stores exactly one', async () => {
        const parent = await append(sign({ kind: 'escalated' }));
        const results = await Promise.all(
          ['key:a', 'key:b', 'key:c', 'key:d'].map((scope) =>
            store.ledger.append(dispositionRequest(parent, serverKey, { scope })),
          ),
        );
        const stored = results.filter((r) => r.status === 'appended');
        expect(stored).toHaveLength(1);
        for (const r of results) expect(r.entry).toEqual(stored[0]!.entry);
        expect((await store.ledger.list(0, 100)).length).toBe(2);
        expect(await store.ledger.dispositionsOf([parent.receipt.receipt_id])).toEqual([
          stored[0]!.entry,
        ]);
      });
    });

    describe('entries that do not extend the head', () => {
      const refusals: [string, (head: ChainHead, signed: SignedClaim) => AppendRequest][] = [
        [
          'a sequence that skips one',
          (head, signed) => ({
            scope: signed.scope,
            claimId: signed.claim.claim_id,
            build: (h) => ({ entry: signed.entryAt({ ...h, sequence: h.sequence + 1 }) }),
          }),
        ],
        [
          'a sequence already taken',
          (head, signed) => ({
            scope: signed.scope,
            claimId: signed.claim.claim_id,
            build: () => ({
              entry: signed.entryAt({ sequence: head.sequence - 1, receipt_hash: null }),
            }),
          }),
        ],
        [
          'a previous hash other than the head hash',
          (_head, signed) => ({
            scope: signed.scope,
            claimId: signed.claim.claim_id,
            build: (h) => ({ entry: signed.entryAt({ ...h, receipt_hash: OTHER_HASH }) }),
          }),
        ],
        [
          'no previous hash after the first receipt',
          (_head, signed) => ({
            scope: signed.scope,
            claimId: signed.claim.claim_id,
            build: (h) => ({ entry: signed.entryAt({ ...h, receipt_hash: null }) }),
          }),
        ],
        [
          'a receipt for another claim_id than the request',
          (_head, signed) => ({
            scope: signed.scope,
            claimId: 'claim-of-the-request',
            build: (h) => ({ entry: signed.entryAt(h) }),
          }),
        ],
      ];

      it.each(refusals)('are refused: %s, and nothing is written', async (_name, requestFor) => {
        await appendMany(2);
        const before = await snapshot();
        const request = requestFor(before.head, sign());
        await expectRejected(store.ledger.append(request));
        expect(await snapshot()).toEqual(before);
      });
    });

    describe('failed appends', () => {
      it('writes nothing when build throws', async () => {
        await appendMany(2);
        const before = await snapshot();
        const signed = sign();
        const failing: AppendRequest = {
          scope: signed.scope,
          claimId: signed.claim.claim_id,
          build: () => {
            throw new Error('build failed');
          },
        };
        await expectRejected(store.ledger.append(failing), 'build failed');
        expect(await snapshot()).toEqual(before);
        expect(await store.ledger.getByClaimId(signed.scope, signed.claim.claim_id)).toBeNull();

        // The ledger stays usable and continues from the same head.
        const next = await append(sign());
        expect(next.receipt.chain.sequence).toBe(3);
      });

      it('writes nothing when the append itself fails after build', async () => {
        const [existing] = await appendMany(1);
        const before = await snapshot();
        const signed = sign();
        // A receipt_id the ledger already holds, under a new claim_id: the store must refuse it.
        const duplicate: AppendRequest = {
          scope: signed.scope,
          claimId: signed.claim.claim_id,
          build: (head) => {
            const entry = signed.entryAt(head);
            return {
              entry: {
                ...entry,
                receipt: { ...entry.receipt, receipt_id: existing!.receipt.receipt_id },
              },
            };
          },
        };
        await expectRejected(store.ledger.append(duplicate));
        expect(await snapshot()).toEqual(before);
        expect(await store.ledger.getByClaimId(signed.scope, signed.claim.claim_id)).toBeNull();
      });
    });

    describe('api keys', () => {
      const record = (overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
        id: randomUUID(),
        keyId: `kid_${randomUUID().replace(/-/g, '').slice(0, 26).toUpperCase()}`,
        email: `${randomUUID()}@example.com`,
        keyDigest: createHash('sha256').update(randomUUID()).digest('hex'),
        tier: 'free',
        lockedPolicy: null,
        reader: 'own',
        reviewer: false,
        createdAt: '2026-01-15T10:00:00.000Z',
        updatedAt: '2026-01-15T10:00:00.000Z',
        revokedAt: null,
        ...overrides,
      });

      it('insertIfAbsent stores a new record and answers it', async () => {
        const key = record({ lockedPolicy: 'strict' });
        expect(await store.apiKeys.insertIfAbsent(key)).toEqual(key);
        expect(await store.apiKeys.findActiveByEmail(key.email)).toEqual(key);
        expect(await store.apiKeys.findByDigest(key.keyDigest)).toEqual(key);
        expect(await store.apiKeys.findByKeyId(key.keyId)).toEqual(key);
      });

      it('insertIfAbsent answers the existing record for an email that already has an active key', async () => {
        const first = record();
        await store.apiKeys.insertIfAbsent(first);
        const second = record({ email: first.email, tier: 'pilot' });
        expect(await store.apiKeys.insertIfAbsent(second)).toEqual(first);
        expect(await store.apiKeys.findByDigest(second.keyDigest)).toBeNull();
        expect(await store.apiKeys.findActiveByEmail(first.email)).toEqual(first);
      });

      it('finds by digest, key id and email, and answers null for unknown ones', async () => {
        const a = record();
        const b = record();
        await store.apiKeys.insertIfAbsent(a);
        await store.apiKeys.insertIfAbsent(b);
        expect(await store.apiKeys.findByDigest(b.keyDigest)).toEqual(b);
        expect(await store.apiKeys.findActiveByEmail(a.email)).toEqual(a);
        expect(await store.apiKeys.findByDigest('0'.repeat(64))).toBeNull();
        expect(await store.apiKeys.findByKeyId('kid_unknown')).toBeNull();
        expect(await store.apiKeys.findActiveByEmail('nobody@example.com')).toBeNull();
      });

      it('setTier updates tier and updatedAt, and answers null for an unknown email', async () => {
        const key = record();
        await store.apiKeys.insertIfAbsent(key);
        const updatedAt = '2026-02-01T00:00:00.000Z';
        const expected = { ...key, tier: 'enterprise', updatedAt };
        expect(await store.apiKeys.setTier(key.email, 'enterprise', updatedAt)).toEqual(expected);
        expect(await store.apiKeys.findByDigest(key.keyDigest)).toEqual(expected);
        expect(await store.apiKeys.setTier('nobody@example.com', 'pilot', updatedAt)).toBeNull();
      });

      it('revoke marks the key revoked once; the email may then hold a new key', async () => {
        const key = record();
        await store.apiKeys.insertIfAbsent(key);
        const at = '2026-02-01T00:00:00.000Z';
        expect(await store.apiKeys.revoke(key.keyId, at)).toBe(true);
        expect(await store.apiKeys.revoke(key.keyId, at)).toBe(false);
        expect(await store.apiKeys.findByDigest(key.keyDigest)).toEqual({
          ...key,
          revokedAt: at,
          updatedAt: at,
        });
        expect(await store.apiKeys.findActiveByEmail(key.email)).toBeNull();
        const next = record({ email: key.email });
        expect(await store.apiKeys.insertIfAbsent(next)).toEqual(next);
        expect(await store.apiKeys.setTier(key.email, 'pilot', at)).toEqual({
          ...next,
          tier: 'pilot',
          updatedAt: at,
        });
      });

      it('keeps what a key reads: inserted, changed by setReader, carried by rotate', async () => {
        const key = record({ reader: 'all' });
        expect(await store.apiKeys.insertIfAbsent(key)).toEqual(key);
        expect((await store.apiKeys.findByDigest(key.keyDigest))?.reader).toBe('all');
        const at = '2026-02-01T00:00:00.000Z';
        const own = { ...key, reader: 'own', updatedAt: at };
        expect(await store.apiKeys.setReader(key.email, 'own', at)).toEqual(own);
        expect(await store.apiKeys.findByKeyId(key.keyId)).toEqual(own);
        expect(await store.apiKeys.setReader('nobody@example.com', 'all', at)).toBeNull();
        const next = record({ id: key.id, email: key.email, reader: 'all' });
        await store.apiKeys.rotate(key.keyId, next, at);
        expect((await store.apiKeys.findActiveByEmail(key.email))?.reader).toBe('all');
        // Only the active key changes.
        await store.apiKeys.setReader(key.email, 'own', at);
        expect((await store.apiKeys.findByKeyId(key.keyId))?.reader).toBe('own');
        expect((await store.apiKeys.findByKeyId(next.keyId))?.reader).toBe('own');
      });

      it('keeps whether a key is a reviewer: inserted, changed by setReviewer, carried by rotate', async () => {
        const key = record({ reviewer: true });
        expect(await store.apiKeys.insertIfAbsent(key)).toEqual(key);
        expect((await store.apiKeys.findByDigest(key.keyDigest))?.reviewer).toBe(true);
        const at = '2026-02-01T00:00:00.000Z';
        const withdrawn = { ...key, reviewer: false, updatedAt: at };
        expect(await store.apiKeys.setReviewer(key.email, false, at)).toEqual(withdrawn);
        expect(await store.apiKeys.findByKeyId(key.keyId)).toEqual(withdrawn);
        expect(await store.apiKeys.setReviewer('nobody@example.com', true, at)).toBeNull();
        const next = record({ id: key.id, email: key.email, reviewer: true });
        await store.apiKeys.rotate(key.keyId, next, at);
        expect((await store.apiKeys.findActiveByEmail(key.email))?.reviewer).toBe(true);
        // Only the active key changes.
        await store.apiKeys.setReviewer(key.email, false, at);
        expect((await store.apiKeys.findByKeyId(key.keyId))?.reviewer).toBe(false);
        expect((await store.apiKeys.findByKeyId(next.keyId))?.reviewer).toBe(false);
      });

      it('unlock lifts the lock of the email’s active key only', async () => {
        const key = record({ lockedPolicy: 'strict' });
        await store.apiKeys.insertIfAbsent(key);
        const at = '2026-02-01T00:00:00.000Z';
        expect(await store.apiKeys.unlock(key.email, at)).toEqual({
          ...key,
          lockedPolicy: null,
          updatedAt: at,
        });
        expect((await store.apiKeys.findByDigest(key.keyDigest))?.lockedPolicy).toBeNull();
        expect(await store.apiKeys.unlock('nobody@example.com', at)).toBeNull();
        await store.apiKeys.revoke(key.keyId, at);
        expect(await store.apiKeys.unlock(key.email, at)).toBeNull();
      });

      it('findLatestByEmail answers the newest key of an address, revoked or not', async () => {
        expect(await store.apiKeys.findLatestByEmail('nobody@example.com')).toBeNull();
        const key = record();
        await store.apiKeys.insertIfAbsent(key);
        expect(await store.apiKeys.findLatestByEmail(key.email)).toEqual(key);
        const at = '2026-02-01T00:00:00.000Z';
        await store.apiKeys.revoke(key.keyId, at);
        expect(await store.apiKeys.findLatestByEmail(key.email)).toEqual({
          ...key,
          revokedAt: at,
          updatedAt: at,
        });
        const next = record({ email: key.email, createdAt: at, updatedAt: at });
        await store.apiKeys.insertIfAbsent(next);
        expect(await store.apiKeys.findLatestByEmail(key.email)).toEqual(next);
      });

      it('rotate revokes the old key and inserts the new one together, once', async () => {
        const key = record({ tier: 'pilot', lockedPolicy: 'strict' });
        await store.apiKeys.insertIfAbsent(key);
        const at = '2026-02-01T00:00:00.000Z';
        const next = record({
          id: key.id,
          email: key.email,
          tier: 'pilot',
          lockedPolicy: 'strict',
        });
        expect(await store.apiKeys.rotate(key.keyId, next, at)).toEqual(next);
        expect((await store.apiKeys.findByKeyId(key.keyId))?.revokedAt).toBe(at);
        expect(await store.apiKeys.findActiveByEmail(key.email)).toEqual(next);
        const again = record({ id: key.id, email: key.email });
        expect(await store.apiKeys.rotate(key.keyId, again, at)).toBeNull();
        expect(await store.apiKeys.findByKeyId(again.keyId)).toBeNull();
        expect((await store.apiKeys.list()).map((r) => r.keyId).sort()).toEqual(
          [key.keyId, next.keyId].sort(),
        );
      });
    });

    describe('policies', () => {
      const policy = (overrides: Partial<PolicyRecord> = {}): PolicyRecord => ({
        owner: 'acct-1',
        name: 'production',
        description: null,
        config: { minSources: 2 },
        overrides: 'tighten',
        createdAt: '2026-01-15T10:00:00.000Z',
        ...overrides,
      });

      it('keeps one namespace per owner and a shared one', async () => {
        const own = policy();
        const other = policy({ owner: 'acct-2', config: { minSources: 0 }, overrides: 'any' });
        const shared = policy({ owner: null, name: 'baseline' });
        expect(await store.policies.insert(own)).toBe('created');
        expect(await store.policies.insert(other)).toBe('created');
        expect(await store.policies.insert(shared)).toBe('created');
        expect(await store.policies.insert(policy({ config: { minSources: 9 } }))).toBe('exists');
        expect(await store.policies.get('acct-1', 'production')).toEqual(own);
        expect(await store.policies.get('acct-2', 'production')).toEqual(other);
        expect(await store.policies.get(null, 'production')).toBeNull();
        expect(await store.policies.get(null, 'baseline')).toEqual(shared);
        expect(await store.policies.listVisible('acct-1')).toEqual([shared, own]);
        expect(await store.policies.listVisible(null)).toEqual([shared]);
        expect(await store.policies.listAll()).toHaveLength(3);
      });

      it("deletes only the owner's policy", async () => {
        await store.policies.insert(policy());
        expect(await store.policies.delete('acct-2', 'production')).toBe(false);
        expect(await store.policies.delete(null, 'production')).toBe(false);
        expect(await store.policies.delete('acct-1', 'production')).toBe(true);
        expect(await store.policies.get('acct-1', 'production')).toBeNull();
      });
    });

    describe('health', () => {
      it('probeWrite succeeds on a writable store and leaves the ledger as it was', async () => {
        await appendMany(2);
        const before = await snapshot();
        await store.probeWrite('2026-01-15T10:00:00.000Z');
        expect(await snapshot()).toEqual(before);
      });
    });
  });
}
