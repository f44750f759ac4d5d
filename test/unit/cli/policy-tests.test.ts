import { describe, expect, it } from '@jest/globals';
import { hashCanonical } from '@svc/verify';
import {
  builtinSubject,
  detectKind,
  diffCase,
  evaluateCase,
  loadCases,
  parseDocument,
  PolicySet,
  renderResults,
  runCases,
  subjectOf,
  type CaseOutcome,
  type ReadFile,
  type Subject,
  type TestCase,
} from '../../../src/cli/policy-tests.js';

const source = (id: string, type: string, confidence = 0.9) => ({
  id,
  type,
  uri: `https://evidence.example/${id}`,
  confidence,
  content: `${type} evidence`,
});

const claim = (...sources: ReturnType<typeof source>[]) => ({
  entity: 'acme/web',
  claim: 'Merge the change',
  sources,
});

const recordedPr = (author: string, reviews: unknown[] = []) => ({
  pr: {
    repository: 'acme/web',
    number: 7,
    title: 'Bump deps',
    url: 'https://github.com/acme/web/pull/7',
    author,
    headSha: 'a'.repeat(40),
    headRef: 'deps',
    baseRef: 'main',
    updatedAt: '2026-11-01T10:00:00Z',
  },
  ci: [{ name: 'build', state: 'success', at: '2026-11-01T10:05:00Z' }],
  reviews,
});

const noFiles: ReadFile = (path) => ({ ok: false, problem: `no file ${path}` });

async function subject(value: unknown, kind: 'policy' | 'repo-config'): Promise<Subject> {
  const parsed = await subjectOf(value, kind, new PolicySet());
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  return parsed.value;
}

function cases(value: unknown, read: ReadFile = noFiles): TestCase[] {
  const loaded = loadCases(value, read);
  if (!loaded.ok) throw new Error(loaded.problems.join('\n'));
  return loaded.value;
}

