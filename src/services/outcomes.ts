import { monotonicFactory } from 'ulid';
import { HASH_PATTERN, portableSha256Hex, type Sha256Hex } from '@svc/verify';
import { GIT_COMMIT } from '../core/agent/session-facts-schema.js';
import { SvcError } from '../core/errors.js';
import {
  buildOutcomeParts,
  type OutcomeDecision,
  type OutcomeReport,
  type OutcomeStatus,
} from '../core/outcome.js';
import { toolCallOf, type ToolCallFacts } from '../core/tool-call.js';
import type { Clock } from '../ports/clock.js';
import type { LedgerEntry, LedgerStore } from '../ports/ledger-store.js';
import type { ReceiptSealer } from '../ports/receipt-sealer.js';
import type { SessionStore } from '../ports/session-store.js';
import type { ServerKey } from '../ports/signer.js';
import { responseOf, type EvaluateResponse, type SubmitterContext } from './claims.js';
import { sealerOf } from './receipt-sealer.js';

/** What a harness reports after a tool call (contract §12). */
export interface OutcomeRequest {
  session_id: string;
  tool_name: string;
  /** The call's input digest, as in its claim; or else the harness's tool-use id. */
  input_digest?: string;
  tool_use_id?: string;
  /**
   * An MCP tool named without its server (the harness's after-event does not say it): the
   * call is the latest decision on `mcp__<any server>__<this tool>` with the input digest.
   */
  any_mcp_server?: string;
  /** The harness, named in the outcome of a call the ledger holds no decision on. */
  harness?: string;
  status: OutcomeStatus;
  exit_code?: number;
  output_digest?: string;
  /** The repository's HEAD after the call (OutcomeReport.git_head). */
  git_head?: string;
}

export interface OutcomeServiceDeps {
  ledger: LedgerStore;
  sessions: Pick<SessionStore, 'latestDecision' | 'approvalOf'>;
  serverKey: ServerKey;
  clock: Clock;
  logOrigin: string;
  sha256Hex?: Sha256Hex;
  sealer?: ReceiptSealer;
}

/**
 * Outcomes (contract §12): what a harness reported after a tool call, as a receipt linked to
 * the decision on the call, on the same chain as every receipt. A call without an ALLOWED
 * decision is recorded all the same, BLOCKED by `ran_without_allow`.
 */
export class OutcomeService {
  private readonly nextUlid = monotonicFactory();
  private readonly sha256Hex: Sha256Hex;
  private readonly sealer: ReceiptSealer;

  constructor(private readonly deps: OutcomeServiceDeps) {
    this.sha256Hex = deps.sha256Hex ?? portableSha256Hex;
    this.sealer = sealerOf({ ...deps, sha256Hex: this.sha256Hex });
  }

  /**
   * Records the outcome of the most recent decision on the call in the caller's scope (same
   * session, tool name and input digest, or tool-use id). The same report again answers the
   * stored outcome (`replayed`); another report of the same decision is 409 claim_conflict.
   */
  async recordOutcome(
    request: OutcomeRequest,
    context: SubmitterContext,
  ): Promise<{ response: EvaluateResponse; replayed: boolean }> {
    checkRequest(request);
    const found = await this.deps.sessions.latestDecision({
      scope: context.scope,
      sessionId: request.session_id,
      toolName: request.tool_name,
      ...(request.any_mcp_server !== undefined && { mcpToolOfAnyServer: request.any_mcp_server }),
      ...(request.input_digest === undefined
        ? { toolUseId: request.tool_use_id! }
        : { inputDigest: request.input_digest }),
    });
    const decision = found ? await this.decisionOf(found) : null;
    const call: ToolCallFacts = (found && toolCallOf(found.claim)) ?? {
      sessionId: request.session_id,
      harness: request.harness ?? 'unknown',
      toolName: request.tool_name,
      // A call known only by its tool-use id: its input was never seen.
      inputDigest: request.input_digest ?? `unknown:${request.tool_use_id!}`,
      ...(request.tool_use_id === undefined ? {} : { toolUseId: request.tool_use_id }),
    };
    const report: OutcomeReport = {
      status: request.status,
      ...(request.exit_code === undefined ? {} : { exit_code: request.exit_code }),
      ...(request.output_digest === undefined ? {} : { output_digest: request.output_digest }),
      ...(request.git_head === undefined ? {} : { git_head: request.git_head }),
    };
    const now = this.deps.clock.now();
    const parts = buildOutcomeParts({
      receiptId: `dr-${this.nextUlid(now)}`,
      issuedAt: new Date(now).toISOString(),
      decision,
      call,
      report,
      submitter: context.submitter,
      sha256Hex: this.sha256Hex,
    });
    const result = await this.sealer.seal({
      scope: context.scope,
      claimId: parts.claim.claim_id,
      draft: parts.draft,
      claim: parts.claim,
      evaluation: parts.evaluation,
      apiKeyId: context.account,
    });
    if (result.status === 'exists') return answerExisting(result.entry, report);
    return { response: responseOf(result.entry), replayed: false };
  }

  /** The decision as an outcome sees it: whether it allowed the call, an approval included. */
  private async decisionOf(entry: LedgerEntry): Promise<OutcomeDecision> {
    const base = { receipt: entry.receipt, claim: entry.claim, config: entry.evaluation.config };
    const verdict = entry.receipt.policy.verdict;
    if (verdict === 'ALLOWED') return { ...base, allowed: true };
    if (verdict === 'ESCALATED') {
      const approval = await this.deps.sessions.approvalOf(entry.receipt.receipt_id);
      if (approval) return { ...base, allowed: true, approvedBy: approval.receiptId };
    }
    return { ...base, allowed: false };
  }
}

/** The stored outcome again when it reports the same; else the decision has another one. */
function answerExisting(
  entry: LedgerEntry,
  report: OutcomeReport,
): { response: EvaluateResponse; replayed: true } {
  const stored = entry.receipt.outcome;
  const same =
    stored !== undefined &&
    stored.status === report.status &&
    stored.exit_code === report.exit_code &&
    stored.output_digest === report.output_digest &&
    entry.claim.action?.git_head === report.git_head;
  if (!same)
    throw new SvcError(
      'claim_conflict',
      `the decision ${stored?.parent_receipt_id ?? ''} has another outcome already (receipt ${entry.receipt.receipt_id})`,
    );
  return { response: responseOf(entry), replayed: true };
}

/** Misuse by a caller (an adapter): the route validates what clients send before this. */
function checkRequest(request: OutcomeRequest): void {
  const problem =
    request.input_digest === undefined && request.tool_use_id === undefined
      ? 'an outcome names its call by input_digest or tool_use_id'
      : request.any_mcp_server !== undefined && request.input_digest === undefined
        ? 'an MCP tool named without its server is found by its input_digest'
        : request.input_digest !== undefined && !HASH_PATTERN.test(request.input_digest)
          ? 'input_digest must be "sha256:" and 64 lowercase hex digits'
          : request.output_digest !== undefined && !HASH_PATTERN.test(request.output_digest)
            ? 'output_digest must be "sha256:" and 64 lowercase hex digits'
            : request.exit_code !== undefined && !Number.isSafeInteger(request.exit_code)
              ? 'exit_code must be an integer'
              : request.git_head !== undefined && !GIT_COMMIT.test(request.git_head)
                ? 'git_head must be a commit id: 40 or 64 lower-case hex digits'
                : null;
  if (problem) throw new SvcError('validation_failed', problem);
}
