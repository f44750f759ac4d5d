import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import {
  evaluateNew,
  expectCommonHeaders,
  expectError,
  HOUR_MS,
  idOf,
  issue,
  type Json,
  newKey,
  receiptOf,
  sequenceOf,
} from '../../support/api.js';
import { claimOf } from '../../support/claims.js';

const get = (t: TestApp, path: string, query: Record<string, string | number> = {}) =>
  request(t.app).get(path).query(query);

type Page = { receipts: Json[]; limit: number; next_after: number | null };
const sequences = (page: Page) => page.receipts.map(sequenceOf);

/** Follows next_after until the last page; answers every page's sequences. */
async function walk(t: TestApp, path: string, query: Record<string, string | number>) {
  const pages: number[][] = [];
  let after: number | null = null;
  do {
    const res = await get(t, path, after === null ? query : { ...query, after });
    expect(res.status).toBe(200);
    pages.push(sequences(res.body));
    after = res.body.next_after;
    expect(pages.length).toBeLessThan(50);
  } while (after !== null);
  return pages;
}

describe('GET /v1/ledger', () => {
  let t: TestApp;
  let key: string;
  beforeEach(async () => {
    t = buildTestApp();
    key = await newKey(t, 'pilot');
  });
  afterEach(() => t.close());

  it('answers an empty page with the empty head on an empty ledger', async () => {
    const res = await get(t, '/v1/ledger');
    expect(res.status).toBe(200);
    expectCommonHeaders(res);
    expect(res.body).toEqual({
      receipts: [],
      limit: 100,
      next_after: null,
      head: { sequence: 0, receipt_hash: null },
    });
  });

  it('lists the receipts exactly as evaluate issued them, in sequence order, with the head', async () => {
    const issued = [];
    for (let i = 0; i < 3; i++) issued.push(receiptOf(await issue(t, key)));
    const res = await get(t, '/v1/ledger');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      receipts: issued,
      limit: 100,
      next_after: null,
      head: { sequence: 3, receipt_hash: (issued[2]!.chain as Json).receipt_hash },
    });
  });

  it('pages with after: full pages carry the cursor, the last page carries null', async () => {
    for (let i = 0; i < 5; i++) await issue(t, key);
    expect(await walk(t, '/v1/ledger', { limit: 2 })).toEqual([[1, 2], [3, 4], [5]]);
    // A page of exactly the remaining size is the last page: no empty page follows.
    expect(await walk(t, '/v1/ledger', { limit: 5 })).toEqual([[1, 2, 3, 4, 5]]);
    expect(await walk(t, '/v1/ledger', { limit: 4 })).toEqual([[1, 2, 3, 4], [5]]);

    const tail = await get(t, '/v1/ledger', { after: 3, limit: 1000 });
    expect(tail.body).toMatchObject({ limit: 1000, next_after: null });
    expect(sequences(tail.body)).toEqual([4, 5]);
    for (const after of [5, 6, 1_000_000]) {
      const beyond = await get(t, '/v1/ledger', { after });
      expect(beyond.status).toBe(200);
      expect(beyond.body).toMatchObject({ receipts: [], next_after: null });
      expect(beyond.body.head.sequence).toBe(5);
    }
    const fromZero = await get(t, '/v1/ledger', { after: 0, limit: 1 });
    expect(fromZero.body).toMatchObject({ next_after: 1 });
    expect(sequences(fromZero.body)).toEqual([1]);
  });

  it.each([
    [{ limit: 0 }, 'limit'],
    [{ limit: 1001 }, 'limit'],
    [{ limit: 'abc' }, 'limit'],
    [{ limit: 2.5 }, 'limit'],
    [{ limit: -1 }, 'limit'],
    [{ after: -1 }, 'after'],
    [{ after: 'x' }, 'after'],
    [{ after: 1.5 }, 'after'],
    [{ offset: 10 }, 'offset'],
    [{ cursor: 'abc' }, 'cursor'],
  ])('refuses %j with 400 naming %s', async (query, name) => {
    const res = await get(t, '/v1/ledger', query);
    const message = expectError(res, 400, 'validation_failed');
    expect(message.startsWith(`${name}: `)).toBe(true);
  });

  it('says what is wrong with the parameter', async () => {
    const message = (query: Record<string, string | number>) =>
      get(t, '/v1/ledger', query).then((res) => expectError(res, 400, 'validation_failed'));
    expect(await message({ limit: 1001 })).toMatch(/^limit: .*1000/);
    expect(await message({ limit: 'abc' })).toBe('limit: must be a whole number');
    expect(await message({ after: -1 })).toMatch(/^after: .*0/);
    expect(await message({ offset: 10 })).toBe('offset: unknown parameter');
    expect(await message({ offset: 10, page: 2 })).toBe(
      'offset: unknown parameter; page: unknown parameter',
    );
  });

  it('refuses a repeated parameter', async () => {
    const res = await request(t.app).get('/v1/ledger?limit=1&limit=2');
    expect(expectError(res, 400, 'validation_failed')).toBe('limit: must be given at most once');
    const two = await request(t.app).get('/v1/ledger?limit=1&limit=1&after=0&after=0');
    expect(expectError(two, 400, 'validation_failed')).toMatch(/^limit: .*; after: /);
  });
});

