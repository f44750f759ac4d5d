import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import {
  type Account,
  evaluate,
  expectError,
  ledgerState,
  signupAccount,
  statusOf,
  verify,
} from '../../support/api.js';
import { expectValidV2, H, serverPublicKey } from '../../support/receipts.js';
import { DEFAULT_CONFIG, PERMISSIVE_CONFIG, STRICT_CONFIG } from '../../support/policies.js';
import { validClaim } from '../../support/claims.js';

/** A policyConfig that switches every rule off: what a gated agent would ask for. */
const ZEROED_CONFIG = {
  minSources: 0,
  minSourceTypes: 0,
  minConfidence: 0,
  requireProvenance: false,
  requireHumanApproval: false,
  maxRiskScope: 10000,
};

/** A claim a gated agent wants through: evidence that says the tests failed, at confidence 0.01. */
const failingClaim = (extra: Record<string, unknown> = {}) =>
  validClaim({
    sources: [
      {
        id: 'ci-1',
        type: 'ci',
        uri: 'https://ci.example/run/9',
        confidence: 0.01,
        content: 'tests FAILED',
      },
    ],
    ...extra,
  });

describe('a gated agent choosing its own gate: strict refuses a policyConfig that loosens it', () => {
  let t: TestApp;
  let a: Account;
  beforeEach(async () => {
    t = buildTestApp();
    a = await signupAccount(t);
  });
  afterEach(() => t.close());

  it('strict with every rule zeroed is 400 policy_override_refused naming the field; ledger unchanged', async () => {
    const before = await ledgerState(t);
    const res = await evaluate(
      t,
      a.apiKey,
      failingClaim({ policy: 'strict', policyConfig: ZEROED_CONFIG }),
    );
    const message = expectError(res, 400, 'policy_override_refused');
    expect(message).toMatch(
      /policyConfig\.(minSources|minSourceTypes|minConfidence|requireProvenance|requireHumanApproval|maxRiskScope)/,
    );
    expect(res.body).not.toHaveProperty('receipt');
    expect(await ledgerState(t)).toEqual(before);
  });

  it('simulate refuses it the same way', async () => {
    const res = await request(t.app)
      .post('/v1/simulate')
      .set('X-API-Key', a.apiKey)
      .send(failingClaim({ policy: 'strict', policyConfig: ZEROED_CONFIG }));
    expectError(res, 400, 'policy_override_refused');
  });

  it.each(Object.entries(ZEROED_CONFIG))(
    'strict: loosening %s alone (to %j) is refused, and the message names the field',
    async (field, value) => {
      const before = await ledgerState(t);
      const res = await evaluate(
        t,
        a.apiKey,
        failingClaim({ policy: 'strict', policyConfig: { [field]: value } }),
      );
      expect(expectError(res, 400, 'policy_override_refused')).toContain(`policyConfig.${field}`);
      expect(await ledgerState(t)).toEqual(before);
    },
  );

  it('without overrides the failing claim under strict is not ALLOWED, and the receipt says strict', async () => {
    const res = await evaluate(t, a.apiKey, failingClaim({ policy: 'strict' }));
    expect(res.status).toBe(200);
    expect(res.body.policy.verdict).not.toBe('ALLOWED');
    expect(res.body.decision.proceed).toBe(false);
    expect(res.body.receipt.policy).toMatchObject({
      name: 'strict',
      config_hash: H(STRICT_CONFIG),
      overrides: false,
    });
  });
});

