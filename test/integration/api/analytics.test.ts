import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import {
  expectCommonHeaders,
  expectError,
  HOUR_MS,
  idOf,
  ISO,
  issue,
  type Json,
  newKey,
  receiptOf,
  sequenceOf,
} from '../../support/api.js';
import { RULE_ORDER } from '../../../src/core/rules/threshold-rules.js';

const DAY_MS = 24 * HOUR_MS;
const get = (t: TestApp, path: string, query: Record<string, string | number> = {}) =>
  request(t.app).get(path).query(query);

async function ok(t: TestApp, path: string, query: Record<string, string | number> = {}) {
  const res = await get(t, path, query);
  expect({ status: res.status, body: res.body }).toMatchObject({ status: 200 });
  expectCommonHeaders(res);
  return res.body as Json;
}

async function bad(t: TestApp, path: string, query: Record<string, string | number>, name: string) {
  const message = expectError(await get(t, path, query), 400, 'validation_failed');
  expect(message.startsWith(`${name}: `)).toBe(true);
  return message;
}

const zeroDay = (date: string) => ({ date, total: 0, ALLOWED: 0, BLOCKED: 0, ESCALATED: 0 });

describe('GET /v1/receipts/timeline', () => {
  let t: TestApp;
  let key: string;
  beforeEach(async () => {
    t = buildTestApp();
    key = await newKey(t, 'pilot');
  });
  afterEach(() => t.close());

  /** 2026-01-15: two ALLOWED and one BLOCKED; 2026-01-17: one ESCALATED without repository. */
  async function seed() {
    await issue(t, key, { repository: 'acme/web' });
    await issue(t, key, { repository: 'acme/web' });
    t.clock.advance(13 * HOUR_MS + 59 * 60_000); // 23:59 on the 15th
    await issue(t, key, { repository: 'acme/api', kind: 'blocked' });
    t.clock.advance(DAY_MS + 2 * 60_000); // 00:01 on the 17th
    await issue(t, key, { repository: null, kind: 'escalated' });
  }

  it('covers the 30 days up to today by default, every day present, on an empty ledger', async () => {
    const body = await ok(t, '/v1/receipts/timeline');
    const days = body.days as Json[];
    expect(body).toMatchObject({ repository: null, since: '2025-12-17', until: '2026-01-15' });
    expect(days).toHaveLength(30);
    expect(days[0]).toEqual(zeroDay('2025-12-17'));
    expect(days[29]).toEqual(zeroDay('2026-01-15'));
    expect(days.map((d) => d.date)).toEqual(
      Array.from({ length: 30 }, (_, i) =>
        new Date(Date.parse('2025-12-17') + i * DAY_MS).toISOString().slice(0, 10),
      ),
    );
  });

  it('counts receipts by UTC day and verdict, with zero days in between', async () => {
    await seed();
    const body = await ok(t, '/v1/receipts/timeline', { since: '2026-01-14', until: '2026-01-18' });
    expect(body).toEqual({
      repository: null,
      since: '2026-01-14',
      until: '2026-01-18',
      days: [
        zeroDay('2026-01-14'),
        { date: '2026-01-15', total: 3, ALLOWED: 2, BLOCKED: 1, ESCALATED: 0 },
        zeroDay('2026-01-16'),
        { date: '2026-01-17', total: 1, ALLOWED: 0, BLOCKED: 0, ESCALATED: 1 },
        zeroDay('2026-01-18'),
      ],
    });
  });

  it('the default range follows the clock', async () => {
    await seed();
    const body = await ok(t, '/v1/receipts/timeline');
    const days = body.days as Json[];
    expect(body).toMatchObject({ since: '2025-12-19', until: '2026-01-17' });
    expect(days).toHaveLength(30);
    expect(days.slice(-3)).toEqual([
      { date: '2026-01-15', total: 3, ALLOWED: 2, BLOCKED: 1, ESCALATED: 0 },
      zeroDay('2026-01-16'),
      { date: '2026-01-17', total: 1, ALLOWED: 0, BLOCKED: 0, ESCALATED: 1 },
    ]);
  });

  it('since alone runs to today; until alone starts 29 days before it', async () => {
    await seed();
    const fromSince = await ok(t, '/v1/receipts/timeline', { since: '2026-01-15' });
    expect(fromSince).toMatchObject({ since: '2026-01-15', until: '2026-01-17' });
    expect((fromSince.days as Json[]).map((d) => d.total)).toEqual([3, 0, 1]);
    const toUntil = await ok(t, '/v1/receipts/timeline', { until: '2026-01-16' });
    expect(toUntil).toMatchObject({ since: '2025-12-18', until: '2026-01-16' });
    expect((toUntil.days as Json[]).map((d) => d.total).slice(-2)).toEqual([3, 0]);
    const one = await ok(t, '/v1/receipts/timeline', { since: '2026-01-15', until: '2026-01-15' });
    expect(one.days).toEqual([
      { date: '2026-01-15', total: 3, ALLOWED: 2, BLOCKED: 1, ESCALATED: 0 },
    ]);
  });

  it('filters by repository', async () => {
    await seed();
    const query = { since: '2026-01-15', until: '2026-01-17' };
    const web = await ok(t, '/v1/receipts/timeline', { ...query, repository: 'acme/web' });
    expect(web).toEqual({
      repository: 'acme/web',
      since: '2026-01-15',
      until: '2026-01-17',
      days: [
        { date: '2026-01-15', total: 2, ALLOWED: 2, BLOCKED: 0, ESCALATED: 0 },
        zeroDay('2026-01-16'),
        zeroDay('2026-01-17'),
      ],
    });
    const api = await ok(t, '/v1/receipts/timeline', { ...query, repository: 'acme/api' });
    expect((api.days as Json[])[0]).toEqual({
      date: '2026-01-15',
      total: 1,
      ALLOWED: 0,
      BLOCKED: 1,
      ESCALATED: 0,
    });
    const none = await ok(t, '/v1/receipts/timeline', { ...query, repository: 'acme' });
    expect((none.days as Json[]).map((d) => d.total)).toEqual([0, 0, 0]);
  });

  it('spans at most 366 days', async () => {
    const year = await ok(t, '/v1/receipts/timeline', { since: '2025-01-01', until: '2026-01-01' });
    expect(year.days).toHaveLength(366);
    const leap = await ok(t, '/v1/receipts/timeline', { since: '2024-01-01', until: '2024-12-31' });
    expect(leap.days).toHaveLength(366);
    expect(
      await bad(t, '/v1/receipts/timeline', { since: '2024-12-31', until: '2026-01-01' }, 'until'),
    ).toContain('366');
  });

  it.each([
    [{ since: '2026-01-16', until: '2026-01-15' }, 'since'],
    [{ since: '2026-02-01' }, 'since'],
    [{ since: '2026-02-30' }, 'since'],
    [{ until: '2026-13-01' }, 'until'],
    [{ since: '20260115' }, 'since'],
    [{ until: '2026-01-15T00:00:00Z' }, 'until'],
    [{ until: 'today' }, 'until'],
    [{ repository: '' }, 'repository'],
    [{ repo: 'acme/web' }, 'repo'],
    [{ days: 7 }, 'days'],
  ])('refuses %j with 400 naming %s', async (query, name) => {
    await bad(t, '/v1/receipts/timeline', query, name);
  });
});

