import { setTimeout as sleep } from 'node:timers/promises';
import { canonicalize, hashCanonical, portableSha256Hex, type Sha256Hex } from '@svc/verify';
import {
  acknowledge,
  answer,
  asks,
  type HarnessName,
  type HookAnswer,
  type HookEvent,
} from '@svc/hook';
import {
  buildToolCallClaim,
  redactToolCallClaim,
  toolInputDigest,
} from '../core/agent/tool-call-claim.js';
import { isAbsoluteDir } from '../core/agent/tool-paths.js';
import { APPROVAL_SOURCE_ID, approvalOf } from '../core/approval.js';
import type { ClaimInput } from '../core/claim-schema.js';
import { isSvcError } from '../core/errors.js';
import type { Clock } from '../ports/clock.js';
import type { LedgerEntry, LedgerStore } from '../ports/ledger-store.js';
import type { SessionStore } from '../ports/session-store.js';
import type { AgentApprovals } from './agent-approvals.js';
import { ExpiringCache } from './expiring-cache.js';
import {
  responseOf,
  type ClaimService,
  type EvaluateResponse,
  type SubmitterContext,
} from './claims.js';
import type { OutcomeService } from './outcomes.js';

/** The policy a tool call is decided under when neither the key's lock nor the request names one. */
export const HOOK_DEFAULT_POLICY = 'agent';

export interface HookRequest {
  harness: HarnessName;
  event: HookEvent;
  /** `?policy=`: a policy for this call; the key's lock still wins (as for every claim). */
  policy?: string;
  /** Whether the harness can ask its operator now (`?ask=false` for a headless run). */
  canAsk: boolean;
  /** `?git_head=` on a post-tool event: the repository's HEAD after the call (svc-hook reads it). */
  gitHead?: string;
  /** `?repository=`: the repository the session works in, the claim's action.repository. */
  repository?: string;
  /**
   * `?wait=`: how long an escalation the harness cannot ask about waits for a reviewer's
   * decision before it is answered with a deny naming where to decide (ms).
   */
  waitMs?: number;
  /** Aborted when the harness stops waiting (its connection closed). */
  signal?: AbortSignal;
}

/** A call's session with its project directory, and where the call runs when that differs. */
interface Where {
  session: { id: string; cwd?: string };
  runDir?: string;
}

/**
 * How long a session's project directory is taken from memory before the store is asked
 * again, and for how many sessions. A start recorded by this process is seen at once; one
 * recorded by another process sharing the store (SVC_WORKERS) within this time, as a revoked
 * key is by the authentication cache. Asking the store on every call cost about 5 % of a
 * hook decision's CPU (docs/BENCHMARKS.md).
 */
const PROJECT_DIR_TTL_MS = 5_000;
const MAX_PROJECT_DIRS = 4_096;

const sessionKey = (scope: string, sessionId: string) => `${scope}\n${sessionId}`;

const POLL_MS = 500;
const MAX_WAITING = 64;

/**
 * An agent harness's hook event, handled (contract §12): a pre-tool event becomes a tool-call
 * claim decided like any other (an approval of this exact call, if one is open, cited in it),
 * answered in the harness's own format; a post-tool event becomes the call's outcome receipt;
 * session start and end events are recorded as the session's start and end (not receipts: a
 * session is the list of its records) and acknowledged.
 */
export class AgentHookService {
  /** Answers waiting for a reviewer now, in all and by submitter scope. */
  private waiting = 0;
  private readonly waitingBy = new Map<string, number>();
  private readonly sha256Hex: Sha256Hex;
  /** Project directories by scope and session id (see PROJECT_DIR_TTL_MS). */
  private readonly projectDirs = new ExpiringCache<string | null>(
    PROJECT_DIR_TTL_MS,
    MAX_PROJECT_DIRS,
  );

