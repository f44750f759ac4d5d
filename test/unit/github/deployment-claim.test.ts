import { describe, expect, it } from '@jest/globals';
import { claimInputSchema } from '../../../src/core/claim-schema.js';
import { deploymentReview } from '../../../src/github/deployment-answer.js';
import {
  buildDeploymentClaim,
  runIdOfCallback,
  type DeploymentEvidence,
} from '../../../src/github/deployment-claim.js';
import { deploymentPolicy } from '../../../src/github/environment-config.js';
import { parseRepoConfig, type RepoConfig } from '../../../src/github/repo-config.js';

const SHA = 'd0c0ffee'.repeat(5);
const RUN = 9146381577;

const evidence = (over: Partial<DeploymentEvidence> = {}): DeploymentEvidence => ({
  repository: 'acme/web',
  environment: 'production',
  deploymentId: 1389486371,
  runId: RUN,
  sha: SHA,
  ref: 'main',
  event: 'push',
  actor: { login: 'octocat', agent: false },
  ci: [
    {
      name: 'build',
      kind: 'check_run',
      state: 'success',
      url: 'https://github.com/acme/web/actions/runs/1/job/2',
      at: '2026-01-15T10:00:00Z',
      status: 'completed',
      conclusion: 'success',
    },
    {
      // The waiting run's own deploy job: in progress until svc answers.
      name: 'deploy',
      kind: 'check_run',
      state: 'pending',
      url: `https://github.com/acme/web/actions/runs/${RUN}/job/3`,
      at: '2026-01-15T11:00:00Z',
      status: 'in_progress',
      conclusion: null,
    },
  ],
  pullRequests: [
    {
      number: 41,
      headSha: 'feedface'.repeat(5),
      url: 'https://github.com/acme/web/pull/41',
      receipt: { receipt_id: 'r-1', verdict: 'BLOCKED', admissibility: 'ACCEPTED' },
      approved: true,
    },
  ],
  host: 'github.com',
  baseUrl: 'https://svc.example.com',
  ...over,
});

const config = (yaml: object): RepoConfig => {
  const loaded = parseRepoConfig(yaml);
  if (!loaded.ok) throw new Error(loaded.problem);
  return loaded.config;
};

describe('buildDeploymentClaim', () => {
  it('is a valid deployment claim: a BLOCKED merge receipt is kept as evidence against', () => {
    const claim = claimInputSchema.parse(buildDeploymentClaim(evidence(), { matched: null }));
    expect(claim.action).toMatchObject({
      action_type: 'deployment',
      environment: 'production',
      commit: SHA,
      human_operator: 'octocat',
      checks: [{ name: 'build', status: 'completed', conclusion: 'success' }],
    });
    const merge = claim.sources.find((s) => s.id === 'merge-receipt:pr-41')!;
    expect(merge.type).toBe('policy_check');
    expect(merge.admissibility?.state).toBe('INADMISSIBLE');
    expect(merge.content).toContain('BLOCKED · ACCEPTED');
    // The waiting run's own job is not CI of the deployed commit.
    expect(claim.sources.find((s) => s.type === 'ci')!.admissibility?.state).toBe('ADMISSIBLE');
  });

  it('names the deployment and run in its claim_id; the same evidence gives the same claim', () => {
    const a = buildDeploymentClaim(evidence(), { matched: null });
    expect(a.claim_id).toMatch(/^gh:acme\/web:deployment-1389486371@run-9146381577:[0-9a-f]{16}$/);
    expect(buildDeploymentClaim(evidence(), { matched: null })).toEqual(a);
    const rerun = buildDeploymentClaim(evidence({ deploymentId: 7 }), { matched: null });
    expect(rerun.claim_id).not.toBe(a.claim_id);
  });

  it('calls an agent actor an agent, so rules can condition on it', () => {
    const claim = buildDeploymentClaim(
      evidence({ actor: { login: 'deploy-bot[bot]', agent: true } }),
      { matched: null },
    );
    expect(claim.action).toMatchObject({ agent: 'deploy-bot[bot]' });
    expect(claim.action).not.toHaveProperty('human_operator');
  });
});

describe('environments: in .github/svc.yml', () => {
  const withEnvironments = config({
    policy: 'default',
    policyConfig: { minSources: 2 },
    rules: [{ name: 'pr-only', require: { source_types: ['ci'] } }],
    environments: {
      'prod-*': { rules: [{ name: 'glob', require: { checks: ['a'] } }] },
      'PROD-EU': { policy: 'strict', rules: [{ name: 'exact', require: { checks: ['b'] } }] },
    },
  });

  it('prefers an exact name (case-insensitive) to a glob, and keeps pull-request rules out', () => {
    expect(deploymentPolicy(withEnvironments, 'prod-eu')).toEqual({
      matched: 'PROD-EU',
      policy: 'strict',
      policyConfig: { rules: [expect.objectContaining({ name: 'exact' })] },
    });
    expect(deploymentPolicy(withEnvironments, 'prod-us')).toEqual({
      matched: 'prod-*',
      policy: 'default',
      policyConfig: { minSources: 2, rules: [expect.objectContaining({ name: 'glob' })] },
    });
  });

  it('judges an environment no key matches by the file policy and its thresholds', () => {
    expect(deploymentPolicy(withEnvironments, 'qa')).toEqual({
      matched: null,
      policy: 'default',
      policyConfig: { minSources: 2 },
    });
  });

  it('refuses an environment rule that is not of the rule language, naming it', () => {
    const loaded = parseRepoConfig({
      environments: { production: { rules: [{ name: 'x', require: { nope: true } }] } },
    });
    expect(loaded.ok).toBe(false);
    expect(!loaded.ok && loaded.problem).toContain(
      'environments.production.rules[0].require: Unrecognized key: "nope"',
    );
  });
});

describe('deploymentReview and runIdOfCallback', () => {
  const result = {
    receiptId: 'r-9',
    verdict: 'BLOCKED',
    admissibility: 'ACCEPTED',
    rules: [
      { rule: 'rule:ok', passed: true, reason: 'fine' },
      { rule: 'rule:build-green', passed: false, reason: 'build failed' },
    ],
  };

  it('rejects naming the verdict, the failing rules and the receipt page', () => {
    expect(deploymentReview('production', result, 'https://svc.example.com')).toEqual({
      environment_name: 'production',
      state: 'rejected',
      comment:
        'svc: BLOCKED · ACCEPTED. Failing rules: rule:build-green (build failed). Receipt: https://svc.example.com/explorer/receipts/r-9',
    });
  });

  it('gives no answer while ESCALATED, and keeps the receipt page in a long comment', () => {
    expect(deploymentReview('p', { ...result, verdict: 'ESCALATED' }, 'https://s')).toBeNull();
    const long = deploymentReview(
      'p',
      {
        ...result,
        rules: Array.from({ length: 9 }, (_, i) => ({
          rule: `rule:r${i}`,
          passed: false,
          reason: 'x'.repeat(500),
        })),
      },
      'https://s',
    )!;
    expect(long.comment.length).toBeLessThanOrEqual(1000);
    expect(long.comment.endsWith('https://s/explorer/receipts/r-9')).toBe(true);
  });

  it("reads the run id from GitHub's callback URL only", () => {
    expect(
      runIdOfCallback(
        'https://api.github.com/repos/acme/web/actions/runs/9146381577/deployment_protection_rule',
      ),
    ).toBe(RUN);
    expect(runIdOfCallback('https://api.github.com/repos/acme/web/deployments/1')).toBeNull();
    expect(runIdOfCallback('not a url')).toBeNull();
  });
});