describe('GET /v1/receipts/compare', () => {
  let t: TestApp;
  let key: string;
  let allowed: Json;
  let blocked: Json;
  let escalated: Json;
  beforeEach(async () => {
    t = buildTestApp();
    key = await newKey(t, 'pilot');
    allowed = await issue(t, key, { sources: ['ci-1', 'ci-2'] });
    t.clock.advance(60_000);
    blocked = await issue(t, key, { kind: 'blocked', agent: 'other-bot', commit: 'ffff000' });
    escalated = await issue(t, key, { kind: 'escalated', repository: null });
  });
  afterEach(() => t.close());

  const summary = (body: Json, failed: string[]) => {
    const receipt = receiptOf(body);
    const claim = body.claim as { sources: { id: string; type: string; confidence: number }[] };
    return {
      receipt_id: receipt.receipt_id,
      sequence: sequenceOf(receipt),
      issued_at: receipt.issued_at,
      claim_id: receipt.claim_id,
      subject: receipt.subject,
      verdict: (receipt.policy as Json).verdict,
      admissibility: (receipt.admissibility as Json).status,
      failed_rules: failed,
      evidence: {
        inputs_hash: (receipt.evidence as Json).inputs_hash,
        source_count: claim.sources.length,
        source_types: ['ci'],
        sources: claim.sources.map((s) => ({ id: s.id, type: s.type, confidence: s.confidence })),
      },
    };
  };

  it('sets verdicts, rules and evidence side by side and lists unknown ids', async () => {
    const ids = [idOf(allowed), idOf(blocked), 'dr-unknown'].join(',');
    const body = await ok(t, '/v1/receipts/compare', { ids });
    expect(body).toEqual({
      receipts: [summary(allowed, []), summary(blocked, ['min_confidence'])],
      rules: RULE_ORDER.map((rule) => ({
        rule,
        results: [allowed, blocked].map((b) => {
          const result = (b.policy as { rules: Json[] }).rules.find((r) => r.rule === rule)!;
          return { receipt_id: idOf(b), passed: result.passed, reason: result.reason };
        }),
      })),
      same_verdict: false,
      unknown_ids: ['dr-unknown'],
    });
    const confidence = (body.rules as { rule: string; results: Json[] }[]).find(
      (r) => r.rule === 'min_confidence',
    )!;
    expect(confidence.results.map((r) => r.passed)).toEqual([true, false]);
  });

  it('reports the same verdict, trims spaces and ignores repeated and empty ids', async () => {
    const second = await issue(t, key);
    const ids = ` ${idOf(second)} ,${idOf(allowed)},,${idOf(second)}, `;
    const body = await ok(t, '/v1/receipts/compare', { ids });
    expect((body.receipts as Json[]).map((r) => r.receipt_id)).toEqual([
      idOf(allowed),
      idOf(second),
    ]);
    expect(body).toMatchObject({ same_verdict: true, unknown_ids: [] });
  });

  it('lists the receipts in ledger order, whatever the order of ids', async () => {
    const body = await ok(t, '/v1/receipts/compare', {
      ids: [idOf(escalated), idOf(allowed), idOf(blocked)].join(','),
    });
    expect((body.receipts as Json[]).map((r) => r.verdict)).toEqual([
      'ALLOWED',
      'BLOCKED',
      'ESCALATED',
    ]);
    expect((body.receipts as Json[])[2]!.failed_rules).toEqual([]);
  });

  it('answers an all-unknown comparison with nothing to compare', async () => {
    const body = await ok(t, '/v1/receipts/compare', { ids: 'dr-a,dr-b' });
    expect(body).toEqual({
      receipts: [],
      rules: [],
      same_verdict: true,
      unknown_ids: ['dr-a', 'dr-b'],
    });
  });

  it('takes at most 20 distinct ids', async () => {
    const twenty = [idOf(allowed), ...Array.from({ length: 19 }, (_, i) => `dr-x${i}`)];
    const body = await ok(t, '/v1/receipts/compare', { ids: twenty.join(',') });
    expect(body.unknown_ids).toHaveLength(19);
    const repeated = await ok(t, '/v1/receipts/compare', {
      ids: [...twenty, ...twenty].join(','),
    });
    expect(repeated.receipts).toHaveLength(1);
    expect(
      await bad(t, '/v1/receipts/compare', { ids: [...twenty, 'dr-x20'].join(',') }, 'ids'),
    ).toContain('20');
  });

  it.each([
    [{}, 'ids'],
    [{ ids: '' }, 'ids'],
    [{ ids: ' , ,' }, 'ids'],
    [{ ids: 'x'.repeat(6001) }, 'ids'],
    [{ ids: 'a', id: 'b' }, 'id'],
  ])('refuses %j with 400 naming %s', async (query, name) => {
    await bad(t, '/v1/receipts/compare', query, name);
  });
});

