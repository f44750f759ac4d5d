import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { stringify } from 'yaml';
import { buildTestApp, type TestApp } from '../support/harness.js';
import { newKey } from '../support/api.js';
import { validClaim } from '../support/claims.js';
import { runNode } from '../fixtures/run-node.js';
import { transpileTree, type TranspiledTree } from '../fixtures/transpile-tree.js';

const source = (id: string, type: string, confidence = 0.9) => ({
  id,
  type,
  uri: `https://evidence.example/${id}`,
  confidence,
  content: `${type} evidence`,
});

const claim = (id: string, ...sources: ReturnType<typeof source>[]) =>
  validClaim({
    claim_id: id,
    claim: 'Deploy web 1.2 to production',
    action: { action_type: 'deployment', target_system: 'k8s', environment: 'production' },
    sources,
  });

const POLICY = {
  name: 'production',
  description: 'Two sources and a human approval',
  config: { minSources: 2, minConfidence: 0.8, requireHumanApproval: true },
  overrides: 'tighten',
};

// Two approved, one escalated (no approval), one blocked (a weak single source).
const CLAIMS = {
  approved: claim('c-approved', source('ci', 'ci'), source('ok', 'human_approval', 0.95)),
  unapproved: claim('c-unapproved', source('ci', 'ci'), source('rev', 'code_review', 0.85)),
  weak: claim('c-weak', source('ci', 'ci', 0.4)),
};

const RECORDED_PR = {
  pr: {
    repository: 'acme/web',
    number: 7,
    title: 'Bump dependencies',
    url: 'https://github.com/acme/web/pull/7',
    author: 'dependabot[bot]',
    headSha: 'a'.repeat(40),
    headRef: 'deps',
    baseRef: 'main',
    additions: 10,
    deletions: 4,
    changedFiles: 2,
    updatedAt: '2026-11-01T10:00:00Z',
  },
  ci: [
    { name: 'build', kind: 'check_run', state: 'success', url: null, at: '2026-11-01T10:05:00Z' },
  ],
  reviews: [
    {
      reviewer: 'alice',
      reviewerType: 'User',
      state: 'APPROVED',
      commitId: 'a'.repeat(40),
      submittedAt: '2026-11-01T10:10:00Z',
      url: 'https://github.com/acme/web/pull/7#pullrequestreview-1',
      permission: 'write',
    },
  ],
};