describe('policy files', () => {
  it('reads YAML and JSON, refusing duplicate keys in both with the place named', () => {
    expect(parseDocument('name: a\nconfig: {}\n', 'p.yml')).toEqual({
      ok: true,
      value: { name: 'a', config: {} },
    });
    expect(parseDocument('{"name":"a","config":{}}', 'p.json')).toEqual({
      ok: true,
      value: { name: 'a', config: {} },
    });
    const yaml = parseDocument('name: a\nconfig: {}\nname: b\n', 'p.yaml');
    expect(yaml).toEqual({
      ok: false,
      problems: ['(root): not valid YAML (line 3, column 1): Map keys must be unique'],
    });
    const json = parseDocument('{"name":"a","name":"b"}', 'p.json');
    expect(json.ok).toBe(false);
    expect((json as { problems: string[] }).problems[0]).toMatch(/^\(root\): .*"name"/);
  });

  it('tells a policy from a .github/svc.yml by its members, and refuses to guess', () => {
    expect(detectKind({ name: 'p', config: {} }, 'p.yml')).toBe('policy');
    expect(detectKind({ policy: 'strict', agents: ['x'] }, 'whatever.yml')).toBe('repo-config');
    expect(detectKind(null, '.github/svc.yml')).toBe('repo-config');
    expect(detectKind({}, 'repo/.github/svc.yaml')).toBe('repo-config');
    expect(detectKind({ config: {}, agents: [] }, 'x.yml')).toEqual({
      problem: expect.stringContaining(
        'members of a policy (config) and of .github/svc.yml (agents)',
      ),
    });
    expect(detectKind(null, 'empty.yml')).toEqual({
      problem: expect.stringContaining('--kind policy|repo-config'),
    });
    expect(detectKind({ hello: 1 }, 'x.yml')).toEqual({
      problem: expect.stringContaining('--kind policy|repo-config'),
    });
  });

  it('names every problem of an invalid policy as path: message', async () => {
    const parsed = await subjectOf(
      { name: 'Prod!', config: { minConfidence: 2, bogus: true }, overrides: 'sometimes' },
      'policy',
      new PolicySet(),
    );
    expect(parsed).toEqual({
      ok: false,
      problems: [
        'name: must be 1-64 characters of a-z, 0-9, ".", "_" or "-", starting with a letter or digit',
        'config.minConfidence: Too big: expected number to be <=1',
        'config: Unrecognized key: "bogus"',
        'overrides: Invalid option: expected one of "any"|"tighten"|"none"',
      ],
    });
  });

  it('refuses a built-in name, as POST /v1/policies would', async () => {
    const parsed = await subjectOf({ name: 'strict', config: {} }, 'policy', new PolicySet());
    expect(parsed).toEqual({
      ok: false,
      problems: [
        'name: "strict" is a built-in policy; POST /v1/policies would answer 409 policy_conflict',
      ],
    });
  });

  it('gives a valid policy its effective config and the config_hash of it', async () => {
    const s = await subject(
      { name: 'production', config: { minSources: 2, requireHumanApproval: true } },
      'policy',
    );
    if (s.kind === 'repo-config') throw new Error('a policy');
    expect(s.view.effective).toEqual({
      minSources: 2,
      minSourceTypes: 1,
      minConfidence: 0.5,
      requireProvenance: false,
      requireReplay: true,
      requireHumanApproval: true,
      maxRiskScope: 5,
    });
    expect(s.view.overrides).toBe('tighten');
    expect(s.view.config_hash).toBe(hashCanonical(s.view.effective));
  });

  it('applies a .github/svc.yml policyConfig under its policy, refusing what the policy forbids', async () => {
    const tightened = await subject(
      { policy: 'strict', policyConfig: { minConfidence: 0.9 } },
      'repo-config',
    );
    if (tightened.kind !== 'repo-config') throw new Error('a repo config');
    expect(tightened.effective).toMatchObject({ ok: true, name: 'strict' });
    expect((tightened.effective as { config: object }).config).toMatchObject({
      minConfidence: 0.9,
      minSources: 2,
    });
    const loosened = await subject(
      { policy: 'strict', policyConfig: { minConfidence: 0.1 } },
      'repo-config',
    );
    if (loosened.kind !== 'repo-config') throw new Error('a repo config');
    expect(loosened.effective).toEqual({
      ok: false,
      name: 'strict',
      code: 'policy_override_refused',
      message:
        'policyConfig.minConfidence: policy "strict" allows only stricter values here (at least 0.8); got 0.1',
    });
    const unknown = await subject({ policy: 'acme-prod' }, 'repo-config');
    expect(unknown.kind === 'repo-config' && unknown.effective).toBeNull();
  });
});