describe('GET /v1/receipts/diff', () => {
  let t: TestApp;
  let key: string;
  let pushes: Json[];
  beforeEach(async () => {
    t = buildTestApp();
    key = await newKey(t, 'pilot');
    pushes = [];
    // Three pushes of acme/web#7, with receipts of other pull requests in between.
    pushes.push(await issue(t, key, { pr: 7, commit: 'c1', sources: ['ci-1'], kind: 'blocked' }));
    await issue(t, key, { pr: 8, commit: 'c1' });
    await issue(t, key, { pr: 7, repository: 'acme/api', commit: 'c9' });
    t.clock.advance(HOUR_MS);
    pushes.push(await issue(t, key, { pr: 7, commit: 'c2', sources: ['ci-1', 'rev-1'] }));
    t.clock.advance(HOUR_MS);
    // The same pull request given as a string.
    pushes.push(await issue(t, key, { pr: '7', commit: 'c2', sources: ['rev-1', 'ci-2'] }));
  });
  afterEach(() => t.close());

  it('lists the pull request’s receipts in order and what changed between each pair', async () => {
    const body = await ok(t, '/v1/receipts/diff', { repository: 'acme/web', pr: 7 });
    expect(body.repository).toBe('acme/web');
    expect(body.pull_request).toBe(7);
    const receipts = body.receipts as Json[];
    expect(receipts.map((r) => r.receipt_id)).toEqual(pushes.map(idOf));
    expect(receipts.map((r) => r.sequence)).toEqual([1, 4, 5]);
    expect(receipts.map((r) => (r.subject as Json).commit)).toEqual(['c1', 'c2', 'c2']);
    expect(receipts[0]).toMatchObject({
      verdict: 'BLOCKED',
      admissibility: 'REJECTED',
      failed_rules: ['min_confidence'],
      evidence: { sources: [{ id: 'ci-1', type: 'ci', confidence: 0.1 }] },
    });
    expect(body.changes).toEqual([
      {
        from: idOf(pushes[0]!),
        to: idOf(pushes[1]!),
        commit: { from: 'c1', to: 'c2' },
        verdict: { from: 'BLOCKED', to: 'ALLOWED' },
        admissibility: { from: 'REJECTED', to: 'ACCEPTED' },
        rules_flipped: [{ rule: 'min_confidence', from: false, to: true }],
        sources_added: ['rev-1'],
        sources_removed: [],
      },
      {
        from: idOf(pushes[1]!),
        to: idOf(pushes[2]!),
        commit: null,
        verdict: null,
        admissibility: null,
        rules_flipped: [],
        sources_added: ['ci-2'],
        sources_removed: ['ci-1'],
      },
    ]);
  });

  it('takes the pull request as written in the claim, digits or not', async () => {
    await issue(t, key, { pr: '007', repository: 'acme/lib' });
    await issue(t, key, { pr: 'feature/x', repository: 'acme/lib' });
    for (const pr of ['7', '007']) {
      const body = await ok(t, '/v1/receipts/diff', { repository: 'acme/lib', pr });
      expect({ pr, n: (body.receipts as Json[]).length, pull_request: body.pull_request }).toEqual({
        pr,
        n: 1,
        pull_request: 7,
      });
    }
    const named = await ok(t, '/v1/receipts/diff', { repository: 'acme/lib', pr: 'feature/x' });
    expect(named).toMatchObject({ pull_request: 'feature/x', changes: [] });
    expect(named.receipts).toHaveLength(1);
  });

  it('answers an unknown pull request with no receipts', async () => {
    expect(await ok(t, '/v1/receipts/diff', { repository: 'acme/web', pr: 99 })).toEqual({
      repository: 'acme/web',
      pull_request: 99,
      receipts: [],
      changes: [],
    });
    const other = await ok(t, '/v1/receipts/diff', { repository: 'acme/api', pr: 7 });
    expect(other.receipts).toHaveLength(1);
    expect(other.changes).toEqual([]);
  });

  it.each([
    [{ pr: 7 }, 'repository'],
    [{ repository: 'acme/web' }, 'pr'],
    [{ repository: '', pr: 7 }, 'repository'],
    [{ repository: 'acme/web', pr: '' }, 'pr'],
    [{ repository: 'acme/web', pr: 'x'.repeat(65) }, 'pr'],
    [{ repo: 'acme/web', repository: 'acme/web', pr: 7 }, 'repo'],
  ])('refuses %j with 400 naming %s', async (query, name) => {
    await bad(t, '/v1/receipts/diff', query, name);
  });
});

