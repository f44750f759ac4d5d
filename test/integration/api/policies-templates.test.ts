import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import {
  expectCommonHeaders,
  expectError,
  HASH,
  ISO,
  type Json,
  ledgerState,
  newKey,
  postRaw,
} from '../../support/api.js';
import {
  AGENT_CONFIG,
  DEFAULT_CONFIG,
  PERMISSIVE_CONFIG,
  STRICT_CONFIG,
} from '../../support/policies.js';
import { H } from '../../support/receipts.js';
import { validClaim } from '../../support/claims.js';

type Evaluated = {
  claim: Json;
  policy: { verdict: string; rules: { rule: string; passed: boolean }[]; config: Json };
  replay: { replay_hash: string; passed: boolean };
  receipt: Json & { evidence: { inputs_hash: string }; replay: { replay_hash: string } };
};

/** replay_hash of the contract, computed here from what the response shows. */
const replayHashOf = (body: Evaluated) =>
  H({
    inputs_hash: H(body.claim),
    policy: body.policy.config,
    verdict: body.policy.verdict,
    rules: body.policy.rules,
  });

describe('GET /v1/policies and POST /v1/policies', () => {
  let t: TestApp;
  let key: string;
  beforeEach(async () => {
    t = buildTestApp();
    key = await newKey(t);
  });
  afterEach(() => t.close());

  const create = (body: unknown, apiKey: string | null = key) => {
    const req = request(t.app).post('/v1/policies');
    if (apiKey !== null) req.set('X-API-Key', apiKey);
    return req.send(body as object);
  };

  it('lists the built-in policies with complete configs', async () => {
    const res = await request(t.app).get('/v1/policies');
    expect(res.status).toBe(200);
    expectCommonHeaders(res);
    expect(res.body).toEqual({
      policies: [
        ['default', DEFAULT_CONFIG],
        ['strict', STRICT_CONFIG],
        ['permissive', PERMISSIVE_CONFIG],
        ['agent', AGENT_CONFIG],
      ].map(([name, config]) => ({
        name,
        description: expect.any(String),
        builtin: true,
        shared: false,
        overrides: name === 'default' ? 'any' : 'tighten',
        config,
        effective: config,
        config_hash: H(config),
        created_at: null,
      })),
    });
  });

  it('creates a custom policy (201) and lists it after the built-ins, by name', async () => {
    const created = await create({
      name: 'team-b.prod_v2',
      description: 'Two sources for team B',
      config: { minSources: 2, requireHumanApproval: true },
    });
    expect(created.status).toBe(201);
    expectCommonHeaders(created);
    expect(created.body).toEqual({
      name: 'team-b.prod_v2',
      description: 'Two sources for team B',
      builtin: false,
      shared: false,
      overrides: 'tighten',
      config: { minSources: 2, requireHumanApproval: true },
      effective: { ...DEFAULT_CONFIG, minSources: 2, requireHumanApproval: true },
      config_hash: H({ ...DEFAULT_CONFIG, minSources: 2, requireHumanApproval: true }),
      created_at: '2026-01-15T10:00:00.000Z',
    });
    t.clock.advance(1000);
    const other = await create({ name: 'a-team', config: {} });
    expect(other.status).toBe(201);
    expect(other.body).toMatchObject({ description: null, config: {}, effective: DEFAULT_CONFIG });
    expect(other.body.created_at).toMatch(ISO);

    const list = await request(t.app).get('/v1/policies').set('X-API-Key', key);
    expect(list.body.policies.map((p: Json) => p.name)).toEqual([
      'default',
      'strict',
      'permissive',
      'agent',
      'a-team',
      'team-b.prod_v2',
    ]);
    expect(list.body.policies[5]).toEqual(created.body);
  });

  it('refuses a taken name with 409 policy_conflict, built-in or custom, and keeps the first', async () => {
    expect((await create({ name: 'mine', config: { minSources: 3 } })).status).toBe(201);
    const again = await create({ name: 'mine', config: { minSources: 1 } });
    expect(expectError(again, 409, 'policy_conflict')).toContain('"mine"');
    for (const name of ['default', 'strict', 'permissive', 'agent']) {
      expectError(await create({ name, config: {} }), 409, 'policy_conflict');
    }
    const list = await request(t.app).get('/v1/policies').set('X-API-Key', key);
    expect(list.body.policies).toHaveLength(5);
    expect(list.body.policies[4].config).toEqual({ minSources: 3 });
  });

  it.each([
    [{ config: {} }, 'name'],
    [{ name: '', config: {} }, 'name'],
    [{ name: 'Team', config: {} }, 'name'],
    [{ name: '-team', config: {} }, 'name'],
    [{ name: 'has space', config: {} }, 'name'],
    [{ name: 'a'.repeat(65), config: {} }, 'name'],
    [{ name: 7, config: {} }, 'name'],
    [{ name: 'ok' }, 'config'],
    [{ name: 'ok', config: null }, 'config'],
    [{ name: 'ok', config: { minConfidence: 2 } }, 'config.minConfidence'],
    [{ name: 'ok', config: { minSources: 1.5 } }, 'config.minSources'],
    [{ name: 'ok', config: { requireReplay: 'yes' } }, 'config.requireReplay'],
    [{ name: 'ok', config: { allowAll: true } }, 'config'],
    [{ name: 'ok', config: {}, description: 'x'.repeat(1025) }, 'description'],
    [{ name: 'ok', config: {}, owner: 'me' }, '(root)'],
    [[], '(root)'],
  ])('refuses %j with 400 naming %s', async (body, name) => {
    const message = expectError(await create(body), 400, 'validation_failed');
    expect(message.startsWith(`${name}: `)).toBe(true);
    const list = await request(t.app).get('/v1/policies');
    expect(list.body.policies).toHaveLength(4);
  });

  it('refuses malformed JSON and a missing body', async () => {
    expectError(await postRaw(t, '/v1/policies', key, '{"name":'), 400, 'malformed_json');
    expectError(
      await postRaw(t, '/v1/policies', key, '{"name":"a","name":"b","config":{}}'),
      400,
      'validation_failed',
    );
    expectError(await postRaw(t, '/v1/policies', key, ''), 400, 'validation_failed');
  });

  it('needs an API key to create (401), not to list', async () => {
    expectError(await create({ name: 'nokey', config: {} }, null), 401, 'unauthorized');
    expectError(
      await create({ name: 'nokey', config: {} }, 'sk_svc_00000000-0000-4000-8000-000000000000'),
      401,
      'unauthorized',
    );
    const list = await request(t.app).get('/v1/policies');
    expect(list.status).toBe(200);
    expect(list.body.policies).toHaveLength(4);
    const bearer = await request(t.app)
      .post('/v1/policies')
      .set('Authorization', `Bearer ${key}`)
      .send({ name: 'bearer', config: {} });
    expect(bearer.status).toBe(201);
  });
});

