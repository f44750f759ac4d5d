import type { Logger } from 'pino';
import { isVerifyError } from '@svc/verify';
import { claimInputSchema } from '../core/claim-schema.js';
import { isSvcError } from '../core/errors.js';
import type { Clock } from '../ports/clock.js';
import type { LedgerQueries } from '../ports/ledger-queries.js';
import type { ClaimService, EvaluateResponse, SubmitterContext } from '../services/claims.js';
import type { DispositionService } from '../services/dispositions.js';
import {
  actionsFor,
  receiptPageUrl,
  REEVALUATE,
  renderDisposition,
  renderEvaluation,
  renderPreview,
  renderWithoutReceipt,
  type CheckRunOutput,
  type Preview,
} from './check-run.js';
import {
  involvedOf,
  loadChangedFiles,
  loadCi,
  loadCodeOwners,
  loadCommits,
  loadPullRequest,
  loadReviews,
  loadTeamMemberships,
  type Octokit,
  type RepoRef,
} from './github-evidence.js';
import { buildMergeGroupClaim, type MergeGroupMember } from './merge-group-claim.js';
import { buildPullRequestClaim, type PullRequestEvidence } from './pull-request-claim.js';
import { DEFAULT_CHECK_NAME, isAgent, parseRepoConfig, type RepoConfig } from './repo-config.js';
import {
  approvalsOf,
  changedPathsOf,
  codeOwnersInTurns,
  codeOwnersOf,
  ownerTeams,
  teamsNamedBy,
} from './rule-facts.js';

export const CONFIG_PATH = '.github/svc.yml';
const MERGE_QUEUE_BRANCH = /^(?:refs\/heads\/)?gh-readonly-queue\/(.+)\/pr-\d+-[0-9a-f]+$/;

export interface GateDeps {
  claims: ClaimService;
  queries: LedgerQueries;
  appId: number;
  /** The service's public base URL, for receipt links in check runs. */
  baseUrl: string;
  /** The GitHub host, named in the sources' chain of custody. */
  host: string;
  log: Logger;
  /** The service's clock: the check run's start and completion times. */
  clock: Clock;
  onReceipt?: (response: EvaluateResponse, replayed: boolean) => void;
  /** Decisions on escalations: an escalated receipt decided already is reported as decided. */
  dispositions?: DispositionService;
}

export interface Installation {
  octokit: Octokit;
  id: number;
  /** The job's last attempt: a transient failure then ends the check instead of retrying. */
  finalAttempt?: boolean;
}

/** The submitter of the App's receipts: idempotency is per installation (contract §7). */
export const githubSubmitter = (appId: number, installationId: number): SubmitterContext => ({
  submitter: { kind: 'github_app', app_id: appId, installation_id: installationId },
  scope: `app:${appId}:${installationId}`,
  account: null,
  lockedPolicy: null,
});

/** Whether a GitHub API failure is worth another attempt of the whole job. */
export const isTransient = (error: unknown): boolean => {
  const status = (error as { status?: unknown }).status;
  if (typeof status !== 'number') return !isSvcError(error) && !isVerifyError(error);
  return status >= 500 || status === 429 || status === 403;
};

/** The base branch of a merge-queue branch (`gh-readonly-queue/<base>/pr-<n>-<sha>`). */
export const mergeQueueBase = (branch: string): string | null =>
  MERGE_QUEUE_BRANCH.exec(branch)?.[1] ?? null;

/** The pull requests a merge-queue branch name lists (`…/pr-104-<sha>`). */
export const mergeQueuePullRequests = (headRef: string): number[] =>
  [...headRef.matchAll(/pr-(\d+)-[0-9a-f]+/g)].map((m) => Number(m[1]));

/**
 * Evaluates pull requests and merge groups through the same ClaimService as POST /v1/evaluate
 * and reports each result as a check run on the evaluated commit.
 */
export class PullRequestGate {
  constructor(private readonly deps: GateDeps) {}

  async loadConfig(
    octokit: Octokit,
    ref: RepoRef,
    branch: string,
  ): Promise<{ ok: true; config: RepoConfig } | { ok: false; problem: string }> {
    let raw: unknown;
    try {
      // The base branch, never the head: a pull request cannot loosen its own gate. The
      // plugin falls back to the owner's .github repository when the file is absent, and
      // merges what a file extends (`_extends`) under it.
      const { files, config } = await octokit.config.get({
        ...ref,
        path: CONFIG_PATH,
        branch,
        defaults: {},
      });
      raw = files.some((file) => file.config !== null) ? config : null;
    } catch (error) {
      if (isTransient(error) && (error as { status?: unknown }).status !== undefined) throw error;
      return { ok: false, problem: `${CONFIG_PATH}: ${(error as Error).message}` };
    }
    const parsed = parseRepoConfig(raw);
    return parsed.ok
      ? parsed
      : { ok: false, problem: `${CONFIG_PATH} on ${branch}: ${parsed.problem}` };
  }

