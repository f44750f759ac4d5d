import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { portableSha256Hex } from '@svc/verify';
import {
  authzenActionClaim,
  authzenClaimId,
  AuthzenMappingError,
} from '../../../src/core/authzen/claim-mapping.js';
import { authzenDecision } from '../../../src/core/authzen/decision.js';
import {
  AuthzenRequestError,
  resolveEvaluations,
  stopsAfter,
} from '../../../src/core/authzen/evaluations.js';

const sha256Hex = portableSha256Hex;
const ask = {
  subject: { type: 'agent', id: 'bot', properties: { model: 'm-1' } },
  action: { name: 'deployment' },
  resource: { type: 'k8s', id: 'payments', properties: { environment: 'production' } },
  context: { time: '2026-11-28T10:00:00Z' },
};

describe('the claim_id of an AuthZEN evaluation (contract §13)', () => {
  it('is authzen- and 40 hex digits of SHA-256 over JCS of the request, dry_run left out', () => {
    const digest = createHash('sha256')
      .update(canonicalize({ ...ask })!, 'utf8')
      .digest('hex');
    expect(authzenClaimId(ask, sha256Hex)).toBe(`authzen-${digest.slice(0, 40)}`);
    const dry = { ...ask, context: { ...ask.context, dry_run: true } };
    expect(authzenClaimId(dry, sha256Hex)).toBe(authzenClaimId(ask, sha256Hex));
  });

  it('does not depend on member order, and changes with any member', () => {
    const reordered = {
      resource: ask.resource,
      context: ask.context,
      action: ask.action,
      subject: { properties: ask.subject.properties, id: 'bot', type: 'agent' },
    };
    expect(authzenClaimId(reordered, sha256Hex)).toBe(authzenClaimId(ask, sha256Hex));
    const other = { ...ask, resource: { ...ask.resource, id: 'payments-2' } };
    expect(authzenClaimId(other, sha256Hex)).not.toBe(authzenClaimId(ask, sha256Hex));
  });
});

describe('an AuthZEN evaluation as a claim', () => {
  it('maps subject, action, resource and context as contract §13 says', () => {
    const claim = authzenActionClaim(
      { ...ask, context: { policy: 'strict', session: 's-1' } },
      { sha256Hex },
    );
    expect(claim).toMatchObject({
      entity: 'payments',
      policy: 'strict',
      action: {
        action_type: 'deployment',
        target_system: 'k8s',
        agent: 'bot',
        agent_model: 'm-1',
        environment: 'production',
      },
      sources: [{ type: 'agent_trace', confidence: 1 }],
    });
    const user = authzenActionClaim(
      { ...ask, subject: { type: 'user', id: 'alice' } },
      { sha256Hex },
    );
    expect(user.action).toMatchObject({ human_operator: 'alice' });
    expect(user.action).not.toHaveProperty('agent');
    expect(user.sources[0]!.type).toBe('runtime_log');
    const workload = authzenActionClaim(
      { ...ask, subject: { type: 'service_account', id: 'ci' } },
      { sha256Hex },
    );
    expect(workload.action).toMatchObject({ agent: 'service_account:ci' });
  });

  it('names the member at fault when a read property has the wrong type', () => {
    const bad = { ...ask, resource: { ...ask.resource, properties: { paths: 'a.txt' } } };
    expect(() => authzenActionClaim(bad, { sha256Hex })).toThrow(AuthzenMappingError);
    expect(() => authzenActionClaim(bad, { sha256Hex })).toThrow(/resource\.properties\.paths/);
    const badSources = { ...ask, context: { sources: [{ id: 'x' }] } };
    expect(() => authzenActionClaim(badSources, { sha256Hex })).toThrow(/sources\.0/);
  });
});

describe('batches (AuthZEN §7)', () => {
  it('applies the top-level defaults, an evaluation member replacing its default', () => {
    const { evaluations, semantic, single } = resolveEvaluations({
      subject: ask.subject,
      action: ask.action,
      context: { a: 1 },
      evaluations: [{ resource: ask.resource }, { resource: ask.resource, context: { b: 2 } }],
    });
    expect(single).toBe(false);
    expect(semantic).toBe('execute_all');
    expect(evaluations.map((e) => e.context)).toEqual([{ a: 1 }, { b: 2 }]);
    expect(evaluations[1]!.subject).toBe(ask.subject);
  });

  it('is one evaluation without evaluations, and refuses one missing a member', () => {
    expect(resolveEvaluations(ask).single).toBe(true);
    expect(resolveEvaluations({ ...ask, evaluations: [] }).single).toBe(true);
    expect(() => resolveEvaluations({ subject: ask.subject, evaluations: [{}] })).toThrow(
      AuthzenRequestError,
    );
  });

  it('stops where each semantic says', () => {
    expect([true, false].map((d) => stopsAfter('execute_all', d))).toEqual([false, false]);
    expect([true, false].map((d) => stopsAfter('deny_on_first_deny', d))).toEqual([false, true]);
    expect([true, false].map((d) => stopsAfter('permit_on_first_permit', d))).toEqual([
      true,
      false,
    ]);
  });
});

describe('the AuthZEN decision of a receipt', () => {
  const receipt = (verdict: 'ALLOWED' | 'BLOCKED' | 'ESCALATED', status = 'ACCEPTED') => ({
    receipt_id: 'dr-1',
    policy: {
      verdict,
      checks: verdict === 'BLOCKED' ? [{ rule: 'min_sources', reason: 'only 0 of 1' }] : [],
    },
    admissibility: { status, reason: 'why' },
  });
  const options = { baseUrl: 'https://svc.example/', recorded: true };

  it('is true exactly when the receipt says proceed', () => {
    expect(authzenDecision(receipt('ALLOWED'), options).decision).toBe(true);
    expect(authzenDecision(receipt('ALLOWED', 'NON_DETERMINISTIC'), options).decision).toBe(false);
    expect(authzenDecision(receipt('BLOCKED', 'REJECTED'), options)).toMatchObject({
      decision: false,
      context: { reason_admin: ['min_sources: only 0 of 1'], reason_user: 'Denied by policy.' },
    });
  });

  it('names where to request approval for ESCALATED, and no receipt for a dry run', () => {
    expect(authzenDecision(receipt('ESCALATED', 'REJECTED'), options).context.approval).toEqual({
      request_url: 'https://svc.example/v1/receipts/dr-1/disposition',
      explorer_url: 'https://svc.example/explorer/receipts/dr-1',
    });
    const dry = authzenDecision(receipt('ALLOWED'), { ...options, recorded: false });
    expect(dry.context).toMatchObject({ dry_run: true });
    expect(dry.context).not.toHaveProperty('receipt_id');
  });
});