describe('GET /v1/repos and GET /v1/agents', () => {
  let t: TestApp;
  let key: string;
  let last: Record<string, Json>;
  beforeEach(async () => {
    t = buildTestApp();
    key = await newKey(t, 'pilot');
    last = {};
  });
  afterEach(() => t.close());

  async function seed() {
    await issue(t, key, { repository: 'acme/web', agent: 'coder-bot', model: 'model-x' });
    t.clock.advance(HOUR_MS);
    await issue(t, key, {
      repository: 'acme/web',
      agent: 'coder-bot',
      model: 'model-y',
      kind: 'blocked',
    });
    last.api = await issue(t, key, {
      repository: 'acme/api',
      agent: 'deploy-bot',
      model: null,
      kind: 'non_deterministic',
    });
    t.clock.advance(HOUR_MS);
    last.web = await issue(t, key, {
      repository: 'acme/web',
      agent: 'coder-bot',
      model: 'model-x',
    });
    await issue(t, key, { repository: null, agent: 'access-bot', kind: 'escalated' });
    await issue(t, key, { repository: 'acme/billing', agent: null });
  }

  const lastReceipt = (body: Json) => ({
    receipt_id: idOf(body),
    sequence: sequenceOf(receiptOf(body)),
    issued_at: receiptOf(body).issued_at,
  });

  it('answer empty listings on an empty ledger', async () => {
    expect(await ok(t, '/v1/repos')).toEqual({ repositories: [], limit: 100, next_after: null });
    expect(await ok(t, '/v1/agents')).toEqual({ agents: [], limit: 100, next_after: null });
  });

  it('/v1/repos: totals by verdict and admissibility, acceptance rate, last receipt, by name', async () => {
    await seed();
    const body = await ok(t, '/v1/repos');
    expect(body).toMatchObject({ limit: 100, next_after: null });
    const repositories = body.repositories as Json[];
    expect(repositories.map((r) => r.repository)).toEqual(['acme/api', 'acme/billing', 'acme/web']);
    expect(repositories[0]).toEqual({
      repository: 'acme/api',
      total: 1,
      by_verdict: { ALLOWED: 1, BLOCKED: 0, ESCALATED: 0 },
      by_admissibility: { ACCEPTED: 0, NON_DETERMINISTIC: 1, REJECTED: 0 },
      acceptance_rate: 0,
      last_receipt: lastReceipt(last.api!),
    });
    expect(repositories[1]).toMatchObject({ total: 1, acceptance_rate: 1 });
    expect(repositories[2]).toEqual({
      repository: 'acme/web',
      total: 3,
      by_verdict: { ALLOWED: 2, BLOCKED: 1, ESCALATED: 0 },
      by_admissibility: { ACCEPTED: 2, NON_DETERMINISTIC: 0, REJECTED: 1 },
      acceptance_rate: 0.6667,
      last_receipt: lastReceipt(last.web!),
    });
  });

  it('/v1/agents: verdicts, admissibility, models seen, first and last seen, by name', async () => {
    await seed();
    const body = await ok(t, '/v1/agents');
    const agents = body.agents as Json[];
    expect(agents.map((a) => a.agent)).toEqual(['access-bot', 'coder-bot', 'deploy-bot']);
    expect(agents[0]).toEqual({
      agent: 'access-bot',
      total: 1,
      by_verdict: { ALLOWED: 0, BLOCKED: 0, ESCALATED: 1 },
      by_admissibility: { ACCEPTED: 0, NON_DETERMINISTIC: 0, REJECTED: 1 },
      acceptance_rate: 0,
      models: ['model-x'],
      first_seen: '2026-01-15T12:00:00.000Z',
      last_seen: '2026-01-15T12:00:00.000Z',
    });
    expect(agents[1]).toEqual({
      agent: 'coder-bot',
      total: 3,
      by_verdict: { ALLOWED: 2, BLOCKED: 1, ESCALATED: 0 },
      by_admissibility: { ACCEPTED: 2, NON_DETERMINISTIC: 0, REJECTED: 1 },
      acceptance_rate: 0.6667,
      models: ['model-x', 'model-y'],
      first_seen: '2026-01-15T10:00:00.000Z',
      last_seen: '2026-01-15T12:00:00.000Z',
    });
    expect(agents[2]).toMatchObject({ agent: 'deploy-bot', models: [], acceptance_rate: 0 });
  });

  it.each([
    ['/v1/repos', 'repositories', 'repository', ['acme/api', 'acme/billing', 'acme/web']],
    ['/v1/agents', 'agents', 'agent', ['access-bot', 'coder-bot', 'deploy-bot']],
  ])('%s pages by name', async (path, list, field, names) => {
    await seed();
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const body: Json = await ok(t, path, after === null ? { limit: 1 } : { limit: 1, after });
      const rows = body[list] as Json[];
      seen.push(...rows.map((r) => r[field] as string));
      after = body.next_after as string | null;
      expect(after).toBe(pages < 2 ? rows[0]![field] : null);
      pages++;
    } while (after !== null);
    expect(seen).toEqual(names);
    const exact = await ok(t, path, { limit: 3 });
    expect(exact).toMatchObject({ limit: 3, next_after: null });
    const rest = await ok(t, path, { after: names[0]! });
    expect((rest[list] as Json[]).map((r) => r[field])).toEqual(names.slice(1));
    const beyond = await ok(t, path, { after: 'zzz' });
    expect(beyond).toMatchObject({ [list]: [], next_after: null });
    // The agent of a later page still gets its own models.
    if (path === '/v1/agents') {
      const page = await ok(t, path, { after: 'access-bot', limit: 1 });
      expect(page.agents).toMatchObject([{ agent: 'coder-bot', models: ['model-x', 'model-y'] }]);
    }
  });

  it.each([
    ['/v1/repos', { limit: 0 }, 'limit'],
    ['/v1/repos', { limit: 1001 }, 'limit'],
    ['/v1/repos', { after: 'x'.repeat(1025) }, 'after'],
    ['/v1/repos', { name: 'acme' }, 'name'],
    ['/v1/agents', { limit: 'ten' }, 'limit'],
    ['/v1/agents', { agent: 'coder-bot' }, 'agent'],
  ])('%s refuses %j with 400 naming %s', async (path, query, name) => {
    await bad(t, path, query, name);
  });
});

