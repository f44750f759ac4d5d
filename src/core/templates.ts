import type { ClaimInput } from './claim-schema.js';
import type { Verdict } from './policy.js';

export interface ClaimTemplate {
  id: string;
  title: string;
  description: string;
  /** The verdict this claim gets under the default policy, as given. */
  expected_verdict: Verdict;
  claim: ClaimInput;
}

const at = '2026-01-15T09:30:00Z';

/** Starting points for common gates. Each is a complete ClaimInput: replace ids and URIs. */
export const CLAIM_TEMPLATES: readonly ClaimTemplate[] = Object.freeze([
  {
    id: 'pr-merge-coding-agent',
    title: 'Pull request merge by a coding agent',
    description:
      'A coding agent asks to merge its pull request after CI passed and a maintainer reviewed it.',
    expected_verdict: 'ALLOWED',
    claim: {
      claim_id: 'acme-web-pr-128-9f2c1ab',
      entity: 'acme/web',
      claim: 'Merge PR #128 "Fix session timeout handling" into main',
      action: {
        action_type: 'merge',
        target_system: 'github',
        repository: 'acme/web',
        pull_request: 128,
        commit: '9f2c1ab',
        branch: 'main',
        risk_scope: ['auth'],
        agent: 'coder-bot',
        agent_model: 'model-2026-01',
      },
      sources: [
        {
          id: 'ci-5531',
          type: 'ci',
          uri: 'https://ci.example.com/acme/web/runs/5531',
          confidence: 0.95,
          content: 'All 412 tests passed on 9f2c1ab',
        },
        {
          id: 'review-88',
          type: 'code_review',
          uri: 'https://github.com/acme/web/pull/128#pullrequestreview-88',
          confidence: 0.9,
          content: 'Approved by a maintainer',
        },
      ],
    },
  },
  {
    id: 'production-deployment',
    title: 'Production deployment',
    description:
      'A deploy bot asks to roll a release out to production, with tests, a passing canary and an on-call approval.',
    expected_verdict: 'ALLOWED',
    claim: {
      claim_id: 'acme-api-deploy-v2.14.0',
      entity: 'acme/api',
      claim: 'Deploy release v2.14.0 of acme/api to production',
      action: {
        action_type: 'deployment',
        target_system: 'kubernetes/prod-eu-1',
        repository: 'acme/api',
        commit: '3e7d90c',
        environment: 'production',
        risk_scope: ['payments', 'availability'],
        agent: 'deploy-bot',
        human_operator: 'oncall@acme.example',
      },
      sources: [
        {
          id: 'ci-9012',
          type: 'test_result',
          uri: 'https://ci.example.com/acme/api/runs/9012',
          confidence: 0.97,
          content: 'Integration suite green on 3e7d90c',
          provenance: { captured_at: at, collector: 'ci-exporter', snapshot_id: 'run-9012' },
        },
        {
          id: 'canary-77',
          type: 'runtime_log',
          uri: 'https://observability.example.com/canary/77',
          confidence: 0.85,
          content: 'Canary error rate 0.02% over 30 minutes',
        },
        {
          id: 'approval-oncall',
          type: 'human_approval',
          uri: 'https://chat.example.com/deploys/2140',
          confidence: 1,
          content: 'Approved by the on-call engineer',
        },
      ],
    },
  },
  {
    id: 'access-change',
    title: 'Access change',
    description:
      'An agent asks to grant a service account read access; access changes need a human approval.',
    expected_verdict: 'ALLOWED',
    claim: {
      claim_id: 'iam-grant-reporting-ro-42',
      entity: 'iam/warehouse',
      claim: 'Grant reporting-svc read-only access to the analytics warehouse',
      action: {
        action_type: 'access_change',
        target_system: 'iam',
        affected_controls: ['least-privilege'],
        agent: 'access-bot',
      },
      decision_rights: [
        { principal: 'data-platform-lead', role: 'owner', permission: 'grant-read' },
      ],
      sources: [
        {
          id: 'ticket-4411',
          type: 'manual',
          uri: 'https://tickets.example.com/4411',
          confidence: 0.8,
          content: 'Access request with business justification',
        },
        {
          id: 'approval-4411',
          type: 'human_approval',
          uri: 'https://tickets.example.com/4411#approval',
          confidence: 1,
          content: 'Approved by the data platform lead',
        },
      ],
    },
  },
  {
    id: 'infrastructure-change',
    title: 'Infrastructure change',
    description: 'An agent asks to apply a Terraform plan after the policy check passed.',
    expected_verdict: 'ALLOWED',
    claim: {
      claim_id: 'infra-plan-7781',
      entity: 'acme/infrastructure',
      claim: 'Apply Terraform plan 7781: raise the worker pool from 6 to 8 nodes',
      action: {
        action_type: 'infra_change',
        target_system: 'terraform/prod',
        repository: 'acme/infrastructure',
        commit: 'c0ffee1',
        environment: 'staging',
        risk_scope: ['capacity'],
        agent: 'infra-agent',
      },
      sources: [
        {
          id: 'plan-7781',
          type: 'infrastructure',
          uri: 'https://terraform.example.com/runs/7781',
          confidence: 0.9,
          content: 'Plan: 2 to add, 0 to change, 0 to destroy',
        },
        {
          id: 'opa-7781',
          type: 'policy_check',
          uri: 'https://policy.example.com/evaluations/7781',
          confidence: 0.95,
          content: 'All infrastructure policies pass',
        },
      ],
    },
  },
  {
    id: 'policy-exception',
    title: 'Policy exception',
    description:
      'An agent asks to skip a required check once; without a human approval it is escalated.',
    expected_verdict: 'ESCALATED',
    claim: {
      claim_id: 'exception-flaky-e2e-301',
      entity: 'acme/web',
      claim: 'Merge PR #301 although the flaky e2e suite failed',
      action: {
        action_type: 'policy_exception',
        target_system: 'github',
        repository: 'acme/web',
        pull_request: 301,
        affected_controls: ['required-status-checks'],
        agent: 'coder-bot',
      },
      sources: [
        {
          id: 'ci-6001',
          type: 'ci',
          uri: 'https://ci.example.com/acme/web/runs/6001',
          confidence: 0.6,
          content: 'e2e failed on a known flaky test; unit tests pass',
        },
      ],
    },
  },
  {
    id: 'agent-execution',
    title: 'Agent execution',
    description:
      'An agent asks to run a data migration script it generated, with its trace and a dry run as evidence.',
    expected_verdict: 'ALLOWED',
    claim: {
      claim_id: 'agent-run-migrate-2026-01-15',
      entity: 'acme/billing',
      claim: 'Run the generated script that backfills invoice currency codes',
      expected_replay_match: true,
      action: {
        action_type: 'agent_execution',
        target_system: 'billing-db',
        environment: 'staging',
        risk_scope: ['data-integrity'],
        agent: 'ops-agent',
        agent_model: 'model-2026-01',
      },
      sources: [
        {
          id: 'trace-5e1',
          type: 'agent_trace',
          uri: 'https://traces.example.com/5e1',
          confidence: 0.8,
          content: 'Plan and generated SQL',
        },
        {
          id: 'dry-run-5e1',
          type: 'model_output',
          uri: 'https://traces.example.com/5e1/dry-run',
          confidence: 0.75,
          content: 'Dry run: 10,482 rows would change, no errors',
        },
      ],
    },
  },
]);
