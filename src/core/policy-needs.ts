import type { PolicyConfig } from './policy-config.js';
import { handle } from './rules/conditional.js';

/**
 * What a policy's rules read of a claim that a gate must fetch on purpose: the threshold rules
 * read only the sources, and the conditions (paths, labels, branch ...) read facts a gate has
 * with the change itself.
 */
export interface PolicyNeeds {
  /** `org/team` slugs (lower case, no "@") whose members' approvals a rule counts. */
  teams: string[];
  /** Whether a rule asks for code owners' approvals (owners may be `@org/team`s too). */
  codeOwners: boolean;
  /** The check names a rule requires to have passed. */
  checks: string[];
  /** Whether a rule asks for the agent sessions that made the change (`require.agent_session`). */
  agentSessions: boolean;
}

/**
 * What an effective policy (effective-policy.ts) needs to know, read off its conditional rules
 * without evaluating anything, so a gate fetches what the rules read before its one evaluation.
 * A rule counts whether or not it will apply: that depends on the claim being built.
 */
export function policyNeeds(config: PolicyConfig): PolicyNeeds {
  const teams = new Set<string>();
  const checks = new Set<string>();
  let codeOwners = false;
  let agentSessions = false;
  for (const rule of config.rules ?? []) {
    const from = rule.require.approvals?.from;
    for (const team of from?.teams ?? []) teams.add(handle(team));
    if (from?.code_owners) codeOwners = true;
    for (const check of rule.require.checks ?? []) checks.add(check);
    if (rule.require.agent_session) agentSessions = true;
  }
  return { teams: [...teams].sort(), codeOwners, checks: [...checks].sort(), agentSessions };
}
