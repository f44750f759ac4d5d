import type { Logger } from 'pino';
import { isSvcError } from '../core/errors.js';
import type { LedgerQueries } from '../ports/ledger-queries.js';
import type { LedgerEntry } from '../ports/ledger-store.js';
import type { EvaluateResponse } from '../services/claims.js';
import type { DispositionService } from '../services/dispositions.js';
import { APPROVE, receiptPageUrl, REJECT, renderDisposition } from './check-run.js';
import { githubSubmitter, type Installation } from './gate.js';
import { involvedOf, loadCommits, loadPullRequest, type RepoRef } from './github-evidence.js';

/** Who may decide an escalation on GitHub: people who could merge the pull request anyway. */
const DECIDING_PERMISSIONS = new Set(['write', 'maintain', 'admin']);

export type PressDecision = 'approve' | 'reject';

/** The decision a button stands for, or null for any other button. */
export const decisionOf = (identifier: string | undefined): PressDecision | null =>
  identifier === APPROVE.identifier
    ? 'approve'
    : identifier === REJECT.identifier
      ? 'reject'
      : null;

/** What is known of the person who pressed, and of the pull request, when judging a press. */
export interface PressFacts {
  sender: { login: string; type: string };
  /** The sender's permission on the repository (`role_name`, which tells maintain from write). */
  permission: string;
  author: string;
  /** Authors and committers of the pull request's commits. */
  committers: readonly string[];
  /** The escalated claim's human operator, if any. */
  operator: string | null;
}

/**
 * Why a press of Approve or Reject may not decide the escalation, or null when it may. Only a
 * person (a `User`, never a `Bot`: see STACK_NOTES on Copilot's reviews) with write, maintain or
 * admin permission who neither wrote the change (author, commit author or committer) nor set the
 * agent to work (the operator) decides: whoever acted does not judge the action.
 */
export function pressRefusal(facts: PressFacts): string | null {
  const same = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();
  const login = facts.sender.login;
  if (facts.sender.type !== 'User') return `the sender is a ${facts.sender.type}, not a person`;
  if (!DECIDING_PERMISSIONS.has(facts.permission))
    return `the sender has ${facts.permission} permission; write, maintain or admin is needed`;
  if (same(login, facts.author)) return 'the sender opened the pull request';
  if (facts.committers.some((c) => same(c, login)))
    return 'the sender authored or committed a commit of the pull request';
  if (facts.operator !== null && same(facts.operator, login))
    return "the sender is the agent's operator";
  return null;
}

/** The pressed check run, as GitHub's (signed) check_run.requested_action delivery names it. */
export interface PressedRun {
  id: number;
  headSha: string;
  /** The receipt the check run reports (the gate sets it as the run's external_id). */
  externalId: string | null;
  /** The run's conclusion when it was pressed. */
  conclusion: string | null;
}

export interface EscalationPressDeps {
  dispositions: DispositionService;
  queries: LedgerQueries;
  appId: number;
  baseUrl: string;
  log: Logger;
  /** Told of each disposition written (the receipts metric). */
  onReceipt?: (response: EvaluateResponse, replayed: boolean) => void;
}

/**
 * The Approve and Reject buttons of an ESCALATED check run: an eligible person's press is
 * recorded as a disposition receipt (contract §11) and ends the check run with the decision.
 * Any other press changes nothing and is logged at info with who pressed and why it was refused.
 */
export class EscalationPress {
  constructor(private readonly deps: EscalationPressDeps) {}

