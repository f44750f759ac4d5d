import { createHash } from 'node:crypto';
import { claimInputSchema, type ClaimInput, type Source } from '../../src/core/claim-schema.js';

// The one place tests build claims. Every builder starts from the same typical claim (a merge
// of PR #42 on acme/web by coder-bot, backed by a CI run and a code review) and changes only
// what the test is about: top-level members, the action's facts, the sources, or the verdict.

export type Json = Record<string, unknown>;

/** The action of the typical claim. */
export const mergeAction = {
  action_type: 'merge',
  target_system: 'github',
  repository: 'acme/web',
  pull_request: 42,
  commit: 'a1b2c3d',
  branch: 'main',
  agent: 'coder-bot',
  agent_model: 'model-x',
} as const;

/** The two members every action needs; conditional-rule tests add the facts they match on. */
export const baseAction = { action_type: 'merge', target_system: 'github' } as const;

/** The sources of the typical claim: a passing CI run and an approving review. */
export const typicalSources = (): Source[] => [
  {
    id: 'ci-1',
    type: 'ci',
    uri: 'https://ci.example/run/1',
    confidence: 0.9,
    content: 'all 312 tests pass',
  },
  {
    id: 'rev-1',
    type: 'code_review',
    uri: 'https://scm.example/pr/42#r1',
    confidence: 0.8,
    content: 'approved',
  },
];

/** A claim that passes the default policy; `overrides` replace top-level members. */
export function validClaim(overrides: Json = {}): Json {
  return {
    claim_id: `claim-${Math.random().toString(36).slice(2)}`,
    entity: 'acme/web',
    claim: 'Merge PR #42 after CI passed',
    action: { ...mergeAction },
    sources: typicalSources(),
    ...overrides,
  };
}

/**
 * A claim ESCALATED under the default policy: an access change without a human approval.
 * `facts` are added to its action, `overrides` replace top-level members.
 */
export const escalatedClaim = (facts: Json = {}, overrides: Json = {}): Json =>
  validClaim({
    action: {
      action_type: 'access_change',
      target_system: 'github',
      repository: mergeAction.repository,
      agent: mergeAction.agent,
      ...facts,
    },
    ...overrides,
  });

/**
 * A claim as the API would hand it to the core: the valid claim with `overrides`, through
 * JSON (so an override of undefined removes the member, as it would on the wire) and through
 * the schema, so every test input is one the service could really receive.
 */
export function claimWith(overrides: Json = {}): ClaimInput {
  return claimInputSchema.parse(JSON.parse(JSON.stringify(validClaim(overrides))));
}

/**
 * A parsed claim whose action is only `baseAction` and the given facts (environment, author,
 * approvals, checks, paths …), the facts a conditional rule matches on; `extra` replaces
 * top-level members.
 */
export const claimDoing = (facts: Json, extra: Json = {}): ClaimInput =>
  claimWith({ action: { ...baseAction, ...facts }, ...extra });

let sourceCount = 0;

/** A source of `type` at `confidence`, with an id and uri of its own. */
export function source(
  type: Source['type'],
  confidence = 0.9,
  extra: Partial<Omit<Source, 'type' | 'confidence'>> = {},
): Source {
  sourceCount += 1;
  return {
    id: `${type}-${sourceCount}`,
    type,
    uri: `https://evidence.example/${type}/${sourceCount}`,
    confidence,
    content: `${type} evidence`,
    ...extra,
  };
}

/** A provenance record for a source (required by policies with requireProvenance). */
export const provenance = { captured_at: '2026-01-15T10:00:00Z', collector: 'ci-bot' };

/** The outcome a `claimOf` claim is built to get under the default policy. */
export type Kind = 'allowed' | 'blocked' | 'escalated' | 'non_deterministic';

export interface ClaimSpec {
  claimId?: string;
  kind?: Kind;
  claim?: string;
  entity?: string;
  /** null leaves the member out of the action. */
  agent?: string | null;
  model?: string | null;
  repository?: string | null;
  pr?: number | string | null;
  commit?: string | null;
  /** Source ids; every source is a passing CI source unless the kind says otherwise. */
  sources?: string[];
  extra?: Json;
}

let claims = 0;