describe('claims naming a policy', () => {
  let t: TestApp;
  let key: string;
  beforeEach(async () => {
    t = buildTestApp();
    key = await newKey(t);
  });
  afterEach(() => t.close());

  const post = (path: string, body: Json) =>
    request(t.app).post(path).set('X-API-Key', key).send(body);

  it('policy: "strict" evaluates under the strict config, which the replay hash commits to', async () => {
    const claim = validClaim({ claim_id: 'strict-1', policy: 'strict' });
    const res = await post('/v1/evaluate', claim);
    expect(res.status).toBe(200);
    const body = res.body as Evaluated;
    expect(body.claim).toEqual(claim);
    expect(body.policy.config).toEqual(STRICT_CONFIG);
    // validClaim carries no provenance and no human approval.
    expect(body.policy.verdict).toBe('BLOCKED');
    expect(body.policy.rules.filter((r) => !r.passed).map((r) => r.rule)).toEqual([
      'require_provenance',
      'require_human_approval',
    ]);
    expect(body.replay.replay_hash).toMatch(HASH);
    expect(body.replay.replay_hash).toBe(replayHashOf(body));
    expect(body.receipt.replay.replay_hash).toBe(body.replay.replay_hash);
    expect(body.receipt.evidence.inputs_hash).toBe(H(claim));

    // The same content under the default policy: another config, another hash.
    const plain: Json = { ...claim };
    delete plain.policy;
    const simulated = (await post('/v1/simulate', plain)).body as Evaluated;
    expect(simulated.policy.config).toEqual(DEFAULT_CONFIG);
    expect(simulated.policy.verdict).toBe('ALLOWED');
    expect(simulated.replay.replay_hash).toBe(replayHashOf(simulated));
    expect(simulated.replay.replay_hash).not.toBe(body.replay.replay_hash);

    // The stored receipt answers the same.
    const stored = await request(t.app).get(`/v1/receipts/${body.receipt.receipt_id as string}`);
    expect(stored.body).toEqual(body);
  });

  it('the strict verdict and hash do not depend on the claim naming it versus spelling it out', async () => {
    const named = (await post('/v1/simulate', validClaim({ claim_id: 'x', policy: 'strict' })))
      .body as Evaluated;
    const spelled = (
      await post('/v1/simulate', validClaim({ claim_id: 'x', policyConfig: STRICT_CONFIG }))
    ).body as Evaluated;
    expect(named.policy.config).toEqual(spelled.policy.config);
    expect(named.policy.rules).toEqual(spelled.policy.rules);
    // inputs_hash commits to the claim as sent, the name included, and replay_hash to both.
    expect(named.replay.replay_hash).toBe(replayHashOf(named));
    expect(spelled.replay.replay_hash).toBe(replayHashOf(spelled));
  });

  it('policyConfig overrides the named policy member by member, tighter only under strict', async () => {
    const res = await post(
      '/v1/evaluate',
      validClaim({
        policy: 'strict',
        policyConfig: { minConfidence: 0.85, maxRiskScope: 2 },
      }),
    );
    expect(res.status).toBe(200);
    const body = res.body as Evaluated;
    expect(body.policy.config).toEqual({ ...STRICT_CONFIG, minConfidence: 0.85, maxRiskScope: 2 });
    expect(body.replay.replay_hash).toBe(replayHashOf(body));
    expect(res.body.receipt.policy).toMatchObject({
      name: 'strict',
      config_hash: H(body.policy.config),
      overrides: true,
    });
    const looser = await post(
      '/v1/evaluate',
      validClaim({ policy: 'strict', policyConfig: { requireHumanApproval: false } }),
    );
    expect(expectError(looser, 400, 'policy_override_refused')).toMatch(
      /^policyConfig\.requireHumanApproval: /,
    );
  });

  it("the default policy keeps the specification's per-request overrides, and the receipt says so", async () => {
    const res = await post(
      '/v1/evaluate',
      validClaim({ policyConfig: { minConfidence: 0, requireReplay: false } }),
    );
    expect(res.status).toBe(200);
    expect(res.body.receipt.policy).toMatchObject({
      name: 'default',
      config_hash: H({ ...DEFAULT_CONFIG, minConfidence: 0, requireReplay: false }),
      overrides: true,
    });
  });

  it('permissive drops the replay requirement', async () => {
    const res = await post(
      '/v1/evaluate',
      validClaim({ policy: 'permissive', expected_replay_match: false }),
    );
    expect(res.body.policy.config).toEqual(PERMISSIVE_CONFIG);
    expect(res.body.replay.passed).toBe(false);
    expect(res.body.receipt.admissibility.status).toBe('ACCEPTED');
  });

  it('a custom policy applies its members over the defaults', async () => {
    const created = await post('/v1/policies', {
      name: 'three-sources',
      config: { minSources: 3 },
    });
    expect(created.status).toBe(201);
    const res = await post('/v1/evaluate', validClaim({ policy: 'three-sources' }));
    expect(res.status).toBe(200);
    const body = res.body as Evaluated;
    expect(body.policy.config).toEqual({ ...DEFAULT_CONFIG, minSources: 3 });
    expect(body.policy.verdict).toBe('BLOCKED');
    expect(body.policy.rules[0]).toMatchObject({ rule: 'min_sources', passed: false });
    expect(body.replay.replay_hash).toBe(replayHashOf(body));
    // New custom policies are tighten-only by default.
    const loosened = await post(
      '/v1/evaluate',
      validClaim({ policy: 'three-sources', policyConfig: { minSources: 2 } }),
    );
    expect(expectError(loosened, 400, 'policy_override_refused')).toBe(
      'policyConfig.minSources: policy "three-sources" allows only stricter values here (at least 3); got 2',
    );
    const anyPolicy = await post('/v1/policies', {
      name: 'three-sources-any',
      config: { minSources: 3 },
      overrides: 'any',
    });
    expect(anyPolicy.body.overrides).toBe('any');
    const overridden = await post(
      '/v1/evaluate',
      validClaim({ policy: 'three-sources-any', policyConfig: { minSources: 2 } }),
    );
    expect(overridden.body.policy.config).toEqual({ ...DEFAULT_CONFIG, minSources: 2 });
    expect(overridden.body.policy.verdict).toBe('ALLOWED');
  });

  it.each(['/v1/evaluate', '/v1/simulate'])(
    '%s refuses an unknown or malformed policy name with 400 "policy: ..." and stores nothing',
    async (path) => {
      const before = await ledgerState(t);
      const unknown = await post(path, validClaim({ policy: 'nope' }));
      expect(expectError(unknown, 400, 'validation_failed')).toMatch(/^policy: .*"nope"/);
      for (const policy of ['Strict', '', 7, { name: 'strict' }]) {
        const res = await post(path, validClaim({ policy }));
        expect(expectError(res, 400, 'validation_failed')).toMatch(/^policy: /);
      }
      expect(await ledgerState(t)).toEqual(before);
    },
  );
});