describe('tighten-only overrides, field by field', () => {
  let t: TestApp;
  let a: Account;
  let publicKey: Uint8Array;
  beforeEach(async () => {
    t = buildTestApp();
    a = await signupAccount(t);
    publicKey = await serverPublicKey(t);
  });
  afterEach(() => t.close());

  const STRICTER: [string, string, Record<string, unknown>][] = [
    ['strict', 'minSources up', { minSources: 3 }],
    ['strict', 'minSourceTypes up', { minSourceTypes: 3 }],
    ['strict', 'minConfidence up', { minConfidence: 0.9 }],
    ['strict', 'maxRiskScope down', { maxRiskScope: 2 }],
    ['strict', 'maxRiskScope to 0', { maxRiskScope: 0 }],
    ['permissive', 'requireProvenance on', { requireProvenance: true }],
    ['permissive', 'requireReplay on', { requireReplay: true }],
    ['permissive', 'requireHumanApproval on', { requireHumanApproval: true }],
    ['permissive', 'minConfidence up', { minConfidence: 0.31 }],
    ['permissive', 'several at once', { minSources: 2, maxRiskScope: 9, requireReplay: true }],
  ];
  it.each(STRICTER)(
    '%s: %s is accepted, overrides true, config_hash of the effective config',
    async (policy, _name, policyConfig) => {
      const base = policy === 'strict' ? STRICT_CONFIG : PERMISSIVE_CONFIG;
      const res = await evaluate(t, a.apiKey, validClaim({ policy, policyConfig }));
      expect(res.status).toBe(200);
      const effective = { ...base, ...policyConfig };
      expect(res.body.policy.config).toEqual(effective);
      expect(res.body.receipt.policy).toMatchObject({
        name: policy,
        config_hash: H(effective),
        overrides: true,
      });
      await expectValidV2(res.body.receipt, publicKey, { keyId: a.keyId });
    },
  );

  const LOOSER: [string, string, Record<string, unknown>][] = [
    ['strict', 'minSources', { minSources: 1 }],
    ['strict', 'minSourceTypes', { minSourceTypes: 1 }],
    ['strict', 'minConfidence', { minConfidence: 0.79 }],
    ['strict', 'requireProvenance', { requireProvenance: false }],
    ['strict', 'requireReplay', { requireReplay: false }],
    ['strict', 'requireHumanApproval', { requireHumanApproval: false }],
    ['strict', 'maxRiskScope', { maxRiskScope: 4 }],
    ['permissive', 'minSources', { minSources: 0 }],
    ['permissive', 'minSourceTypes', { minSourceTypes: 0 }],
    ['permissive', 'minConfidence', { minConfidence: 0.29 }],
    ['permissive', 'maxRiskScope', { maxRiskScope: 11 }],
  ];
  it.each(LOOSER)(
    '%s: a looser %s is refused, naming the field; ledger unchanged',
    async (policy, field, policyConfig) => {
      const before = await ledgerState(t);
      const res = await evaluate(t, a.apiKey, validClaim({ policy, policyConfig }));
      expect(expectError(res, 400, 'policy_override_refused')).toContain(`policyConfig.${field}`);
      expect(await ledgerState(t)).toEqual(before);
    },
  );

  it('one looser field among stricter ones refuses the whole claim, naming that field', async () => {
    const res = await evaluate(
      t,
      a.apiKey,
      validClaim({ policy: 'strict', policyConfig: { minSources: 5, maxRiskScope: 9 } }),
    );
    expect(expectError(res, 400, 'policy_override_refused')).toContain('policyConfig.maxRiskScope');
  });

  it.each([
    ['strict', STRICT_CONFIG],
    ['permissive', PERMISSIVE_CONFIG],
  ])('%s: an equal value is not an override (overrides false)', async (policy, config) => {
    const res = await evaluate(t, a.apiKey, validClaim({ policy, policyConfig: { ...config } }));
    expect(res.status).toBe(200);
    expect(res.body.receipt.policy).toMatchObject({
      name: policy,
      config_hash: H(config),
      overrides: false,
    });
    const one = await evaluate(
      t,
      a.apiKey,
      validClaim({ policy, policyConfig: { maxRiskScope: config.maxRiskScope } }),
    );
    expect(one.body.receipt.policy.overrides).toBe(false);
  });

  it('the default policy (no policy member) keeps "any": a loosening policyConfig is accepted and signed as overrides', async () => {
    const res = await evaluate(t, a.apiKey, failingClaim({ policyConfig: ZEROED_CONFIG }));
    expect(res.status).toBe(200);
    const effective = { ...DEFAULT_CONFIG, ...ZEROED_CONFIG };
    expect(res.body.policy.config).toEqual(effective);
    expect(res.body.receipt.policy).toMatchObject({
      name: 'default',
      config_hash: H(effective),
      overrides: true,
    });
    await expectValidV2(res.body.receipt, publicKey, { keyId: a.keyId });
    // A relying party pinning the default policy's config sees that it was not applied.
    const pinned = await verify(t, res.body.receipt, {
      expect_policy: 'default',
      expect_config_hash: H(DEFAULT_CONFIG),
    });
    expect(pinned.body.valid).toBe(false);
    expect(statusOf(pinned).policy_binding).toBe('FAIL');
  });

  it('under default, a policyConfig that repeats the defaults is not an override', async () => {
    const res = await evaluate(
      t,
      a.apiKey,
      validClaim({ policyConfig: { minSources: 1, requireReplay: true, maxRiskScope: 5 } }),
    );
    expect(res.status).toBe(200);
    expect(res.body.receipt.policy).toMatchObject({
      name: 'default',
      config_hash: H(DEFAULT_CONFIG),
      overrides: false,
    });
  });

  it('a custom policy’s unset members are its defaults, and tighten-only applies to them too', async () => {
    await request(t.app)
      .post('/v1/policies')
      .set('X-API-Key', a.apiKey)
      .send({ name: 'two', config: { minSources: 2 } });
    const looser = await evaluate(
      t,
      a.apiKey,
      validClaim({ policy: 'two', policyConfig: { minConfidence: 0.4 } }),
    );
    expect(expectError(looser, 400, 'policy_override_refused')).toContain(
      'policyConfig.minConfidence',
    );
    const tighter = await evaluate(
      t,
      a.apiKey,
      validClaim({ policy: 'two', policyConfig: { minConfidence: 0.6 } }),
    );
    expect(tighter.status).toBe(200);
    expect(tighter.body.receipt.policy.config_hash).toBe(
      H({ ...DEFAULT_CONFIG, minSources: 2, minConfidence: 0.6 }),
    );
  });

  it('policy "default" named explicitly behaves as no policy', async () => {
    const res = await evaluate(
      t,
      a.apiKey,
      validClaim({ policy: 'default', policyConfig: { minConfidence: 0.1 } }),
    );
    expect(res.status).toBe(200);
    expect(res.body.receipt.policy).toMatchObject({ name: 'default', overrides: true });
  });

  it('no policyConfig under default: name default, overrides false, config_hash H(defaults)', async () => {
    const res = await evaluate(t, a.apiKey, validClaim());
    expect(res.body.receipt.policy).toMatchObject({
      name: 'default',
      config_hash: H(DEFAULT_CONFIG),
      overrides: false,
    });
    expect(res.body.receipt.policy.config_hash).toBe(H(res.body.policy.config));
  });

  it('a custom policy defaults to tighten: requirements it turns on cannot be turned off', async () => {
    const created = await request(t.app)
      .post('/v1/policies')
      .set('X-API-Key', a.apiKey)
      .send({ name: 'gate', config: { requireReplay: true, requireHumanApproval: true } });
    expect(created.status).toBe(201);
    expect(created.body.overrides).toBe('tighten');
    for (const field of ['requireReplay', 'requireHumanApproval']) {
      const res = await evaluate(
        t,
        a.apiKey,
        validClaim({ policy: 'gate', policyConfig: { [field]: false } }),
      );
      expect(expectError(res, 400, 'policy_override_refused')).toContain(`policyConfig.${field}`);
    }
    const tighter = await evaluate(
      t,
      a.apiKey,
      validClaim({ policy: 'gate', policyConfig: { requireProvenance: true } }),
    );
    expect(tighter.status).toBe(200);
    expect(tighter.body.receipt.policy).toMatchObject({ name: 'gate', overrides: true });
  });

  it('a policy with overrides "none" refuses any differing member, tighter or looser; equal passes', async () => {
    const created = await request(t.app)
      .post('/v1/policies')
      .set('X-API-Key', a.apiKey)
      .send({ name: 'fixed', config: { minSources: 2 }, overrides: 'none' });
    expect(created.status).toBe(201);
    expect(created.body.overrides).toBe('none');
    for (const policyConfig of [
      { minSources: 3 },
      { minSources: 1 },
      { requireProvenance: true },
    ]) {
      const res = await evaluate(t, a.apiKey, validClaim({ policy: 'fixed', policyConfig }));
      expect(expectError(res, 400, 'policy_override_refused')).toContain(
        `policyConfig.${Object.keys(policyConfig)[0]}`,
      );
    }
    const equal = await evaluate(
      t,
      a.apiKey,
      validClaim({ policy: 'fixed', policyConfig: { minSources: 2 } }),
    );
    expect(equal.status).toBe(200);
    expect(equal.body.receipt.policy).toMatchObject({
      name: 'fixed',
      overrides: false,
      config_hash: H({ ...DEFAULT_CONFIG, minSources: 2 }),
    });
  });

  it('a custom policy with overrides "any" accepts loosening, signed as overrides', async () => {
    await request(t.app)
      .post('/v1/policies')
      .set('X-API-Key', a.apiKey)
      .send({ name: 'loose', config: { minSources: 2 }, overrides: 'any' });
    const res = await evaluate(
      t,
      a.apiKey,
      validClaim({ policy: 'loose', policyConfig: { minSources: 1 } }),
    );
    expect(res.status).toBe(200);
    expect(res.body.receipt.policy).toMatchObject({
      name: 'loose',
      overrides: true,
      config_hash: H(DEFAULT_CONFIG),
    });
  });
});

