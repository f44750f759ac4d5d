import { describe, expect, it } from '@jest/globals';
import { hashCanonical } from '@svc/verify';
import { formatIssues, type ClaimInput } from '../../../src/core/claim-schema.js';
import { isSvcError } from '../../../src/core/errors.js';
import { evaluateClaim } from '../../../src/core/evaluation.js';
import { evaluatePolicy, type PolicyOutcome } from '../../../src/core/policy.js';
import {
  DEFAULT_POLICY,
  policyConfigSchema,
  resolvePolicy,
  type PolicyConfig,
} from '../../../src/core/policy-config.js';
import { applyOverrides, type OverrideMode } from '../../../src/core/policy-overrides.js';
import { claimDoing, claimWith, source } from '../../support/claims.js';
import { RULE_ORDER } from '../../../src/core/rules/threshold-rules.js';

/** A policy of the defaults and these rules, validated as POST /v1/policies would. */
const policyWith = (...rules: unknown[]): PolicyConfig =>
  resolvePolicy(policyConfigSchema.parse({ rules }));

const rule = (extra: Record<string, unknown>) => ({
  name: 'r',
  require: { source_types: ['ci'] },
  ...extra,
});

const outcomeOf = (claim: ClaimInput, config: PolicyConfig) => evaluatePolicy(claim, config);
const ruleR = (outcome: PolicyOutcome, name = 'rule:r') => {
  const found = outcome.rules.find((r) => r.rule === name);
  if (!found) throw new Error(`${name} missing`);
  return found;
};

// A rule that applies fails here: the harness claim has no human_approval source.
const failsWhenApplied = (conditions: Record<string, unknown>) =>
  policyWith(rule({ if: conditions, require: { source_types: ['human_approval'] } }));