describe('GET /v1/templates', () => {
  let t: TestApp;
  let key: string;
  let templates: (Json & { id: string; expected_verdict: string; claim: Json })[];
  beforeEach(async () => {
    t = buildTestApp();
    key = await newKey(t);
    const res = await request(t.app).get('/v1/templates');
    expect(res.status).toBe(200);
    expectCommonHeaders(res);
    templates = res.body.templates;
  });
  afterEach(() => t.close());

  it('lists complete templates with distinct ids and claim ids', () => {
    expect(templates.length).toBeGreaterThanOrEqual(5);
    for (const template of templates) {
      expect(Object.keys(template).sort()).toEqual([
        'claim',
        'description',
        'expected_verdict',
        'id',
        'title',
      ]);
      expect(template.title).toEqual(expect.any(String));
      expect(['ALLOWED', 'BLOCKED', 'ESCALATED']).toContain(template.expected_verdict);
    }
    expect(new Set(templates.map((x) => x.id)).size).toBe(templates.length);
    expect(new Set(templates.map((x) => x.claim.claim_id)).size).toBe(templates.length);
    expect(new Set(templates.map((x) => x.expected_verdict))).toEqual(
      new Set(['ALLOWED', 'ESCALATED']),
    );
  });

  it('every template passes evaluate with its expected verdict', async () => {
    for (const template of templates) {
      const res = await request(t.app)
        .post('/v1/evaluate')
        .set('X-API-Key', key)
        .send(template.claim);
      const outcome = {
        id: template.id,
        status: res.status,
        verdict: res.body.policy?.verdict,
        admissibility: res.body.receipt?.admissibility?.status,
      };
      expect(outcome).toEqual({
        id: template.id,
        status: 200,
        verdict: template.expected_verdict,
        admissibility: template.expected_verdict === 'ALLOWED' ? 'ACCEPTED' : 'REJECTED',
      });
      expect(res.body.claim).toEqual(template.claim);
      expect(res.body.policy.config).toEqual(DEFAULT_CONFIG);
    }
    const ledger = await request(t.app).get('/v1/ledger');
    expect(ledger.body.receipts).toHaveLength(templates.length);
  });

  it('answers the same templates every time, unchanged by evaluating them', async () => {
    for (const template of templates)
      await request(t.app).post('/v1/simulate').set('X-API-Key', key).send(template.claim);
    const again = await request(t.app).get('/v1/templates');
    expect(again.body.templates).toEqual(templates);
  });
});
