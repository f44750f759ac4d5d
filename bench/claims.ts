import type { ClaimInput } from '../src/core/claim-schema.js';

// A population wide enough that filters by agent, repository and verdict select a few
// percent of the ledger each, as they would in a shared deployment.
export const AGENTS = Array.from({ length: 24 }, (_, i) => `agent-${String(i).padStart(2, '0')}`);
export const REPOSITORIES = Array.from(
  { length: 60 },
  (_, i) => `org-${i % 6}/service-${String(i).padStart(2, '0')}`,
);
// Words the claim texts are made of, so a text search has something to find.
export const TOPICS = [
  'dependency bump',
  'hotfix',
  'schema migration',
  'feature flag',
  'refactor',
  'security patch',
  'config change',
  'docs update',
] as const;

export type ClaimShape = 'allowed' | 'blocked' | 'escalated';

/**
 * Roughly 75 % ALLOWED, 15 % BLOCKED (too little confidence) and 10 % ESCALATED (an access
 * change without human approval), so stats and verdict filters see every outcome.
 */
export function shapeOf(i: number): ClaimShape {
  const bucket = i % 20;
  if (bucket < 15) return 'allowed';
  return bucket < 18 ? 'blocked' : 'escalated';
}

/**
 * The i-th claim of the benchmark population. It resembles the typical claim of the test
 * harness (two sources, a merge on a pull request) with its subject varied by `i`.
 */
export function benchClaim(i: number, claimId: string): ClaimInput {
  const shape = shapeOf(i);
  const agent = AGENTS[i % AGENTS.length]!;
  const repository = REPOSITORIES[(i * 7) % REPOSITORIES.length]!;
  const topic = TOPICS[i % TOPICS.length]!;
  const pull = 1 + (i % 5000);
  const confidence = shape === 'blocked' ? 0.2 : 0.9;
  return {
    claim_id: claimId,
    entity: repository,
    claim: `Merge PR #${pull} (${topic}) after CI passed`,
    action: {
      action_type: shape === 'escalated' ? 'access_change' : 'merge',
      target_system: 'github',
      repository,
      pull_request: pull,
      commit: (0x1000000 + i).toString(16),
      branch: 'main',
      agent,
      agent_model: 'model-x',
    },
    sources: [
      {
        id: 'ci-1',
        type: 'ci',
        uri: `https://ci.example/run/${i}`,
        confidence,
        content: 'all 312 tests pass',
      },
      {
        id: 'rev-1',
        type: 'code_review',
        uri: `https://scm.example/pr/${pull}#r1`,
        confidence,
        content: 'approved',
      },
    ],
  };
}

const ID_SLOT = '__BENCH_CLAIM_ID__';

/**
 * Request bodies with a slot for the claim_id, serialized once: filling the slot per request
 * keeps the load generator's own cost per request small and constant.
 */
export function claimBodyTemplates(count: number): string[] {
  return Array.from({ length: count }, (_, i) => JSON.stringify(benchClaim(i, ID_SLOT)));
}

export const fillClaimId = (template: string, claimId: string): string =>
  template.replace(ID_SLOT, claimId);