describe('GET /v1/receipts/:id', () => {
  let t: TestApp;
  let key: string;
  beforeEach(async () => {
    t = buildTestApp();
    key = await newKey(t, 'pilot');
  });
  afterEach(() => t.close());

  it('answers exactly the response evaluate gave', async () => {
    const first = await issue(t, key, { kind: 'blocked' });
    const second = await issue(t, key, { kind: 'escalated' });
    for (const body of [first, second]) {
      const res = await get(t, `/v1/receipts/${idOf(body)}`);
      expect(res.status).toBe(200);
      expectCommonHeaders(res);
      expect(res.body).toEqual(body);
    }
  });

  it('is 404 not_found for an unknown id, naming it', async () => {
    await issue(t, key);
    const res = await get(t, '/v1/receipts/dr-01JHGZ3Q4W5E6R7T8Y9U0I1O2P');
    expect(expectError(res, 404, 'not_found')).toContain('dr-01JHGZ3Q4W5E6R7T8Y9U0I1O2P');
    expectError(await get(t, '/v1/receipts/nope'), 404, 'not_found');
  });

  it('refuses an id over 256 characters with 400 naming it', async () => {
    const res = await get(t, `/v1/receipts/dr-${'a'.repeat(300)}`);
    expect(expectError(res, 400, 'validation_failed')).toMatch(/^id: /);
  });

  it('does not take the analytics paths for receipt ids', async () => {
    for (const path of ['search', 'timeline']) {
      const res = await get(t, `/v1/receipts/${path}`);
      expect(res.status).toBe(200);
    }
  });
});

