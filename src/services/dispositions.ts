import { monotonicFactory } from 'ulid';
import { canonicalize, portableSha256Hex, type Sha256Hex } from '@svc/verify';
import {
  buildDispositionParts,
  dispositionClaimId,
  reviewerConflict,
  type DispositionDecision,
  type Reviewer,
} from '../core/disposition.js';
import { SvcError } from '../core/errors.js';
import type { Clock } from '../ports/clock.js';
import type { LedgerQueries, ReadScope } from '../ports/ledger-queries.js';
import type { LedgerEntry, LedgerStore } from '../ports/ledger-store.js';
import type { ReceiptSealer } from '../ports/receipt-sealer.js';
import type { ServerKey } from '../ports/signer.js';
import { responseOf, type EvaluateResponse, type SubmitterContext } from './claims.js';
import { readableEntry } from './ledger-reads.js';
import { sealerOf } from './receipt-sealer.js';

/** A human decision on an escalated receipt, as a caller states it. */
export interface DispositionRequest {
  decision: DispositionDecision;
  reviewer: Reviewer;
  reason: string;
}

export interface DispositionServiceDeps {
  ledger: LedgerStore;
  queries: Pick<LedgerQueries, 'getMany'>;
  serverKey: ServerKey;
  clock: Clock;
  logOrigin: string;
  sha256Hex?: Sha256Hex;
  /** Who signs and appends: this process by default, the writing process with several. */
  sealer?: ReceiptSealer;
  /**
   * Told of each disposition written (not of a replay), with its parent: the GitHub App
   * answers a waiting deployment from it. It must not throw; the receipt is written already.
   */
  onDisposed?: (parent: LedgerEntry, disposition: EvaluateResponse) => Promise<void>;
}

/**
 * Dispositions (contract §11): the human decision on an ESCALATED receipt, recorded as a
 * receipt of its own, signed and appended to the same chain, linked to its parent by id and
 * hash. Used by the REST API (reviewer kind `user`, submitter the API key) and by the GitHub
 * App's Approve and Reject buttons (reviewer kind `github_user`, submitter the installation).
 */
export class DispositionService {
  private readonly nextUlid = monotonicFactory();
  private readonly sha256Hex: Sha256Hex;
  private readonly sealer: ReceiptSealer;

  constructor(private readonly deps: DispositionServiceDeps) {
    this.sha256Hex = deps.sha256Hex ?? portableSha256Hex;
    this.sealer = sealerOf({ ...deps, sha256Hex: this.sha256Hex });
  }

  /**
   * Records the decision. 404 for a parent the caller cannot read; 409 for a parent that is
   * not ESCALATED; 403 when the reviewer is the claim's agent or human operator, or the
   * submitter is the account that asked for the parent; 409 when it has a disposition. The same
   * decision asked again by the same recorder (an API key's account, its rotated keys included)
   * answers the stored one (`replayed`).
   */
  async dispose(
    parentReceiptId: string,
    request: DispositionRequest,
    context: SubmitterContext,
    readScope: ReadScope,
  ): Promise<{ response: EvaluateResponse; replayed: boolean }> {
    const parent = await this.readable(parentReceiptId, readScope);
    if (parent.receipt.policy.verdict !== 'ESCALATED' || parent.receipt.disposition)
      throw new SvcError(
        'not_escalated',
        `receipt ${parentReceiptId} is ${parent.receipt.disposition ? 'a disposition' : parent.receipt.policy.verdict}, not ESCALATED: only an escalated receipt can be disposed of`,
      );
    this.checkSeparation(parent, request, context);
    const [existing] = await this.deps.ledger.dispositionsOf([parentReceiptId]);
    if (existing) return this.answerExisting(existing, request, context);

    const now = this.deps.clock.now();
    const parts = buildDispositionParts({
      receiptId: `dr-${this.nextUlid(now)}`,
      issuedAt: new Date(now).toISOString(),
      parent: {
        receipt: parent.receipt,
        claim: parent.claim,
        config: parent.evaluation.config,
      },
      decision: request.decision,
      reviewer: request.reviewer,
      reason: request.reason,
      submitter: context.submitter,
      sha256Hex: this.sha256Hex,
    });
    // Signed at the ledger's head inside the append, by whichever process writes.
    const result = await this.sealer.seal({
      scope: context.scope,
      claimId: parts.claim.claim_id,
      parentReceiptId,
      draft: parts.draft,
      claim: parts.claim,
      evaluation: parts.evaluation,
      apiKeyId: context.account,
    });
    // Another request disposed of the parent first (possibly at the same moment).
    if (result.status === 'exists') return this.answerExisting(result.entry, request, context);
    const response = responseOf(result.entry);
    await this.deps.onDisposed?.(parent, response);
    return { response, replayed: false };
  }