describe('conditional rules: conditions', () => {
  const cases: [
    string,
    Record<string, unknown>,
    Record<string, unknown>,
    Record<string, unknown>,
  ][] = [
    // name, condition, action that matches, action that does not
    ['action_type', { action_type: 'deployment' }, { action_type: 'deployment' }, {}],
    [
      'action_type (list)',
      { action_type: ['deployment', 'infra_change'] },
      { action_type: 'infra_change' },
      { action_type: 'merge' },
    ],
    [
      'environment (case-insensitive)',
      { environment: 'production' },
      { environment: 'Production' },
      { environment: 'staging' },
    ],
    ['environment (absent)', { environment: 'production' }, { environment: 'production' }, {}],
    [
      'target_system',
      { target_system: ['github', 'gitlab'] },
      { target_system: 'GitHub' },
      { target_system: 'iam' },
    ],
    [
      'repository (glob)',
      { repository: 'acme/*' },
      { repository: 'Acme/web' },
      { repository: 'other/web' },
    ],
    [
      'branch (glob, case-sensitive)',
      { branch: ['main', 'release/**'] },
      { branch: 'release/2026/1' },
      { branch: 'Main' },
    ],
    ['agent (glob)', { agent: '*' }, { agent: 'coder-bot' }, { agent: undefined }],
    ['agent (named)', { agent: 'coder-*' }, { agent: 'coder-bot' }, { agent: 'deploy-bot' }],
    ['author (glob)', { author: '*[bot]' }, { author: 'renovate[bot]' }, { author: 'alice' }],
    [
      'labels (any of, case-insensitive)',
      { labels: ['security', 'infra'] },
      { labels: ['docs', 'Infra'] },
      { labels: ['docs'] },
    ],
    [
      'risk_scope (contains any)',
      { risk_scope: ['payments', 'auth'] },
      { risk_scope: ['auth'] },
      { risk_scope: ['ui'] },
    ],
    [
      'paths (some changed path)',
      { paths: ['.github/workflows/**', 'infra/**'] },
      { changed_paths: ['src/a.ts', '.github/workflows/ci.yml'] },
      { changed_paths: ['src/a.ts', '.github/CODEOWNERS'] },
    ],
    [
      'paths (dotfiles under a **)',
      { paths: 'infra/**' },
      { changed_paths: ['infra/.terraform.lock.hcl'] },
      { changed_paths: ['infrastructure/main.tf'] },
    ],
    [
      'paths (incomplete list applies, fail closed)',
      { paths: 'infra/**' },
      { changed_paths: ['src/a.ts'], changed_paths_incomplete: true },
      { changed_paths: ['src/a.ts'] },
    ],
    [
      'paths (only "!" patterns: some path outside them)',
      { paths: ['!docs/**', '!**/*.md'] },
      { changed_paths: ['docs/a.md', 'src/a.ts'] },
      { changed_paths: ['docs/a.md', 'README.md', 'src/b.md'] },
    ],
    [
      'paths ("!" excludes from the others)',
      { paths: ['infra/**', '!infra/docs/**'] },
      { changed_paths: ['infra/docs/a.md', 'infra/main.tf'] },
      { changed_paths: ['infra/docs/a.md'] },
    ],
    [
      'repository ("!" excludes)',
      { repository: ['acme/*', '!acme/sandbox'] },
      { repository: 'acme/web' },
      { repository: 'acme/sandbox' },
    ],
    [
      'only_paths (every changed path)',
      { only_paths: ['docs/**', '**/*.md'] },
      { changed_paths: ['docs/guide.md', 'README.md', 'src/notes.md'] },
      { changed_paths: ['docs/guide.md', 'src/a.ts'] },
    ],
    [
      'only_paths (empty list does not match)',
      { only_paths: 'docs/**' },
      { changed_paths: ['docs/a.md'] },
      { changed_paths: [] },
    ],
    [
      'only_paths (incomplete list does not match)',
      { only_paths: 'docs/**' },
      { changed_paths: ['docs/a.md'] },
      { changed_paths: ['docs/a.md'], changed_paths_incomplete: true },
    ],
  ];

  it.each(cases)(
    '%s: applies when it matches, passes as not applying when not',
    (_, condition, yes, no) => {
      const config = failsWhenApplied(condition);
      const applied = ruleR(outcomeOf(claimDoing(yes), config));
      expect(applied).toEqual({
        rule: 'rule:r',
        passed: false,
        reason: 'applies; admissible source types missing: human_approval',
      });
      const skipped = ruleR(outcomeOf(claimDoing(no), config));
      expect(skipped.passed).toBe(true);
      expect(skipped.reason).toMatch(/^does not apply: /);
    },
  );

  it('says why a rule does not apply', () => {
    const reason = (condition: Record<string, unknown>, action: Record<string, unknown>) =>
      ruleR(outcomeOf(claimDoing(action), failsWhenApplied(condition))).reason;
    expect(reason({ environment: 'production' }, { environment: 'staging' })).toBe(
      'does not apply: environment "staging" is not "production"',
    );
    expect(reason({ environment: 'production' }, {})).toBe(
      'does not apply: the claim has no environment',
    );
    expect(reason({ paths: ['infra/**', 'ops/**'] }, { changed_paths: ['src/a.ts'] })).toBe(
      'does not apply: no changed path matches infra/**, ops/**',
    );
    expect(reason({ only_paths: 'docs/**' }, { changed_paths: ['docs/a.md', 'src/b.ts'] })).toBe(
      'does not apply: 1 changed path outside docs/** ("src/b.ts")',
    );
    expect(reason({ only_paths: 'docs/**' }, {})).toBe(
      'does not apply: the claim lists no changed paths',
    );
    expect(reason({ branch: 'main' }, { branch: 'dev' })).toBe(
      'does not apply: branch "dev" matches none of main',
    );
  });

  it('applies only when every condition matches', () => {
    const config = failsWhenApplied({ action_type: 'deployment', environment: 'production' });
    expect(
      ruleR(outcomeOf(claimDoing({ action_type: 'deployment', environment: 'production' }), config))
        .passed,
    ).toBe(false);
    expect(
      ruleR(outcomeOf(claimDoing({ action_type: 'deployment', environment: 'staging' }), config))
        .passed,
    ).toBe(true);
    expect(
      ruleR(outcomeOf(claimDoing({ action_type: 'merge', environment: 'production' }), config))
        .passed,
    ).toBe(true);
  });

  it('a rule without conditions always applies', () => {
    expect(ruleR(outcomeOf(claimWith(), failsWhenApplied({}))).passed).toBe(false);
  });
});