describe('cases files', () => {
  it('names every problem of every case, with the path into the file', () => {
    const loaded = loadCases(
      {
        cases: [
          { name: 'a', claim: claim(source('s', 'ci', 2)), expect: { verdict: 'ALLOWED' } },
          { name: 'b', claim: claim(source('s', 'ci')), pull_request: 'pr.yml', expect: {} },
          { name: 'a', claim_file: 'missing.json', expect: { verdict: 'MAYBE' } },
          { name: 'c', pull_request: { pr: {} }, expect: { error: 'x', verdict: 'ALLOWED' } },
        ],
      },
      noFiles,
    );
    expect(loaded).toEqual({
      ok: false,
      problems: [
        'cases.1.expect: must name a verdict (ALLOWED, BLOCKED, ESCALATED, NOT_GATED) or an error code',
        'cases.1: needs exactly one of claim, claim_file or pull_request; got claim, pull_request',
        'cases.2.expect.verdict: Invalid option: expected one of "ALLOWED"|"BLOCKED"|"ESCALATED"|"NOT_GATED"',
        'cases.3.expect.verdict: an evaluation that answers an error has none',
      ],
    });
    expect(
      loadCases(
        [
          { name: 'a', claim: claim(source('s', 'ci')), expect: { verdict: 'ALLOWED' } },
          { name: 'a', claim: claim(source('s', 'ci')), expect: { verdict: 'BLOCKED' } },
        ],
        noFiles,
      ),
    ).toEqual({ ok: false, problems: ['cases.1.name: "a" names another case too'] });
    expect(loadCases({ cases: [] }, noFiles)).toEqual({
      ok: false,
      problems: ['cases: must hold at least 1 case'],
    });
    // Once the file's shape is right, each case's input is read and validated in turn.
    const inputs = loadCases(
      [
        { name: 'a', claim: claim(source('s', 'ci', 2)), expect: { verdict: 'ALLOWED' } },
        { name: 'b', claim_file: 'missing.json', expect: { verdict: 'ALLOWED' } },
        { name: 'c', pull_request: { pr: { number: 0 } }, expect: { verdict: 'ALLOWED' } },
      ],
      noFiles,
    );
    expect(inputs.ok).toBe(false);
    const problems = (inputs as { problems: string[] }).problems;
    expect(problems).toContain(
      'cases.0.claim.sources.0.confidence: Too big: expected number to be <=1',
    );
    expect(problems).toContain('cases.1.claim_file: no file missing.json');
    expect(problems).toContain(
      'cases.2.pull_request.pr.number: Too small: expected number to be >0',
    );
    expect(problems).toContain(
      'cases.2.pull_request.pr.repository: Invalid input: expected string, received undefined',
    );
  });

  it('reads claim and pull request files through the reader, and a case names its own claim_id', () => {
    const files: Record<string, string> = {
      'claims/deploy.json': JSON.stringify(claim(source('ci', 'ci'))),
      'prs/7.yml': JSON.stringify(recordedPr('dependabot[bot]')),
    };
    const read: ReadFile = (path) =>
      path in files ? { ok: true, text: files[path]! } : { ok: false, problem: 'absent' };
    const loaded = cases(
      [
        { name: 'from a file', claim_file: 'claims/deploy.json', expect: { verdict: 'ALLOWED' } },
        { name: 'a pull request', pull_request: 'prs/7.yml', expect: { verdict: 'ALLOWED' } },
      ],
      read,
    );
    expect(loaded[0]!.input).toEqual({
      claim: { claim_id: 'test:from a file', ...claim(source('ci', 'ci')) },
    });
    expect(loaded[1]!.input).toMatchObject({
      pullRequest: { pr: { number: 7 }, humanOperator: null, involved: [], host: 'github.com' },
    });
  });
});

describe('diffs', () => {
  const outcome: CaseOutcome = {
    verdict: 'BLOCKED',
    admissibility: 'REJECTED',
    reason: 'Blocked: min_sources (1 admissible source, minimum 2)',
    admissibility_reason: 'verdict BLOCKED: a policy rule failed',
    rules: [
      { rule: 'min_sources', passed: false, reason: '1 admissible source, minimum 2' },
      { rule: 'min_confidence', passed: true, reason: 'average confidence 0.9, minimum 0.5' },
      { rule: 'rule:docs-only', passed: true, reason: 'only docs changed' },
    ],
    policy: 'p',
    config_hash: 'sha256:x',
    claim_id: 'c',
  };

  it('is empty when everything expected holds', () => {
    expect(
      diffCase(
        {
          verdict: 'BLOCKED',
          admissibility: 'REJECTED',
          rules: { min_sources: 'fail', min_confidence: 'pass', 'docs-only': 'pass' },
        },
        outcome,
      ),
    ).toEqual([]);
  });

  it("names the verdict and each rule that differs, with the evaluation's reason", () => {
    expect(
      diffCase(
        {
          verdict: 'ALLOWED',
          admissibility: 'ACCEPTED',
          rules: {
            min_sources: 'pass',
            min_confidence: 'pass',
            'rule:docs-only': 'fail',
            typo: 'pass',
          },
        },
        outcome,
      ),
    ).toEqual([
      { path: 'verdict', expected: 'ALLOWED', actual: 'BLOCKED', detail: outcome.reason },
      {
        path: 'admissibility',
        expected: 'ACCEPTED',
        actual: 'REJECTED',
        detail: 'verdict BLOCKED: a policy rule failed',
      },
      {
        path: 'rules.min_sources',
        expected: 'pass',
        actual: 'fail',
        detail: '1 admissible source, minimum 2',
      },
      {
        path: 'rules.rule:docs-only',
        expected: 'fail',
        actual: 'pass',
        detail: 'only docs changed',
      },
      {
        path: 'rules.typo',
        expected: 'pass',
        actual: 'absent',
        detail:
          'the evaluation has no rule "typo"; its rules: min_sources, min_confidence, rule:docs-only',
      },
    ]);
  });

  it('prints each difference under its case, a conditional rule by its own name', async () => {
    const strict = (await builtinSubject('strict', new PolicySet()))!;
    const expected = { verdict: 'BLOCKED' as const, rules: { 'rule:docs-only': 'fail' as const } };
    const differences = diffCase(expected, outcome);
    const lines = renderResults(strict, [
      { name: 'docs', passed: false, expected, actual: outcome, differences },
    ]);
    expect(lines.slice(1)).toEqual([
      'FAIL  docs',
      '      rule docs-only: expected fail, got pass',
      '        only docs changed',
      '0 passed, 1 failed (1 case)',
    ]);
  });

  it('compares errors with errors, and a verdict with an error', () => {
    const refused: CaseOutcome = { error: 'policy_override_refused', message: 'no', policy: 'p' };
    expect(diffCase({ error: 'policy_override_refused' }, refused)).toEqual([]);
    expect(diffCase({ verdict: 'ALLOWED' }, refused)).toEqual([
      {
        path: 'verdict',
        expected: 'ALLOWED',
        actual: 'error policy_override_refused',
        detail: 'no',
      },
    ]);
    expect(diffCase({ error: 'policy_override_refused' }, outcome)).toEqual([
      {
        path: 'error',
        expected: 'policy_override_refused',
        actual: 'BLOCKED',
        detail: outcome.reason,
      },
    ]);
  });
});