describe('policies: creation, views and config_hash', () => {
  let t: TestApp;
  let a: Account;
  beforeEach(async () => {
    t = buildTestApp();
    a = await signupAccount(t);
  });
  afterEach(() => t.close());

  const create = (key: string, body: unknown) =>
    request(t.app)
      .post('/v1/policies')
      .set('X-API-Key', key)
      .send(body as object);

  it('201 view {name, description, builtin, shared, overrides, config, effective, config_hash, created_at}', async () => {
    const res = await create(a.apiKey, {
      name: 'production',
      description: 'Two sources',
      config: { minSources: 2 },
    });
    expect(res.status).toBe(201);
    const effective = { ...DEFAULT_CONFIG, minSources: 2 };
    expect(res.body).toEqual({
      name: 'production',
      description: 'Two sources',
      builtin: false,
      shared: false,
      overrides: 'tighten',
      config: { minSources: 2 },
      effective,
      config_hash: H(effective),
      created_at: new Date(t.clock.now()).toISOString(),
    });
    const got = await request(t.app).get('/v1/policies/production').set('X-API-Key', a.apiKey);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
    // A claim under it without overrides carries exactly that config_hash.
    const used = await evaluate(t, a.apiKey, validClaim({ policy: 'production' }));
    expect(used.body.receipt.policy).toMatchObject({
      name: 'production',
      config_hash: res.body.config_hash,
      overrides: false,
    });
  });

  it.each(['any', 'tighten', 'none'])('overrides %s is kept', async (overrides) => {
    const res = await create(a.apiKey, { name: `p-${overrides}`, config: {}, overrides });
    expect(res.status).toBe(201);
    expect(res.body.overrides).toBe(overrides);
  });

  it('an unknown overrides mode is 400 validation_failed', async () => {
    expectError(
      await create(a.apiKey, { name: 'p', config: {}, overrides: 'loosen' }),
      400,
      'validation_failed',
    );
  });

  it.each(['default', 'strict', 'permissive'])(
    'the built-in name %s is 409 policy_conflict',
    async (name) => {
      expectError(
        await create(a.apiKey, { name, config: { minSources: 0 } }),
        409,
        'policy_conflict',
      );
      const got = await request(t.app).get(`/v1/policies/${name}`);
      expect(got.body.builtin).toBe(true);
    },
  );

  it.each([
    ['default', DEFAULT_CONFIG, 'any'],
    ['strict', STRICT_CONFIG, 'tighten'],
    ['permissive', PERMISSIVE_CONFIG, 'tighten'],
  ])('GET /v1/policies/%s shows its config_hash and overrides', async (name, config, overrides) => {
    const res = await request(t.app).get(`/v1/policies/${name}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name,
      builtin: true,
      overrides,
      effective: config,
      config_hash: H(config),
    });
  });
});

describe('policy ownership: a custom policy belongs to the account that created it', () => {
  let t: TestApp;
  let owner: Account;
  let other: Account;
  beforeEach(async () => {
    t = buildTestApp();
    owner = await signupAccount(t);
    other = await signupAccount(t);
    const res = await request(t.app)
      .post('/v1/policies')
      .set('X-API-Key', owner.apiKey)
      .send({
        name: 'production',
        config: { minSources: 1, minConfidence: 0.1 },
        overrides: 'any',
      });
    expect(res.status).toBe(201);
  });
  afterEach(() => t.close());

  const names = (res: request.Response) => res.body.policies.map((p: { name: string }) => p.name);

  it('the owner lists it; another key and an anonymous caller do not', async () => {
    const mine = await request(t.app).get('/v1/policies').set('X-API-Key', owner.apiKey);
    expect(names(mine)).toEqual(['default', 'strict', 'permissive', 'agent', 'production']);
    const theirs = await request(t.app).get('/v1/policies').set('X-API-Key', other.apiKey);
    expect(names(theirs)).toEqual(['default', 'strict', 'permissive', 'agent']);
    const anonymous = await request(t.app).get('/v1/policies');
    expect(names(anonymous)).toEqual(['default', 'strict', 'permissive', 'agent']);
  });

  it('another key gets 404 for GET and DELETE, and the policy is still there', async () => {
    expectError(
      await request(t.app).get('/v1/policies/production').set('X-API-Key', other.apiKey),
      404,
      'not_found',
    );
    expectError(
      await request(t.app).delete('/v1/policies/production').set('X-API-Key', other.apiKey),
      404,
      'not_found',
    );
    expectError(await request(t.app).get('/v1/policies/production'), 404, 'not_found');
    const mine = await request(t.app).get('/v1/policies/production').set('X-API-Key', owner.apiKey);
    expect(mine.status).toBe(200);
  });

  it('another key cannot evaluate under it: 400 validation_failed (unknown policy), ledger unchanged', async () => {
    const before = await ledgerState(t);
    const res = await evaluate(t, other.apiKey, validClaim({ policy: 'production' }));
    expect(expectError(res, 400, 'validation_failed')).toMatch(/policy/);
    expect(await ledgerState(t)).toEqual(before);
  });

  it('another key may create its own policy of the same name: separate namespaces', async () => {
    const res = await request(t.app)
      .post('/v1/policies')
      .set('X-API-Key', other.apiKey)
      .send({ name: 'production', config: { minSources: 3 } });
    expect(res.status).toBe(201);
    const theirs = await evaluate(t, other.apiKey, validClaim({ policy: 'production' }));
    expect(theirs.body.policy.config.minSources).toBe(3);
    const mine = await evaluate(t, owner.apiKey, validClaim({ policy: 'production' }));
    expect(mine.body.policy.config).toMatchObject({ minSources: 1, minConfidence: 0.1 });
    expect(theirs.body.receipt.policy.config_hash).not.toBe(mine.body.receipt.policy.config_hash);
  });

  it('the owner cannot overwrite it (409) and deletes it with 204; then it is gone', async () => {
    const again = await request(t.app)
      .post('/v1/policies')
      .set('X-API-Key', owner.apiKey)
      .send({ name: 'production', config: { minSources: 0 } });
    expectError(again, 409, 'policy_conflict');
    const deleted = await request(t.app)
      .delete('/v1/policies/production')
      .set('X-API-Key', owner.apiKey);
    expect(deleted.status).toBe(204);
    expectError(
      await request(t.app).get('/v1/policies/production').set('X-API-Key', owner.apiKey),
      404,
      'not_found',
    );
    expectError(
      await evaluate(t, owner.apiKey, validClaim({ policy: 'production' })),
      400,
      'validation_failed',
    );
  });

  it('built-ins cannot be deleted: 404', async () => {
    for (const name of ['default', 'strict', 'permissive']) {
      expectError(
        await request(t.app).delete(`/v1/policies/${name}`).set('X-API-Key', owner.apiKey),
        404,
        'not_found',
      );
    }
  });

  it('deleting needs a key', async () => {
    expectError(await request(t.app).delete('/v1/policies/production'), 401, 'unauthorized');
  });
});
