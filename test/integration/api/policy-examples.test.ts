import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { parse as parseYaml } from 'yaml';
import { policyConfigSchema } from '../../../src/core/policy-config.js';
import { parseRepoConfig } from '../../../src/github/repo-config.js';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import {
  type Account,
  evaluate,
  type Json,
  ledgerState,
  signupAccount,
  statusOf,
  verify,
} from '../../support/api.js';
import { expectValidV2, H, serverPublicKey } from '../../support/receipts.js';
import { DEFAULT_CONFIG } from '../../support/policies.js';
import { mergeAction, typicalSources, validClaim } from '../../support/claims.js';

// The four examples of docs/POLICIES.md, read out of the document itself, each evaluated as
// the document says it behaves: as a REST policy and as a repository's .github/svc.yml.
const DOC = readFileSync(new URL('../../../docs/POLICIES.md', import.meta.url), 'utf8');

function block(name: string, form: 'svc.yml' | 'rest'): string {
  const marker = `<!-- example: ${name} ${form} -->\n`;
  const at = DOC.indexOf(marker);
  if (at < 0) throw new Error(`docs/POLICIES.md has no ${form} block for ${name}`);
  const match = /^```(?:yaml|json)\n([\s\S]*?)\n```/.exec(DOC.slice(at + marker.length));
  if (!match) throw new Error(`the ${form} block of ${name} is not fenced`);
  return match[1]!;
}

interface Case {
  title: string;
  action: Json;
  sources?: Json[];
  verdict: 'ALLOWED' | 'BLOCKED' | 'ESCALATED';
  /** The rule's entry in policy.rules: passed, and a pattern its reason matches. */
  rules: Record<string, [boolean, RegExp]>;
}

const ok = (name: string) => ({ name, status: 'completed', conclusion: 'success' });
const humanApproval = {
  id: 'approval-1',
  type: 'human_approval',
  uri: 'https://chat.example/deploys/1',
  confidence: 1,
  content: 'approved by the release manager',
};