describe('conditional rules: approvals', () => {
  const approvalsRule = (approvals: Record<string, unknown>) =>
    policyWith(rule({ require: { approvals } }));
  const withApprovals = (approvals: unknown[], extra: Record<string, unknown> = {}) =>
    claimDoing({ author: 'alice', committers: ['alice', 'carol'], approvals, ...extra });
  const passes = (config: PolicyConfig, claim: ClaimInput) =>
    ruleR(outcomeOf(claim, config)).passed;

  it('counts distinct people against count', () => {
    const config = approvalsRule({ count: 2 });
    expect(passes(config, withApprovals([{ user: 'bob' }, { user: 'dave' }]))).toBe(true);
    expect(passes(config, withApprovals([{ user: 'bob' }, { user: 'Bob' }]))).toBe(false);
    expect(
      ruleR(outcomeOf(withApprovals([{ user: 'bob' }, { user: 'dave' }]), config)).reason,
    ).toBe('applies; 2 approvals (bob, dave), 2 required');
  });

  it('count defaults to 1 and is filled into the effective config', () => {
    const config = approvalsRule({});
    expect(config.rules![0]!.require.approvals).toEqual({ count: 1 });
    expect(config.rules![0]!.on_fail).toBe('block');
    expect(config.rules![0]!.if).toEqual({});
    expect(passes(config, withApprovals([]))).toBe(false);
    expect(passes(config, withApprovals([{ user: 'bob' }]))).toBe(true);
  });

  it.each([
    ['the agent', { user: 'coder-bot' }],
    ['the author', { user: 'Alice' }],
    ['a committer', { user: 'carol' }],
    ['the human operator', { user: 'oscar' }],
    ['a Bot', { user: 'copilot', kind: 'Bot' }],
    ['read permission', { user: 'erin', permission: 'read' }],
    ['triage permission', { user: 'erin', permission: 'triage' }],
  ])('never counts an approval by %s', (_, approval) => {
    const claim = withApprovals([approval], { agent: 'coder-bot', human_operator: 'oscar' });
    const result = ruleR(outcomeOf(claim, approvalsRule({ count: 1 })));
    expect(result.passed).toBe(false);
    expect(result.reason).toMatch(/^applies; 0 approvals, 1 required \(not counted: /);
  });

  it.each(['write', 'maintain', 'admin'])('counts an approver with %s permission', (permission) => {
    expect(passes(approvalsRule({}), withApprovals([{ user: 'bob', permission }]))).toBe(true);
  });

  it('counts an explicit User kind, and an approval without a permission', () => {
    expect(passes(approvalsRule({}), withApprovals([{ user: 'bob', kind: 'User' }]))).toBe(true);
  });

  it('from.users and from.teams name who counts (with or without "@")', () => {
    const config = approvalsRule({
      count: 2,
      from: { users: ['@dave'], teams: ['@acme/platform'] },
    });
    const ok = withApprovals([
      { user: 'bob', teams: ['acme/platform'] },
      { user: 'dave' },
      { user: 'frank', teams: ['acme/web'] },
    ]);
    expect(ruleR(outcomeOf(ok, config))).toEqual({
      rule: 'rule:r',
      passed: true,
      reason: 'applies; 2 approvals from @dave, @acme/platform (bob, dave), 2 required',
    });
    const short = withApprovals([{ user: 'bob', teams: ['ACME/Platform'] }, { user: 'frank' }]);
    expect(passes(config, short)).toBe(false);
  });

  it('a team member who is also the author does not count', () => {
    const config = approvalsRule({ from: { teams: ['acme/platform'] } });
    expect(passes(config, withApprovals([{ user: 'alice', teams: ['acme/platform'] }]))).toBe(
      false,
    );
  });

  describe('code_owners', () => {
    const config = approvalsRule({ from: { code_owners: true } });
    const owned = (approvals: unknown[], extra: Record<string, unknown> = {}) =>
      withApprovals(approvals, {
        changed_paths: ['infra/main.tf', 'src/a.ts', 'README.md'],
        code_owners: [
          { path: 'infra/main.tf', owners: ['@acme/platform'] },
          { path: 'src/a.ts', owners: ['@dave', 'ops@acme.example'] },
        ],
        ...extra,
      });

    it('every owned path needs an approval from one of its owners; unowned paths need none', () => {
      const ok = owned([{ user: 'bob', teams: ['acme/platform'] }, { user: 'dave' }]);
      expect(ruleR(outcomeOf(ok, config))).toEqual({
        rule: 'rule:r',
        passed: true,
        reason: 'applies; code owner approval: 2 owned paths, each with 1 approving owner',
      });
      const missing = ruleR(outcomeOf(owned([{ user: 'dave' }]), config));
      expect(missing.passed).toBe(false);
      expect(missing.reason).toBe(
        'applies; code owner approval: 1 path without 1 approving owner: infra/main.tf (@acme/platform)',
      );
    });

    it('an owner who wrote or committed the change does not count, nor an e-mail owner', () => {
      const authored = owned([{ user: 'bob', teams: ['acme/platform'] }, { user: 'dave' }], {
        committers: ['dave'],
      });
      expect(passes(config, authored)).toBe(false);
      const byEmail = withApprovals([{ user: 'ops@acme.example' }], {
        code_owners: [{ path: 'a', owners: ['ops@acme.example'] }],
      });
      expect(passes(config, byEmail)).toBe(false);
    });

    it('count applies per path', () => {
      const two = approvalsRule({ count: 2, from: { code_owners: true } });
      const claim = withApprovals([{ user: 'bob', teams: ['acme/platform'] }, { user: 'dave' }], {
        code_owners: [{ path: 'infra/x', owners: ['@acme/platform', '@dave'] }],
      });
      expect(passes(two, claim)).toBe(true);
      expect(
        passes(
          two,
          withApprovals([{ user: 'dave' }], {
            code_owners: [{ path: 'infra/x', owners: ['@acme/platform', '@dave'] }],
          }),
        ),
      ).toBe(false);
    });

    it('fails closed when the changed paths are incomplete', () => {
      const result = ruleR(
        outcomeOf(
          owned([{ user: 'bob', teams: ['acme/platform'] }, { user: 'dave' }], {
            changed_paths_incomplete: true,
          }),
          config,
        ),
      );
      expect(result.passed).toBe(false);
      expect(result.reason).toMatch(/the changed paths are incomplete/);
    });

    it('with no owned path and no users or teams, nothing more is required', () => {
      expect(passes(config, withApprovals([], { changed_paths: ['x'] }))).toBe(true);
    });
  });
});

describe('conditional rules: checks, source types and thresholds', () => {
  const checksRule = policyWith(rule({ require: { checks: ['build', 'deploy-check'] } }));
  const withChecks = (checks: unknown[]) => claimDoing({ checks });

  it('passes when each named check completed with success, neutral or skipped', () => {
    for (const conclusion of ['success', 'neutral', 'skipped']) {
      const claim = withChecks([
        { name: 'build', status: 'completed', conclusion: 'success' },
        { name: 'deploy-check', status: 'completed', conclusion },
      ]);
      expect(ruleR(outcomeOf(claim, checksRule))).toEqual({
        rule: 'rule:r',
        passed: true,
        reason: 'applies; checks passed: build, deploy-check',
      });
    }
  });

  it.each([
    [
      'missing',
      [{ name: 'build', status: 'completed', conclusion: 'success' }],
      'deploy-check (missing)',
    ],
    [
      'in progress',
      [{ name: 'deploy-check', status: 'in_progress' }],
      'deploy-check (in_progress)',
    ],
    [
      'failed',
      [{ name: 'deploy-check', status: 'completed', conclusion: 'failure' }],
      'deploy-check (failure)',
    ],
    [
      'cancelled',
      [{ name: 'deploy-check', status: 'completed', conclusion: 'cancelled' }],
      'deploy-check (cancelled)',
    ],
    [
      'failed beside a passing run',
      [
        { name: 'deploy-check', status: 'completed', conclusion: 'success' },
        { name: 'deploy-check', status: 'completed', conclusion: 'failure' },
      ],
      'deploy-check (failure)',
    ],
  ])('fails when a check is %s', (_, checks, problem) => {
    const all = [{ name: 'build', status: 'completed', conclusion: 'success' }, ...checks];
    const result = ruleR(outcomeOf(withChecks(all), checksRule));
    expect(result.passed).toBe(false);
    expect(result.reason).toContain(problem);
  });

  it('source_types counts admissible sources only', () => {
    const config = policyWith(rule({ require: { source_types: ['ci', 'human_approval'] } }));
    const approved = claimWith({ sources: [source('ci'), source('human_approval')] });
    expect(ruleR(outcomeOf(approved, config)).passed).toBe(true);
    const inadmissible = claimWith({
      sources: [
        source('ci'),
        source('human_approval', 0.9, { admissibility: { state: 'INADMISSIBLE' } }),
      ],
    });
    expect(ruleR(outcomeOf(inadmissible, config))).toEqual({
      rule: 'rule:r',
      passed: false,
      reason: 'applies; admissible source types missing: human_approval',
    });
  });

  it('a threshold field applies for that rule alone, with the registry reason', () => {
    const config = policyWith(
      rule({ if: { action_type: 'deployment' }, require: { minConfidence: 0.95, minSources: 2 } }),
    );
    const deploy = claimDoing({ action_type: 'deployment' }, { sources: [source('ci', 0.9)] });
    const outcome = outcomeOf(deploy, config);
    expect(ruleR(outcome)).toEqual({
      rule: 'rule:r',
      passed: false,
      reason:
        'applies; min_sources: 1 admissible source, minimum 2; min_confidence: average confidence 0.9, minimum 0.95',
    });
    // The policy-wide thresholds are untouched.
    expect(outcome.rules.find((r) => r.rule === 'min_confidence')!.passed).toBe(true);
    expect(ruleR(outcomeOf(claimDoing({}, { sources: [source('ci', 0.9)] }), config)).passed).toBe(
      true,
    );
  });

  it('requireHumanApproval and requireProvenance work per rule', () => {
    const config = policyWith(
      rule({ require: { requireHumanApproval: true, requireProvenance: true } }),
    );
    const result = ruleR(outcomeOf(claimWith({ sources: [source('ci')] }), config));
    expect(result.passed).toBe(false);
    expect(result.reason).toContain('require_human_approval: a human_approval source is required');
    expect(result.reason).toContain('require_provenance: sources without provenance');
  });
});

describe('conditional rules: verdicts and order', () => {
  const failing = (name: string, on_fail?: string) => ({
    name,
    require: { source_types: ['human_approval'] },
    ...(on_fail ? { on_fail } : {}),
  });

  it('lists the six threshold rules first, then rule:<name> in policy order', () => {
    const config = policyWith(
      rule({ name: 'zeta' }),
      rule({ name: 'alpha' }),
      rule({ name: 'mid' }),
    );
    expect(outcomeOf(claimWith(), config).rules.map((r) => r.rule)).toEqual([
      ...RULE_ORDER,
      'rule:zeta',
      'rule:alpha',
      'rule:mid',
    ]);
  });

  it('a failed block rule blocks (the default on_fail)', () => {
    const outcome = outcomeOf(claimWith(), policyWith(failing('needs-human')));
    expect(outcome.verdict).toBe('BLOCKED');
    expect(outcome.reason).toBe(
      'Blocked: rule:needs-human (applies; admissible source types missing: human_approval)',
    );
  });

  it('a failed escalate rule escalates', () => {
    const outcome = outcomeOf(claimWith(), policyWith(failing('needs-human', 'escalate')));
    expect(outcome.verdict).toBe('ESCALATED');
    expect(outcome.reason).toBe(
      'Human review required: rule:needs-human (applies; admissible source types missing: human_approval)',
    );
  });

  it('a failed escalate rule does not soften a block', () => {
    const outcome = outcomeOf(
      claimWith(),
      policyWith(failing('soft', 'escalate'), failing('hard', 'block')),
    );
    expect(outcome.verdict).toBe('BLOCKED');
    expect(outcome.reason).toBe(
      'Blocked: rule:hard (applies; admissible source types missing: human_approval)',
    );
  });

  it('passing rules leave the verdict ALLOWED and are counted', () => {
    const outcome = outcomeOf(claimWith(), policyWith(rule({})));
    expect(outcome.verdict).toBe('ALLOWED');
    expect(outcome.reason).toBe('All 7 policy rules passed');
  });
});

describe('conditional rules: hashes and replay', () => {
  it('a config without rules hashes as before rules existed', () => {
    expect(resolvePolicy({})).not.toHaveProperty('rules');
    expect(resolvePolicy({ rules: [] })).not.toHaveProperty('rules');
    expect(hashCanonical(resolvePolicy({ rules: [] }))).toBe(
      'sha256:54b4cf32f64e773cb17808ea27993bfc8907a5e2b3710db4dea7d36510a47f85',
    );
  });

  it('the rules, with defaults filled, enter config_hash and replay_hash', () => {
    const claim = claimWith();
    const plain = evaluateClaim(claim, resolvePolicy());
    const written = evaluateClaim(claim, policyWith({ name: 'r', require: { approvals: {} } }));
    const explicit = evaluateClaim(
      claim,
      policyWith({ name: 'r', if: {}, require: { approvals: { count: 1 } }, on_fail: 'block' }),
    );
    expect(written.config_hash).not.toBe(plain.config_hash);
    expect(written.config_hash).toBe(explicit.config_hash);
    expect(written.replay.replay_hash).toBe(explicit.replay.replay_hash);
    expect(written.config_hash).toBe(
      hashCanonical({ ...DEFAULT_POLICY, rules: written.config.rules }),
    );
  });

  it('replay reproduces an evaluation with conditional rules', () => {
    const config = policyWith(
      {
        name: 'infra',
        if: { paths: ['infra/**'] },
        require: { approvals: { count: 1, from: { code_owners: true } }, checks: ['plan'] },
      },
      {
        name: 'docs',
        if: { only_paths: 'docs/**' },
        require: { checks: ['lint'] },
        on_fail: 'escalate',
      },
    );
    const claim = claimDoing({
      changed_paths: ['infra/a.tf'],
      code_owners: [{ path: 'infra/a.tf', owners: ['@acme/platform'] }],
      approvals: [{ user: 'bob', teams: ['acme/platform'] }],
      checks: [{ name: 'plan', status: 'completed', conclusion: 'success' }],
    });
    const first = evaluateClaim(claim, config);
    expect(first.replay.deterministic).toBe(true);
    expect(first.policy.verdict).toBe('ALLOWED');
    expect(evaluateClaim(claim, config).replay.replay_hash).toBe(first.replay.replay_hash);
  });
});

describe('conditional rules: validation', () => {
  const problem = (config: unknown) => {
    const parsed = policyConfigSchema.safeParse(config);
    if (parsed.success) throw new Error('expected a validation failure');
    return formatIssues(parsed.error);
  };

  it('names the rule index and field', () => {
    expect(
      problem({
        rules: [
          rule({ name: 'a' }),
          rule({ name: 'b' }),
          { name: 'c', require: { approvals: { count: 0 } } },
        ],
      }),
    ).toBe('rules[2].require.approvals.count: Too small: expected number to be >=1');
  });

  it.each([
    [
      { name: 'Bad Name', require: { checks: ['x'] } },
      /^rules\[0\]\.name: must be 1-63 characters/,
    ],
    [{ name: 'a', require: {} }, /^rules\[0\]\.require: must hold at least one requirement$/],
    [{ name: 'a' }, /^rules\[0\]\.require: /],
    [{ name: 'a', require: { checks: [] } }, /^rules\[0\]\.require\.checks: Too small/],
    [
      { name: 'a', require: { requireReplay: true } },
      /^rules\[0\]\.require: Unrecognized key: "requireReplay"/,
    ],
    [{ name: 'a', require: { minConfidence: 2 } }, /^rules\[0\]\.require\.minConfidence: Too big/],
    [
      { name: 'a', require: { source_types: ['email'] } },
      /^rules\[0\]\.require\.source_types\.0: /,
    ],
    [{ name: 'a', require: { checks: ['x'] }, on_fail: 'warn' }, /^rules\[0\]\.on_fail: /],
    [
      { name: 'a', require: { checks: ['x'] }, if: { path: 'x' } },
      /^rules\[0\]\.if: Unrecognized key: "path"/,
    ],
    [
      { name: 'a', require: { checks: ['x'] }, if: { action_type: 'deploy' } },
      /^rules\[0\]\.if\.action_type: /,
    ],
    [{ name: 'a', require: { checks: ['x'] }, if: { paths: [] } }, /^rules\[0\]\.if\.paths: /],
    [{ name: 'a', require: { checks: ['x'] }, if: { paths: ['!'] } }, /^rules\[0\]\.if\.paths/],
    [
      { name: 'a', require: { approvals: { from: { teams: ['platform'] } } } },
      /^rules\[0\]\.require\.approvals\.from\.teams\.0: must be an "org\/team" slug$/,
    ],
  ])('refuses %j', (bad, message) => {
    expect(problem({ rules: [bad] })).toMatch(message);
  });

  it('refuses a repeated rule name', () => {
    expect(problem({ rules: [rule({ name: 'x' }), rule({ name: 'x' })] })).toBe(
      'rules[1].name: duplicate rule name "x"',
    );
  });
});

describe('conditional rules: per-request overrides', () => {
  const base = policyWith(rule({ name: 'guard', require: { source_types: ['human_approval'] } }));
  const policy = (overrides: OverrideMode) => ({ name: 'p', config: base, overrides });
  const requested = (...rules: unknown[]) => policyConfigSchema.parse({ rules });
  const refusal = (run: () => unknown): string => {
    try {
      run();
    } catch (error) {
      if (isSvcError(error) && error.code === 'policy_override_refused') return error.message;
      throw error;
    }
    throw new Error('expected policy_override_refused');
  };

  it.each(['tighten', 'any'] as const)(
    'under %s a claim may add a rule, after the policy’s',
    (mode) => {
      const { config, overridden } = applyOverrides(
        policy(mode),
        requested(rule({ name: 'more' })),
      );
      expect(config.rules!.map((r) => r.name)).toEqual(['guard', 'more']);
      expect(overridden).toBe(true);
    },
  );

  it.each(['tighten', 'any', 'none'] as const)(
    'under %s a claim cannot replace a policy rule with a weaker one of the same name',
    (mode) => {
      expect(
        refusal(() =>
          applyOverrides(
            policy(mode),
            requested(rule({ name: 'guard', require: { checks: ['x'] } })),
          ),
        ),
      ).toBe(
        'policyConfig.rules[0].name: policy "p" has a different rule named "guard"; a claim may add rules, never replace or remove one',
      );
    },
  );

  it('restating a policy rule exactly is no override', () => {
    const { config, overridden } = applyOverrides(
      policy('none'),
      requested(rule({ name: 'guard', require: { source_types: ['human_approval'] } })),
    );
    expect(config).toEqual(base);
    expect(overridden).toBe(false);
  });

  it('under none a claim cannot add a rule', () => {
    expect(refusal(() => applyOverrides(policy('none'), requested(rule({ name: 'more' }))))).toBe(
      'policyConfig.rules[0]: policy "p" takes no per-request overrides, added rules included',
    );
  });

  it('loosening thresholds under any does not loosen a rule’s own thresholds', () => {
    const strictRule = policyWith(rule({ name: 'conf', require: { minConfidence: 0.95 } }));
    const { config } = applyOverrides(
      { name: 'p', config: strictRule, overrides: 'any' },
      { minConfidence: 0 },
    );
    const outcome = evaluatePolicy(claimWith({ sources: [source('ci', 0.9)] }), config);
    expect(outcome.verdict).toBe('BLOCKED');
    expect(outcome.rules.find((r) => r.rule === 'rule:conf')!.passed).toBe(false);
  });
});