describe('GET /v1/receipts/search', () => {
  let t: TestApp;
  let key: string;
  /** Receipts by name, issued in this order (sequence 1 to 6). */
  let r: Record<string, Json>;
  const t0 = Date.parse('2026-01-15T10:00:00.000Z');

  beforeEach(async () => {
    t = buildTestApp();
    key = await newKey(t, 'pilot');
    r = {};
    // One receipt an hour, from 10:00 to 15:00 on 2026-01-15.
    const specs = {
      merge: { claim: 'Merge PR #42 after CI passed' },
      deploy: {
        claim: 'Deploy release v2.1 to staging',
        entity: 'acme/api',
        repository: 'acme/api',
        agent: 'deploy-bot',
        kind: 'blocked' as const,
      },
      access: {
        claim: 'Grant read access to the warehouse',
        entity: 'iam/warehouse',
        repository: null,
        agent: 'access-bot',
        kind: 'escalated' as const,
      },
      replay: {
        claim: 'Merge the dependency update',
        agent: 'coder-bot',
        kind: 'non_deterministic' as const,
      },
      noagent: {
        claim: 'Rotate credentials of the billing database',
        entity: 'billing-db',
        repository: 'acme/billing',
        agent: null,
      },
      unicode: {
        claim: 'Déployer la révision über-schnell',
        entity: 'acme/web',
        agent: 'coder-bot',
      },
    };
    for (const [name, spec] of Object.entries(specs)) {
      r[name] = receiptOf(await issue(t, key, spec));
      t.clock.advance(HOUR_MS);
    }
  });
  afterEach(() => t.close());

  const search = async (query: Record<string, string | number>) => {
    const res = await get(t, '/v1/receipts/search', query);
    expect({ status: res.status, body: res.body }).toMatchObject({ status: 200 });
    return res.body as Page & { order: string };
  };
  const ids = (page: Page) => page.receipts.map((x) => x.receipt_id);
  const named = (...names: string[]) => names.map((n) => r[n]!.receipt_id);

  it('without filters lists everything, newest first, with its paging fields', async () => {
    const res = await get(t, '/v1/receipts/search');
    expect(res.status).toBe(200);
    expectCommonHeaders(res);
    expect(res.body).toEqual({
      receipts: ['unicode', 'noagent', 'replay', 'access', 'deploy', 'merge'].map((n) => r[n]),
      limit: 100,
      order: 'desc',
      next_after: null,
    });
  });

  it('include=claims adds each listed receipt’s claim text by receipt_id, and only then', async () => {
    const page = (await search({ include: 'claims', limit: 2 })) as Page & {
      claims?: Record<string, string>;
    };
    expect(page.claims).toEqual({
      [r.unicode!.receipt_id as string]: 'Déployer la révision über-schnell',
      [r.noagent!.receipt_id as string]: 'Rotate credentials of the billing database',
    });
    expect(await search({ limit: 2 })).not.toHaveProperty('claims');
    const bad = await get(t, '/v1/receipts/search', { include: 'everything' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('include');
  });

  it('order=asc lists oldest first', async () => {
    const page = await search({ order: 'asc' });
    expect(page.order).toBe('asc');
    expect(sequences(page)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('pages with after in both orders, the last page carrying null', async () => {
    expect(await walk(t, '/v1/receipts/search', { limit: 4 })).toEqual([
      [6, 5, 4, 3],
      [2, 1],
    ]);
    expect(await walk(t, '/v1/receipts/search', { limit: 2, order: 'asc' })).toEqual([
      [1, 2],
      [3, 4],
      [5, 6],
    ]);
    expect(await walk(t, '/v1/receipts/search', { limit: 6 })).toEqual([[6, 5, 4, 3, 2, 1]]);
    expect(await walk(t, '/v1/receipts/search', { limit: 3, agent: 'coder-bot' })).toEqual([
      [6, 4, 1],
    ]);
    expect(
      await walk(t, '/v1/receipts/search', { limit: 1, agent: 'coder-bot', order: 'asc' }),
    ).toEqual([[1], [4], [6]]);
    expect(sequences(await search({ after: 1 }))).toEqual([]);
    expect(sequences(await search({ after: 6, order: 'asc' }))).toEqual([]);
  });

  it('filters by agent, exactly', async () => {
    expect(ids(await search({ agent: 'coder-bot' }))).toEqual(named('unicode', 'replay', 'merge'));
    expect(ids(await search({ agent: 'deploy-bot' }))).toEqual(named('deploy'));
    expect(ids(await search({ agent: 'coder' }))).toEqual([]);
    expect(ids(await search({ agent: 'CODER-BOT' }))).toEqual([]);
  });

  it('filters by repository with repo, exactly', async () => {
    expect(ids(await search({ repo: 'acme/web' }))).toEqual(named('unicode', 'replay', 'merge'));
    expect(ids(await search({ repo: 'acme/billing' }))).toEqual(named('noagent'));
    expect(ids(await search({ repo: 'acme' }))).toEqual([]);
  });

  it('filters by verdict', async () => {
    expect(ids(await search({ verdict: 'ALLOWED' }))).toEqual(
      named('unicode', 'noagent', 'replay', 'merge'),
    );
    expect(ids(await search({ verdict: 'BLOCKED' }))).toEqual(named('deploy'));
    expect(ids(await search({ verdict: 'ESCALATED' }))).toEqual(named('access'));
  });

  it('filters by admissibility with status', async () => {
    expect(ids(await search({ status: 'ACCEPTED' }))).toEqual(named('unicode', 'noagent', 'merge'));
    expect(ids(await search({ status: 'REJECTED' }))).toEqual(named('access', 'deploy'));
    expect(ids(await search({ status: 'NON_DETERMINISTIC' }))).toEqual(named('replay'));
  });

  it('since is inclusive and until exclusive, in any ISO 8601 form', async () => {
    const at = (hours: number) => new Date(t0 + hours * HOUR_MS).toISOString();
    expect(ids(await search({ since: at(3) }))).toEqual(named('unicode', 'noagent', 'replay'));
    expect(ids(await search({ until: at(1) }))).toEqual(named('merge'));
    expect(ids(await search({ since: at(1), until: at(3) }))).toEqual(named('access', 'deploy'));
    expect(ids(await search({ since: at(1), until: at(1) }))).toEqual([]);
    // 12:00 in UTC+02:00 is 10:00 UTC, the first receipt.
    expect(ids(await search({ until: '2026-01-15T12:00:00.001+02:00' }))).toEqual(named('merge'));
    expect(ids(await search({ since: '2026-01-15T14:00Z' }))).toEqual(named('unicode', 'noagent'));
    expect(ids(await search({ since: '2026-01-16' }))).toEqual([]);
    expect(sequences(await search({ since: '2026-01-15', until: '2026-01-16' }))).toEqual([
      6, 5, 4, 3, 2, 1,
    ]);
  });

  it('combines filters with AND', async () => {
    expect(ids(await search({ agent: 'coder-bot', status: 'ACCEPTED' }))).toEqual(
      named('unicode', 'merge'),
    );
    expect(
      ids(await search({ repo: 'acme/web', verdict: 'ALLOWED', since: '2026-01-15T12:00Z' })),
    ).toEqual(named('unicode', 'replay'));
    expect(
      ids(await search({ q: 'merge', agent: 'coder-bot', status: 'NON_DETERMINISTIC' })),
    ).toEqual(named('replay'));
    expect(ids(await search({ agent: 'deploy-bot', verdict: 'ALLOWED' }))).toEqual([]);
  });

  describe('q', () => {
    it('matches whole words and word prefixes of the claim text, case-insensitively', async () => {
      expect(ids(await search({ q: 'merge' }))).toEqual(named('replay', 'merge'));
      expect(ids(await search({ q: 'MER' }))).toEqual(named('replay', 'merge'));
      expect(ids(await search({ q: 'depend' }))).toEqual(named('replay'));
      expect(ids(await search({ q: 'v2' }))).toEqual(named('deploy'));
      // Inside a word is not a prefix.
      expect(ids(await search({ q: 'erge' }))).toEqual([]);
    });

    it('matches the entity, the repository and the agent', async () => {
      expect(ids(await search({ q: 'warehouse' }))).toEqual(named('access'));
      expect(ids(await search({ q: 'billing' }))).toEqual(named('noagent'));
      expect(ids(await search({ q: 'acme/api' }))).toEqual(named('deploy'));
      expect(ids(await search({ q: 'access-bot' }))).toEqual(named('access'));
      expect(ids(await search({ q: 'deploy-b' }))).toEqual(named('deploy'));
    });

    it('does not match what it does not index: evidence, commit, model', async () => {
      expect(ids(await search({ q: 'tests' }))).toEqual([]);
      expect(ids(await search({ q: 'a1b2c3d' }))).toEqual([]);
      expect(ids(await search({ q: 'model' }))).toEqual([]);
    });

    it('needs every word to match, in any of the fields', async () => {
      expect(ids(await search({ q: 'merge coder' }))).toEqual(named('replay', 'merge'));
      expect(ids(await search({ q: 'merge ci' }))).toEqual(named('merge'));
      expect(ids(await search({ q: '  merge   deploy ' }))).toEqual([]);
    });

    it('folds case and diacritics', async () => {
      expect(ids(await search({ q: 'deployer revision' }))).toEqual(named('unicode'));
      expect(ids(await search({ q: 'ÜBER' }))).toEqual(named('unicode'));
    });

    it('reads no query syntax from the text', async () => {
      for (const q of [
        'merge OR deploy',
        'NOT merge',
        'merge*',
        '"merge',
        'claim:merge',
        '(merge)',
        'merge AND',
        'NEAR(merge deploy)',
      ]) {
        const res = await get(t, '/v1/receipts/search', { q });
        expect({ q, status: res.status }).toEqual({ q, status: 200 });
      }
      expect(ids(await search({ q: 'merge*' }))).toEqual(named('replay', 'merge'));
      expect(ids(await search({ q: '"merge"' }))).toEqual(named('replay', 'merge'));
      expect(ids(await search({ q: 'merge OR deploy' }))).toEqual([]);
      expect(ids(await search({ q: 'merge -' }))).toEqual(named('replay', 'merge'));
    });

    it('pages through matches', async () => {
      expect(await walk(t, '/v1/receipts/search', { q: 'merge', limit: 1 })).toEqual([[4], [1]]);
    });
  });

  it.each([
    [{ limit: 0 }, 'limit'],
    [{ limit: 1001 }, 'limit'],
    [{ limit: 'abc' }, 'limit'],
    [{ after: -1 }, 'after'],
    [{ after: 'abc' }, 'after'],
    [{ verdict: 'maybe' }, 'verdict'],
    [{ verdict: 'allowed' }, 'verdict'],
    [{ status: 'x' }, 'status'],
    [{ order: 'up' }, 'order'],
    [{ since: 'notadate' }, 'since'],
    [{ since: '2026-13-01' }, 'since'],
    [{ since: '2026-02-30' }, 'since'],
    [{ since: '15/01/2026' }, 'since'],
    [{ until: 'yesterday' }, 'until'],
    [{ until: '2026-01-15T25:00:00Z' }, 'until'],
    [{ q: '' }, 'q'],
    [{ q: '?!' }, 'q'],
    [{ q: 'x'.repeat(257) }, 'q'],
    [{ agent: '' }, 'agent'],
    [{ repo: '' }, 'repo'],
    [{ repository: 'acme/web' }, 'repository'],
    [{ action_type: 'merge' }, 'action_type'],
    [{ action_type: '' }, 'action_type'],
    [{ environment: 'production' }, 'environment'],
    [{ action_type: 'deployment', environment: 'production' }, 'environment'],
    [{ repo: 'acme/web', environment: '' }, 'environment'],
    [{ repo: 'acme/web', environment: 'x'.repeat(256) }, 'environment'],
    [{ foo: 'bar' }, 'foo'],
  ])('refuses %j with 400 naming %s', async (query, name) => {
    const res = await get(t, '/v1/receipts/search', query);
    const message = expectError(res, 400, 'validation_failed');
    expect(message.startsWith(`${name}: `)).toBe(true);
  });

  it.each([
    'limit=1&limit=2',
    'agent=a&agent=b',
    'q=merge&q=deploy',
    'verdict=ALLOWED&verdict=BLOCKED',
  ])('refuses the repeated parameter of %s', async (query) => {
    const res = await request(t.app).get(`/v1/receipts/search?${query}`);
    const name = query.split('=')[0]!;
    expect(expectError(res, 400, 'validation_failed')).toBe(`${name}: must be given at most once`);
  });

  it('finds a receipt issued after the search began', async () => {
    const before = await search({ agent: 'late-bot' });
    expect(before.receipts).toEqual([]);
    const late = await evaluateNew(t, key, claimOf({ agent: 'late-bot' }));
    expect(ids(await search({ agent: 'late-bot' }))).toEqual([idOf(late)]);
  });
});
