import {
  GIT_COMMIT,
  MAX_AGENT_SESSIONS,
  MAX_SESSION_COMMITS,
  type AgentSessionFact,
} from '../core/agent/session-facts-schema.js';
import type { ClaimAction } from '../core/claim-schema.js';
import type { CommitReport, SessionStore, SessionSummary } from '../ports/session-store.js';

// The agent sessions that made a pull request's commits (docs/GITHUB_APP.md, "Agent sessions"):
// a commit is tied to a session when one of the session's outcomes reported it as the HEAD of
// its repository after a call (svc-hook sends it; the outcome's claim signs it). What is found
// becomes signed claim facts that `require.agent_session` reads (core/rules/agent-session.ts).

/** Rows of commit reports read at most: every commit reported by every session listed. */
const MAX_REPORTS = MAX_AGENT_SESSIONS * 8;

/** The members of a pull request's `action` that `require.agent_session` reads. */
export type AgentSessionFacts = Pick<
  ClaimAction,
  'agent_sessions' | 'unsessioned_commits' | 'agent_sessions_incomplete'
>;

/** What the App reads of sessions: the reports of commits, and each session's counts. */
export type SessionLookup = Pick<SessionStore, 'commitReports' | 'get'>;

/** A session as a fact of the claim: its counts, coverage and the commits it reported. */
export function sessionFactOf(summary: SessionSummary, commits: string[]): AgentSessionFact {
  const { decisions } = summary;
  return {
    id: summary.session_id,
    harness: summary.harness,
    covered: summary.covered,
    allowed: decisions.ALLOWED,
    blocked: decisions.BLOCKED,
    escalated: decisions.ESCALATED,
    outcomes: summary.outcomes,
    ran_without_allow: summary.ran_without_allow,
    missing_outcomes: summary.missing_outcomes,
    // A disposition decides one escalation (contract §11): the rest wait for a person.
    pending_escalations: Math.max(0, decisions.ESCALATED - summary.dispositions),
    commits,
  };
}

/**
 * The facts of a pull request's commits (in GitHub's order) given the sessions that reported
 * them (`reports`, in report order) and those sessions' summaries (by `scope session_id`).
 * Pure. Every cut errs towards failing: a commit GitHub did not list (`listedAll` false), a
 * commit id a claim cannot carry, a session past the bound or a cut list of reports makes the
 * facts incomplete; a commit whose sessions are unknown is unsessioned.
 */
export function agentSessionFacts(input: {
  commits: readonly string[];
  listedAll: boolean;
  reports: readonly CommitReport[];
  reportsCut: boolean;
  summaries: ReadonlyMap<string, SessionSummary>;
}): AgentSessionFacts {
  let incomplete = !input.listedAll || input.reportsCut;
  const commits: string[] = [];
  for (const sha of input.commits) {
    if (!GIT_COMMIT.test(sha) || commits.length >= MAX_SESSION_COMMITS) incomplete = true;
    else if (!commits.includes(sha)) commits.push(sha);
  }
  const wanted = new Set(commits);
  const bySession = new Map<string, { summary: SessionSummary; commits: Set<string> }>();
  for (const report of input.reports) {
    if (!wanted.has(report.commit)) continue;
    const key = sessionKey(report);
    const summary = input.summaries.get(key);
    if (!summary) continue;
    let entry = bySession.get(key);
    if (!entry) {
      if (bySession.size >= MAX_AGENT_SESSIONS) {
        incomplete = true;
        continue;
      }
      entry = { summary, commits: new Set() };
      bySession.set(key, entry);
    }
    entry.commits.add(report.commit);
  }
  const sessioned = new Set([...bySession.values()].flatMap((s) => [...s.commits]));
  return {
    agent_sessions: [...bySession.values()].map(({ summary, commits: reported }) =>
      sessionFactOf(
        summary,
        commits.filter((sha) => reported.has(sha)),
      ),
    ),
    unsessioned_commits: commits.filter((sha) => !sessioned.has(sha)),
    ...(incomplete ? { agent_sessions_incomplete: true } : {}),
  };
}

const sessionKey = (s: { scope: string; session_id: string }) => `${s.scope} ${s.session_id}`;

/**
 * Looks up the sessions that reported `commits` and returns the claim's facts. Every session
 * of every scope counts: a commit id names one commit whoever reported it, and a session that
 * is not covered fails the rule, so a report cannot loosen it for anybody else.
 */
export async function loadAgentSessionFacts(
  sessions: SessionLookup,
  commits: readonly string[],
  listedAll: boolean,
): Promise<AgentSessionFacts> {
  const ids = commits.filter((sha) => GIT_COMMIT.test(sha)).slice(0, MAX_SESSION_COMMITS);
  const reports = ids.length > 0 ? await sessions.commitReports(ids, MAX_REPORTS) : [];
  const summaries = new Map<string, SessionSummary>();
  for (const report of reports) {
    const key = sessionKey(report);
    // One past the bound, so that agentSessionFacts sees there are more and says so.
    if (summaries.has(key) || summaries.size > MAX_AGENT_SESSIONS) continue;
    const summary = await sessions.get(report.session_id, report.scope);
    if (summary) summaries.set(key, summary);
  }
  return agentSessionFacts({
    commits,
    listedAll,
    reports,
    reportsCut: reports.length >= MAX_REPORTS,
    summaries,
  });
}

// Session ids and harness names are the harness's: escaped, they cannot forge links or markup.
const cell = (text: string) =>
  text.replace(/\r?\n/g, ' ').replace(/[\\`*_{}[\]()<>#+!|~-]/g, (c) => `\\${c}`);
const short = (sha: string) => sha.slice(0, 12);

/** The explorer's page of a session. */
export const sessionPageUrl = (baseUrl: string, sessionId: string): string =>
  // Parentheses too: the URL sits in a Markdown link, which a ")" would end.
  `${baseUrl}/explorer/sessions/${encodeURIComponent(sessionId).replace(/[()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;

/**
 * The check run's section on the sessions a signed claim names (none when it names none):
 * each session with its counts and a link to its explorer page, then the commits no session
 * reported.
 */
export function renderAgentSessions(action: ClaimAction | undefined, baseUrl: string): string[] {
  const sessions = action?.agent_sessions;
  if (sessions === undefined) return [];
  const rows = sessions.map(
    (s) =>
      `| [${cell(s.id)}](${sessionPageUrl(baseUrl, s.id)}) | ${cell(s.harness)} | ${s.covered ? '✅ covered' : '❌ not covered'} | ${s.allowed} | ${s.blocked} | ${s.escalated}${s.pending_escalations ? ` (${s.pending_escalations} pending)` : ''} | ${s.outcomes} | ${s.missing_outcomes} | ${s.ran_without_allow} | ${s.commits.map(short).join(' ')} |`,
  );
  const unsessioned = action?.unsessioned_commits ?? [];
  return [
    '',
    '### Agent sessions',
    '',
    ...(rows.length > 0
      ? [
          '| Session | Harness | Coverage | Allowed | Blocked | Escalated | Outcomes | Missing outcomes | Ran without allow | Commits |',
          '|---|---|---|---|---|---|---|---|---|---|',
          ...rows,
        ]
      : ['No agent-gate session reported any commit of this pull request.']),
    ...(unsessioned.length > 0
      ? [
          '',
          `Commits no session reported (${unsessioned.length}): ${unsessioned.map((sha) => `\`${short(sha)}\``).join(' ')}`,
        ]
      : []),
    ...(action?.agent_sessions_incomplete
      ? ['', 'The list is incomplete (too many commits or sessions): the rule fails closed.']
      : []),
  ];
}