describe('evaluating cases', () => {
  it('evaluates a claim under the tested policy, with its policyConfig as far as overrides allow', async () => {
    const s = await subject({ name: 'production', config: { minSources: 2 } }, 'policy');
    const results = await runCases(
      s,
      cases([
        {
          name: 'two sources',
          claim: claim(source('a', 'ci'), source('b', 'scm')),
          expect: { verdict: 'ALLOWED' },
        },
        { name: 'one source', claim: claim(source('a', 'ci')), expect: { verdict: 'ALLOWED' } },
        {
          name: 'looser',
          claim: { ...claim(source('a', 'ci')), policyConfig: { minSources: 1 } },
          expect: { error: 'policy_override_refused' },
        },
        {
          name: 'names another policy',
          claim: { ...claim(source('a', 'ci')), policy: 'permissive' },
          expect: { verdict: 'BLOCKED', rules: { min_sources: 'fail' } },
        },
      ]),
    );
    expect(results.map((r) => [r.name, r.passed])).toEqual([
      ['two sources', true],
      ['one source', false],
      ['looser', true],
      ['names another policy', true],
    ]);
    expect(results[0]!.actual).toMatchObject({
      policy: 'production',
      claim_id: 'test:two sources',
      config_hash: s.kind !== 'repo-config' && s.view.config_hash,
    });
    const lines = renderResults(s, results);
    expect(lines[0]).toBe(
      `Testing policy "production", config_hash ${s.kind !== 'repo-config' && s.view.config_hash}`,
    );
    expect(lines).toContain('FAIL  one source');
    expect(lines).toContain('      verdict: expected ALLOWED, got BLOCKED');
    expect(lines.at(-1)).toBe('3 passed, 1 failed (4 cases)');
  });

  it('refuses a claim whose own rules take too long to match, as the service does', async () => {
    const s = await subject({ name: 'production', config: {}, overrides: 'any' }, 'policy');
    const globs = Array.from({ length: 100 }, (_, i) => `*a*a*a*a*a*a*a*a*${i}`);
    const [heavy] = cases([
      {
        name: 'heavy',
        claim: {
          ...claim(source('a', 'ci')),
          action: {
            action_type: 'merge',
            target_system: 'github',
            changed_paths: Array.from(
              { length: 300 },
              (_, i) => `${'a'.repeat(1000)}${'z'.repeat(1 + (i % 5))}`,
            ),
          },
          policyConfig: {
            rules: [{ name: 'heavy', if: { paths: globs }, require: { checks: ['ci'] } }],
          },
        },
        expect: { error: 'rule_budget_exceeded' },
      },
    ]);
    const outcome = await evaluateCase(s, heavy!);
    expect(outcome).toMatchObject({ error: 'rule_budget_exceeded', policy: 'production' });
    expect((outcome as { message: string }).message).toMatch(/^policyConfig\.rules: /);
  });

  it("builds a recorded pull request's claim as the App does, and leaves a human's ungated", async () => {
    const repo = await subject({ policy: 'default', agents: ['*[bot]'] }, 'repo-config');
    const [bot, human] = cases([
      { name: 'bot', pull_request: recordedPr('dependabot[bot]'), expect: { verdict: 'ALLOWED' } },
      { name: 'human', pull_request: recordedPr('octocat'), expect: { verdict: 'NOT_GATED' } },
    ]);
    const botOutcome = await evaluateCase(repo, bot!);
    expect(botOutcome).toMatchObject({ verdict: 'ALLOWED', policy: 'default' });
    expect((botOutcome as { claim_id: string }).claim_id).toMatch(
      /^gh:acme\/web#7@a{40}:[0-9a-f]{16}$/,
    );
    expect(await evaluateCase(repo, human!)).toMatchObject({
      verdict: 'NOT_GATED',
      reason: expect.stringContaining('@octocat is not one of the agents'),
    });
    const gated = await subject({ policy: 'strict', gate_humans: true }, 'repo-config');
    // strict wants a human approval, which this pull request lacks: a human decides.
    expect(await evaluateCase(gated, human!)).toMatchObject({
      verdict: 'ESCALATED',
      policy: 'strict',
    });
  });
});