  /** Evaluates one pull request at its current head and reports a check run. */
  async pullRequest(installation: Installation, ref: RepoRef, number: number): Promise<void> {
    const { octokit } = installation;
    const pr = await loadPullRequest(octokit, ref, number);
    if (!pr.open) return;
    const loaded = await this.loadConfig(octokit, ref, pr.facts.baseRef);
    const config = loaded.ok ? loaded.config : null;
    if (config && pr.draft && !config.drafts) {
      this.deps.log.info({ repository: pr.facts.repository, pr: number }, 'draft skipped');
      return;
    }
    const check = await this.startCheck(octokit, ref, pr.facts.headSha, config?.check_name);
    // Approve and Reject decide a pull request's escalation (escalation-press.ts).
    await this.finish(installation, ref, check, { decidable: true }, async () => {
      if (!loaded.ok) {
        return renderWithoutReceipt(
          'failure',
          `Invalid ${CONFIG_PATH}`,
          `svc could not use the repository's configuration, so it did not evaluate this pull request.\n\n${loaded.problem}\n\nFix the file on the base branch \`${pr.facts.baseRef}\`; a pull request cannot change its own gate.`,
        );
      }
      const agent = isAgent(pr.facts.author, loaded.config.agents) ? pr.facts.author : null;
      if (!agent && !loaded.config.gate_humans) {
        return renderWithoutReceipt(
          'neutral',
          'Not gated: opened by a human',
          `@${pr.facts.author} is not one of the agents in ${CONFIG_PATH} (\`agents: ${JSON.stringify(loaded.config.agents)}\`), and \`gate_humans\` is false, so svc does not evaluate this pull request.`,
        );
      }
      const [ci, reviews, commits, files, codeOwners] = await Promise.all([
        loadCi(octokit, ref, pr.facts.headSha, this.deps.appId),
        loadReviews(octokit, ref, number),
        loadCommits(octokit, ref, number),
        loadChangedFiles(octokit, ref, pr),
        loadCodeOwners(octokit, ref, pr.facts.baseRef),
      ]);
      const humanOperator =
        [...pr.assignees].sort().find((a) => a.toLowerCase() !== pr.facts.author.toLowerCase()) ??
        null;
      const paths = changedPathsOf(files);
      const owned = await codeOwnersInTurns(codeOwners, paths.changed_paths);
      const evidence: PullRequestEvidence = {
        pr: pr.facts,
        ci,
        reviews,
        agent,
        humanOperator,
        involved: involvedOf(pr, commits),
        host: this.deps.host,
        facts: { files, commits, codeOwners, owned },
      };
      // A pull request that changes the config is judged by the base branch's file; what its
      // own file would decide is shown beside, never signed.
      const proposed = paths.changed_paths.includes(CONFIG_PATH)
        ? await this.loadConfig(octokit, ref, pr.facts.headSha)
        : null;
      const configs = [loaded.config, ...(proposed?.ok ? [proposed.config] : [])];
      const teamed = await this.withTeams(installation, ref, evidence, configs);
      const claim = buildPullRequestClaim(teamed(loaded.config), loaded.config);
      const output = await this.evaluate(installation, claim, `Pull request #${number}`);
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
    const paths = changedPathsOf(facts.files).changed_paths;
    const named = new Map<RepoConfig, string[]>();
    for (const config of configs) {
      const { teams, codeOwners } = teamsNamedBy([
        config,
        config.policyConfig,
        await this.effectivePolicyConfig(installation, evidence, config),
      ]);
      const owners = codeOwners
        ? ownerTeams(facts.owned ?? codeOwnersOf(facts.codeOwners, paths))
        : [];
      named.set(config, [...new Set([...teams, ...owners])]);
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

  /** The policy config a claim under `config` is evaluated with (its rules included), or null. */
  private async effectivePolicyConfig(
    installation: Installation,
    evidence: PullRequestEvidence,
    config: RepoConfig,
  ): Promise<unknown> {
    try {
      const claim = claimInputSchema.parse(buildPullRequestClaim(evidence, config));
      const simulated = await this.deps.claims.simulate(
        claim,
        githubSubmitter(this.deps.appId, installation.id),
      );
      return simulated.policy.config;
    } catch (error) {
      // The evaluation itself reports a config it cannot use.
      if (isSvcError(error)) return null;
      throw error;
    }
  }

  /** What the pull request's own `.github/svc.yml` would decide: simulated, nothing written. */
  private async preview(
    installation: Installation,
    evidenceFor: (config: RepoConfig) => PullRequestEvidence,
    proposed: { ok: true; config: RepoConfig } | { ok: false; problem: string },
    author: string,
  ): Promise<Preview> {
    if (!proposed.ok) return { kind: 'invalid', problem: proposed.problem };
    const config = proposed.config;
    if (!isAgent(author, config.agents) && !config.gate_humans)
      return { kind: 'not_gated', author };
    const evidence = evidenceFor(config);
    try {
      const claim = claimInputSchema.parse(buildPullRequestClaim(evidence, config));
      const simulated = await this.deps.claims.simulate(
        claim,
        githubSubmitter(this.deps.appId, installation.id),
      );
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

  /**
   * A merge group (merge queue) at its head commit: the current receipts of the pull requests
   * it contains, plus CI of the group's own head — judged on the merged result.
   */
  async mergeGroup(
    installation: Installation,
    ref: RepoRef,
    group: { headSha: string; numbers: number[]; baseRef: string },
  ): Promise<void> {
    const { octokit } = installation;
    const baseRef = group.baseRef.replace(/^refs\/heads\//, '');
    const repository = `${ref.owner}/${ref.repo}`;
    const loaded = await this.loadConfig(octokit, ref, baseRef);
    const check = await this.startCheck(
      octokit,
      ref,
      group.headSha,
      loaded.ok ? loaded.config.check_name : undefined,
    );
    await this.finish(installation, ref, check, { decidable: false }, async () => {
      if (!loaded.ok) {
        return renderWithoutReceipt('failure', `Invalid ${CONFIG_PATH}`, loaded.problem);
      }
      const ci = await loadCi(octokit, ref, group.headSha, this.deps.appId);
      const members: MergeGroupMember[] = [];
      for (const number of group.numbers) {
        const pr = await loadPullRequest(octokit, ref, number);
        const entry = await this.currentEntry(
          repository,
          number,
          pr.facts.headSha,
          installation.id,
        );
        members.push({
          number,
          headSha: pr.facts.headSha,
          url: pr.facts.url,
          receipt: entry
            ? {
                receipt_id: entry.receipt.receipt_id,
                verdict: entry.receipt.policy.verdict,
                admissibility: entry.receipt.admissibility.status,
              }
            : null,
          approved: entry?.claim.sources.some((s) => s.type === 'human_approval') ?? false,
        });
      }
      const claim = buildMergeGroupClaim(
        {
          repository,
          headSha: group.headSha,
          baseRef,
          members,
          ci,
          host: this.deps.host,
          baseUrl: this.deps.baseUrl,
        },
        loaded.config,
      );
      return this.evaluate(installation, claim, 'This merge group');
    });
  }

  /**
   * Evaluates a merge group again (its CI completed, or someone asked), but only one this
   * installation evaluated before from a signed merge_group delivery: its base and members
   * are read from that receipt, never from a branch name anyone can choose. Answers false
   * when the commit is no such group.
   */
  async reevaluateMergeGroup(
    installation: Installation,
    ref: RepoRef,
    headSha: string,
  ): Promise<boolean> {
    const repository = `${ref.owner}/${ref.repo}`;
    const { data } = await installation.octokit.rest.checks.listForRef({
      ...ref,
      ref: headSha,
      app_id: this.deps.appId,
      per_page: 100,
    });
    const receiptIds = data.check_runs
      .filter((run) => run.app?.id === this.deps.appId && run.external_id)
      .map((run) => run.external_id!);
    const prefix = `gh:${repository}:merge-group@${headSha}:`;
    const entry = (await this.deps.queries.getMany(receiptIds)).find(
      (e) =>
        e.claim.claim_id.startsWith(prefix) &&
        e.receipt.submitter?.kind === 'github_app' &&
        e.receipt.submitter.app_id === this.deps.appId &&
        e.receipt.submitter.installation_id === installation.id,
    );
    if (!entry) return false;
    const numbers = entry.claim.sources
      .map((s) => /^receipt:pr-(\d+)$/.exec(s.id)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number);
    await this.mergeGroup(installation, ref, {
      headSha,
      numbers,
      baseRef: entry.claim.action?.branch ?? '',
    });
    return true;
  }

  private async currentEntry(
    repository: string,
    number: number,
    headSha: string,
    installationId: number,
  ) {
    // Only this installation's own receipts: no API key can write in its scope.
    const scope = githubSubmitter(this.deps.appId, installationId).scope;
    const recent = await this.deps.queries.pullRequestReceiptsOf(
      scope,
      repository,
      String(number),
      100,
    );
    return recent.find((entry) => entry.receipt.subject.commit === headSha) ?? null;
  }

  private async evaluate(
    installation: Installation,
    input: unknown,
    subject: string,
  ): Promise<
    CheckRunOutput & { receiptId: string; verdict: EvaluateResponse['decision']['verdict'] }
  > {
    const claim = claimInputSchema.parse(input);
    const { response, replayed } = await this.deps.claims.evaluate(
      claim,
      githubSubmitter(this.deps.appId, installation.id),
    );
    this.deps.onReceipt?.(response, replayed);
    this.deps.log.info(
      {
        receipt_id: response.receipt.receipt_id,
        verdict: response.decision.verdict,
        claim_id: claim.claim_id,
        replayed,
      },
      'pull request evaluated',
    );
    // The same evidence again (a Re-run, a redelivery) answers the same escalated receipt: when
    // a person decided it already, the check shows that decision, not a new call for one.
    const decided = await this.decisionOn(response, installation.id);
    return {
      ...(decided ?? renderEvaluation(response, { baseUrl: this.deps.baseUrl, subject })),
      receiptId: response.receipt.receipt_id,
      verdict: response.decision.verdict,
    };
  }

  private async decisionOn(
    response: EvaluateResponse,
    installationId: number,
  ): Promise<CheckRunOutput | null> {
    if (response.decision.verdict !== 'ESCALATED' || !this.deps.dispositions) return null;
    const parentId = response.receipt.receipt_id;
    try {
      const scope = githubSubmitter(this.deps.appId, installationId).scope;
      const { receipt } = await this.deps.dispositions.dispositionOf(parentId, scope);
      if (!receipt.disposition) return null;
      return renderDisposition({
        baseUrl: this.deps.baseUrl,
        decision: receipt.disposition.decision,
        reviewer: receipt.disposition.reviewer,
        parentReceiptId: parentId,
        dispositionReceiptId: receipt.receipt_id,
      });
    } catch (error) {
      if (isSvcError(error) && error.code === 'not_found') return null;
      throw error;
    }
  }

  private async startCheck(
    octokit: Octokit,
    ref: RepoRef,
    headSha: string,
    name = DEFAULT_CHECK_NAME,
  ): Promise<{ id: number; name: string }> {
    // A run cut short (a GitHub failure, a restart) left its check in progress: carry on with
    // that one rather than leave it hanging beside a new one.
    const { data: open } = await octokit.rest.checks.listForRef({
      ...ref,
      ref: headSha,
      app_id: this.deps.appId,
      check_name: name,
      status: 'in_progress',
      per_page: 1,
    });
    const pending = open.check_runs.find((run) => run.app?.id === this.deps.appId);
    if (pending) return { id: pending.id, name };
    const { data } = await octokit.rest.checks.create({
      ...ref,
      name,
      head_sha: headSha,
      status: 'in_progress',
      started_at: new Date(this.deps.clock.now()).toISOString(),
      output: { title: 'Evaluating', summary: 'svc is evaluating this commit.' },
    });
    return { id: data.id, name };
  }

  /**
   * Completes the check with what `work` decides. A GitHub failure worth retrying propagates
   * (the job runs again); anything else ends the check with its reason, never in_progress.
   */
  private async finish(
    installation: Installation,
    ref: RepoRef,
    check: { id: number },
    options: { decidable: boolean },
    work: () => Promise<CheckRunOutput & { receiptId?: string }>,
  ): Promise<void> {
    const { octokit } = installation;
    let output: CheckRunOutput & { receiptId?: string };
    try {
      output = await work();
    } catch (error) {
      if (isTransient(error) && !installation.finalAttempt) throw error;
      const message = isSvcError(error) ? error.message : (error as Error).message;
      output = renderWithoutReceipt(
        'failure',
        'svc could not evaluate this commit',
        `The evaluation stopped: ${message}`,
      );
      this.deps.log.warn({ err: error, check_run_id: check.id }, 'evaluation failed');
    }
    await octokit.rest.checks.update({
      ...ref,
      check_run_id: check.id,
      status: 'completed',
      conclusion: output.conclusion,
      completed_at: new Date(this.deps.clock.now()).toISOString(),
      output: { title: output.title, summary: output.summary },
      actions: options.decidable ? actionsFor(output.conclusion) : [REEVALUATE],
      ...(output.receiptId
        ? {
            external_id: output.receiptId,
            details_url: receiptPageUrl(this.deps.baseUrl, output.receiptId),
          }
        : {}),
    });
  }
}
