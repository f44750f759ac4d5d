import { expect } from '@jest/globals';
import request from 'supertest';
import type { TestApp } from '../../support/harness.js';
import type { Json } from './helpers.js';

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
 * expectation of a replay mismatch is NON_DETERMINISTIC.
 */
export function claimOf(spec: ClaimSpec = {}): Json {
  const kind = spec.kind ?? 'allowed';
  const action: Json = {
    action_type: kind === 'escalated' ? 'access_change' : 'merge',
    target_system: 'github',
  };
  const optional: [string, unknown][] = [
    ['agent', spec.agent === undefined ? 'coder-bot' : spec.agent],
    ['agent_model', spec.model === undefined ? 'model-x' : spec.model],
    ['repository', spec.repository === undefined ? 'acme/web' : spec.repository],
    ['pull_request', spec.pr === undefined ? 42 : spec.pr],
    ['commit', spec.commit === undefined ? 'a1b2c3d' : spec.commit],
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

export const VERDICT_OF: Record<Kind, [string, string]> = {
  allowed: ['ALLOWED', 'ACCEPTED'],
  blocked: ['BLOCKED', 'REJECTED'],
  escalated: ['ESCALATED', 'REJECTED'],
  non_deterministic: ['ALLOWED', 'NON_DETERMINISTIC'],
};

/** POST /v1/evaluate, expecting a new receipt; answers the evaluate body. */
export async function evaluate(t: TestApp, key: string, claim: Json): Promise<Json> {
  const res = await request(t.app).post('/v1/evaluate').set('X-API-Key', key).send(claim);
  expect({ status: res.status, body: res.body }).toMatchObject({ status: 200 });
  expect(res.headers['idempotent-replay']).toBeUndefined();
  return res.body as Json;
}

/** Evaluates `spec` and checks the verdict and admissibility of its kind. */
export async function issue(t: TestApp, key: string, spec: ClaimSpec = {}): Promise<Json> {
  const body = await evaluate(t, key, claimOf(spec));
  const receipt = body.receipt as {
    policy: { verdict: string };
    admissibility: { status: string };
  };
  expect([receipt.policy.verdict, receipt.admissibility.status]).toEqual(
    VERDICT_OF[spec.kind ?? 'allowed'],
  );
  return body;
}

export const receiptOf = (body: Json) => body.receipt as Json & { receipt_id: string };
export const idOf = (body: Json) => receiptOf(body).receipt_id;
export const sequenceOf = (receipt: Json) => (receipt.chain as { sequence: number }).sequence;