  constructor(
    private readonly deps: {
      claims: ClaimService;
      outcomes: OutcomeService;
      approvals: AgentApprovals;
      /** Where session start and end events are recorded. */
      sessions: Pick<SessionStore, 'recordEvent' | 'projectDirOf'>;
      /**
       * Where a waiting answer looks for a reviewer's decision, and a call sent again finds
       * its first decision.
       */
      ledger: Pick<LedgerStore, 'dispositionsOf' | 'getByClaimId'>;
      /**
       * How often a waiting answer looks (default 500 ms), and how many may wait (64; a
       * quarter of them for one account).
       */
      pollMs?: number;
      maxWaiting?: number;
      clock: Clock;
      baseUrl: string;
      /** SVC_AGENT_STORE_INPUTS: keep the raw input in the claim. */
      storeInputs: boolean;
      /** The SHA-256 of inputs' and outputs' digests (default: the portable one). */
      sha256Hex?: Sha256Hex;
      /** Told of every receipt issued (not of replays): the metrics. */
      onReceipt?: (response: EvaluateResponse) => void;
    },
  ) {
    this.sha256Hex = deps.sha256Hex ?? portableSha256Hex;
  }

  async handle(request: HookRequest, context: SubmitterContext): Promise<HookAnswer> {
    const { event, harness } = request;
    if (event.kind === 'pre_tool' && event.tool) return this.decide(request, context);
    if (event.kind === 'post_tool' && event.tool) {
      const { response, replayed } = await this.deps.outcomes.recordOutcome(
        {
          session_id: event.session.id,
          tool_name: event.tool.name,
          input_digest: toolInputDigest(event.tool.input, this.sha256Hex),
          ...(event.tool.any_mcp_server !== undefined && {
            any_mcp_server: event.tool.any_mcp_server,
          }),
          harness,
          status: event.outcome?.status ?? 'succeeded',
          ...(event.outcome?.exit_code !== undefined && { exit_code: event.outcome.exit_code }),
          ...(event.outcome?.output !== undefined && {
            output_digest: hashCanonical(event.outcome.output, this.sha256Hex),
          }),
          ...(request.gitHead !== undefined && { git_head: request.gitHead }),
        },
        context,
      );
      if (!replayed) this.deps.onReceipt?.(response);
    } else if (event.kind === 'session_start' || event.kind === 'session_end') {
      await this.deps.sessions.recordEvent({
        scope: context.scope,
        session_id: event.session.id,
        harness,
        kind: event.kind === 'session_start' ? 'start' : 'end',
        at: new Date(this.deps.clock.now()).toISOString(),
        reason: event.session_reason ?? null,
        ...(event.kind === 'session_start' && { cwd: event.session.cwd ?? null }),
      });
      if (event.kind === 'session_start') {
        const key = sessionKey(context.scope, event.session.id);
        this.projectDirs.set(key, event.session.cwd ?? null, this.deps.clock.now());
      }
    }
    return acknowledge(harness);
  }

  private async decide(request: HookRequest, context: SubmitterContext): Promise<HookAnswer> {
    const where = await this.whereOf(request, context);
    const first = await this.evaluate(this.claimOf(request, where), context);
    const { receipt } = first;
    // Where the harness cannot ask, the answer may wait for a reviewer's decision (?wait=).
    const wait = request.waitMs ?? 0;
    const asked = request.canAsk && asks(request.harness, request.event.hook_event);
    if (receipt.policy.verdict !== 'ESCALATED' || asked || wait <= 0)
      return this.answerOf(request, first);
    const decided = await this.reviewerDecision(
      context.scope,
      receipt.receipt_id,
      wait,
      request.signal,
    );
    const disposition = decided?.receipt.disposition;
    if (!disposition) return this.answerOf(request, first);
    if (disposition.decision === 'approve') {
      // Decided again, citing the approval: exactly this call, once (contract §12).
      const again = this.claimOf(request, where, receipt.receipt_id);
      return this.answerOf(request, await this.evaluate(again, context));
    }
    const why = disposition.reason ? `: ${disposition.reason}` : '';
    return answer(request.harness, {
      verdict: 'BLOCKED',
      reasons: [
        `reviewer ${disposition.reviewer.id} rejected this call${why} (disposition ${decided.receipt.receipt_id})`,
      ],
      receipt_id: receipt.receipt_id,
      receipt_url: this.receiptUrl(receipt.receipt_id),
      can_ask: request.canAsk,
      hook_event: request.event.hook_event,
    });
  }

