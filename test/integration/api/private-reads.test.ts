import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import type { ClaimInput } from '../../../src/core/claim-schema.js';
import { githubSubmitter } from '../../../src/github/gate.js';
import { ApiKeyService } from '../../../src/services/api-keys.js';
import { ClaimService } from '../../../src/services/claims.js';
import { PolicyService } from '../../../src/services/policies.js';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import {
  type Account,
  evaluate,
  expectError,
  signupAccount,
  uniqueEmail,
} from '../../support/api.js';
import { mergeAction, validClaim } from '../../support/claims.js';

/** The typical merge claim, of `agent` on pull request `pr` of `repository`. */
const mergeClaim = (repository: string, agent: string, pr: number, text: string) =>
  validClaim({
    entity: repository,
    claim: text,
    action: {
      ...mergeAction,
      repository,
      pull_request: pr,
      commit: `c${pr}${agent.length}`,
      agent,
      agent_model: `${agent}-model`,
    },
  });

interface World {
  t: TestApp;
  alice: Account;
  bob: Account;
  /** A key the operator made a reader of everything. */
  auditor: string;
  ids: { alice: string[]; bob: string[]; app: string[] };
}

/**
 * Two accounts and a GitHub App installation, each with receipts of its own repository and
 * agent; a third receipt of Alice's on Bob's pull request number, to prove diff stays scoped.
 */
async function world(publicReads: boolean): Promise<World> {
  const t = buildTestApp({ config: { publicReads } });
  const alice = await signupAccount(t);
  const bob = await signupAccount(t);
  const keys = new ApiKeyService({ keys: t.store.apiKeys, clock: t.clock });
  const auditor = (
    await keys.create({
      email: uniqueEmail('auditor'),
      tier: 'free',
      lockedPolicy: null,
      reader: 'all',
    })
  ).apiKey;
  const ids: World['ids'] = { alice: [], bob: [], app: [] };
  const submit = async (who: 'alice' | 'bob', claim: Record<string, unknown>) => {
    const res = await evaluate(t, (who === 'alice' ? alice : bob).apiKey, claim);
    expect(res.status).toBe(200);
    ids[who].push(res.body.receipt.receipt_id as string);
  };
  await submit('alice', mergeClaim('alice/app', 'alice-bot', 1, 'Merge alice zanzibar'));
  await submit('alice', mergeClaim('alice/app', 'alice-bot', 1, 'Merge alice zanzibar again'));
  await submit('bob', mergeClaim('bob/svc', 'bob-bot', 1, 'Merge bob quokka'));
  await submit('bob', mergeClaim('shared/repo', 'bob-bot', 9, 'Merge bob shared'));
  await submit('alice', mergeClaim('shared/repo', 'alice-bot', 9, 'Merge alice shared'));
  // The App's receipt, written in the installation's scope as the GitHub gate writes it.
  const claims = new ClaimService({
    ledger: t.store.ledger,
    policies: new PolicyService({ policies: t.store.policies, clock: t.clock }),
    serverKey: t.serverKey,
    clock: t.clock,
    logOrigin: 'svc/test',
  });
  const app = await claims.evaluate(
    mergeClaim('octo/app', 'github-app', 5, 'Merge octo narwhal') as unknown as ClaimInput,
    githubSubmitter(1, 77),
  );
  ids.app.push(app.response.receipt.receipt_id);
  return { t, alice, bob, auditor, ids };
}

const get = (t: TestApp, path: string, key?: string) => {
  const req = request(t.app).get(path);
  return key ? req.set('X-API-Key', key) : req;
};
const receiptIds = (body: { receipts: { receipt_id: string }[] }) =>
  body.receipts.map((r) => r.receipt_id).sort();
const sorted = (...lists: string[][]) => lists.flat().sort();