// The svc operator CLI's policy commands, run as a real child process on files only.
describe('svc policy check and svc policy test', () => {
  let tree: TranspiledTree;
  let dir: string;
  const cli = (...args: string[]) =>
    runNode(fileURLToPath(tree.url('src/cli/svc.ts')), args, 20_000, {
      ...process.env,
      // No store is opened: a data directory that does not exist changes nothing.
      SVC_DATA_DIR: join(tmpdir(), 'svc-no-such-data-dir'),
    });
  const file = (name: string, content: unknown) => {
    const path = join(dir, name);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(
      path,
      typeof content === 'string'
        ? content
        : name.endsWith('.json')
          ? JSON.stringify(content)
          : stringify(content),
    );
    return path;
  };

  beforeAll(() => {
    tree = transpileTree(['src/cli/svc.ts']);
    dir = mkdtempSync(join(tmpdir(), 'svc-policy-cli-'));
    file('policies/production.yml', POLICY);
    file('policies/production.json', POLICY);
    file('claims/weak.json', CLAIMS.weak);
    file('prs/7.yml', RECORDED_PR);
    file('prs/7-human.yml', { ...RECORDED_PR, pr: { ...RECORDED_PR.pr, author: 'octocat' } });
    file('repo/.github/svc.yml', { policy: 'strict', policyConfig: { minConfidence: 0.85 } });
  });
  afterAll(() => {
    tree.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('--help', () => {
    it('names both commands in svc --help, and each answers its own --help', async () => {
      const all = await cli('--help');
      expect(all.code).toBe(0);
      expect(all.stdout).toContain('svc policy check <file>');
      expect(all.stdout).toContain('svc policy test <policy> <cases.yml>');
      const check = await cli('policy', 'check', '--help');
      expect(check).toMatchObject({ code: 0, stderr: '' });
      expect(check.stdout).toContain(
        'svc policy check <file> [--kind policy|repo-config] [--policy-file <file>]... [--json]',
      );
      expect(check.stdout).toContain('Exit codes: 0 valid, 1 invalid');
      const test = await cli('policy', 'test', '-h');
      expect(test).toMatchObject({ code: 0, stderr: '' });
      expect(test.stdout).toContain('svc policy test <policy> <cases.yml>');
      expect(test.stdout).toContain('pull_request: prs/1234.yml');
      const group = await cli('policy');
      expect(group.code).toBe(0);
      expect(group.stdout).toContain('svc policy test <policy> <cases.yml>');
    });
  });

  describe('check', () => {
    let t: TestApp;
    beforeAll(() => {
      t = buildTestApp();
    });
    afterAll(() => t.close());

    it("prints a valid policy's effective config and the config_hash its receipts carry", async () => {
      const run = await cli('policy', 'check', join(dir, 'policies/production.yml'));
      expect(run.code).toBe(0);
      expect(run.stderr).toBe('');
      const hash = /^config_hash: (sha256:[0-9a-f]{64})$/m.exec(run.stdout)?.[1];
      expect(run.stdout).toContain('valid policy (POST /v1/policies body)\nname: production\n');
      expect(run.stdout).toContain('"requireHumanApproval": true');

      // The service, given the same body, creates the policy with that hash, and a receipt
      // evaluated under it signs that hash.
      const key = await newKey(t);
      const created = await request(t.app).post('/v1/policies').set('X-API-Key', key).send(POLICY);
      expect(created.status).toBe(201);
      expect(hash).toBe(created.body.config_hash);
      const evaluated = await request(t.app)
        .post('/v1/evaluate')
        .set('X-API-Key', key)
        .send({ ...CLAIMS.approved, policy: 'production' });
      expect(evaluated.status).toBe(200);
      expect(evaluated.body.receipt.policy).toMatchObject({
        name: 'production',
        config_hash: hash,
      });

      const json = await cli('policy', 'check', join(dir, 'policies/production.json'), '--json');
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual({
        file: join(dir, 'policies/production.json'),
        valid: true,
        kind: 'policy',
        name: 'production',
        description: POLICY.description,
        overrides: 'tighten',
        config: POLICY.config,
        effective: created.body.effective,
        config_hash: hash,
      });
    });

    it('names each problem of an invalid policy as path: message, with exit code 1', async () => {
      const path = file('bad/policy.yml', {
        name: 'Prod!',
        config: { minConfidence: 2, bogus: true },
        overrides: 'sometimes',
      });
      const run = await cli('policy', 'check', path);
      expect(run).toEqual({
        code: 1,
        stderr: '',
        stdout: [
          `${path}: invalid policy (POST /v1/policies body)`,
          'name: must be 1-64 characters of a-z, 0-9, ".", "_" or "-", starting with a letter or digit',
          'config.minConfidence: Too big: expected number to be <=1',
          'config: Unrecognized key: "bogus"',
          'overrides: Invalid option: expected one of "any"|"tighten"|"none"',
          '',
        ].join('\n'),
      });
      const json = await cli('policy', 'check', path, '--json');
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toMatchObject({ valid: false, kind: 'policy' });
      expect(JSON.parse(json.stdout).problems).toHaveLength(4);

      const syntax = await cli(
        'policy',
        'check',
        file('bad/dup.yml', 'name: a\nconfig: {}\nname: b\n'),
      );
      expect(syntax.code).toBe(1);
      expect(syntax.stdout).toContain(
        '(root): not valid YAML (line 3, column 1): Map keys must be unique',
      );
    });

    it('checks a .github/svc.yml: its policyConfig must be one its policy allows', async () => {
      const ok = await cli('policy', 'check', join(dir, 'repo/.github/svc.yml'));
      expect(ok.code).toBe(0);
      expect(ok.stdout).toContain('valid .github/svc.yml\npolicy: strict\n');
      expect(ok.stdout).toContain('effective config (policy "strict" with its policyConfig):');
      expect(ok.stdout).toContain('"minConfidence": 0.85');
      expect(ok.stdout).toMatch(/^config_hash: sha256:[0-9a-f]{64}$/m);

      const loose = file('loose/.github/svc.yml', {
        policy: 'strict',
        policyConfig: { minSources: 1 },
      });
      const run = await cli('policy', 'check', loose);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe(
        `${loose}: invalid .github/svc.yml\npolicyConfig.minSources: policy "strict" allows only stricter values here (at least 2); got 1 (every claim of the App would be refused policy_override_refused)\n`,
      );
      const typo = await cli(
        'policy',
        'check',
        file('typo/svc.yml', { policy: 'strict', gate_human: true }),
      );
      expect(typo.code).toBe(1);
      expect(typo.stdout).toContain('(root): Unrecognized key: "gate_human"');
    });

    it('refuses wrong usage and unreadable files with exit code 2', async () => {
      for (const args of [
        ['policy', 'check'],
        ['policy', 'check', join(dir, 'policies/production.yml'), 'extra'],
        ['policy', 'check', join(dir, 'policies/production.yml'), '--kind', 'other'],
        ['policy', 'check', join(dir, 'policies/production.yml'), '--nope'],
        ['policy', 'frobnicate'],
      ]) {
        const run = await cli(...args);
        expect(run.code).toBe(2);
        expect(run.stdout).toBe('');
        expect(run.stderr).toMatch(/^svc: .+\nRun "svc --help" for usage\.\n$/);
      }
      const missing = await cli('policy', 'check', join(dir, 'nope.yml'));
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/^svc: .*nope\.yml: cannot read it: ENOENT/);
      const mixed = await cli('policy', 'check', file('mixed.yml', { config: {}, agents: [] }));
      expect(mixed.code).toBe(2);
      expect(mixed.stderr).toContain('say which it is with --kind policy|repo-config');
      // Told which it is, the same file is checked as that.
      const told = await cli('policy', 'check', join(dir, 'mixed.yml'), '--kind', 'repo-config');
      expect(told.code).toBe(1);
      expect(told.stdout).toContain('(root): Unrecognized key: "config"');
    });
  });

  describe('test', () => {
    const cases = [
      {
        name: 'an approved deployment is allowed',
        claim: CLAIMS.approved,
        expect: {
          verdict: 'ALLOWED',
          admissibility: 'ACCEPTED',
          rules: { require_human_approval: 'pass' },
        },
      },
      {
        name: 'a deployment without approval goes to a human',
        claim: CLAIMS.unapproved,
        expect: {
          verdict: 'ESCALATED',
          rules: { require_human_approval: 'fail', min_sources: 'pass' },
        },
      },
      {
        name: 'one weak source is blocked',
        claim_file: 'claims/weak.json',
        expect: { verdict: 'BLOCKED', rules: { min_sources: 'fail', min_confidence: 'fail' } },
      },
      {
        name: 'a claim cannot loosen the policy',
        claim: { ...CLAIMS.approved, policyConfig: { minSources: 1 } },
        expect: { error: 'policy_override_refused' },
      },
    ];

    it("passes every case with exit code 0, and its verdicts are the service's", async () => {
      const casesFile = file('cases.yml', { cases });
      const run = await cli('policy', 'test', join(dir, 'policies/production.yml'), casesFile);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const lines = run.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^Testing policy "production", config_hash sha256:[0-9a-f]{64}$/);
      expect(lines.slice(1)).toEqual([
        ...cases.map((c) => `PASS  ${c.name}`),
        '4 passed, 0 failed (4 cases)',
      ]);

      // The same claims through POST /v1/simulate under the same policy.
      const t = buildTestApp();
      try {
        const key = await newKey(t);
        await request(t.app).post('/v1/policies').set('X-API-Key', key).send(POLICY).expect(201);
        const json = await cli(
          'policy',
          'test',
          join(dir, 'policies/production.yml'),
          casesFile,
          '--json',
        );
        expect(json.code).toBe(0);
        const report = JSON.parse(json.stdout);
        for (const [i, c] of [CLAIMS.approved, CLAIMS.unapproved, CLAIMS.weak].entries()) {
          const simulated = await request(t.app)
            .post('/v1/simulate')
            .set('X-API-Key', key)
            .send({ ...c, policy: 'production' });
          expect(simulated.status).toBe(200);
          expect(report.cases[i].actual).toEqual({
            verdict: simulated.body.decision.verdict,
            admissibility: simulated.body.decision.admissibility,
            reason: simulated.body.policy.reason,
            admissibility_reason: expect.any(String),
            rules: simulated.body.policy.rules,
            policy: 'production',
            config_hash: simulated.body.receipt.policy.config_hash,
            claim_id: c.claim_id,
          });
        }
        const refused = await request(t.app)
          .post('/v1/simulate')
          .set('X-API-Key', key)
          .send({ ...CLAIMS.approved, policy: 'production', policyConfig: { minSources: 1 } });
        expect(refused.status).toBe(400);
        expect(report.cases[3].actual).toEqual({
          error: refused.body.code,
          message: refused.body.error,
          policy: 'production',
        });
      } finally {
        await t.close();
      }
    });

    it('fails with exit code 1, showing what differs case by case, rule by rule', async () => {
      const casesFile = file('failing.yml', [
        cases[0],
        {
          name: 'wrongly expected allowed',
          claim: CLAIMS.unapproved,
          expect: {
            verdict: 'ALLOWED',
            rules: { require_human_approval: 'pass', min_sources: 'pass' },
          },
        },
        {
          name: 'a typo in a rule',
          claim: CLAIMS.approved,
          expect: { verdict: 'ALLOWED', rules: { min_source: 'pass' } },
        },
      ]);
      const run = await cli('policy', 'test', join(dir, 'policies/production.yml'), casesFile);
      expect(run.code).toBe(1);
      expect(run.stdout.split('\n').slice(1).join('\n')).toBe(
        [
          'PASS  an approved deployment is allowed',
          'FAIL  wrongly expected allowed',
          '      verdict: expected ALLOWED, got ESCALATED',
          '        Human review required: require_human_approval (a human_approval source is required and none is present); a production deployment requires a human_approval source',
          '      rule require_human_approval: expected pass, got fail',
          '        a human_approval source is required and none is present',
          'FAIL  a typo in a rule',
          '      rule min_source: expected pass, got absent',
          '        the evaluation has no rule "min_source"; its rules: min_sources, min_source_types, min_confidence, require_provenance, require_human_approval, max_risk_scope',
          '1 passed, 2 failed (3 cases)',
          '',
        ].join('\n'),
      );

      const json = await cli(
        'policy',
        'test',
        join(dir, 'policies/production.yml'),
        casesFile,
        '--json',
      );
      expect(json.code).toBe(1);
      const report = JSON.parse(json.stdout);
      expect(report.summary).toEqual({ total: 3, passed: 1, failed: 2 });
      expect(report.policy).toEqual({
        kind: 'policy',
        name: 'production',
        config_hash: expect.stringMatching(/^sha256:/),
      });
      expect(report.cases[1]).toMatchObject({
        name: 'wrongly expected allowed',
        passed: false,
        expected: { verdict: 'ALLOWED' },
        actual: { verdict: 'ESCALATED', admissibility: 'REJECTED' },
        differences: [
          { path: 'verdict', expected: 'ALLOWED', actual: 'ESCALATED' },
          { path: 'rules.require_human_approval', expected: 'pass', actual: 'fail' },
        ],
      });
    });

    it('evaluates recorded pull requests as the GitHub App would under a .github/svc.yml', async () => {
      const casesFile = file('prs.yml', {
        cases: [
          {
            name: "an agent's pull request with a human approval",
            pull_request: 'prs/7.yml',
            expect: {
              verdict: 'ALLOWED',
              rules: { require_human_approval: 'pass', require_provenance: 'pass' },
            },
          },
          {
            name: "a human's pull request is not gated",
            pull_request: 'prs/7-human.yml',
            expect: { verdict: 'NOT_GATED' },
          },
          {
            name: 'the agent approving its own change does not count',
            pull_request: { ...RECORDED_PR, involved: ['alice'] },
            expect: { verdict: 'ESCALATED', rules: { require_human_approval: 'fail' } },
          },
        ],
      });
      const run = await cli('policy', 'test', join(dir, 'repo/.github/svc.yml'), casesFile);
      expect(run.stderr).toBe('');
      expect(run.stdout).toMatch(
        /^Testing \.github\/svc\.yml \(policy "strict" with its policyConfig\), config_hash sha256:[0-9a-f]{64}\n/,
      );
      expect(run.stdout).toContain('3 passed, 0 failed (3 cases)');
      expect(run.code).toBe(0);

      const json = JSON.parse(
        (await cli('policy', 'test', join(dir, 'repo/.github/svc.yml'), casesFile, '--json'))
          .stdout,
      );
      expect(json.cases[0].actual).toMatchObject({
        verdict: 'ALLOWED',
        policy: 'strict',
        claim_id: expect.stringMatching(/^gh:acme\/web#7@a{40}:[0-9a-f]{16}$/),
      });
      // The built-in policy by name, with no repository config: every pull request is evaluated
      // (alice's approval counts for octocat's change).
      const builtin = await cli('policy', 'test', 'strict', casesFile);
      expect(builtin.code).toBe(1);
      expect(builtin.stdout).toContain('Testing built-in policy "strict", config_hash sha256:');
      expect(builtin.stdout).toContain(
        "FAIL  a human's pull request is not gated\n      verdict: expected NOT_GATED, got ALLOWED",
      );
    });

    it('evaluates conditional rules as the service does', async () => {
      const platform = {
        name: 'platform-review',
        config: {
          rules: [
            {
              name: 'platform-review',
              if: { agent: '*', paths: ['.github/workflows/**', 'infra/**'] },
              require: { approvals: { count: 2, from: { teams: ['@acme/platform'] } } },
            },
          ],
        },
      };
      const change = (id: string, paths: string[], approvers: string[]) => ({
        ...claim(id, source('ci', 'ci')),
        action: {
          action_type: 'merge',
          target_system: 'github',
          agent: 'coder-bot',
          changed_paths: paths,
          approvals: approvers.map((user) => ({ user, teams: ['acme/platform'] })),
        },
      });
      const claims = [
        change('c-two', ['infra/main.tf'], ['alice', 'bob']),
        change('c-one', ['infra/main.tf'], ['alice']),
        change('c-src', ['src/app.ts'], []),
      ];
      const casesFile = file('rules-cases.yml', [
        { name: 'two approvals', claim: claims[0], expect: { verdict: 'ALLOWED' } },
        {
          name: 'one approval',
          claim: claims[1],
          expect: { verdict: 'BLOCKED', rules: { 'platform-review': 'fail' } },
        },
        {
          name: 'not infra',
          claim: claims[2],
          expect: { verdict: 'ALLOWED', rules: { 'rule:platform-review': 'pass' } },
        },
      ]);
      const policyFile = file('policies/platform.json', platform);
      const run = await cli('policy', 'test', policyFile, casesFile, '--json');
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const report = JSON.parse(run.stdout);
      expect(report.summary).toEqual({ total: 3, passed: 3, failed: 0 });

      const t = buildTestApp();
      try {
        const key = await newKey(t);
        const created = await request(t.app)
          .post('/v1/policies')
          .set('X-API-Key', key)
          .send(platform);
        expect(created.status).toBe(201);
        expect(report.policy.config_hash).toBe(created.body.config_hash);
        for (const [i, c] of claims.entries()) {
          const simulated = await request(t.app)
            .post('/v1/simulate')
            .set('X-API-Key', key)
            .send({ ...c, policy: 'platform-review' });
          expect(simulated.status).toBe(200);
          expect(report.cases[i].actual).toMatchObject({
            verdict: simulated.body.decision.verdict,
            rules: simulated.body.policy.rules,
            config_hash: simulated.body.receipt.policy.config_hash,
          });
        }
      } finally {
        await t.close();
      }
    });

    it('refuses wrong usage and invalid or unreadable files with exit code 2, naming every problem', async () => {
      const good = file('good.yml', [cases[0]]);
      for (const args of [
        ['policy', 'test'],
        ['policy', 'test', 'strict'],
        ['policy', 'test', 'strict', good, 'extra'],
        ['policy', 'test', 'no-such-policy', good],
        ['policy', 'test', 'strict', good, '--kind', 'policy'],
      ]) {
        const run = await cli(...args);
        expect(run.code).toBe(2);
        expect(run.stdout).toBe('');
        expect(run.stderr).toMatch(/^svc: .+\nRun "svc --help" for usage\.\n$/);
      }
      const badCases = file('bad-cases.yml', {
        cases: [
          { name: 'no expectation', claim: CLAIMS.approved, expect: {} },
          { name: 'missing file', claim_file: 'claims/none.json', expect: { verdict: 'ALLOWED' } },
        ],
      });
      const invalid = await cli('policy', 'test', 'strict', badCases);
      expect(invalid).toEqual({
        code: 2,
        stdout: '',
        stderr: `svc: ${badCases}: invalid cases file:\n  cases.0.expect: must name a verdict (ALLOWED, BLOCKED, ESCALATED, NOT_GATED) or an error code\n`,
      });
      const unreadable = await cli(
        'policy',
        'test',
        'strict',
        file('unreadable.yml', [
          { name: 'x', claim_file: 'claims/none.json', expect: { verdict: 'ALLOWED' } },
        ]),
      );
      expect(unreadable.code).toBe(2);
      expect(unreadable.stderr).toMatch(/\n {2}cases\.0\.claim_file: cannot read it: ENOENT/);
      const badClaim = await cli(
        'policy',
        'test',
        'strict',
        file('bad-claim.yml', [
          { name: 'x', claim: { entity: 'e' }, expect: { verdict: 'ALLOWED' } },
        ]),
      );
      expect(badClaim.code).toBe(2);
      expect(badClaim.stderr).toContain(
        '  cases.0.claim.claim: Invalid input: expected string, received undefined\n',
      );
      const badPolicy = await cli('policy', 'test', join(dir, 'bad/policy.yml'), good);
      expect(badPolicy.code).toBe(2);
      expect(badPolicy.stderr).toContain(
        'invalid policy (POST /v1/policies body):\n  name: must be',
      );
      const unknownPolicy = await cli(
        'policy',
        'test',
        file('custom/svc.yml', { policy: 'acme-prod' }),
        good,
      );
      expect(unknownPolicy.code).toBe(2);
      expect(unknownPolicy.stderr).toContain(
        '"acme-prod" is neither built in nor given with --policy-file',
      );
      // Given its definition, the named custom policy is used.
      const withFile = await cli(
        'policy',
        'test',
        join(dir, 'custom/svc.yml'),
        good,
        '--policy-file',
        file('policies/acme-prod.yml', { ...POLICY, name: 'acme-prod' }),
      );
      expect(withFile.stdout).toContain('Testing .github/svc.yml (policy "acme-prod")');
      expect(withFile.code).toBe(0);
    });
  });
});
