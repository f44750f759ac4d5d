import { describe, expect, it } from '@jest/globals';
import { claimInputSchema } from '../../../src/core/claim-schema.js';
import {
  agentSessionFacts,
  loadAgentSessionFacts,
  renderAgentSessions,
  sessionPageUrl,
  type SessionLookup,
} from '../../../src/github/agent-sessions.js';
import type { CommitReport, SessionSummary } from '../../../src/ports/session-store.js';

const sha = (c: string) => c.repeat(40);
const A = sha('a');
const B = sha('b');
const C = sha('c');

const summary = (id: string, over: Partial<SessionSummary> = {}): SessionSummary => ({
  scope: 'key:one',
  session_id: id,
  harness: 'claude-code',
  agent: 'claude-code',
  repository: null,
  first_sequence: 1,
  last_sequence: 9,
  first_seen: '2026-11-28T09:00:00.000Z',
  last_seen: '2026-11-28T09:30:00.000Z',
  decisions: { ALLOWED: 5, BLOCKED: 1, ESCALATED: 2 },
  dispositions: 1,
  outcomes: 5,
  ran_without_allow: 0,
  missing_outcomes: 0,
  covered: true,
  started_at: null,
  ended_at: null,
  end_reason: null,
  ...over,
});
const report = (commit: string, session_id: string, scope = 'key:one'): CommitReport => ({
  commit,
  scope,
  session_id,
});
const byKey = (...summaries: SessionSummary[]) =>
  new Map(summaries.map((s) => [`${s.scope} ${s.session_id}`, s]));

describe('agentSessionFacts: the signed facts of the sessions that made the commits', () => {
  it('groups the commits by the sessions that reported them, in commit order, and names the rest', () => {
    const facts = agentSessionFacts({
      commits: [A, B, C],
      listedAll: true,
      reports: [report(B, 's1'), report(A, 's1'), report(A, 's2', 'key:two')],
      reportsCut: false,
      summaries: byKey(summary('s1'), summary('s2', { scope: 'key:two', covered: false })),
    });
    expect(facts).toEqual({
      agent_sessions: [
        {
          id: 's1',
          harness: 'claude-code',
          covered: true,
          allowed: 5,
          blocked: 1,
          escalated: 2,
          outcomes: 5,
          ran_without_allow: 0,
          missing_outcomes: 0,
          pending_escalations: 1,
          commits: [A, B],
        },
        expect.objectContaining({ id: 's2', covered: false, commits: [A] }),
      ],
      unsessioned_commits: [C],
    });
    // What the App signs is a claim the schema accepts.
    expect(
      claimInputSchema.safeParse({
        claim_id: 'x',
        entity: 'acme/web',
        claim: 'merge',
        action: { action_type: 'merge', target_system: 'github', ...facts },
        sources: [{ id: 's', type: 'scm', uri: 'https://x.example/1', confidence: 1, content: '' }],
      }).success,
    ).toBe(true);
  });

  it('is incomplete when GitHub may have cut the list, a commit id is unusable, or reports were cut', () => {
    const base = { commits: [A], reports: [], reportsCut: false, summaries: byKey() };
    expect(agentSessionFacts({ ...base, listedAll: true }).agent_sessions_incomplete).toBe(
      undefined,
    );
    expect(agentSessionFacts({ ...base, listedAll: false }).agent_sessions_incomplete).toBe(true);
    expect(agentSessionFacts({ ...base, listedAll: true, commits: [A, 'HEAD'] })).toMatchObject({
      agent_sessions_incomplete: true,
      unsessioned_commits: [A],
    });
    expect(
      agentSessionFacts({ ...base, listedAll: true, reportsCut: true }).agent_sessions_incomplete,
    ).toBe(true);
  });

  it('past 50 sessions the rest are left out and the facts are incomplete', () => {
    const ids = Array.from({ length: 51 }, (_, i) => `s${i}`);
    const facts = agentSessionFacts({
      commits: [A],
      listedAll: true,
      reports: ids.map((id) => report(A, id)),
      reportsCut: false,
      summaries: byKey(...ids.map((id) => summary(id))),
    });
    expect(facts.agent_sessions).toHaveLength(50);
    expect(facts.agent_sessions_incomplete).toBe(true);
  });

  it('a report of a commit that is not the pull request’s, or of an unknown session, ties nothing', () => {
    const facts = agentSessionFacts({
      commits: [A],
      listedAll: true,
      reports: [report(B, 's1'), report(A, 'gone')],
      reportsCut: false,
      summaries: byKey(summary('s1')),
    });
    expect(facts).toEqual({ agent_sessions: [], unsessioned_commits: [A] });
  });
});

describe('loadAgentSessionFacts', () => {
  it('asks the store once for the reports and once per session', async () => {
    const asked: string[] = [];
    const store: SessionLookup = {
      commitReports: async (commits, limit) => {
        asked.push(`reports ${commits.length} ${limit}`);
        return [report(A, 's1'), report(B, 's1')];
      },
      get: async (id, scope) => {
        asked.push(`get ${id} ${scope}`);
        return summary(id);
      },
    };
    const facts = await loadAgentSessionFacts(store, [A, B, 'not-a-sha'], true);
    expect(asked).toEqual(['reports 2 400', 'get s1 key:one']);
    expect(facts.agent_sessions?.[0]?.commits).toEqual([A, B]);
    expect(facts.agent_sessions_incomplete).toBe(true);
  });
});

describe('renderAgentSessions: the check run’s section', () => {
  it('lists each session with its counts and explorer link, then the commits no session reported', () => {
    const lines = renderAgentSessions(
      {
        action_type: 'merge',
        target_system: 'github',
        agent_sessions: [
          {
            id: 'sess-[x](evil)',
            harness: 'codex',
            covered: false,
            allowed: 3,
            blocked: 1,
            escalated: 2,
            outcomes: 2,
            ran_without_allow: 1,
            missing_outcomes: 1,
            pending_escalations: 1,
            commits: [A],
          },
        ],
        unsessioned_commits: [B],
      },
      'https://svc.example.com',
    );
    expect(lines.join('\n')).toBe(
      [
        '',
        '### Agent sessions',
        '',
        '| Session | Harness | Coverage | Allowed | Blocked | Escalated | Outcomes | Missing outcomes | Ran without allow | Commits |',
        '|---|---|---|---|---|---|---|---|---|---|',
        `| [sess\\-\\[x\\]\\(evil\\)](https://svc.example.com/explorer/sessions/sess-%5Bx%5D%28evil%29) | codex | ❌ not covered | 3 | 1 | 2 (1 pending) | 2 | 1 | 1 | ${A.slice(0, 12)} |`,
        '',
        `Commits no session reported (1): \`${B.slice(0, 12)}\``,
      ].join('\n'),
    );
  });

  it('says when no session reported anything, and nothing for a claim without the facts', () => {
    const action = { action_type: 'merge', target_system: 'github' } as const;
    expect(renderAgentSessions({ ...action, agent_sessions: [] }, 'https://x')).toContain(
      'No agent-gate session reported any commit of this pull request.',
    );
    expect(renderAgentSessions(action, 'https://x')).toEqual([]);
    expect(sessionPageUrl('https://x', 'a b/c')).toBe('https://x/explorer/sessions/a%20b%2Fc');
  });
});
