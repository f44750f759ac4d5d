import { claimInputSchema } from '../core/claim-schema.js';
import { isSvcError } from '../core/errors.js';
import { policyNeeds } from '../core/policy-needs.js';
import { MAX_SESSION_COMMITS } from '../core/agent/session-facts-schema.js';
import { loadAgentSessionFacts } from './agent-sessions.js';
import { renderPreview, type Preview } from './check-run.js';
import { githubSubmitter, GateSteps, type GateDeps, type Installation } from './gate.js';
import {
  involvedOf,
  loadChangedFiles,
  loadCi,
  loadCodeOwners,
  loadCommits,
  loadPullRequest,
  loadReviews,
  loadTeamMemberships,
  type RepoRef,
} from './github-evidence.js';
import { buildPullRequestClaim, type PullRequestEvidence } from './pull-request-claim.js';
import { gatesAuthor, humanOperatorOf, pullRequestGating } from './pull-request-gating.js';
import { CONFIG_PATH, type LoadedConfig, type RepoConfig } from './repo-config.js';
import {
  approvalsOf,
  changedPathsOf,
  codeOwnersInTurns,
  codeOwnersOf,
  teamsToLookUp,
} from './rule-facts.js';

/**
 * The pull-request flow: fetches a pull request's evidence, builds its claim
 * (pull-request-claim.ts), evaluates it and reports a check run on its head commit.
 */
export class PullRequestFlow {
  private readonly steps: GateSteps;

  constructor(private readonly deps: GateDeps) {
    this.steps = new GateSteps(deps);
  }

  /** Evaluates one pull request at its current head and reports a check run. */
  async evaluate(installation: Installation, ref: RepoRef, number: number): Promise<void> {
    const { octokit } = installation;
    const pr = await loadPullRequest(octokit, ref, number);
    if (!pr.open) return;
    const loaded = await this.steps.loadConfig(octokit, ref, pr.facts.baseRef);
    const gating = pullRequestGating(
      { author: pr.facts.author, baseRef: pr.facts.baseRef, draft: pr.draft },
      loaded,
    );
    if (gating.kind === 'skip') {
      this.deps.log.info({ repository: pr.facts.repository, pr: number }, 'draft skipped');
      return;
    }
    const checkName = loaded.ok ? loaded.config.check_name : undefined;
    const check = await this.steps.startCheck(octokit, ref, pr.facts.headSha, checkName);
    // Approve and Reject decide a pull request's escalation (escalation-press.ts).
    await this.steps.finish(installation, ref, check, { decidable: true }, async () => {
      if (gating.kind === 'report') return gating.output;
      const { config, agent } = gating;
      const [ci, reviews, commits, files, codeOwners] = await Promise.all([
        loadCi(octokit, ref, pr.facts.headSha, this.deps.appId),
        loadReviews(octokit, ref, number),
        loadCommits(octokit, ref, number),
        loadChangedFiles(octokit, ref, pr),
        loadCodeOwners(octokit, ref, pr.facts.baseRef),
      ]);
      const paths = changedPathsOf(files);
      const owned = await codeOwnersInTurns(codeOwners, paths.changed_paths);
      const evidence: PullRequestEvidence = {
        pr: pr.facts,
        ci,
        reviews,
        agent,
        humanOperator: humanOperatorOf(pr.assignees, pr.facts.author),
        involved: involvedOf(pr, commits),
        host: this.deps.host,
        facts: { files, commits, codeOwners, owned },
      };
      // A pull request that changes the config is judged by the base branch's file; what its
      // own file would decide is shown beside, never signed.
      const proposed = paths.changed_paths.includes(CONFIG_PATH)
        ? await this.steps.loadConfig(octokit, ref, pr.facts.headSha)
        : null;
      const configs = [config, ...(proposed?.ok ? [proposed.config] : [])];
      const sessioned = await this.withAgentSessions(installation, evidence, configs);
      const teamed = await this.withTeams(installation, ref, sessioned, configs);
      const claim = buildPullRequestClaim(teamed(config), config);
      const output = await this.steps.evaluate(
        installation,
        claim,
        `Pull request #${number}`,
        config.reviewers,
      );
      if (!proposed) return output;
      const preview = await this.preview(installation, teamed, proposed, pr.facts.author);
      return { ...renderPreview(output, output, preview), receiptId: output.receiptId };
    });
  }