  async press(
    installation: Installation,
    ref: RepoRef,
    run: PressedRun,
    decision: PressDecision,
    sender: { login: string; type: string },
  ): Promise<void> {
    const repository = `${ref.owner}/${ref.repo}`;
    const fields: Record<string, unknown> = {
      repository,
      check_run_id: run.id,
      decision,
      sender: sender.login,
      sender_type: sender.type,
    };
    const refuse = (reason: string) =>
      this.deps.log.info({ ...fields, reason }, 'escalation decision refused');

    const parent = await this.currentEscalation(installation, ref, run);
    if (typeof parent === 'string') return refuse(parent);
    fields.parent_receipt_id = parent.receipt.receipt_id;
    const number = Number(parent.receipt.subject.pull_request);
    const pr = await loadPullRequest(installation.octokit, ref, number);
    if (!pr.open) return refuse(`pull request #${number} is not open`);
    // A push since: the new head is evaluated afresh, and this check run is an old commit's.
    if (pr.facts.headSha !== run.headSha)
      return refuse(`the check run is for ${run.headSha}, not the head ${pr.facts.headSha}`);
    // No permission lookup for an account that is no person: it is refused whatever it holds.
    if (sender.type !== 'User') return refuse(`the sender is a ${sender.type}, not a person`);
    const permission = await permissionOf(installation, ref, sender.login);
    const commits = await loadCommits(installation.octokit, ref, number);
    const refusal = pressRefusal({
      sender,
      permission,
      author: pr.facts.author,
      committers: involvedOf({ ...pr, assignees: [] }, commits),
      operator: parent.claim.action?.human_operator ?? null,
    });
    if (refusal) return refuse(refusal);

    let recorded;
    try {
      recorded = await this.deps.dispositions.dispose(
        parent.receipt.receipt_id,
        {
          decision,
          reviewer: { kind: 'github_user', id: sender.login },
          reason: `${decision === 'approve' ? 'approved' : 'rejected'} on GitHub by @${sender.login}`,
        },
        githubSubmitter(this.deps.appId, installation.id),
        undefined,
      );
    } catch (error) {
      // Decided already (409), or the separation of duties the service enforces itself (403).
      if (isSvcError(error)) return refuse(error.message);
      throw error;
    }
    // The same press again: a new run of a delivery whose check update failed after the
    // receipt was written finishes the check; once the check shows the decision, nothing to do.
    if (recorded.replayed && run.conclusion !== 'action_required')
      return refuse(
        `receipt ${parent.receipt.receipt_id} was decided already (${recorded.response.receipt.receipt_id})`,
      );
    if (!recorded.replayed) this.deps.onReceipt?.(recorded.response, false);
    const dispositionId = recorded.response.receipt.receipt_id;
    const output = renderDisposition({
      baseUrl: this.deps.baseUrl,
      decision,
      reviewer: { kind: 'github_user', id: sender.login },
      parentReceiptId: parent.receipt.receipt_id,
      dispositionReceiptId: dispositionId,
    });
    await installation.octokit.rest.checks.update({
      ...ref,
      check_run_id: run.id,
      status: 'completed',
      conclusion: output.conclusion,
      output: { title: output.title, summary: output.summary },
      // The decision is made: only a fresh evaluation is left to ask for.
      actions: [],
      details_url: receiptPageUrl(this.deps.baseUrl, dispositionId),
    });
    this.deps.log.info(
      { ...fields, disposition_receipt_id: dispositionId, replayed: recorded.replayed },
      'escalation decided on GitHub',
    );
  }

  /**
   * The receipt the pressed run reports, when it is an escalation this installation wrote for
   * this repository and still the pull request's latest evaluation of that commit; otherwise
   * why not. The run's external_id is only a pointer: the ledger says what it is.
   */
  private async currentEscalation(
    installation: Installation,
    ref: RepoRef,
    run: PressedRun,
  ): Promise<LedgerEntry | string> {
    const repository = `${ref.owner}/${ref.repo}`;
    if (!run.externalId) return 'the check run reports no receipt';
    const scope = githubSubmitter(this.deps.appId, installation.id).scope;
    const [entry] = await this.deps.queries.getMany([run.externalId], scope);
    if (!entry || entry.receipt.subject.repository !== repository)
      return `receipt ${run.externalId} is not this installation's for ${repository}`;
    if (entry.receipt.disposition || entry.receipt.policy.verdict !== 'ESCALATED')
      return `receipt ${run.externalId} is not ESCALATED`;
    if (entry.receipt.subject.commit !== run.headSha || !entry.receipt.subject.pull_request)
      return `receipt ${run.externalId} is not the check run's pull request evaluation`;
    const recent = await this.deps.queries.pullRequestReceiptsOf(
      scope,
      repository,
      String(entry.receipt.subject.pull_request),
      100,
    );
    const latest = recent.find(
      (e) => e.receipt.subject.commit === run.headSha && !e.receipt.disposition,
    );
    if (latest && latest.receipt.receipt_id !== entry.receipt.receipt_id)
      return `receipt ${run.externalId} was superseded by ${latest.receipt.receipt_id}`;
    return entry;
  }
}

/**
 * A login's permission on the repository: `role_name`, which tells maintain from write
 * (`permission` folds it into write). GitHub answers 404 for an account it does not know as a
 * collaborator: no permission, not a failure worth another run.
 */
async function permissionOf(installation: Installation, ref: RepoRef, login: string) {
  try {
    const { data } = await installation.octokit.rest.repos.getCollaboratorPermissionLevel({
      ...ref,
      username: login,
    });
    return (data as { role_name?: string }).role_name ?? data.permission;
  } catch (error) {
    if ((error as { status?: unknown }).status === 404) return 'none';
    throw error;
  }
}
