import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import type { ReceiptFilter } from '../../../src/ports/ledger-queries.js';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import { newKey } from '../../support/api.js';
import { validClaim } from '../../support/claims.js';

// The search page is spliced from the stored receipt JSON. What it must equal is what the
// service sent before: res.json of {receipts (parsed from the store), limit, order,
// next_after}, so it is rebuilt here that way and compared byte for byte.
describe('GET /v1/receipts/search sends the same bytes as serializing the parsed page', () => {
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    t = buildTestApp();
    key = await newKey(t, 'pilot');
    const texts = [
      'Merge PR #42 after CI passed',
      'hotfix: é€😀 and "quotes" \\ backslash',
      'line\u2028separator </script> & <b>',
      'schema migration, confidence low',
      'hotfix again',
    ];
    for (const [i, claim] of texts.entries()) {
      const base = validClaim({ claim });
      // Low confidence everywhere: BLOCKED, so a verdict filter selects some.
      const body =
        i === 3
          ? {
              ...base,
              sources: (base.sources as Record<string, unknown>[]).map((s) => ({
                ...s,
                confidence: 0.1,
              })),
            }
          : base;
      const res = await request(t.app).post('/v1/evaluate').set('X-API-Key', key).send(body);
      expect({ status: res.status, body: res.status === 200 ? null : res.body }).toEqual({
        status: 200,
        body: null,
      });
    }
  });
  afterAll(() => t.close());

  const cases: [string, ReceiptFilter, { limit: number; order: 'asc' | 'desc'; after?: number }][] =
    [
      ['', {}, { limit: 100, order: 'desc' }],
      ['?order=asc&limit=2', {}, { limit: 2, order: 'asc' }],
      ['?limit=2&after=4', {}, { limit: 2, order: 'desc', after: 4 }],
      ['?q=hotfix', { q: 'hotfix' }, { limit: 100, order: 'desc' }],
      ['?verdict=BLOCKED', { verdict: 'BLOCKED' }, { limit: 100, order: 'desc' }],
      ['?agent=nobody', { agent: 'nobody' }, { limit: 100, order: 'desc' }],
    ];

  it.each(cases)('%s', async (query, filter, page) => {
    const res = await request(t.app).get(`/v1/receipts/search${query}`).set('X-API-Key', key);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const rows = await t.store.queries.search(filter, { ...page, limit: page.limit + 1 });
    const items = rows.slice(0, page.limit);
    const expected = JSON.stringify({
      receipts: items,
      limit: page.limit,
      order: page.order,
      next_after: rows.length > page.limit ? items.at(-1)!.chain.sequence : null,
    });
    expect(res.text).toBe(expected);
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(expected)));
  });

  it('finds receipts at all, so the comparison above is not of empty pages only', async () => {
    const res = await request(t.app).get('/v1/receipts/search').set('X-API-Key', key);
    expect(res.body.receipts).toHaveLength(5);
    expect(res.body.receipts[3].receipt_id).toMatch(/^dr-/);
  });
});