describe('SVC_PUBLIC_READS=false: each key reads only its own account’s receipts', () => {
  let w: World;
  beforeEach(async () => {
    w = await world(false);
  });
  afterEach(() => w.t.close());

  it('every read endpoint needs a key, /v1/ledger/stats included', async () => {
    for (const path of [
      '/v1/ledger',
      '/v1/ledger/stats',
      '/v1/receipts/search',
      `/v1/receipts/${w.ids.alice[0]}`,
      '/v1/receipts/timeline',
      `/v1/receipts/compare?ids=${w.ids.alice[0]}`,
      '/v1/receipts/diff?repository=alice/app&pr=1',
      '/v1/repos',
      '/v1/agents',
      '/v1/overview',
    ]) {
      expectError(await get(w.t, path), 401, 'unauthorized');
    }
  });

  it('/v1/receipts/search and /v1/ledger list only the caller’s receipts', async () => {
    for (const [who, key] of [
      ['alice', w.alice.apiKey],
      ['bob', w.bob.apiKey],
    ] as const) {
      const search = await get(w.t, '/v1/receipts/search?limit=100', key);
      expect(search.status).toBe(200);
      expect(receiptIds(search.body)).toEqual(sorted(w.ids[who]));
      const ledger = await get(w.t, '/v1/ledger?limit=100', key);
      expect(ledger.status).toBe(200);
      expect(receiptIds(ledger.body)).toEqual(sorted(w.ids[who]));
    }
    // Filters narrow within the caller's own receipts, never reach out of them.
    const words = await get(w.t, '/v1/receipts/search?q=quokka', w.alice.apiKey);
    expect(words.body.receipts).toEqual([]);
    const repo = await get(w.t, '/v1/receipts/search?repo=shared/repo', w.alice.apiKey);
    expect(receiptIds(repo.body)).toEqual([w.ids.alice[2]]);
    const agent = await get(w.t, '/v1/receipts/search?agent=bob-bot', w.alice.apiKey);
    expect(agent.body.receipts).toEqual([]);
    // The claim texts of include=claims are the caller's receipts' only.
    const texts = await get(w.t, '/v1/receipts/search?include=claims', w.alice.apiKey);
    expect(Object.keys(texts.body.claims).sort()).toEqual(sorted(w.ids.alice));
    expect(JSON.stringify(texts.body.claims)).not.toContain('bob');
    const paged = await get(w.t, '/v1/ledger?limit=1', w.bob.apiKey);
    expect(receiptIds(paged.body)).toEqual([w.ids.bob[0]]);
    const next = await get(w.t, `/v1/ledger?limit=1&after=${paged.body.next_after}`, w.bob.apiKey);
    expect(receiptIds(next.body)).toEqual([w.ids.bob[1]]);
    expect(next.body.next_after).toBeNull();
  });

  it('/v1/receipts/:id: another account’s or the App’s receipt is the same 404 as an unknown id', async () => {
    const own = await get(w.t, `/v1/receipts/${w.ids.alice[0]}`, w.alice.apiKey);
    expect(own.status).toBe(200);
    expect(own.body.receipt.receipt_id).toBe(w.ids.alice[0]);
    const unknown = await get(w.t, '/v1/receipts/dr-01ARZ3NDEKTSV4RRFFQ69G5FAV', w.alice.apiKey);
    expectError(unknown, 404, 'not_found');
    for (const id of [w.ids.bob[0]!, w.ids.app[0]!]) {
      const other = await get(w.t, `/v1/receipts/${id}`, w.alice.apiKey);
      expectError(other, 404, 'not_found');
      expect(other.body.error).toBe(`No receipt ${JSON.stringify(id)} in this ledger`);
      expect(Object.keys(other.body).sort()).toEqual(['code', 'error', 'request_id']);
    }
  });

  it('/v1/receipts/compare lists other accounts’ receipts among the unknown ids', async () => {
    const ids = [w.ids.alice[0]!, w.ids.bob[0]!, w.ids.app[0]!, 'dr-unknown'];
    const res = await get(w.t, `/v1/receipts/compare?ids=${ids.join(',')}`, w.alice.apiKey);
    expect(res.status).toBe(200);
    expect(res.body.receipts.map((r: { receipt_id: string }) => r.receipt_id)).toEqual([
      w.ids.alice[0],
    ]);
    expect(res.body.unknown_ids).toEqual(ids.slice(1));
    expect(JSON.stringify(res.body)).not.toContain('bob');
  });

  it('/v1/receipts/diff shows only the caller’s receipts of a pull request', async () => {
    const alice = await get(w.t, '/v1/receipts/diff?repository=shared/repo&pr=9', w.alice.apiKey);
    expect(alice.status).toBe(200);
    expect(alice.body.receipts.map((r: { receipt_id: string }) => r.receipt_id)).toEqual([
      w.ids.alice[2],
    ]);
    expect(alice.body.changes).toEqual([]);
    const bob = await get(w.t, '/v1/receipts/diff?repository=alice/app&pr=1', w.bob.apiKey);
    expect(bob.status).toBe(200);
    expect(bob.body.receipts).toEqual([]);
  });

  it('aggregates are the caller’s own: timeline, repos, agents, overview, ledger stats', async () => {
    const day = new Date(w.t.clock.now()).toISOString().slice(0, 10);
    const timeline = await get(
      w.t,
      `/v1/receipts/timeline?since=${day}&until=${day}`,
      w.bob.apiKey,
    );
    expect(timeline.status).toBe(200);
    expect(timeline.body.days).toHaveLength(1);
    expect(timeline.body.days[0].total).toBe(2);
    const shared = await get(
      w.t,
      `/v1/receipts/timeline?since=${day}&until=${day}&repository=shared/repo`,
      w.bob.apiKey,
    );
    expect(shared.body.days[0].total).toBe(1);

    const repos = await get(w.t, '/v1/repos', w.alice.apiKey);
    expect(repos.status).toBe(200);
    expect(repos.body.repositories.map((r: { repository: string }) => r.repository)).toEqual([
      'alice/app',
      'shared/repo',
    ]);
    const sharedRepo = repos.body.repositories[1];
    expect(sharedRepo.total).toBe(1);
    expect(sharedRepo.last_receipt.receipt_id).toBe(w.ids.alice[2]);

    const agents = await get(w.t, '/v1/agents', w.bob.apiKey);
    expect(agents.body.agents).toHaveLength(1);
    expect(agents.body.agents[0]).toMatchObject({
      agent: 'bob-bot',
      total: 2,
      models: ['bob-bot-model'],
    });

    const overview = await get(w.t, '/v1/overview', w.alice.apiKey);
    expect(overview.status).toBe(200);
    expect(overview.body).toMatchObject({ receipts: 3, agents: 1, repositories: 2 });
    expect(overview.body.last_24h.receipts).toBe(3);

    const stats = await get(w.t, '/v1/ledger/stats', w.bob.apiKey);
    expect(stats.status).toBe(200);
    expect(stats.body.total).toBe(2);
    expect(stats.body.agents).toEqual(['bob-bot']);
    expect(stats.body.repositories).toEqual(['bob/svc', 'shared/repo']);
  });

  it('/v1/receipts/:id/proof proves only the caller’s receipts; another’s is the same 404 as an unknown id', async () => {
    const own = await get(w.t, `/v1/receipts/${w.ids.alice[0]}/proof`, w.alice.apiKey);
    expect(own.status).toBe(200);
    expect(own.body.leaf_index).toBe(0);
    const unknownId = 'dr-01ARZ3NDEKTSV4RRFFQ69G5FAV';
    const unknown = await get(w.t, `/v1/receipts/${unknownId}/proof`, w.alice.apiKey);
    expectError(unknown, 404, 'not_found');
    for (const id of [w.ids.bob[0]!, w.ids.app[0]!]) {
      const other = await get(w.t, `/v1/receipts/${id}/proof`, w.alice.apiKey);
      expectError(other, 404, 'not_found');
      expect(other.body.error).toBe(unknown.body.error.replace(unknownId, id));
    }
    for (const id of [w.ids.bob[0]!, w.ids.app[0]!])
      expect((await get(w.t, `/v1/receipts/${id}/proof`, w.auditor)).status).toBe(200);
  });

  it('entry bundles, which hold every account’s receipts, only to a reader of everything', async () => {
    const path = '/v1/log/tile/entries/000.p/6';
    const refused = await get(w.t, path, w.alice.apiKey);
    expectError(refused, 403, 'forbidden');
    expect(refused.body.error).toContain('reader of everything');
    const bundle = await get(w.t, path, w.auditor);
    expect(bundle.status).toBe(200);
    // A shared cache must not keep an authorised read and hand it to the next caller.
    expect(bundle.headers['cache-control']).toMatch(/^private\b/);
    // Hash tiles hold hashes only: public in either mode, and cached as such.
    const hashes = await get(w.t, '/v1/log/tile/0/000.p/6');
    expect(hashes.status).toBe(200);
    expect(hashes.headers['cache-control']).toMatch(/^public\b/);
  });

  it('an encoded slash does not reach an entry bundle through the hash-tile route', async () => {
    for (const path of [
      '/v1/log/tile/entries%2F000.p%2F6',
      '/v1/log/tile/entries%2f000.p%2f6',
      '/v1/log/tile/entries%2F000.p/6',
      '/v1/log/tile/entries/000.p%2F6',
    ]) {
      // The last is under tile/entries/, a read: no key is 401 there before any parsing.
      const unkeyed = path.startsWith('/v1/log/tile/entries/') ? 401 : 404;
      for (const [key, status] of [
        [undefined, unkeyed],
        [w.alice.apiKey, 404],
        [w.auditor, 404],
      ] as const) {
        const res = await get(w.t, path, key);
        expect({ path, status: res.status }).toEqual({ path, status });
        expectError(res, status, status === 401 ? 'unauthorized' : 'not_found');
        if (status === 404) expect(res.body.error).toContain('canonical');
      }
    }
  });

  it('a key with no receipts sees an empty ledger', async () => {
    const carol = await signupAccount(w.t);
    const search = await get(w.t, '/v1/receipts/search', carol.apiKey);
    expect(search.body.receipts).toEqual([]);
    const overview = await get(w.t, '/v1/overview', carol.apiKey);
    expect(overview.body).toMatchObject({ receipts: 0, agents: 0, repositories: 0 });
    expect((await get(w.t, '/v1/repos', carol.apiKey)).body.repositories).toEqual([]);
    expect((await get(w.t, '/v1/agents', carol.apiKey)).body.agents).toEqual([]);
  });

  it('a rotated key keeps reading its account’s receipts', async () => {
    const rotated = await request(w.t.app)
      .post('/v1/account/rotate')
      .set('X-API-Key', w.bob.apiKey);
    expect(rotated.status).toBe(201);
    const search = await get(w.t, '/v1/receipts/search', rotated.body.api_key);
    expect(receiptIds(search.body)).toEqual(sorted(w.ids.bob));
  });

  it('a --reader all key reads every receipt, the App’s included, as with public reads', async () => {
    const all = sorted(w.ids.alice, w.ids.bob, w.ids.app);
    const search = await get(w.t, '/v1/receipts/search?limit=100', w.auditor);
    expect(receiptIds(search.body)).toEqual(all);
    expect(receiptIds((await get(w.t, '/v1/ledger?limit=100', w.auditor)).body)).toEqual(all);
    for (const id of all)
      expect((await get(w.t, `/v1/receipts/${id}`, w.auditor)).status).toBe(200);
    const overview = await get(w.t, '/v1/overview', w.auditor);
    expect(overview.body).toMatchObject({ receipts: 6, agents: 3, repositories: 4 });
    const stats = await get(w.t, '/v1/ledger/stats', w.auditor);
    expect(stats.body.agents).toEqual(['alice-bot', 'bob-bot', 'github-app']);
    const diff = await get(w.t, '/v1/receipts/diff?repository=shared/repo&pr=9', w.auditor);
    expect(diff.body.receipts).toHaveLength(2);
  });

  it('the operator can make a key a reader of everything and take it back', async () => {
    const keys = new ApiKeyService({
      keys: w.t.store.apiKeys,
      clock: w.t.clock,
      cache: { ttlMs: 0 },
    });
    // The app's own key cache holds Alice's record for its bound: step past it.
    expect((await keys.setReader(w.alice.email, 'all'))?.reader).toBe('all');
    w.t.clock.advance(10_000);
    const all = await get(w.t, '/v1/receipts/search?limit=100', w.alice.apiKey);
    expect(all.body.receipts).toHaveLength(6);
    expect((await keys.setReader(w.alice.email, 'own'))?.reader).toBe('own');
    w.t.clock.advance(10_000);
    const own = await get(w.t, '/v1/receipts/search?limit=100', w.alice.apiKey);
    expect(receiptIds(own.body)).toEqual(sorted(w.ids.alice));
  });
});