  /**
   * The disposition of a receipt the caller can read; 404 when the receipt is unknown or
   * unreadable, or has no disposition (yet).
   */
  async dispositionOf(parentReceiptId: string, readScope: ReadScope): Promise<EvaluateResponse> {
    await this.readable(parentReceiptId, readScope);
    const [entry] = await this.deps.ledger.dispositionsOf([parentReceiptId]);
    if (!entry)
      throw new SvcError(
        'not_found',
        `Receipt ${JSON.stringify(parentReceiptId)} has no disposition`,
      );
    return responseOf(entry);
  }

  private readable(receiptId: string, scope: ReadScope): Promise<LedgerEntry> {
    return readableEntry(this.deps, receiptId, scope);
  }

  /**
   * Separation of duties: whoever acted, or asked for the action to be judged, does not judge
   * it. An App installation records the decisions of the people GitHub names, so only the
   * reviewer is compared for it.
   */
  private checkSeparation(
    parent: LedgerEntry,
    request: DispositionRequest,
    context: SubmitterContext,
  ): void {
    const conflict = reviewerConflict(parent.claim, request.reviewer.id);
    if (conflict)
      throw new SvcError(
        'separation_of_duties',
        `${conflict}: someone else must decide the escalation`,
      );
    const submitter = parent.receipt.submitter;
    const sameKey =
      context.submitter.kind === 'api_key' &&
      submitter?.kind === 'api_key' &&
      submitter.key_id === context.submitter.key_id;
    const sameAccount = context.account !== null && parent.apiKeyId === context.account;
    if (sameKey || sameAccount)
      throw new SvcError(
        'separation_of_duties',
        'this API key (or its account) submitted the escalated claim: a key of another account must record the decision',
      );
  }

  /** The stored disposition again, when it is the same decision by the same recorder. */
  private answerExisting(
    entry: LedgerEntry,
    request: DispositionRequest,
    context: SubmitterContext,
  ): { response: EvaluateResponse; replayed: true } {
    const stored = entry.receipt.disposition;
    const same =
      stored !== undefined &&
      entry.receipt.claim_id === dispositionClaimId(stored.parent_receipt_id) &&
      sameRecorder(entry, context) &&
      stored.decision === request.decision &&
      stored.reason === request.reason &&
      stored.reviewer.kind === request.reviewer.kind &&
      stored.reviewer.id === request.reviewer.id &&
      stored.reviewer.name === request.reviewer.name;
    if (!same)
      throw new SvcError(
        'already_disposed',
        stored
          ? `receipt ${stored.parent_receipt_id} already has a disposition (receipt ${entry.receipt.receipt_id}, ${stored.decision})`
          : `claim_id ${JSON.stringify(entry.receipt.claim_id)} is taken by receipt ${entry.receipt.receipt_id}, which is not a disposition`,
      );
    return { response: responseOf(entry), replayed: true };
  }
}

/**
 * Whether `context` recorded `entry`: for an API key, its account (a rotated key is the same
 * recorder, as it is the same submitter of claims); for the App, the same installation.
 */
const sameRecorder = (entry: LedgerEntry, context: SubmitterContext): boolean =>
  context.account !== null
    ? entry.receipt.submitter?.kind === 'api_key' && entry.apiKeyId === context.account
    : entry.receipt.submitter !== undefined &&
      canonicalize(entry.receipt.submitter) === canonicalize(context.submitter);
