import type { Logger } from 'pino';
import { isVerifyError } from '@svc/verify';
import { claimInputSchema } from '../core/claim-schema.js';
import { isSvcError } from '../core/errors.js';
import type { Clock } from '../ports/clock.js';
import type { LedgerQueries } from '../ports/ledger-queries.js';
import type { ClaimService, EvaluateResponse, SubmitterContext } from '../services/claims.js';
import type { DispositionService } from '../services/dispositions.js';
import {
  completedCheckRun,
  renderDisposition,
  renderEvaluation,
  renderWithoutReceipt,
  type CheckRunOutput,
} from './check-run.js';
import type { SessionLookup } from './agent-sessions.js';
import type { Octokit, RepoRef } from './github-evidence.js';
import {
  CONFIG_PATH,
  configOnBranch,
  DEFAULT_CHECK_NAME,
  type LoadedConfig,
} from './repo-config.js';

// The steps every flow of the gate shares (pull-request-flow.ts, merge-group-flow.ts): the
// repository's config, the check run's start and finish, and evaluate-and-record.

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
  /** Agent sessions, for `require.agent_session` (agent-sessions.ts); none: the rule fails. */
  sessions?: SessionLookup;
}

export interface Installation {
  octokit: Octokit;
  id: number;
  /** The job's last attempt: a transient failure then ends the check instead of retrying. */
  finalAttempt?: boolean;
}

/** What a flow reports on its check run; with the receipt it evaluated, if any. */
export type GateOutput = CheckRunOutput & { receiptId?: string };

/** The submitter of the App's receipts: idempotency is per installation (contract §7). */
export const githubSubmitter = (appId: number, installationId: number): SubmitterContext => ({
  submitter: { kind: 'github_app', app_id: appId, installation_id: installationId },
  scope: `app:${appId}:${installationId}`,
  account: null,
  lockedPolicy: null,
});

/**
 * The disposition recorded on an escalated receipt, if any, and whether the repository trusts
 * who recorded it: the App's own installation, or an API key its config names in `reviewers`.
 * Any account's reviewer key can decide through the API; only a trusted decision turns a
 * required check or answers a waiting deployment.
 */
export async function decidedEscalation(
  deps: Pick<GateDeps, 'appId' | 'dispositions'>,
  parentReceiptId: string,
  installationId: number,
  reviewers: readonly string[],
): Promise<{ response: EvaluateResponse; trusted: boolean } | null> {
  if (!deps.dispositions) return null;
  const scope = githubSubmitter(deps.appId, installationId).scope;
  try {
    const response = await deps.dispositions.dispositionOf(parentReceiptId, scope);
    if (!response.receipt.disposition) return null;
    const by = response.receipt.submitter;
    const trusted =
      (by?.kind === 'github_app' &&
        by.app_id === deps.appId &&
        by.installation_id === installationId) ||
      (by?.kind === 'api_key' && reviewers.includes(by.key_id));
    return { response, trusted };
  } catch (error) {
    if (isSvcError(error) && error.code === 'not_found') return null;
    throw error;
  }
}

/** Whether a GitHub API failure is worth another attempt of the whole job. */
export const isTransient = (error: unknown): boolean => {
  const status = (error as { status?: unknown }).status;
  if (typeof status !== 'number') return !isSvcError(error) && !isVerifyError(error);
  return status >= 500 || status === 429 || status === 403;
};

/**
 * Evaluates through the same ClaimService as POST /v1/evaluate and reports each result as a
 * check run on the evaluated commit.
 */
export class GateSteps {
  constructor(readonly deps: GateDeps) {}

  /** The repository's config on `branch` (usable, or why not). */
  async loadConfig(octokit: Octokit, ref: RepoRef, branch: string): Promise<LoadedConfig> {
    try {
      // The base branch, never the head: a pull request cannot loosen its own gate. The
      // plugin falls back to the owner's .github repository when the file is absent, and
      // merges what a file extends (`_extends`) under it.
      const found = await octokit.config.get({ ...ref, path: CONFIG_PATH, branch, defaults: {} });
      return configOnBranch(found, branch);
    } catch (error) {
      if (isTransient(error) && (error as { status?: unknown }).status !== undefined) throw error;
      return { ok: false, problem: `${CONFIG_PATH}: ${(error as Error).message}` };
    }
  }

  /**
   * Evaluates a claim in the installation's scope and renders the check run it earns. An
   * escalation already decided shows the decision when the App recorded it (a press of
   * Approve or Reject) or one of `reviewers` (the config's API keys) did.
   */
  async evaluate(
    installation: Installation,
    input: unknown,
    subject: string,
    reviewers: readonly string[] = [],
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
    const decided = await this.decisionOn(response, installation.id, reviewers);
    return {
      ...(decided ?? renderEvaluation(response, { baseUrl: this.deps.baseUrl, subject })),
      receiptId: response.receipt.receipt_id,
      verdict: response.decision.verdict,
    };
  }

  private async decisionOn(
    response: EvaluateResponse,
    installationId: number,
    reviewers: readonly string[],
  ): Promise<CheckRunOutput | null> {
    if (response.decision.verdict !== 'ESCALATED') return null;
    const parentId = response.receipt.receipt_id;
    const decided = await decidedEscalation(this.deps, parentId, installationId, reviewers);
    if (!decided) return null;
    const { receipt } = decided.response;
    // A key the repository's config does not name leaves the check as it was.
    if (!decided.trusted) {
      this.deps.log.info(
        { receipt_id: parentId, disposition_receipt_id: receipt.receipt_id },
        'disposition not shown: recorded by a key the repository does not name as a reviewer',
      );
      return null;
    }
    return renderDisposition({
      baseUrl: this.deps.baseUrl,
      decision: receipt.disposition!.decision,
      reviewer: receipt.disposition!.reviewer,
      parentReceiptId: parentId,
      dispositionReceiptId: receipt.receipt_id,
    });
  }

  /** A check run in progress on `headSha`: the one a cut-short run left, or a new one. */
  async startCheck(
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
  async finish(
    installation: Installation,
    ref: RepoRef,
    check: { id: number },
    options: { decidable: boolean },
    work: () => Promise<GateOutput>,
  ): Promise<void> {
    let output: GateOutput;
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
    await installation.octokit.rest.checks.update({
      ...ref,
      check_run_id: check.id,
      ...completedCheckRun(output, {
        decidable: options.decidable,
        baseUrl: this.deps.baseUrl,
        completedAt: new Date(this.deps.clock.now()).toISOString(),
      }),
    });
  }
}