  /**
   * The call's project directory and the directory it runs in. A harness's event `cwd` is
   * where the call runs (Codex's is the call's working directory; Claude Code's follows the
   * shell's `cd`): the project directory is the one its session started in, when a start
   * event gave one; else the event's `cwd` is taken for both, as without a start event svc
   * cannot tell them apart.
   */
  private async whereOf(request: HookRequest, context: SubmitterContext): Promise<Where> {
    const { session } = request.event;
    if (session.cwd === undefined) return { session };
    const project = await this.projectDirOf(context.scope, session.id);
    // A start that gave no absolute directory names no project: each call's own cwd stands.
    if (project === null || !isAbsoluteDir(project) || project === session.cwd) return { session };
    return { session: { id: session.id, cwd: project }, runDir: session.cwd };
  }

  private async projectDirOf(scope: string, sessionId: string): Promise<string | null> {
    const key = sessionKey(scope, sessionId);
    const cached = this.projectDirs.get(key, this.deps.clock.now());
    if (cached !== undefined) return cached;
    const dir = await this.deps.sessions.projectDirOf(scope, sessionId);
    this.projectDirs.set(key, dir, this.deps.clock.now());
    return dir;
  }

  /** The tool-call claim of a pre-tool event, under the request's policy or `agent`. */
  private claimOf(request: HookRequest, where: Where, decidedAfter?: string): ClaimInput {
    const { event, harness } = request;
    const tool = event.tool!;
    const { claim } = buildToolCallClaim(
      {
        harness,
        session: where.session,
        ...(where.runDir !== undefined && { run_dir: where.runDir }),
        agent: event.agent,
        ...(event.model !== undefined && { agent_model: event.model }),
        ...(request.repository !== undefined && { repository: request.repository }),
        tool_name: tool.name,
        tool_input: tool.input,
        ...(tool.use_id !== undefined && { tool_use_id: tool.use_id }),
        captured_at: new Date(this.deps.clock.now()).toISOString(),
        storeInput: this.deps.storeInputs,
        ...(decidedAfter !== undefined && { decided_after: decidedAfter }),
      },
      this.sha256Hex,
    );
    return { ...claim, policy: request.policy ?? HOOK_DEFAULT_POLICY };
  }

  private receiptUrl(receiptId: string): string {
    const id = encodeURIComponent(receiptId);
    return `${this.deps.baseUrl.replace(/\/+$/, '')}/explorer/receipts/${id}`;
  }

  /** A decision as the harness takes it, naming the approval an allowed call used. */
  private answerOf(request: HookRequest, response: EvaluateResponse): HookAnswer {
    const { receipt } = response;
    const approval = receipt.policy.verdict === 'ALLOWED' ? approvalOf(response.claim) : null;
    return answer(request.harness, {
      verdict: receipt.policy.verdict,
      ...(approval && { approval_receipt_id: approval.receiptId }),
      reasons: receipt.policy.checks.map((c) => c.reason),
      receipt_id: receipt.receipt_id,
      receipt_url: this.receiptUrl(receipt.receipt_id),
      can_ask: request.canAsk,
      hook_event: request.event.hook_event,
    });
  }

