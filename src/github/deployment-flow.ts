import { claimInputSchema } from '../core/claim-schema.js';
import { isSvcError } from '../core/errors.js';
import { buildDeploymentClaim } from './deployment-claim.js';
import { deploymentReview, dispositionReview, type DeploymentReview } from './deployment-answer.js';
import { deploymentPolicy } from './environment-config.js';
import {
  decidedEscalation,
  GateSteps,
  githubSubmitter,
  isTransient,
  type GateDeps,
  type Installation,
} from './gate.js';
import { loadCi, type Octokit, type RepoRef } from './github-evidence.js';
import { mergeGroupMember } from './merge-queue.js';
import { isAgent } from './repo-config.js';
import type { MergeGroupMember } from './merge-group-claim.js';

/** A deployment waiting on an environment, as a signed deployment_protection_rule names it. */
export interface WaitingDeployment {
  environment: string;
  deploymentId: number;
  runId: number;
  sha: string;
  ref: string;
  event: string | null;
  actor: string | null;
  /** Where .github/svc.yml is read: the default branch, never the deployed ref. */
  defaultBranch: string;
}

/** What the flow did: the receipt, and whether GitHub took an answer. */
export interface DeploymentOutcome {
  receiptId: string | null;
  verdict: string | null;
  answer: DeploymentReview | null;
  /** `answered`; `waiting` (ESCALATED); `already_decided` (GitHub refused: timed out, cancelled). */
  result: 'answered' | 'waiting' | 'already_decided' | 'invalid_config';
}

/**
 * The deployment flow (custom deployment protection rules): the deployed commit's CI and the
 * receipts of the pull requests that brought it, built into a `deployment` claim
 * (deployment-claim.ts), evaluated, and answered through the run's deployment callback.
 */
export class DeploymentFlow {
  private readonly steps: GateSteps;

  constructor(private readonly deps: GateDeps) {
    this.steps = new GateSteps(deps);
  }

  async evaluate(
    installation: Installation,
    ref: RepoRef,
    deployment: WaitingDeployment,
  ): Promise<DeploymentOutcome> {
    const { octokit } = installation;
    const repository = `${ref.owner}/${ref.repo}`;
    const loaded = await this.steps.loadConfig(octokit, ref, deployment.defaultBranch);
    // A broken config rejects: a deployment is never approved on a gate nobody can read.
    if (!loaded.ok) return this.reject(octokit, ref, deployment, loaded.problem);
    const { config } = loaded;
    const ci = await loadCi(octokit, ref, deployment.sha, this.deps.appId);
    const pullRequests = await this.pullRequestsOf(installation, ref, deployment.sha);
    const claim = claimInputSchema.parse(
      buildDeploymentClaim(
        {
          repository,
          environment: deployment.environment,
          deploymentId: deployment.deploymentId,
          runId: deployment.runId,
          sha: deployment.sha,
          ref: deployment.ref,
          event: deployment.event,
          actor: deployment.actor
            ? { login: deployment.actor, agent: isAgent(deployment.actor, config.agents) }
            : null,
          ci,
          pullRequests,
          host: this.deps.host,
          baseUrl: this.deps.baseUrl,
        },
        deploymentPolicy(config, deployment.environment),
      ),
    );
    let evaluated;
    try {
      evaluated = await this.deps.claims.evaluate(
        claim,
        githubSubmitter(this.deps.appId, installation.id),
      );
    } catch (error) {
      if (!isSvcError(error)) throw error;
      // The claim cannot be judged (a policy the config names does not exist): rejected
      // with the reason, rather than left waiting for GitHub's timeout.
      return this.reject(octokit, ref, deployment, error.message);
    }
    const { response, replayed } = evaluated;
    this.deps.onReceipt?.(response, replayed);
    const receiptId = response.receipt.receipt_id;
    this.deps.log.info(
      {
        receipt_id: receiptId,
        verdict: response.decision.verdict,
        claim_id: claim.claim_id,
        environment: deployment.environment,
        deployment_id: deployment.deploymentId,
        replayed,
      },
      'deployment evaluated',
    );
    const answer =
      deploymentReview(
        deployment.environment,
        {
          receiptId,
          verdict: response.decision.verdict,
          admissibility: response.decision.admissibility,
          rules: response.policy.rules,
        },
        this.deps.baseUrl,
      ) ??
      (await this.decidedAnswer(
        receiptId,
        installation.id,
        deployment.environment,
        config.reviewers,
      ));
    if (!answer)
      return { receiptId, verdict: response.decision.verdict, answer: null, result: 'waiting' };
    const result = await this.answer(octokit, ref, deployment, answer);
    return { receiptId, verdict: response.decision.verdict, answer, result: result ?? 'answered' };
  }

