import { withApprovalSource } from '../core/approval.js';
import type { ClaimInput } from '../core/claim-schema.js';
import { toolCallOf } from '../core/tool-call.js';
import type { Clock } from '../ports/clock.js';
import type { OpenApproval, SessionStore } from '../ports/session-store.js';

/**
 * Argument-bound approval (contract §12), the lookup side: before a tool-call claim is
 * evaluated, the adapter that builds it asks for an open approval of exactly that call and,
 * when there is one, cites it in the claim (an evidence source naming the disposition's
 * receipt id and hash). The evaluation then answers ALLOWED by `rule:approved`, and the
 * ledger's append checks the citation and records the one use in the same transaction; a
 * refused one (used meanwhile, expired) fails with 409 approval_refused, and the adapter
 * evaluates the claim again without it.
 */
export class AgentApprovals {
  constructor(
    private readonly deps: {
      sessions: Pick<SessionStore, 'openApproval'>;
      clock: Clock;
      /** SVC_AGENT_APPROVAL_TTL. */
      ttlMs: number;
    },
  ) {}

  /** The unused approval of this call in the scope, issued within the lifetime, if any. */
  async openApproval(claim: ClaimInput, scope: string): Promise<OpenApproval | null> {
    const call = toolCallOf(claim);
    if (!call) return null;
    const since = new Date(this.deps.clock.now() - this.deps.ttlMs).toISOString();
    return this.deps.sessions.openApproval(
      {
        scope,
        sessionId: call.sessionId,
        toolName: call.toolName,
        inputDigest: call.inputDigest,
      },
      since,
    );
  }

  /** The claim citing the open approval of its call, or the claim as it was. */
  async withApproval(claim: ClaimInput, scope: string): Promise<ClaimInput> {
    const approval = await this.openApproval(claim, scope);
    return approval ? withApprovalSource(claim, approval) : claim;
  }
}
