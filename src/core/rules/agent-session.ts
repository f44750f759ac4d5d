import type { ClaimAction } from '../claim-schema.js';
import type { AgentSessionFact } from '../agent/session-facts-schema.js';
import type { RuleRequirements } from './conditional-schema.js';
import type { RuleCheck } from './threshold-rules.js';

// Reasons name at most this many items, then how many more, so a receipt stays small.
const SHOWN = 5;
const some = (items: string[]): string =>
  items.length <= SHOWN
    ? items.join(', ')
    : `${items.slice(0, SHOWN).join(', ')} and ${items.length - SHOWN} more`;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const short = (sha: string) => sha.slice(0, 12);

/** What keeps one session from satisfying the requirement, or an empty list. */
function sessionProblems(session: AgentSessionFact, noPending: boolean): string[] {
  const problems: string[] = [];
  if (session.ran_without_allow > 0)
    problems.push(`${plural(session.ran_without_allow, 'call')} ran without allow`);
  if (session.missing_outcomes > 0)
    problems.push(`${plural(session.missing_outcomes, 'allowed call')} without outcome`);
  // `covered` is the store's word (contract §12); a false one fails even when the counts
  // above, which it is computed from, say nothing.
  if (!session.covered && problems.length === 0) problems.push('not covered');
  if (noPending && session.pending_escalations > 0)
    problems.push(`${plural(session.pending_escalations, 'escalation')} left undecided`);
  return problems;
}

/**
 * `require.agent_session` (docs/POLICIES.md): a change an agent made passes when each of its
 * commits was reported by an agent-gate session (action.agent_sessions) that is covered and has
 * no ran_without_allow, and, for `covered_no_pending`, no ESCALATED decision undecided. A claim
 * without `action.agent` is a person's change and passes; one whose facts are absent or
 * incomplete fails closed. Pure: it reads the signed claim only.
 */
export function agentSessionCheck(
  requirement: NonNullable<RuleRequirements['agent_session']>,
  action: ClaimAction | undefined,
): RuleCheck {
  if (!action?.agent)
    return { passed: true, reason: 'agent session: the claim names no agent (a person made it)' };
  const sessions = action.agent_sessions;
  if (sessions === undefined)
    return {
      passed: false,
      reason: `agent session: the claim carries no session facts of ${action.agent}'s commits`,
    };
  const unsessioned = action.unsessioned_commits ?? [];
  const problems: string[] = [];
  if (action.agent_sessions_incomplete)
    problems.push('the session facts are incomplete (too many commits or sessions to list)');
  if (unsessioned.length > 0)
    problems.push(
      `${plural(unsessioned.length, 'commit')} reported by no session (${some(unsessioned.map(short))})`,
    );
  if (sessions.length === 0 && unsessioned.length === 0)
    problems.push('the claim lists no commits');
  const bad = sessions
    .map((session) => ({
      session,
      why: sessionProblems(session, requirement === 'covered_no_pending'),
    }))
    .filter((s) => s.why.length > 0);
  if (bad.length > 0)
    problems.push(
      `${plural(bad.length, 'session')} not ${requirement === 'covered' ? 'covered' : 'covered with nothing pending'}: ${some(bad.map((b) => `${b.session.id} (${b.why.join(', ')})`))}`,
    );
  if (problems.length > 0)
    return { passed: false, reason: `agent session: ${problems.join('; ')}` };
  const commits = new Set(sessions.flatMap((s) => s.commits)).size;
  return {
    passed: true,
    reason: `agent session: ${plural(commits, 'commit')} from ${plural(sessions.length, 'covered session')} (${some(sessions.map((s) => s.id))})${requirement === 'covered_no_pending' ? ', nothing pending' : ''}`,
  };
}
