import { describe, expect, it } from '@jest/globals';
import { builtinPolicy } from '../../../src/core/policies.js';
import { policyConfigSchema, resolvePolicy } from '../../../src/core/policy-config.js';
import { policyNeeds } from '../../../src/core/policy-needs.js';

/** A policy of the defaults and these rules, validated as POST /v1/policies would. */
const policyWith = (...rules: unknown[]) => resolvePolicy(policyConfigSchema.parse({ rules }));

describe('policyNeeds: what a policy reads that a gate must fetch', () => {
  it('nothing for the built-in policies, or for rules that name no teams, owners or checks', () => {
    for (const name of ['default', 'strict', 'permissive']) {
      expect(policyNeeds(builtinPolicy(name)!.config)).toEqual({
        teams: [],
        codeOwners: false,
        checks: [],
        agentSessions: false,
      });
    }
    expect(
      policyNeeds(
        policyWith(
          { name: 'two', require: { approvals: { count: 2, from: { users: ['x'] } } } },
          { name: 'paths', if: { paths: ['infra/**'] }, require: { source_types: ['ci'] } },
        ),
      ),
    ).toEqual({ teams: [], codeOwners: false, checks: [], agentSessions: false });
  });

  it('the teams, code owners and checks of every rule, whether or not it will apply', () => {
    expect(
      policyNeeds(
        policyWith(
          {
            name: 'a',
            if: { paths: ['infra/**'] },
            require: { approvals: { count: 2, from: { teams: ['@acme/Platform'] } } },
          },
          {
            name: 'b',
            require: { approvals: { from: { teams: ['acme/sec', 'acme/platform'] } } },
            on_fail: 'escalate',
          },
          { name: 'c', require: { approvals: { from: { code_owners: true } } } },
          { name: 'd', require: { checks: ['deploy', 'build'] } },
          { name: 'e', if: { labels: ['release'] }, require: { checks: ['build'] } },
        ),
      ),
    ).toEqual({
      teams: ['acme/platform', 'acme/sec'],
      codeOwners: true,
      checks: ['build', 'deploy'],
      agentSessions: false,
    });
  });

  it('the agent sessions when a rule requires agent_session', () => {
    expect(
      policyNeeds(
        policyWith(
          { name: 'a', require: { checks: ['build'] } },
          { name: 'b', if: { agent: '*[bot]' }, require: { agent_session: 'covered' } },
        ),
      ).agentSessions,
    ).toBe(true);
  });
});
