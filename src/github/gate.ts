import type { Logger } from 'pino';
import { hashCanonical, isVerifyError, proceeds } from '@svc/verify';
import { claimInputSchema, type ClaimInput } from '../core/claim-schema.js';
import { isSvcError } from '../core/errors.js';
import type { Clock } from '../ports/clock.js';
import type { LedgerQueries } from '../ports/ledger-queries.js';
import type { ClaimService, EvaluateResponse, SubmitterContext } from '../services/claims.js';
import {
  receiptPageUrl,
  REEVALUATE,
  renderEvaluation,
  renderWithoutReceipt,
  type CheckRunOutput,
} from './check-run.js';
import {
  loadCi,
  loadInvolved,
  loadPullRequest,
  loadReviews,
  type Octokit,
  type RepoRef,
} from './github-evidence.js';
import { buildPullRequestClaim, ciSource, latest, sourceProvenance } from './pull-request-claim.js';
import { DEFAULT_CHECK_NAME, isAgent, parseRepoConfig, type RepoConfig } from './repo-config.js';

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
    await this.finish(installation, ref, check, async () => {
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
      const [ci, reviews, involved] = await Promise.all([
        loadCi(octokit, ref, pr.facts.headSha, this.deps.appId),
        loadReviews(octokit, ref, number),
        loadInvolved(octokit, ref, number, pr),
      ]);
      const humanOperator =
        [...pr.assignees].sort().find((a) => a.toLowerCase() !== pr.facts.author.toLowerCase()) ??
        null;
      const claim = buildPullRequestClaim(
        { pr: pr.facts, ci, reviews, agent, humanOperator, involved, host: this.deps.host },
        loaded.config,
      );
      return this.evaluate(installation, claim, `Pull request #${number}`);
    });
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
    await this.finish(installation, ref, check, async () => {
      if (!loaded.ok) {
        return renderWithoutReceipt('failure', `Invalid ${CONFIG_PATH}`, loaded.problem);
      }
      const numbers = group.numbers;
      const ciRuns = await loadCi(octokit, ref, group.headSha, this.deps.appId);
      // The newest evidence time, so the same evidence always makes the same claim.
      const capturedAt = latest(ciRuns.map((r) => r.at));
      const provenance = (via: string) =>
        sourceProvenance(this.deps.host, group.headSha, capturedAt, via);
      const sources: ClaimInput['sources'] = [];
      const approved: number[] = [];
      for (const number of numbers) {
        const pr = await loadPullRequest(octokit, ref, number);
        const entry = await this.currentEntry(
          repository,
          number,
          pr.facts.headSha,
          installation.id,
        );
        const receipt = entry?.receipt ?? null;
        if (entry?.claim.sources.some((s) => s.type === 'human_approval')) approved.push(number);
        const allowed =
          receipt !== null && proceeds(receipt.policy.verdict, receipt.admissibility.status);
        sources.push({
          id: `receipt:pr-${number}`,
          type: 'policy_check',
          uri: receipt ? `${this.deps.baseUrl}/v1/receipts/${receipt.receipt_id}` : pr.facts.url,
          confidence: allowed ? 0.95 : 0.05,
          content: receipt
            ? `Pull request #${number} at ${pr.facts.headSha.slice(0, 12)}: receipt ${receipt.receipt_id}, ${receipt.policy.verdict} · ${receipt.admissibility.status}`
            : `Pull request #${number} at ${pr.facts.headSha.slice(0, 12)} has no receipt of this installation`,
          admissibility: allowed
            ? { state: 'ADMISSIBLE', reason: 'its own gate allowed it', required: true }
            : {
                state: 'INADMISSIBLE',
                reason: receipt ? 'its own gate did not allow it' : 'not evaluated by svc',
                required: true,
              },
          provenance: provenance('pulls'),
        });
      }
      // Each member's own approval carries over: otherwise a policy that requires one would
      // send every merge group to a human again.
      if (numbers.length > 0 && approved.length === numbers.length) {
        sources.push({
          id: `approvals@${group.headSha.slice(0, 12)}`,
          type: 'human_approval',
          uri: `https://${this.deps.host}/${repository}/commit/${group.headSha}`,
          confidence: 0.95,
          content: `Every pull request of the group (${numbers.map((n) => `#${n}`).join(', ')}) was approved on its latest push, as its own receipt records`,
          provenance: provenance('pulls'),
        });
      }
      const ci = ciSource(
        ciRuns,
        group.headSha,
        `https://${this.deps.host}/${repository}/commit/${group.headSha}`,
        provenance('checks'),
      );
      if (ci) sources.push(ci);
      else {
        sources.push({
          id: `ci@${group.headSha.slice(0, 12)}`,
          type: 'ci',
          uri: `https://${this.deps.host}/${repository}/commit/${group.headSha}`,
          confidence: 0.3,
          content: 'No CI has reported on the merge group yet',
          admissibility: {
            state: 'INADMISSIBLE',
            reason:
              'CI has not started on the merged result; svc evaluates again when it completes',
            required: true,
          },
          provenance: provenance('checks'),
        });
      }
      const body = {
        entity: repository,
        claim: `Merge queue group ${group.headSha.slice(0, 12)} into ${baseRef}: pull requests ${numbers.map((n) => `#${n}`).join(', ') || 'none'}`,
        action: {
          action_type: 'merge' as const,
          target_system: 'github',
          repository,
          commit: group.headSha,
          branch: baseRef,
        },
        sources,
        ...(loaded.config.policy ? { policy: loaded.config.policy } : {}),
        ...(loaded.config.policyConfig ? { policyConfig: loaded.config.policyConfig } : {}),
      };
      const digest = hashCanonical(body).slice(7, 23);
      const claim = {
        claim_id: `gh:${repository}:merge-group@${group.headSha}:${digest}`,
        ...body,
      };
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
  ): Promise<CheckRunOutput & { receiptId?: string }> {
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
    return {
      ...renderEvaluation(response, { baseUrl: this.deps.baseUrl, subject }),
      receiptId: response.receipt.receipt_id,
    };
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
      actions: [REEVALUATE],
      ...(output.receiptId
        ? {
            external_id: output.receiptId,
            details_url: receiptPageUrl(this.deps.baseUrl, output.receiptId),
          }
        : {}),
    });
  }
}