/**
 * A ClaimInput whose evaluation under the default policy gives the verdict of `kind`:
 * low confidence blocks, an access change without a human approval escalates, and an
 * expectation of a replay mismatch is NON_DETERMINISTIC. Read tests vary its subject.
 */
export function claimOf(spec: ClaimSpec = {}): Json {
  const kind = spec.kind ?? 'allowed';
  const action: Json = {
    action_type: kind === 'escalated' ? 'access_change' : 'merge',
    target_system: 'github',
  };
  const optional: [string, unknown][] = [
    ['agent', spec.agent === undefined ? mergeAction.agent : spec.agent],
    ['agent_model', spec.model === undefined ? mergeAction.agent_model : spec.model],
    ['repository', spec.repository === undefined ? mergeAction.repository : spec.repository],
    ['pull_request', spec.pr === undefined ? mergeAction.pull_request : spec.pr],
    ['commit', spec.commit === undefined ? mergeAction.commit : spec.commit],
  ];
  for (const [member, value] of optional) if (value !== null) action[member] = value;
  return {
    claim_id: spec.claimId ?? `claim-${++claims}-${Math.random().toString(36).slice(2, 8)}`,
    entity: spec.entity ?? 'acme/web',
    claim: spec.claim ?? 'Merge PR #42 after CI passed',
    action,
    sources: (spec.sources ?? ['ci-1']).map((id) => ({
      id,
      type: 'ci',
      uri: `https://ci.example/run/${id}`,
      confidence: kind === 'blocked' ? 0.1 : 0.9,
      content: 'all tests pass',
    })),
    ...(kind === 'non_deterministic' ? { expected_replay_match: false } : {}),
    ...spec.extra,
  };
}

/** The [verdict, admissibility status] of each kind. */
export const VERDICT_OF: Record<Kind, [string, string]> = {
  allowed: ['ALLOWED', 'ACCEPTED'],
  blocked: ['BLOCKED', 'REJECTED'],
  escalated: ['ESCALATED', 'REJECTED'],
  non_deterministic: ['ALLOWED', 'NON_DETERMINISTIC'],
};

/**
 * A deployment claim as the GitHub App builds it (github/deployment-claim.ts): its claim_id
 * names the deployment and run, one `merge-receipt:pr-N` source per merged pull request (its
 * receipt's URL on this service, admissible when that receipt was allowed), and CI. Under the
 * default policy a production environment escalates, any other is allowed.
 */
export function deploymentClaim(options: {
  repository: string;
  environment: string;
  sha: string;
  run: number;
  ref?: string;
  merges?: { pr: number; receiptId: string | null; admissible: boolean }[];
}): Json {
  const { repository, environment, sha, run } = options;
  const digest = createHash('sha256').update(`${repository}:${environment}:${run}`).digest('hex');
  return {
    claim_id: `gh:${repository}:deployment-${run + 1000}@run-${run}:${digest.slice(0, 16)}`,
    entity: repository,
    claim: `Deploy ${options.ref ?? 'refs/heads/main'} at ${sha.slice(0, 12)} to ${environment}`,
    action: {
      action_type: 'deployment',
      target_system: 'github',
      repository,
      commit: sha,
      branch: (options.ref ?? 'refs/heads/main').replace(/^refs\/heads\//, ''),
      environment,
      human_operator: 'octo-dev',
    },
    sources: [
      ...(options.merges ?? []).map((m) => ({
        id: `merge-receipt:pr-${m.pr}`,
        type: 'policy_check',
        uri: m.receiptId
          ? `https://svc.example/v1/receipts/${m.receiptId}`
          : `https://github.com/${repository}/pull/${m.pr}`,
        confidence: m.admissible ? 0.95 : 0.05,
        content: `Pull request #${m.pr} brought ${sha.slice(0, 12)}`,
        admissibility: m.admissible
          ? { state: 'ADMISSIBLE', reason: 'svc allowed its merge' }
          : { state: 'INADMISSIBLE', reason: 'svc did not allow its merge' },
      })),
      {
        id: `ci@${sha.slice(0, 12)}`,
        type: 'ci',
        uri: `https://github.com/${repository}/commit/${sha}`,
        confidence: 0.9,
        content: 'all checks pass',
      },
    ],
  };
}
