import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import request from 'supertest';
import { signupAccount, type Json } from '../../support/api.js';
import {
  BASE_URL,
  appWithGithub,
  closedNetwork,
  deliver,
  fakeGitHub,
  newRepoState,
  pullRequestEvent,
  type AppUnderTest,
  type PullRequestState,
  type RepoState,
} from './fake-github.js';

// Agent pull requests judged by the sessions that made them (docs/GITHUB_APP.md, "Agent
// sessions"): the agent gate's sessions report the HEAD each call left (svc-hook's ?git_head=),
// and the App ties the pull request's commits to them for `require.agent_session`.

const HEAD = 'a11ce5'.repeat(6) + 'beef';
const FIRST = 'f1257c'.repeat(6) + 'beef';
const AGENT = 'copilot-swe-agent[bot]';

const SESSIONS = `
rules:
  - name: sessions
    require:
      agent_session: covered
`;
const NO_PENDING = `
rules:
  - name: sessions
    require:
      agent_session: covered_no_pending
`;

const fixture = (path: string): Json =>
  JSON.parse(
    readFileSync(new URL(`../../fixtures/hooks/${path}`, import.meta.url), 'utf8'),
  ) as Json;

describe('GitHub App: agent pull requests judged by their sessions', () => {
  let t: AppUnderTest;
  let state: RepoState;
  let github: ReturnType<typeof fakeGitHub>;
  let key: string;

  closedNetwork();
  beforeEach(async () => {
    state = newRepoState();
    github = fakeGitHub(state);
    t = appWithGithub();
    key = (await signupAccount(t)).apiKey;
    state.config.set('main', SESSIONS);
    state.checkRuns.set(HEAD, [
      { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
    ]);
  });
  afterEach(() => t.close());

  /** A Claude Code hook event of `session` for a Bash call of `command`. */
  const event = (session: string, name: 'PreToolUse' | 'PostToolUse', command: string) => {
    const body = fixture('claude-code/pre-tool-use.bash.json');
    return {
      ...body,
      session_id: session,
      // One id per call: the pre-tool and post-tool events of a call share it.
      tool_use_id: `toolu_${session}_${command.replace(/\W+/g, '_')}`,
      hook_event_name: name,
      tool_input: { ...(body.tool_input as Json), command },
      ...(name === 'PostToolUse' ? { tool_response: { stdout: '', exit_code: 0 } } : {}),
    };
  };
  const hook = async (body: Json, head?: string) => {
    const res = await request(t.app)
      .post(`/v1/hooks/claude-code${head ? `?git_head=${head}` : ''}`)
      .set('X-API-Key', key)
      .send(body);
    expect(res.status).toBe(200);
    return res;
  };
  /** A gated call: asked first (allowed), then reported with the HEAD it left. */
  const call = async (session: string, command: string, head?: string) => {
    const asked = await hook(event(session, 'PreToolUse', command));
    expect(asked.body.hookSpecificOutput).toMatchObject({ permissionDecision: 'allow' });
    await hook(event(session, 'PostToolUse', command), head);
  };

  const pr = (over: Partial<PullRequestState> = {}): PullRequestState => ({
    number: 40,
    author: AGENT,
    authorType: 'Bot',
    headSha: HEAD,
    assignees: ['octocat'],
    files: ['src/app.ts'],
    ...over,
  });

  /** The App's verdict on the pull request: receipt, claim, check run and the rule's row. */
  const evaluate = async (commits: string[] = [HEAD], over: Partial<PullRequestState> = {}) => {
    const p = pr(over);
    state.pulls.set(p.number, p);
    state.commits.set(
      p.number,
      commits.map((sha) => ({ author: p.author, committer: p.author, sha })),
    );
    await deliver(t, 'pull_request', pullRequestEvent('opened', p));
    expect(await t.jobs.runDue()).toBe(1);
    const done = github.writes.filter((w) => w.method === 'PATCH').at(-1)!;
    const summary = (done.body.output as { summary: string }).summary;
    if (!done.body.external_id) return { conclusion: done.body.conclusion, summary };
    const { receipt, claim } = (await request(t.app).get(`/v1/receipts/${done.body.external_id}`))
      .body;
    const plain = summary.replace(/\\/g, '');
    const row = plain.split('\n').find((line) => line.includes('| `rule:sessions` |'));
    return {
      verdict: receipt.policy.verdict,
      conclusion: done.body.conclusion,
      claim,
      summary,
      rule:
        row === undefined
          ? undefined
          : {
              passed: row.startsWith('| ✅'),
              reason: row.split(' | ')[2]!.replace(/ \|$/, ''),
            },
    };
  };

  it('passes a pull request whose commits a covered session reported, and lists the session', async () => {
    await call('sess-good', 'git commit -m first', FIRST);
    await call('sess-good', 'npm test', FIRST);
    await call('sess-good', 'git commit -m second', HEAD);
    const result = await evaluate([FIRST, HEAD]);
    expect(result).toMatchObject({ verdict: 'ALLOWED', conclusion: 'success' });
    expect(result.rule).toEqual({
      passed: true,
      reason: 'applies; agent session: 2 commits from 1 covered session (sess-good)',
    });
    expect(result.claim.action.agent_sessions).toEqual([
      {
        id: 'sess-good',
        harness: 'claude-code',
        covered: true,
        allowed: 3,
        blocked: 0,
        escalated: 0,
        outcomes: 3,
        ran_without_allow: 0,
        missing_outcomes: 0,
        pending_escalations: 0,
        commits: [FIRST, HEAD],
      },
    ]);
    expect(result.claim.action.unsessioned_commits).toEqual([]);
    expect(result.summary).toContain('### Agent sessions');
    expect(result.summary).toContain(`[sess\\-good](${BASE_URL}/explorer/sessions/sess-good)`);
    expect(result.summary).toMatch(/\| ✅ covered \| 3 \| 0 \| 0 \| 3 \| 0 \| 0 \|/);
    // The linked page is the session's.
    const page = await request(t.app).get('/explorer/sessions/sess-good');
    expect(page.status).toBe(200);
    expect(page.text).toContain(`HEAD after it <code>${HEAD}</code>`);
    // The session's outcomes name the HEAD each call left, in the API too.
    const read = await request(t.app).get('/v1/sessions/sess-good').set('X-API-Key', key);
    expect(
      (read.body.records as { kind: string; git_head: string | null }[])
        .filter((r) => r.kind === 'outcome')
        .map((r) => r.git_head),
    ).toEqual([FIRST, FIRST, HEAD]);
  });

  it('fails a commit no session reported, naming it in the check run', async () => {
    await call('sess-part', 'git commit -m first', FIRST);
    const result = await evaluate([FIRST, HEAD]);
    expect(result).toMatchObject({ verdict: 'BLOCKED', conclusion: 'failure' });
    expect(result.rule).toEqual({
      passed: false,
      reason: `applies; agent session: 1 commit reported by no session (${HEAD.slice(0, 12)})`,
    });
    expect(result.claim.action.unsessioned_commits).toEqual([HEAD]);
    expect(result.summary).toContain(`Commits no session reported (1): \`${HEAD.slice(0, 12)}\``);
  });

  it('fails a commit whose session ran a call without allow', async () => {
    await call('sess-bypass', 'git commit -m first', HEAD);
    // Reported after the fact, never asked: ran_without_allow.
    await hook(event('sess-bypass', 'PostToolUse', 'git push --force'), HEAD);
    const result = await evaluate([HEAD]);
    expect(result).toMatchObject({ verdict: 'BLOCKED', conclusion: 'failure' });
    expect(result.rule!.reason).toBe(
      'applies; agent session: 1 session not covered: sess-bypass (1 call ran without allow)',
    );
    expect(result.summary).toContain('❌ not covered');
  });

  it('fails a commit of a session with an allowed call whose outcome never came', async () => {
    await call('sess-gap', 'git commit -m first', HEAD);
    const asked = await hook(event('sess-gap', 'PreToolUse', 'ls -la'));
    expect(asked.body.hookSpecificOutput).toMatchObject({ permissionDecision: 'allow' });
    const result = await evaluate([HEAD]);
    expect(result).toMatchObject({ verdict: 'BLOCKED', conclusion: 'failure' });
    expect(result.rule!.reason).toBe(
      'applies; agent session: 1 session not covered: sess-gap (1 allowed call without outcome)',
    );
  });

  it('covered_no_pending fails a session with an escalation nobody decided', async () => {
    state.config.set('main', NO_PENDING);
    await call('sess-ask', 'git commit -m first', HEAD);
    const asked = await hook(event('sess-ask', 'PreToolUse', 'npm publish'));
    expect(asked.body.hookSpecificOutput).toMatchObject({ permissionDecision: 'ask' });
    const result = await evaluate([HEAD]);
    expect(result).toMatchObject({ verdict: 'BLOCKED', conclusion: 'failure' });
    expect(result.rule!.reason).toBe(
      'applies; agent session: 1 session not covered with nothing pending: sess-ask (1 escalation left undecided)',
    );
  });

  it("leaves a human's pull request alone: not gated, or gated and passed without a lookup", async () => {
    const human = { author: 'alice', authorType: 'User' as const };
    expect(await evaluate([HEAD], human)).toMatchObject({ conclusion: 'neutral' });

    state.config.set('main', `${SESSIONS}\ngate_humans: true\n`);
    const gated = await evaluate([HEAD], human);
    expect(gated).toMatchObject({ verdict: 'ALLOWED', conclusion: 'success' });
    expect(gated.rule!.reason).toBe(
      'applies; agent session: the claim names no agent (a person made it)',
    );
    expect(gated.claim.action).not.toHaveProperty('agent_sessions');
    expect(gated.summary).not.toContain('### Agent sessions');
  });

  it('looks sessions up only when a rule reads them', async () => {
    state.config.set('main', 'rules:\n  - name: ci\n    require:\n      checks: [build]\n');
    const result = await evaluate([HEAD]);
    expect(result).toMatchObject({ verdict: 'ALLOWED', conclusion: 'success' });
    expect(result.claim.action).not.toHaveProperty('agent_sessions');
    expect(result.claim.action).not.toHaveProperty('unsessioned_commits');
  });
});