const EXAMPLES: Record<string, Case[]> = {
  'platform-review': [
    {
      title: "an agent's infra change with two platform approvals",
      action: {
        agent: 'coder-bot',
        author: 'coder-bot',
        changed_paths: ['infra/main.tf', 'src/a.ts'],
        approvals: [
          { user: 'bob', teams: ['acme/platform'] },
          { user: 'erin', teams: ['acme/platform'], permission: 'write' },
        ],
      },
      verdict: 'ALLOWED',
      rules: { 'rule:platform-review': [true, /^applies; 2 approvals from @acme\/platform/] },
    },
    {
      title: "an agent's workflow change with one platform approval (the other by its author)",
      action: {
        agent: 'coder-bot',
        author: 'alice',
        changed_paths: ['.github/workflows/ci.yml'],
        approvals: [
          { user: 'bob', teams: ['acme/platform'] },
          { user: 'alice', teams: ['acme/platform'] },
        ],
      },
      verdict: 'BLOCKED',
      rules: {
        'rule:platform-review': [
          false,
          /^applies; 1 approval from @acme\/platform \(bob\), 2 required \(not counted: alice \(the author\)\)$/,
        ],
      },
    },
    {
      title: "an agent's change to src/ only",
      action: { agent: 'coder-bot', changed_paths: ['src/a.ts'], approvals: [] },
      verdict: 'ALLOWED',
      rules: {
        'rule:platform-review': [
          true,
          /^does not apply: no changed path matches \.github\/workflows\/\*\*, infra\/\*\*$/,
        ],
      },
    },
    {
      title: "a person's infra change",
      action: { agent: undefined, author: 'alice', changed_paths: ['infra/main.tf'] },
      verdict: 'ALLOWED',
      rules: { 'rule:platform-review': [true, /^does not apply: the claim has no agent$/] },
    },
  ],
  'docs-only': [
    {
      title: 'a docs-only change with green CI and no approval',
      action: { changed_paths: ['docs/guide.md', 'README.md'], checks: [ok('ci')] },
      verdict: 'ALLOWED',
      rules: {
        'rule:docs-ci': [true, /^applies; checks passed: ci$/],
        'rule:code-review': [true, /^does not apply: no changed path matches/],
      },
    },
    {
      title: 'a docs-only change with failed CI',
      action: {
        changed_paths: ['docs/guide.md'],
        checks: [{ name: 'ci', status: 'completed', conclusion: 'failure' }],
      },
      verdict: 'BLOCKED',
      rules: { 'rule:docs-ci': [false, /^applies; checks not passed: ci \(failure\)$/] },
    },
    {
      title: 'a change that also touches code, without an approval',
      action: { changed_paths: ['docs/guide.md', 'src/app.ts'], checks: [ok('ci')] },
      verdict: 'BLOCKED',
      rules: {
        'rule:docs-ci': [true, /^does not apply: 1 changed path outside/],
        'rule:code-review': [false, /^applies; 0 approvals, 1 required$/],
      },
    },
    {
      title: 'a change that also touches code, reviewed',
      action: {
        changed_paths: ['docs/guide.md', 'src/app.ts'],
        checks: [ok('ci')],
        approvals: [{ user: 'bob' }],
      },
      verdict: 'ALLOWED',
      rules: { 'rule:code-review': [true, /^applies; 1 approval \(bob\), 1 required$/] },
    },
  ],
  'production-deploy': [
    {
      title: 'a production deployment, approved, deploy-check green',
      action: {
        action_type: 'deployment',
        environment: 'production',
        agent: 'deploy-bot',
        human_operator: 'oscar',
        approvals: [{ user: 'rita' }],
        checks: [ok('deploy-check')],
      },
      sources: [humanApproval],
      verdict: 'ALLOWED',
      rules: {
        'rule:production-deploy': [
          true,
          /^applies; 1 approval \(rita\), 1 required; checks passed: deploy-check$/,
        ],
      },
    },
    {
      title: 'a production deployment approved only by its operator',
      action: {
        action_type: 'deployment',
        environment: 'prod',
        agent: 'deploy-bot',
        human_operator: 'oscar',
        approvals: [{ user: 'oscar' }],
        checks: [ok('deploy-check')],
      },
      sources: [humanApproval],
      verdict: 'BLOCKED',
      rules: {
        'rule:production-deploy': [false, /not counted: oscar \(the human operator\)/],
      },
    },
    {
      title: 'a production deployment whose deploy-check failed',
      action: {
        action_type: 'deployment',
        environment: 'production',
        approvals: [{ user: 'rita' }],
        checks: [{ name: 'deploy-check', status: 'completed', conclusion: 'failure' }],
      },
      sources: [humanApproval],
      verdict: 'BLOCKED',
      rules: {
        'rule:production-deploy': [false, /^applies; checks not passed: deploy-check \(failure\)$/],
      },
    },
    {
      title: 'a staging deployment',
      action: { action_type: 'deployment', environment: 'staging' },
      verdict: 'ALLOWED',
      rules: {
        'rule:production-deploy': [
          true,
          /^does not apply: environment "staging" is not "production" or "prod"$/,
        ],
      },
    },
  ],
  'code-owners': [
    {
      title: 'every owned path approved by one of its owners',
      action: {
        author: 'alice',
        changed_paths: ['infra/main.tf', 'src/app.ts', 'NOTES.txt'],
        code_owners: [
          { path: 'infra/main.tf', owners: ['@acme/platform'] },
          { path: 'src/app.ts', owners: ['@dave'] },
        ],
        approvals: [{ user: 'bob', teams: ['acme/platform'] }, { user: 'dave' }],
      },
      verdict: 'ALLOWED',
      rules: {
        'rule:code-owners': [
          true,
          /^applies; code owner approval: 2 owned paths, each with 1 approving owner$/,
        ],
      },
    },
    {
      title: 'one owned path without its owners’ approval',
      action: {
        author: 'alice',
        changed_paths: ['infra/main.tf', 'src/app.ts'],
        code_owners: [
          { path: 'infra/main.tf', owners: ['@acme/platform'] },
          { path: 'src/app.ts', owners: ['@dave'] },
        ],
        approvals: [{ user: 'dave' }],
      },
      verdict: 'BLOCKED',
      rules: {
        'rule:code-owners': [
          false,
          /^applies; code owner approval: 1 path without 1 approving owner: infra\/main\.tf \(@acme\/platform\)$/,
        ],
      },
    },
    {
      title: 'paths without owners',
      action: { changed_paths: ['NOTES.txt'] },
      verdict: 'ALLOWED',
      rules: {
        'rule:code-owners': [
          true,
          /^applies; code owner approval: 0 owned paths, each with 1 approving owner$/,
        ],
      },
    },
  ],
};