  /**
   * The evidence with the team memberships each config's policy reads, looked up only when a
   * policy names teams (`require.approvals.from.teams`, or code owners' approvals with team
   * owners): the organization permission Members: read is then needed, and only then.
   */
  private async withTeams(
    installation: Installation,
    ref: RepoRef,
    evidence: PullRequestEvidence,
    configs: RepoConfig[],
  ): Promise<(config: RepoConfig) => PullRequestEvidence> {
    const facts = evidence.facts!;
    const owned =
      facts.owned ?? codeOwnersOf(facts.codeOwners, changedPathsOf(facts.files).changed_paths);
    const named = new Map<RepoConfig, string[]>();
    for (const config of configs) {
      named.set(config, teamsToLookUp(await this.needsOf(installation, config), owned));
    }
    const wanted = [...new Set([...named.values()].flat())].sort();
    const approvers = approvalsOf(evidence.reviews, evidence.pr.headSha, {
      involved: [evidence.pr.author, ...evidence.involved],
    })
      .filter((a) => a.kind === 'User')
      .map((a) => a.user);
    const memberships =
      wanted.length > 0 && approvers.length > 0
        ? await loadTeamMemberships(
            installation.octokit,
            ref.owner,
            wanted,
            approvers,
            this.deps.log,
          )
        : new Map<string, string[]>();
    return (config) => {
      const teams = named.get(config) ?? [];
      if (teams.length === 0) return evidence;
      const only = new Map(
        [...memberships].map(([login, of]) => [login, of.filter((t) => teams.includes(t))]),
      );
      return { ...evidence, facts: { ...facts, teams: only } };
    };
  }

  /**
   * The evidence with the agent sessions that made the pull request's commits
   * (agent-sessions.ts), looked up only for an agent's pull request whose policy reads them
   * (`require.agent_session`). Without a session store the facts stay absent and the rule
   * fails closed.
   */
  private async withAgentSessions(
    installation: Installation,
    evidence: PullRequestEvidence,
    configs: RepoConfig[],
  ): Promise<PullRequestEvidence> {
    const facts = evidence.facts!;
    if (!evidence.agent || !this.deps.sessions) return evidence;
    const needs = await Promise.all(configs.map((config) => this.needsOf(installation, config)));
    if (!needs.some((n) => n?.agentSessions)) return evidence;
    const agentSessions = await loadAgentSessionFacts(
      this.deps.sessions,
      facts.commits.map((commit) => commit.sha ?? ''),
      // GitHub lists at most 250 commits: a full list may be a cut one.
      facts.commits.length < MAX_SESSION_COMMITS,
    );
    return { ...evidence, facts: { ...facts, agentSessions } };
  }

  /**
   * What the policy of the App's claims under `config` reads (core/policy-needs.ts), from its
   * effective policy alone: no evaluation. Null when the policy is refused: the evaluation
   * then answers why, whatever the claim holds.
   */
  private async needsOf(installation: Installation, config: RepoConfig) {
    try {
      const submitter = githubSubmitter(this.deps.appId, installation.id);
      return policyNeeds((await this.deps.claims.effectivePolicy(config, submitter)).config);
    } catch (error) {
      if (isSvcError(error)) return null;
      throw error;
    }
  }

  /** What the claim `config` makes of `evidence` would decide: simulated, nothing written. */
  private async simulate(
    installation: Installation,
    evidence: PullRequestEvidence,
    config: RepoConfig,
  ) {
    const claim = claimInputSchema.parse(buildPullRequestClaim(evidence, config));
    return this.deps.claims.simulate(claim, githubSubmitter(this.deps.appId, installation.id));
  }

  /** What the pull request's own `.github/svc.yml` would decide: simulated, nothing written. */
  private async preview(
    installation: Installation,
    evidenceFor: (config: RepoConfig) => PullRequestEvidence,
    proposed: LoadedConfig,
    author: string,
  ): Promise<Preview> {
    if (!proposed.ok) return { kind: 'invalid', problem: proposed.problem };
    const config = proposed.config;
    if (!gatesAuthor(author, config)) return { kind: 'not_gated', author };
    const evidence = evidenceFor(config);
    try {
      const simulated = await this.simulate(installation, evidence, config);
      return {
        kind: 'evaluated',
        verdict: simulated.decision.verdict,
        admissibility: simulated.decision.admissibility,
        policy: simulated.receipt.policy.name ?? 'default',
        failing: simulated.policy.rules.filter((r) => !r.passed),
      };
    } catch (error) {
      if (isSvcError(error)) return { kind: 'invalid', problem: error.message };
      throw error;
    }
  }
}
