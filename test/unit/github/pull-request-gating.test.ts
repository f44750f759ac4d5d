import { describe, expect, it } from '@jest/globals';
import { pullRequestFacts } from '../../../src/github/github-evidence.js';
import {
  gatesAuthor,
  humanOperatorOf,
  pullRequestGating,
} from '../../../src/github/pull-request-gating.js';
import {
  DEFAULT_REPO_CONFIG,
  type LoadedConfig,
  type RepoConfig,
} from '../../../src/github/repo-config.js';
import { loadFixture } from '../core/reference.js';

const payload = loadFixture<Parameters<typeof pullRequestFacts>[1]>('github/pull-request.json');
const AGENT = 'copilot-swe-agent[bot]';

/** The pull request as the flow loads it, optionally as a draft or by someone else. */
function pullRequest(over: { draft?: boolean; author?: string } = {}) {
  const loaded = pullRequestFacts('acme/web', {
    ...payload,
    draft: over.draft ?? payload.draft,
    user: { ...payload.user!, login: over.author ?? payload.user!.login },
  });
  return { author: loaded.facts.author, baseRef: loaded.facts.baseRef, draft: loaded.draft };
}
const repoConfig = (over: Partial<RepoConfig> = {}): RepoConfig => ({
  ...DEFAULT_REPO_CONFIG,
  agents: [AGENT],
  ...over,
});
const config = (over: Partial<RepoConfig> = {}): LoadedConfig => ({
  ok: true,
  config: repoConfig(over),
});

describe('pullRequestGating', () => {
  it("an agent's pull request is evaluated, with the agent named", () => {
    const gating = pullRequestGating(pullRequest(), config());
    expect(gating).toEqual({ kind: 'evaluate', config: repoConfig(), agent: AGENT });
  });

  it('a draft is skipped without a check run unless the config gates drafts', () => {
    expect(pullRequestGating(pullRequest({ draft: true }), config())).toEqual({
      kind: 'skip',
      reason: 'draft',
    });
    expect(pullRequestGating(pullRequest({ draft: true }), config({ drafts: true })).kind).toBe(
      'evaluate',
    );
  });

  it('an invalid config fails the check, a draft too, and points at the base branch', () => {
    for (const draft of [false, true]) {
      const gating = pullRequestGating(pullRequest({ draft }), {
        ok: false,
        problem: '.github/svc.yml on main: agents: Expected array',
      });
      expect(gating.kind).toBe('report');
      if (gating.kind !== 'report') continue;
      expect(gating.output.conclusion).toBe('failure');
      expect(gating.output.title).toBe('Invalid .github/svc.yml');
      expect(gating.output.summary).toContain('agents: Expected array');
      expect(gating.output.summary).toContain('base branch `main`');
    }
  });

  it("a human's pull request is neutral, not gated, unless gate_humans is set", () => {
    const human = pullRequest({ author: 'octocat' });
    const gating = pullRequestGating(human, config());
    expect(gating.kind).toBe('report');
    if (gating.kind === 'report') {
      expect(gating.output.conclusion).toBe('neutral');
      expect(gating.output.title).toBe('Not gated: opened by a human');
      expect(gating.output.summary).toContain('@octocat');
    }
    expect(pullRequestGating(human, config({ gate_humans: true }))).toMatchObject({
      kind: 'evaluate',
      agent: null,
    });
  });
});

describe('gatesAuthor', () => {
  it("gates an agent's pull requests always, a human's only with gate_humans", () => {
    expect(gatesAuthor(AGENT, repoConfig())).toBe(true);
    expect(gatesAuthor('Copilot-SWE-Agent[bot]', repoConfig())).toBe(true);
    expect(gatesAuthor('octocat', repoConfig())).toBe(false);
    expect(gatesAuthor('octocat', repoConfig({ gate_humans: true }))).toBe(true);
    // The default agents are any bot.
    expect(gatesAuthor('renovate[bot]', DEFAULT_REPO_CONFIG)).toBe(true);
  });
});

describe('humanOperatorOf', () => {
  it("names the fixture's assignee, who is not the author", () => {
    const loaded = pullRequestFacts('acme/web', payload);
    expect(humanOperatorOf(loaded.assignees, loaded.facts.author)).toBe('octocat');
  });

  it('skips the author in any case and takes the first of the others in sort order', () => {
    expect(humanOperatorOf(['zoe', 'Copilot-SWE-Agent[bot]', 'amir'], AGENT)).toBe('amir');
    expect(humanOperatorOf([AGENT.toUpperCase()], AGENT)).toBeNull();
    expect(humanOperatorOf([], AGENT)).toBeNull();
  });
});