  /** Rejects a deployment svc could not judge, with the reason and no receipt. */
  private async reject(
    octokit: Octokit,
    ref: RepoRef,
    deployment: WaitingDeployment,
    problem: string,
  ): Promise<DeploymentOutcome> {
    const answer: DeploymentReview = {
      environment_name: deployment.environment,
      state: 'rejected',
      comment: `svc could not judge this deployment: ${problem}`.slice(0, 1000),
    };
    const result = await this.answer(octokit, ref, deployment, answer);
    return { receiptId: null, verdict: null, answer, result: result ?? 'invalid_config' };
  }

  /**
   * Answers a waiting deployment whose ESCALATED receipt a person decided (the disposition
   * hook's job): with the decision when the repository trusts its recorder (`reviewers` of
   * .github/svc.yml on the default branch, or the App itself), else not at all.
   */
  async answerDisposition(
    installation: Installation,
    ref: RepoRef,
    parent: { receiptId: string; runId: number; environment: string },
  ): Promise<DeploymentOutcome['result']> {
    const { octokit } = installation;
    const { data: repository } = await octokit.rest.repos.get({ ...ref });
    const loaded = await this.steps.loadConfig(octokit, ref, repository.default_branch);
    if (!loaded.ok) return 'invalid_config';
    const answer = await this.decidedAnswer(
      parent.receiptId,
      installation.id,
      parent.environment,
      loaded.config.reviewers,
    );
    if (!answer) {
      this.deps.log.info(
        { receipt_id: parent.receiptId, run_id: parent.runId },
        'disposition not answered on GitHub: recorded by a key the repository does not name as a reviewer',
      );
      return 'waiting';
    }
    return (await this.answer(octokit, ref, parent, answer)) ?? 'answered';
  }

  /** A redelivery of a deployment a person decided already is answered with that decision. */
  private async decidedAnswer(
    receiptId: string,
    installationId: number,
    environment: string,
    reviewers: readonly string[],
  ): Promise<DeploymentReview | null> {
    // As for check runs: only a decision the repository trusts answers GitHub.
    const decided = await decidedEscalation(this.deps, receiptId, installationId, reviewers);
    if (!decided?.trusted) return null;
    const { receipt } = decided.response;
    return dispositionReview(
      environment,
      receipt.disposition!,
      receiptId,
      receipt.receipt_id,
      this.deps.baseUrl,
    );
  }

  /**
   * POSTs the answer to the run's deployment callback. GitHub refuses (4xx) an answer to a
   * deployment it decided already (timed out, cancelled, answered before): that is recorded
   * in the log and not retried, so a redelivery never answers twice.
   */
  private async answer(
    octokit: Octokit,
    ref: RepoRef,
    deployment: { runId: number; environment: string },
    review: DeploymentReview,
  ): Promise<'already_decided' | null> {
    try {
      await octokit.rest.actions.reviewCustomGatesForRun({
        ...ref,
        run_id: deployment.runId,
        ...review,
      });
      return null;
    } catch (error) {
      const status = (error as { status?: unknown }).status;
      // 403 and 429 are rate limits (gate.ts's isTransient): the job tries again.
      if (typeof status === 'number' && status >= 400 && status < 500 && !isTransient(error)) {
        this.deps.log.info(
          { run_id: deployment.runId, environment: deployment.environment, status },
          'deployment already decided on GitHub: answer not taken',
        );
        return 'already_decided';
      }
      throw error;
    }
  }

  /** The pull requests that brought `sha` (merged into it, or whose head it is). */
  private async pullRequestsOf(
    installation: Installation,
    ref: RepoRef,
    sha: string,
  ): Promise<MergeGroupMember[]> {
    const { data } = await installation.octokit.rest.repos.listPullRequestsAssociatedWithCommit({
      ...ref,
      commit_sha: sha,
      per_page: 100,
    });
    const brought = data.filter(
      (pr) => (pr.merged_at && pr.merge_commit_sha === sha) || pr.head.sha === sha,
    );
    const scope = githubSubmitter(this.deps.appId, installation.id).scope;
    const repository = `${ref.owner}/${ref.repo}`;
    const members: MergeGroupMember[] = [];
    for (const pr of brought) {
      // Only this installation's own receipts: no API key can write in its scope. The merge
      // receipt is the one at the pull request's head when it merged.
      const recent = await this.deps.queries.pullRequestReceiptsOf(
        scope,
        repository,
        String(pr.number),
        100,
      );
      const entry = recent.find((e) => e.receipt.subject.commit === pr.head.sha) ?? null;
      members.push(
        mergeGroupMember({ number: pr.number, headSha: pr.head.sha, url: pr.html_url }, entry),
      );
    }
    return members;
  }
}