describe('conditional rules', () => {
  const docsRules = [
    { name: 'docs-ci', if: { only_paths: ['docs/**', '**/*.md'] }, require: { checks: ['ci'] } },
    {
      name: 'code-review',
      if: { paths: ['!docs/**', '!**/*.md'] },
      require: { approvals: { count: 1 } },
      on_fail: 'escalate',
    },
  ];
  const change = (paths: string[], ci: string, approvals: unknown[] = []) => ({
    ...claim(source('ci', 'ci')),
    action: {
      action_type: 'merge',
      target_system: 'github',
      changed_paths: paths,
      checks: [{ name: 'ci', status: 'completed', conclusion: ci }],
      approvals,
    },
  });
  const docsCases = [
    {
      name: 'docs with green CI',
      claim: change(['docs/guide.md', 'README.md'], 'success'),
      expect: { verdict: 'ALLOWED', rules: { 'docs-ci': 'pass', 'code-review': 'pass' } },
    },
    {
      name: 'docs with red CI',
      claim: change(['docs/guide.md'], 'failure'),
      expect: { verdict: 'BLOCKED', rules: { 'rule:docs-ci': 'fail' } },
    },
    {
      name: 'code without a review',
      claim: change(['src/app.ts', 'docs/guide.md'], 'success'),
      expect: { verdict: 'ESCALATED', rules: { 'docs-ci': 'pass', 'code-review': 'fail' } },
    },
    {
      name: 'code with a review',
      claim: change(['src/app.ts'], 'success', [{ user: 'alice', permission: 'write' }]),
      expect: { verdict: 'ALLOWED', rules: { 'code-review': 'pass' } },
    },
  ];

  it("evaluates a policy file's rules, each named in receipts as rule:<name>", async () => {
    const s = await subject({ name: 'docs-only', config: { rules: docsRules } }, 'policy');
    if (s.kind === 'repo-config') throw new Error('a policy');
    expect(s.view.effective).toMatchObject({
      minSources: 1,
      rules: [
        { name: 'docs-ci', on_fail: 'block' },
        { name: 'code-review', on_fail: 'escalate' },
      ],
    });
    expect(s.view.config_hash).toBe(hashCanonical(s.view.effective));
    const results = await runCases(s, cases(docsCases));
    expect(results.map((r) => [r.name, r.passed, r.differences])).toEqual(
      docsCases.map((c) => [c.name, true, []]),
    );
    const outcome = results[2]!.actual as Extract<CaseOutcome, { rules: unknown }>;
    expect(outcome.rules.map((r) => r.rule).slice(6)).toEqual(['rule:docs-ci', 'rule:code-review']);
  });

  it("adds a .github/svc.yml's rules to the policy it names, and names invalid rules", async () => {
    const repo = await subject({ policy: 'default', rules: docsRules }, 'repo-config');
    if (repo.kind !== 'repo-config' || !repo.effective?.ok) throw new Error('resolved');
    expect(repo.effective.config).toMatchObject({
      rules: [{ name: 'docs-ci' }, { name: 'code-review' }],
    });
    const results = await runCases(repo, cases(docsCases));
    expect(results.every((r) => r.passed)).toBe(true);

    const invalid = await subjectOf(
      { name: 'p', config: { rules: [{ name: 'r', require: { approvals: { count: 0 } } }] } },
      'policy',
      new PolicySet(),
    );
    expect(invalid.ok).toBe(false);
    expect((invalid as { problems: string[] }).problems).toEqual([
      expect.stringMatching(/^config\.rules\.0\.require\.approvals\.count: /),
    ]);
  });
});