describe('SVC_PUBLIC_READS=true (the default): reads are unchanged', () => {
  let w: World;
  beforeEach(async () => {
    w = await world(true);
  });
  afterEach(() => w.t.close());

  it('anyone, with or without a key, reads every receipt and the whole ledger’s summaries', async () => {
    const all = sorted(w.ids.alice, w.ids.bob, w.ids.app);
    for (const key of [undefined, w.alice.apiKey]) {
      expect(receiptIds((await get(w.t, '/v1/receipts/search?limit=100', key)).body)).toEqual(all);
      expect(receiptIds((await get(w.t, '/v1/ledger?limit=100', key)).body)).toEqual(all);
      expect((await get(w.t, `/v1/receipts/${w.ids.bob[0]}`, key)).status).toBe(200);
      expect((await get(w.t, `/v1/receipts/${w.ids.app[0]}`, key)).status).toBe(200);
      const overview = await get(w.t, '/v1/overview', key);
      expect(overview.body).toMatchObject({ receipts: 6, agents: 3, repositories: 4 });
      const stats = await get(w.t, '/v1/ledger/stats', key);
      expect(stats.body.total).toBe(6);
      const repos = await get(w.t, '/v1/repos', key);
      expect(repos.body.repositories).toHaveLength(4);
    }
  });
});