describe('GET /v1/overview', () => {
  let t: TestApp;
  let key: string;
  beforeEach(async () => {
    t = buildTestApp();
    key = await newKey(t, 'pilot');
  });
  afterEach(() => t.close());

  it('answers zeros and the empty head on an empty ledger', async () => {
    expect(await ok(t, '/v1/overview')).toEqual({
      receipts: 0,
      agents: 0,
      repositories: 0,
      acceptance_rate: 0,
      by_verdict: { ALLOWED: 0, BLOCKED: 0, ESCALATED: 0 },
      by_admissibility: { ACCEPTED: 0, NON_DETERMINISTIC: 0, REJECTED: 0 },
      last_24h: { receipts: 0, by_verdict: { ALLOWED: 0, BLOCKED: 0, ESCALATED: 0 } },
      head: { sequence: 0, receipt_hash: null },
      generated_at: '2026-01-15T10:00:00.000Z',
    });
  });

  it('counts the whole ledger, and the last 24 hours as the clock moves', async () => {
    await issue(t, key, { agent: 'a1', repository: 'r1' });
    await issue(t, key, { agent: 'a1', repository: 'r1', kind: 'blocked' });
    t.clock.advance(12 * HOUR_MS);
    await issue(t, key, { agent: 'a2', repository: 'r2', kind: 'escalated' });
    const lastBody = await issue(t, key, {
      agent: 'a3',
      repository: null,
      kind: 'non_deterministic',
    });
    const whole = {
      receipts: 4,
      agents: 3,
      repositories: 2,
      acceptance_rate: 0.25,
      by_verdict: { ALLOWED: 2, BLOCKED: 1, ESCALATED: 1 },
      by_admissibility: { ACCEPTED: 1, NON_DETERMINISTIC: 1, REJECTED: 2 },
      head: {
        sequence: 4,
        receipt_hash: (receiptOf(lastBody).chain as Json).receipt_hash,
      },
    };
    expect(await ok(t, '/v1/overview')).toEqual({
      ...whole,
      last_24h: { receipts: 4, by_verdict: { ALLOWED: 2, BLOCKED: 1, ESCALATED: 1 } },
      generated_at: '2026-01-15T22:00:00.000Z',
    });

    // Exactly 24 hours after the first two: still inside the window.
    t.clock.advance(12 * HOUR_MS);
    expect((await ok(t, '/v1/overview')).last_24h).toEqual({
      receipts: 4,
      by_verdict: { ALLOWED: 2, BLOCKED: 1, ESCALATED: 1 },
    });
    t.clock.advance(1);
    const later = await ok(t, '/v1/overview');
    expect(later).toEqual({
      ...whole,
      last_24h: { receipts: 2, by_verdict: { ALLOWED: 1, BLOCKED: 0, ESCALATED: 1 } },
      generated_at: '2026-01-16T10:00:00.001Z',
    });
    expect(later.generated_at).toMatch(ISO);
    t.clock.advance(12 * HOUR_MS);
    expect((await ok(t, '/v1/overview')).last_24h).toEqual({
      receipts: 0,
      by_verdict: { ALLOWED: 0, BLOCKED: 0, ESCALATED: 0 },
    });
  });

  it('agrees with /v1/ledger/stats', async () => {
    for (const kind of ['allowed', 'blocked', 'escalated', 'non_deterministic'] as const)
      await issue(t, key, { kind });
    const overview = await ok(t, '/v1/overview');
    const stats = await ok(t, '/v1/ledger/stats');
    expect(overview.by_verdict).toEqual(stats.by_verdict);
    expect(overview.by_admissibility).toEqual(stats.by_admissibility);
    expect(overview.receipts).toBe(stats.total);
    expect(overview.head).toEqual(stats.head);
  });
});
