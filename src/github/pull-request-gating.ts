import { renderWithoutReceipt, type CheckRunOutput } from './check-run.js';
import { CONFIG_PATH, isAgent, type LoadedConfig, type RepoConfig } from './repo-config.js';

/** What the gate does with a pull request, decided from its facts and the base's config. */
export type PullRequestGating =
  /** Nothing at all: no check run. */
  | { kind: 'skip'; reason: 'draft' }
  /** A check run with this output and no receipt. */
  | { kind: 'report'; output: CheckRunOutput }
  /** Evaluate under `config`; `agent` is the author when one of the config's agents. */
  | { kind: 'evaluate'; config: RepoConfig; agent: string | null };

/**
 * Whether and how a pull request is gated. A draft is left alone unless the config asks for
 * drafts; an invalid config fails the check (a draft too: nothing says to skip it); a human's
 * pull request is not gated unless `gate_humans` is set.
 */
export function pullRequestGating(
  pr: { author: string; baseRef: string; draft: boolean },
  loaded: LoadedConfig,
): PullRequestGating {
  if (!loaded.ok) {
    return {
      kind: 'report',
      output: renderWithoutReceipt(
        'failure',
        `Invalid ${CONFIG_PATH}`,
        `svc could not use the repository's configuration, so it did not evaluate this pull request.\n\n${loaded.problem}\n\nFix the file on the base branch \`${pr.baseRef}\`; a pull request cannot change its own gate.`,
      ),
    };
  }
  const { config } = loaded;
  if (pr.draft && !config.drafts) return { kind: 'skip', reason: 'draft' };
  if (!gatesAuthor(pr.author, config)) {
    return {
      kind: 'report',
      output: renderWithoutReceipt(
        'neutral',
        'Not gated: opened by a human',
        `@${pr.author} is not one of the agents in ${CONFIG_PATH} (\`agents: ${JSON.stringify(config.agents)}\`), and \`gate_humans\` is false, so svc does not evaluate this pull request.`,
      ),
    };
  }
  return { kind: 'evaluate', config, agent: isAgent(pr.author, config.agents) ? pr.author : null };
}

/** Whether `config` gates pull requests by `author`: an agent's always, a human's on request. */
export const gatesAuthor = (author: string, config: RepoConfig): boolean =>
  isAgent(author, config.agents) || config.gate_humans;

/**
 * The human operator named in the claim: the first assignee (in sort order) other than the
 * author, or null.
 */
export const humanOperatorOf = (assignees: readonly string[], author: string): string | null =>
  [...assignees].sort().find((a) => a.toLowerCase() !== author.toLowerCase()) ?? null;
