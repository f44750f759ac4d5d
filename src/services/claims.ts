import { randomBytes } from 'node:crypto';
import { monotonicFactory } from 'ulid';
import { hashCanonical, portableSha256Hex, proceeds, type Sha256Hex } from '@svc/verify';
import { redactToolCallClaim } from '../core/agent/tool-call-claim.js';
import type { ClaimInput } from '../core/claim-schema.js';
import { SvcError } from '../core/errors.js';
import { evaluateClaim, type Evaluation } from '../core/evaluation.js';
import {
  effectivePolicy,
  policyNameOf,
  type EffectivePolicy,
  type PolicyRequest,
} from '../core/effective-policy.js';
import {
  buildReceiptDraft,
  type Receipt,
  type ReceiptDraft,
  type Submitter,
} from '../core/receipt.js';
import type { ApiKeyRecord } from '../ports/api-key-store.js';
import type { Clock } from '../ports/clock.js';
import type { LedgerEntry, LedgerStore, StoredOutcome } from '../ports/ledger-store.js';
import type { ReceiptSealer } from '../ports/receipt-sealer.js';
import type { ServerKey } from '../ports/signer.js';
import type { PolicyService } from './policies.js';
import { sealerOf } from './receipt-sealer.js';

export interface Decision {
  /** True only for ALLOWED with ACCEPTED admissibility: the one case a gate may proceed. */
  proceed: boolean;
  verdict: Evaluation['policy']['verdict'];
  admissibility: Evaluation['admissibility']['status'];
  reason: string;
}

export interface EvaluateResponse {
  claim: ClaimInput;
  decision: Decision;
  policy: StoredOutcome & { config: Evaluation['config'] };
  replay: Evaluation['replay'];
  receipt: Receipt;
}

/** A simulated receipt is never signed nor chained: it cannot pass /v1/verify. */
export type SimulatedReceipt = ReceiptDraft & { position: null; attestations: []; chain: null };

export interface SimulateResponse extends Omit<EvaluateResponse, 'receipt'> {
  simulated: true;
  receipt: SimulatedReceipt;
}

/** Who asks: what the receipt signs as `submitter`, and what that submitter may do. */
export interface SubmitterContext {
  submitter: Submitter;
  /** Idempotency scope: a claim_id is unique within it (contract §7). */
  scope: string;
  /** The account whose own policies the claim may name, and that the ledger counts it for. */
  account: string | null;
  /** A policy that applies whatever the claim names, with tighten-only overrides. */
  lockedPolicy: string | null;
}

/** The submitter context of an API key: its account is the idempotency scope. */
export const apiKeySubmitter = (key: ApiKeyRecord): SubmitterContext => ({
  submitter: { kind: 'api_key', key_id: key.keyId },
  scope: `key:${key.id}`,
  account: key.id,
  lockedPolicy: key.lockedPolicy,
});

export interface ClaimServiceDeps {
  ledger: LedgerStore;
  policies: PolicyService;
  serverKey: ServerKey;
  clock: Clock;
  /** The ledger's origin, signed into every receipt's position (contract §8). */
  logOrigin: string;
  /** SHA-256 for every hash of the evaluate path; default the portable one. */
  sha256Hex?: Sha256Hex;
  /**
   * Who signs and appends: by default this process, with `serverKey`; with several workers,
   * the one writing process (src/cluster).
   */
  sealer?: ReceiptSealer;
}

export class ClaimService {
  private readonly nextUlid: (seedTime?: number) => string;
  private readonly sha256Hex: Sha256Hex;
  private readonly sealer: ReceiptSealer;

  constructor(private readonly deps: ClaimServiceDeps) {
    this.nextUlid = monotonicFactory(pooledRandom());
    this.sha256Hex = deps.sha256Hex ?? portableSha256Hex;
    this.sealer = sealerOf({ ...deps, sha256Hex: this.sha256Hex });
  }

  /**
   * Evaluates, signs and appends. The same claim_id with the same inputs answers the stored
   * receipt (`replayed`); with different inputs it is a claim_conflict (contract §7).
   */
  async evaluate(
    input: ClaimInput,
    context: SubmitterContext,
  ): Promise<{ response: EvaluateResponse; replayed: boolean }> {
    // A tool call's summary is signed and stored only redacted (contract §12).
    const claim = redactToolCallClaim(input);
    const existing = await this.deps.ledger.getByClaimId(context.scope, claim.claim_id);
    if (existing)
      return {
        response: this.replayed(existing, hashCanonical(claim, this.sha256Hex)),
        replayed: true,
      };

    const { evaluation, draft } = await this.draft(claim, context, 'dr-');
    const result = await this.sealer.seal({
      scope: context.scope,
      claimId: claim.claim_id,
      draft,
      claim,
      evaluation: {
        policy: evaluation.policy,
        replay: evaluation.replay,
        config: evaluation.config,
      },
      apiKeyId: context.account,
    });
    if (result.status === 'exists') {
      return { response: this.replayed(result.entry, evaluation.inputs_hash), replayed: true };
    }
    return { response: responseOf(result.entry), replayed: false };
  }