describe('recorded pull requests with the facts rules read', () => {
  const platform = {
    policy: 'default',
    agents: ['*[bot]'],
    rules: [
      {
        name: 'platform-review',
        if: { paths: ['.github/workflows/**', 'infra/**'] },
        require: { approvals: { count: 2, from: { teams: ['@acme/platform'] } } },
      },
    ],
  };
  const review = (reviewer: string) => ({
    reviewer,
    reviewerType: 'User',
    state: 'APPROVED',
    commitId: 'a'.repeat(40),
    submittedAt: '2026-11-01T10:06:00Z',
    url: `https://github.com/acme/web/pull/7#review-${reviewer}`,
    permission: 'write',
  });
  const withFacts = (paths: string[], teams: Record<string, string[]>) => ({
    ...recordedPr('renovate[bot]', [review('alice'), review('bob')]),
    facts: {
      files: { files: paths.map((filename) => ({ filename })), total: paths.length },
      commits: [{ author: 'renovate[bot]', committer: 'web-flow' }],
      codeOwners: null,
      teams,
    },
  });

  it('meets path conditions and team approvals as the App would', async () => {
    const repo = await subject(platform, 'repo-config');
    const both = { alice: ['acme/platform'], Bob: ['acme/platform'] };
    const [infra, docs, short] = cases([
      {
        name: 'infra',
        pull_request: withFacts(['infra/main.tf'], both),
        expect: { verdict: 'ALLOWED' },
      },
      { name: 'docs', pull_request: withFacts(['docs/a.md'], {}), expect: { verdict: 'ALLOWED' } },
      {
        name: 'one member',
        pull_request: withFacts(['infra/main.tf'], { alice: ['acme/platform'] }),
        expect: { verdict: 'BLOCKED' },
      },
    ]);
    const ruleOf = (outcome: CaseOutcome) =>
      (outcome as { rules: { rule: string; passed: boolean; reason: string }[] }).rules.find(
        (r) => r.rule === 'rule:platform-review',
      );
    expect(ruleOf(await evaluateCase(repo, infra!))).toMatchObject({ passed: true });
    expect(ruleOf(await evaluateCase(repo, docs!))).toMatchObject({ passed: true });
    expect(ruleOf(await evaluateCase(repo, docs!))!.reason).toMatch(/not|appl/i);
    const failed = await evaluateCase(repo, short!);
    expect(failed).toMatchObject({ verdict: 'BLOCKED' });
    expect(ruleOf(failed)).toMatchObject({ passed: false });
  });

  it('refuses facts it does not know', () => {
    const loaded = loadCases(
      [
        {
          name: 'x',
          pull_request: { ...withFacts([], {}), facts: { files: {} } },
          expect: { verdict: 'ALLOWED' },
        },
      ],
      noFiles,
    );
    expect(loaded.ok).toBe(false);
  });
});