  /**
   * The disposition of an escalated receipt, recorded within `waitMs`, or null: none in time,
   * the harness went away (`signal`), or too many answers wait already (in all or for this
   * account). The ledger is asked every `pollMs`, so a decision recorded by any instance
   * sharing the store is seen.
   */
  private async reviewerDecision(
    scope: string,
    receiptId: string,
    waitMs: number,
    signal: AbortSignal | undefined,
  ): Promise<LedgerEntry | null> {
    // Bounded in all and per account, so that one key's waits cannot take every place.
    const mine = this.waitingBy.get(scope) ?? 0;
    const most = this.deps.maxWaiting ?? MAX_WAITING;
    if (this.waiting >= most || mine >= Math.max(1, Math.floor(most / 4))) return null;
    this.waiting++;
    this.waitingBy.set(scope, mine + 1);
    try {
      const deadline = performance.now() + waitMs;
      for (;;) {
        const [found] = await this.deps.ledger.dispositionsOf([receiptId]);
        if (found) return found;
        const left = deadline - performance.now();
        if (left <= 0 || signal?.aborted) return null;
        await sleep(Math.min(this.deps.pollMs ?? POLL_MS, left), undefined, { signal });
      }
    } catch (error) {
      if (signal?.aborted) return null;
      throw error;
    } finally {
      this.waiting--;
      const left = (this.waitingBy.get(scope) ?? 1) - 1;
      if (left > 0) this.waitingBy.set(scope, left);
      else this.waitingBy.delete(scope);
    }
  }

  /**
   * The decision of a call. A harness may send the same event twice: it retries a hook that
   * timed out, or runs the same hook from two settings files at once (Codex runs matching
   * hooks concurrently). The claim names the call by the harness's id, but its source carries
   * the time it arrived, so the second claim differs from the first there (and, with an
   * approval opened meanwhile, in its cited sources) and the ledger refuses it as a
   * claim_conflict. Such a repeat is answered with the first decision, as an idempotent
   * evaluate is (contract §7); a call under the same id with any other difference (input,
   * tool, session, policy) stays a conflict.
   */
  private async evaluate(claim: ClaimInput, context: SubmitterContext): Promise<EvaluateResponse> {
    try {
      return await this.evaluateOnce(claim, context);
    } catch (error) {
      if (!isSvcError(error) || error.code !== 'claim_conflict') throw error;
      const first = await this.deps.ledger.getByClaimId(context.scope, claim.claim_id);
      // The stored claim is the one the service redacted: so is the one it is compared with.
      if (!first || !sameCall(first.claim, redactToolCallClaim(claim))) throw error;
      return responseOf(first);
    }
  }

  /**
   * Evaluates the claim, citing an open approval of this exact call when there is one. An
   * approval used or expired between the lookup and the append is refused by the store
   * (approval_refused); the call is then decided again without it.
   */
  private async evaluateOnce(
    claim: ClaimInput,
    context: SubmitterContext,
  ): Promise<EvaluateResponse> {
    const cited = await this.deps.approvals.withApproval(claim, context.scope);
    try {
      const { response, replayed } = await this.deps.claims.evaluate(cited, context);
      if (!replayed) this.deps.onReceipt?.(response);
      return response;
    } catch (error) {
      if (cited === claim || !isSvcError(error) || error.code !== 'approval_refused') throw error;
      const { response, replayed } = await this.deps.claims.evaluate(claim, context);
      if (!replayed) this.deps.onReceipt?.(response);
      return response;
    }
  }
}

/**
 * Whether two tool-call claims ask about the same call: equal but for the time their sources
 * were captured and an approval either cites.
 */
const sameCall = (a: ClaimInput, b: ClaimInput): boolean =>
  canonicalize(withoutArrival(a)) === canonicalize(withoutArrival(b));

const withoutArrival = (claim: ClaimInput): unknown => ({
  ...claim,
  sources: claim.sources
    .filter((source) => source.id !== APPROVAL_SOURCE_ID)
    .map((source) =>
      source.provenance
        ? { ...source, provenance: { ...source.provenance, captured_at: '' } }
        : source,
    ),
});