  /** The evaluation of evaluate, with nothing signed and nothing written. */
  async simulate(input: ClaimInput, context: SubmitterContext): Promise<SimulateResponse> {
    const claim = redactToolCallClaim(input);
    const { evaluation, draft } = await this.draft(claim, context, 'dr-sim-');
    return {
      simulated: true,
      ...responseParts(claim, evaluation, evaluation.admissibility.status),
      receipt: { ...draft, position: null, attestations: [], chain: null },
    };
  }

  private async draft(
    claim: ClaimInput,
    context: SubmitterContext,
    prefix: string,
  ): Promise<{ evaluation: Evaluation; draft: ReceiptDraft }> {
    const { config, name, overridden } = await this.effectivePolicy(claim, context);
    const evaluation = evaluateClaim(claim, config, this.sha256Hex);
    const now = this.deps.clock.now();
    const draft = buildReceiptDraft({
      receiptId: `${prefix}${this.nextUlid(now)}`,
      issuedAt: new Date(now).toISOString(),
      claim,
      evaluation,
      // The evaluation hashed the config's canonical text already.
      policy: { name, config_hash: evaluation.config_hash, overrides: overridden },
      submitter: context.submitter,
    });
    return { evaluation, draft };
  }

  /**
   * The policy a claim, or a repository config naming the policy of the App's claims, is
   * evaluated under for this submitter (core/effective-policy.ts), or the error evaluate
   * would answer.
   */
  async effectivePolicy(
    request: PolicyRequest,
    context: SubmitterContext,
  ): Promise<EffectivePolicy> {
    // A lock names a built-in or shared policy: the locked account's own policies never
    // stand in for it, so the gated agent cannot write its own gate.
    const resolved = await this.deps.policies.resolve(
      policyNameOf(request, context.lockedPolicy),
      context.lockedPolicy ? null : context.account,
    );
    return effectivePolicy(request, context.lockedPolicy, resolved);
  }

  private replayed(entry: LedgerEntry, inputsHash: string): EvaluateResponse {
    if (entry.receipt.evidence.inputs_hash !== inputsHash) {
      throw new SvcError(
        'claim_conflict',
        `claim_id ${JSON.stringify(entry.receipt.claim_id)} was already evaluated with different inputs (receipt ${entry.receipt.receipt_id})`,
      );
    }
    return responseOf(entry);
  }
}

/**
 * Cryptographic randomness for receipt ids, drawn from a pooled buffer: ulid asks for one
 * number per character, and one system call each was a measurable share of evaluate.
 */
function pooledRandom(): () => number {
  let pool = randomBytes(0);
  let offset = 0;
  return () => {
    if (offset + 4 > pool.length) {
      pool = randomBytes(4096);
      offset = 0;
    }
    const value = pool.readUInt32LE(offset) / 0x1_0000_0000;
    offset += 4;
    return value;
  };
}

/** The evaluate response of a stored entry: what evaluate answered when it was issued. */
export function responseOf(entry: LedgerEntry): EvaluateResponse {
  return {
    ...responseParts(entry.claim, entry.evaluation, entry.receipt.admissibility.status),
    receipt: entry.receipt,
  };
}

function responseParts(
  claim: ClaimInput,
  evaluation: LedgerEntry['evaluation'],
  admissibility: Evaluation['admissibility']['status'],
): Omit<EvaluateResponse, 'receipt'> {
  const { verdict, reason, rules } = evaluation.policy;
  const proceed = proceeds(verdict, admissibility);
  return {
    claim,
    decision: {
      proceed,
      verdict,
      admissibility,
      reason: proceed
        ? 'Proceed: verdict ALLOWED and the receipt is admissible'
        : verdict === 'ESCALATED'
          ? 'Route to a human: verdict ESCALATED'
          : admissibility === 'NON_DETERMINISTIC'
            ? 'Do not proceed: the evaluation did not replay as expected'
            : 'Do not proceed: verdict BLOCKED',
    },
    policy: { verdict, reason, rules, config: evaluation.config },
    replay: evaluation.replay,
  };
}
