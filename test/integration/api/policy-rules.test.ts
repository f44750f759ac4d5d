import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import {
  type Account,
  evaluate,
  expectError,
  type Json,
  ledgerState,
  signupAccount,
} from '../../support/api.js';
import { H } from '../../support/receipts.js';
import { DEFAULT_CONFIG } from '../../support/policies.js';
import { validClaim } from '../../support/claims.js';
import { RULE_ORDER } from '../../../src/core/rules/threshold-rules.js';

const needsReview = { name: 'needs-review', require: { approvals: { count: 1 } } };
const needsCi = { name: 'needs-ci', require: { checks: ['ci'] }, on_fail: 'escalate' };

const claim = (extra: Json = {}, action: Json = {}) => {
  const base = validClaim();
  return { ...base, ...extra, action: { ...(base.action as Json), ...action } };
};

describe('policies with conditional rules over HTTP', () => {
  let t: TestApp;
  let a: Account;
  beforeEach(async () => {
    t = buildTestApp();
    a = await signupAccount(t);
  });
  afterEach(() => t.close());

  const createPolicy = (body: Json) =>
    request(t.app).post('/v1/policies').set('X-API-Key', a.apiKey).send(body);

  it('an invalid rule is 400 naming the rule and field; nothing is created', async () => {
    const res = await createPolicy({
      name: 'bad-rules',
      config: {
        rules: [needsReview, needsCi, { name: 'third', require: { approvals: { count: 0 } } }],
      },
    });
    expect(expectError(res, 400, 'validation_failed')).toBe(
      'config.rules[2].require.approvals.count: Too small: expected number to be >=1',
    );
    const get = await request(t.app).get('/v1/policies/bad-rules').set('X-API-Key', a.apiKey);
    expectError(get, 404, 'not_found');
  });

  it.each([
    [
      'a repeated name',
      [needsReview, needsReview],
      'config.rules[1].name: duplicate rule name "needs-review"',
    ],
    [
      'an empty require',
      [{ name: 'empty', require: {} }],
      'config.rules[0].require: must hold at least one requirement',
    ],
    [
      'an unknown condition',
      [{ ...needsReview, if: { files: ['x'] } }],
      'config.rules[0].if: Unrecognized key: "files"',
    ],
    [
      'an unknown on_fail',
      [{ ...needsReview, on_fail: 'warn' }],
      'config.rules[0].on_fail: Invalid option: expected one of "block"|"escalate"',
    ],
  ])('%s is 400', async (_, rules, message) => {
    const res = await createPolicy({ name: 'bad', config: { rules } });
    expect(expectError(res, 400, 'validation_failed')).toBe(message);
  });

  it('evaluate lists rule:<name> after the six threshold rules, signs failed ones, and pins the rules by config_hash', async () => {
    const created = await createPolicy({
      name: 'reviewed',
      config: { rules: [needsReview, needsCi] },
    });
    expect(created.status).toBe(201);
    const effective = {
      ...DEFAULT_CONFIG,
      rules: [
        { ...needsReview, if: {}, on_fail: 'block' },
        { ...needsCi, if: {} },
      ],
    };
    expect(created.body.effective).toEqual(effective);
    expect(created.body.config_hash).toBe(H(effective));

    const res = await evaluate(t, a.apiKey, claim({ policy: 'reviewed' }));
    expect(res.status).toBe(200);
    expect(res.body.policy.rules.map((r: Json) => r.rule)).toEqual([
      ...RULE_ORDER,
      'rule:needs-review',
      'rule:needs-ci',
    ]);
    expect(res.body.policy.verdict).toBe('BLOCKED');
    expect(res.body.policy.config).toEqual(effective);
    expect(res.body.receipt.policy.checks).toEqual([
      { rule: 'rule:needs-review', passed: false, reason: 'applies; 0 approvals, 1 required' },
      { rule: 'rule:needs-ci', passed: false, reason: 'applies; checks not passed: ci (missing)' },
    ]);
    expect(res.body.receipt.policy.config_hash).toBe(created.body.config_hash);

    const ci = [{ name: 'ci', status: 'completed', conclusion: 'success' }];
    const escalated = await evaluate(
      t,
      a.apiKey,
      claim({ policy: 'reviewed' }, { approvals: [{ user: 'bob' }] }),
    );
    expect(escalated.body.policy.verdict).toBe('ESCALATED');
    const allowed = await evaluate(
      t,
      a.apiKey,
      claim({ policy: 'reviewed' }, { approvals: [{ user: 'bob' }], checks: ci }),
    );
    expect(allowed.body.policy.verdict).toBe('ALLOWED');
    expect(allowed.body.decision.proceed).toBe(true);

    // The receipt verifies, bound to the policy's config hash.
    const checked = await request(t.app)
      .post('/v1/verify')
      .query({ expect_policy: 'reviewed', expect_config_hash: created.body.config_hash })
      .send(allowed.body.receipt);
    expect(checked.body.valid).toBe(true);
  });

  it('the same claim under the same rules replays to the same replay_hash', async () => {
    await createPolicy({ name: 'reviewed', config: { rules: [needsReview] } });
    const body = claim({ policy: 'reviewed' }, { approvals: [{ user: 'bob' }] });
    const first = await evaluate(t, a.apiKey, body);
    const again = await evaluate(t, a.apiKey, body);
    expect(first.status).toBe(200);
    expect(first.body.replay.deterministic).toBe(true);
    expect(again.body.receipt).toEqual(first.body.receipt);
    const simulated = await request(t.app)
      .post('/v1/simulate')
      .set('X-API-Key', a.apiKey)
      .send({ ...body, claim_id: 'simulated-twin' });
    expect(simulated.status).toBe(200);
    expect(simulated.body.policy.rules).toEqual(first.body.policy.rules);
  });

  describe("a claim's policyConfig cannot weaken a policy's rules", () => {
    beforeEach(async () => {
      expect(
        (await createPolicy({ name: 'guarded', config: { rules: [needsReview] } })).status,
      ).toBe(201);
      expect(
        (
          await createPolicy({
            name: 'guarded-any',
            overrides: 'any',
            config: { rules: [needsReview] },
          })
        ).status,
      ).toBe(201);
      expect(
        (
          await createPolicy({
            name: 'guarded-none',
            overrides: 'none',
            config: { rules: [needsReview] },
          })
        ).status,
      ).toBe(201);
    });

    it.each(['guarded', 'guarded-any', 'guarded-none'])(
      'under %s, a weaker rule of the same name is 400 policy_override_refused; ledger unchanged',
      async (policy) => {
        const before = await ledgerState(t);
        const res = await evaluate(
          t,
          a.apiKey,
          claim({
            policy,
            policyConfig: { rules: [{ name: 'needs-review', require: { source_types: ['ci'] } }] },
          }),
        );
        expect(expectError(res, 400, 'policy_override_refused')).toBe(
          `policyConfig.rules[0].name: policy "${policy}" has a different rule named "needs-review"; a claim may add rules, never replace or remove one`,
        );
        expect(await ledgerState(t)).toEqual(before);
      },
    );

    it('an escalate rule of the same name (a softer on_fail) is refused too', async () => {
      const res = await evaluate(
        t,
        a.apiKey,
        claim({
          policy: 'guarded',
          policyConfig: { rules: [{ ...needsReview, on_fail: 'escalate' }] },
        }),
      );
      expectError(res, 400, 'policy_override_refused');
    });

    it('looser thresholds under "any" leave the rule in force', async () => {
      const res = await evaluate(
        t,
        a.apiKey,
        claim({ policy: 'guarded-any', policyConfig: { minSources: 0, minConfidence: 0 } }),
      );
      expect(res.status).toBe(200);
      expect(res.body.policy.verdict).toBe('BLOCKED');
      expect(res.body.receipt.policy.checks.map((r: Json) => r.rule)).toEqual([
        'rule:needs-review',
      ]);
    });

    it('an added rule comes after the policy’s and is signed as an override', async () => {
      const res = await evaluate(
        t,
        a.apiKey,
        claim(
          { policy: 'guarded', policyConfig: { rules: [needsCi] } },
          { approvals: [{ user: 'bob' }] },
        ),
      );
      expect(res.status).toBe(200);
      expect(res.body.policy.rules.slice(6).map((r: Json) => r.rule)).toEqual([
        'rule:needs-review',
        'rule:needs-ci',
      ]);
      expect(res.body.policy.verdict).toBe('ESCALATED');
      expect(res.body.receipt.policy.overrides).toBe(true);
    });

    it('under "none" an added rule is refused; ledger unchanged', async () => {
      const before = await ledgerState(t);
      const res = await evaluate(
        t,
        a.apiKey,
        claim({ policy: 'guarded-none', policyConfig: { rules: [needsCi] } }),
      );
      expect(expectError(res, 400, 'policy_override_refused')).toBe(
        'policyConfig.rules[0]: policy "guarded-none" takes no per-request overrides, added rules included',
      );
      expect(await ledgerState(t)).toEqual(before);
    });
  });

  it("an invalid rule in a claim's policyConfig is 400 naming it; ledger unchanged", async () => {
    const before = await ledgerState(t);
    const res = await evaluate(
      t,
      a.apiKey,
      claim({ policyConfig: { rules: [{ name: 'x', require: { checks: 'ci' } }] } }),
    );
    expect(expectError(res, 400, 'validation_failed')).toBe(
      'policyConfig.rules[0].require.checks: Invalid input: expected array, received string',
    );
    expect(await ledgerState(t)).toEqual(before);
  });

  it.each([
    ['./infra/main.tf', 'must not hold a . segment'],
    ['x/../infra/main.tf', 'must not hold a .. segment'],
    ['docs/../infra/main.tf', 'must not hold a .. segment'],
    ['infra\\main.tf', 'must use / as separator, never a backslash'],
    ['/infra/main.tf', 'no leading /'],
    ['infra//main.tf', 'empty segment'],
    ['infra/', 'no trailing /'],
  ])(
    'changed path %j is refused (400, ledger unchanged), so it cannot slip past paths or satisfy only_paths',
    async (path, problem) => {
      const rules = [
        { name: 'infra-review', if: { paths: ['infra/**'] }, require: { approvals: { count: 1 } } },
        { name: 'docs-only', if: { only_paths: ['docs/**'] }, require: { checks: ['docs-ci'] } },
      ];
      const before = await ledgerState(t);
      const res = await evaluate(
        t,
        a.apiKey,
        claim({ policyConfig: { rules } }, { changed_paths: ['README.md', path] }),
      );
      const error = expectError(res, 400, 'validation_failed');
      expect(error).toContain('action.changed_paths.1: ');
      expect(error).toContain(problem);
      expect(await ledgerState(t)).toEqual(before);
      // The canonical spelling is evaluated, and the infra rule applies to it.
      const canonical = await evaluate(
        t,
        a.apiKey,
        claim({ policyConfig: { rules } }, { changed_paths: ['README.md', 'infra/main.tf'] }),
      );
      expect(canonical.status).toBe(200);
      const checks = canonical.body.receipt.policy.checks as Json[];
      expect(checks.find((c) => c.rule === 'rule:infra-review')).toMatchObject({
        passed: false,
        reason: 'applies; 0 approvals, 1 required',
      });
      expect(canonical.body.receipt.policy.verdict).toBe('BLOCKED');
    },
  );

  it("a claim's own rules whose globs take too long to match are refused quickly with rule_budget_exceeded; ledger unchanged", async () => {
    // Backtracking-style globs against long paths: millions of matching steps.
    const globs = Array.from({ length: 100 }, (_, i) => `*a*a*a*a*a*a*a*a*${i}`);
    const heavy = claim(
      {
        policyConfig: {
          rules: [{ name: 'heavy', if: { paths: globs }, require: { checks: ['ci'] } }],
        },
      },
      {
        changed_paths: Array.from(
          { length: 300 },
          (_, i) => `${'a'.repeat(1000)}${'z'.repeat(1 + (i % 5))}`,
        ),
      },
    );
    const before = await ledgerState(t);
    // Refused at all is the proof that matching stopped at its budget (a count of steps, not
    // a time): without one these globs would run to an answer. How long that takes is the
    // bench's to measure, not a wall clock here, which a loaded machine moves past any bound.
    for (const path of ['/v1/evaluate', '/v1/simulate']) {
      const res = await request(t.app).post(path).set('X-API-Key', a.apiKey).send(heavy);
      expect(expectError(res, 400, 'rule_budget_exceeded')).toContain('policyConfig.rules');
    }
    expect(await ledgerState(t)).toEqual(before);
    // Ordinary own rules over many paths stay well inside the budget.
    const ordinary = await evaluate(
      t,
      a.apiKey,
      claim(
        {
          policyConfig: {
            rules: [
              {
                name: 'infra',
                if: { paths: ['infra/**', '**/*.tf'] },
                require: { checks: ['ci'] },
              },
            ],
          },
        },
        {
          changed_paths: Array.from({ length: 1000 }, (_, i) => `src/module${i % 50}/file-${i}.ts`),
        },
      ),
    );
    expect(ordinary.status).toBe(200);
  });

  it('a policy without rules keeps its config hash and has no rules member', async () => {
    const res = await createPolicy({ name: 'plain', config: { minSources: 1 } });
    expect(res.status).toBe(201);
    expect(res.body.effective).toEqual(DEFAULT_CONFIG);
    expect(res.body.config_hash).toBe(H(DEFAULT_CONFIG));
  });

  it('the OpenAPI document describes conditional rules and the claim members they read', async () => {
    const doc = (await request(t.app).get('/v1/openapi.json')).body as {
      components: { schemas: Record<string, { properties?: Record<string, Json> }> };
    };
    const schemas = doc.components.schemas;
    expect(schemas.PolicyConfig!.properties).toHaveProperty('rules');
    expect(Object.keys(schemas.ConditionalRule!.properties!).sort()).toEqual(
      ['description', 'if', 'name', 'on_fail', 'require'].sort(),
    );
    expect(Object.keys(schemas.ConditionalRule!.properties!.if!.properties as Json)).toEqual([
      'action_type',
      'environment',
      'target_system',
      'repository',
      'branch',
      'agent',
      'author',
      'labels',
      'risk_scope',
      'paths',
      'only_paths',
      'tool',
      'command',
      'tool_paths',
      'outside_project',
      'urls',
      'mcp_server',
      'session',
    ]);
    expect(Object.keys(schemas.RuleRequirements!.properties!)).toEqual([
      'approvals',
      'checks',
      'source_types',
      'never',
      'agent_session',
      ...RULE_ORDER.map(() => expect.any(String)),
    ]);
    expect(JSON.stringify(schemas.ClaimInput)).toContain('changed_paths_incomplete');
    expect(JSON.stringify(schemas.ClaimInput)).toContain('unsessioned_commits');
    // The members of a tool-call claim (contract §12).
    expect(Object.keys(schemas.ToolCall!.properties!)).toEqual([
      'harness',
      'name',
      'input_digest',
      'summary',
      'input',
    ]);
    expect(Object.keys(schemas.ToolSummary!.properties!)).toEqual([
      'command',
      'argv',
      'paths',
      'urls',
      'mcp_server',
      'mcp_tool',
      'incomplete',
    ]);
    expect(schemas.ToolSummary!.properties!.command).toMatchObject({ maxLength: 4096 });
    expect(schemas.ToolSummary!.properties!.argv).toMatchObject({ maxItems: 256 });
    expect(Object.keys(schemas.AgentSession!.properties!)).toEqual(['id', 'harness', 'cwd']);
    expect(JSON.stringify(schemas.ClaimInput)).toContain('#/components/schemas/ToolCall');
  });
});