/** The typical claim with the case's action facts and extra sources (undefined facts removed). */
const caseClaim = (c: Case, extra: Json): Json =>
  validClaim({
    action: JSON.parse(JSON.stringify({ ...mergeAction, ...c.action })),
    sources: [...typicalSources(), ...(c.sources ?? [])],
    ...extra,
  });

function expectOutcome(body: Json, c: Case): void {
  const policy = body.policy as {
    verdict: string;
    rules: { rule: string; passed: boolean; reason: string }[];
  };
  expect(policy.verdict).toBe(c.verdict);
  for (const [name, [passed, reason]] of Object.entries(c.rules)) {
    const entry = policy.rules.find((r) => r.rule === name);
    expect(entry).toMatchObject({ passed });
    expect(entry!.reason).toMatch(reason);
  }
  // The receipt signs the failed rules, conditional ones included.
  const receipt = body.receipt as { policy: { verdict: string; checks: { rule: string }[] } };
  expect(receipt.policy.verdict).toBe(c.verdict);
  expect(receipt.policy.checks.map((r) => r.rule)).toEqual(
    policy.rules.filter((r) => !r.passed).map((r) => r.rule),
  );
}

describe.each(Object.keys(EXAMPLES))('docs/POLICIES.md example %s', (name) => {
  let t: TestApp;
  let a: Account;
  let publicKey: Uint8Array;
  let created: Json;
  const rest = JSON.parse(block(name, 'rest')) as Json;
  const repo = parseRepoConfig(parseYaml(block(name, 'svc.yml')));

  beforeAll(async () => {
    t = buildTestApp();
    a = await signupAccount(t);
    publicKey = await serverPublicKey(t);
    const res = await request(t.app).post('/v1/policies').set('X-API-Key', a.apiKey).send(rest);
    expect(res.status).toBe(201);
    created = res.body as Json;
  });
  afterAll(() => t.close());

  it('the svc.yml is valid and holds the same rules as the REST policy', () => {
    expect(repo.ok).toBe(true);
    if (!repo.ok) return;
    const restRules = policyConfigSchema.parse((rest as { config: unknown }).config).rules;
    expect(repo.config.policyConfig?.rules).toEqual(restRules);
  });

  it('POST /v1/policies keeps the rules with defaults filled, and hashes them', async () => {
    const effective = created.effective as Json;
    expect(effective).toEqual({ ...DEFAULT_CONFIG, rules: expect.any(Array) });
    for (const rule of effective.rules as Json[]) {
      expect(rule).toEqual(
        expect.objectContaining({ if: expect.any(Object), on_fail: expect.any(String) }),
      );
    }
    expect(created.config_hash).toBe(H(effective));
    const view = await request(t.app).get(`/v1/policies/${name}`).set('X-API-Key', a.apiKey);
    expect(view.status).toBe(200);
    expect(view.body.config_hash).toBe(created.config_hash);
  });

  it.each(EXAMPLES[name]!.map((c) => [c.title, c] as const))('REST policy: %s', async (_, c) => {
    const before = (await ledgerState(t)).stats;
    const res = await evaluate(t, a.apiKey, caseClaim(c, { policy: name }));
    expect(res.status).toBe(200);
    expectOutcome(res.body as Json, c);
    const receipt = res.body.receipt as Json;
    expect(receipt.policy).toMatchObject({
      name,
      config_hash: created.config_hash,
      overrides: false,
    });
    await expectValidV2(receipt, publicKey, { keyId: a.keyId });
    const checked = await verify(t, receipt, {
      expect_policy: name,
      expect_config_hash: created.config_hash as string,
    });
    expect(statusOf(checked)).toMatchObject({ signature_valid: 'PASS', policy_binding: 'PASS' });
    expect((await ledgerState(t)).stats.total).toBe(before.total + 1);
  });

  it.each(EXAMPLES[name]!.map((c) => [c.title, c] as const))(
    '.github/svc.yml rules on the default policy: %s',
    async (_, c) => {
      if (!repo.ok) throw new Error(repo.problem);
      const res = await evaluate(
        t,
        a.apiKey,
        caseClaim(c, { policyConfig: repo.config.policyConfig }),
      );
      expect(res.status).toBe(200);
      expectOutcome(res.body as Json, c);
      const receipt = res.body.receipt as Json;
      expect(receipt.policy).toMatchObject({ name: 'default', overrides: true });
      // Under the default policy the effective config is exactly the REST policy's.
      expect((receipt.policy as Json).config_hash).toBe(created.config_hash);
      await expectValidV2(receipt, publicKey, { keyId: a.keyId });
    },
  );
});
