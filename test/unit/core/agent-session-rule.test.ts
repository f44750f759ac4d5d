import { describe, expect, it } from '@jest/globals';
import { claimInputSchema } from '../../../src/core/claim-schema.js';
import { evaluatePolicy } from '../../../src/core/policy.js';
import { policyConfigSchema, resolvePolicy } from '../../../src/core/policy-config.js';
import { baseAction, claimDoing, validClaim, type Json } from '../../support/claims.js';

const sha = (c: string) => c.repeat(40);

const session = (extra: Json = {}) => ({
  id: 'sess-1',
  harness: 'claude-code',
  covered: true,
  allowed: 4,
  blocked: 1,
  escalated: 0,
  outcomes: 4,
  ran_without_allow: 0,
  missing_outcomes: 0,
  pending_escalations: 0,
  commits: [sha('a')],
  ...extra,
});

const policyOf = (requirement: string) =>
  resolvePolicy(
    policyConfigSchema.parse({
      rules: [{ name: 'sessions', require: { agent_session: requirement } }],
    }),
  );

const ruleOf = (facts: Json, requirement = 'covered') => {
  const outcome = evaluatePolicy(
    claimDoing({ agent: 'coder-bot', ...facts }),
    policyOf(requirement),
  );
  return outcome.rules.find((r) => r.rule === 'rule:sessions')!;
};

describe('the agent_session requirement', () => {
  it('passes when every commit comes from a covered session', () => {
    const rule = ruleOf({ agent_sessions: [session()], unsessioned_commits: [] });
    expect(rule.passed).toBe(true);
    expect(rule.reason).toBe('applies; agent session: 1 commit from 1 covered session (sess-1)');
  });

  it('fails when a commit comes from no session', () => {
    const rule = ruleOf({ agent_sessions: [session()], unsessioned_commits: [sha('b')] });
    expect(rule.passed).toBe(false);
    expect(rule.reason).toBe(
      'applies; agent session: 1 commit reported by no session (bbbbbbbbbbbb)',
    );
  });

  it('fails for a session with ran_without_allow or a missing outcome', () => {
    const rule = ruleOf({
      agent_sessions: [
        session({ covered: false, ran_without_allow: 2 }),
        session({ id: 'sess-2', covered: false, missing_outcomes: 1 }),
      ],
      unsessioned_commits: [],
    });
    expect(rule.passed).toBe(false);
    expect(rule.reason).toBe(
      'applies; agent session: 2 sessions not covered: sess-1 (2 calls ran without allow), sess-2 (1 allowed call without outcome)',
    );
  });

  it('fails for a session the store says is not covered, whatever its counts', () => {
    const rule = ruleOf({ agent_sessions: [session({ covered: false })] });
    expect(rule.passed).toBe(false);
    expect(rule.reason).toMatch(/sess-1 \(not covered\)/);
  });

  it('covered_no_pending also fails on an undecided escalation; covered does not', () => {
    const facts = { agent_sessions: [session({ escalated: 1, pending_escalations: 1 })] };
    expect(ruleOf(facts, 'covered').passed).toBe(true);
    const strict = ruleOf(facts, 'covered_no_pending');
    expect(strict.passed).toBe(false);
    expect(strict.reason).toBe(
      'applies; agent session: 1 session not covered with nothing pending: sess-1 (1 escalation left undecided)',
    );
  });

  it('fails closed without facts, with incomplete facts, or with no commits', () => {
    expect(ruleOf({}).reason).toBe(
      "applies; agent session: the claim carries no session facts of coder-bot's commits",
    );
    expect(ruleOf({ agent_sessions: [session()], agent_sessions_incomplete: true }).passed).toBe(
      false,
    );
    expect(ruleOf({ agent_sessions: [], unsessioned_commits: [] }).reason).toBe(
      'applies; agent session: the claim lists no commits',
    );
  });

  it("passes a person's change: a claim without agent", () => {
    const outcome = evaluatePolicy(claimDoing({ author: 'alice' }), policyOf('covered'));
    expect(outcome.rules.find((r) => r.rule === 'rule:sessions')).toMatchObject({
      passed: true,
      reason: 'applies; agent session: the claim names no agent (a person made it)',
    });
  });

  it('refuses an unknown requirement value and malformed facts', () => {
    expect(
      policyConfigSchema.safeParse({
        rules: [{ name: 'x', require: { agent_session: 'sometimes' } }],
      }).success,
    ).toBe(false);
    const claim = (facts: Json) =>
      claimInputSchema.safeParse(
        validClaim({ action: { ...baseAction, agent: 'coder-bot', ...facts } }),
      ).success;
    expect(claim({ agent_sessions: [session()] })).toBe(true);
    expect(claim({ agent_sessions: [session({ commits: ['HEAD'] })] })).toBe(false);
    expect(claim({ unsessioned_commits: [sha('A')] })).toBe(false);
    expect(claim({ agent_sessions: [session({ extra: 1 })] })).toBe(false);
    // git_head belongs to a tool call's outcome, never to a merge.
    expect(claim({ git_head: sha('a') })).toBe(false);
  });
});
