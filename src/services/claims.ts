import { randomBytes } from 'node:crypto';
import { monotonicFactory } from 'ulid';
import { hashCanonical } from '../core/canonical.js';
import type { ClaimInput } from '../core/claim-schema.js';
import { SvcError } from '../core/errors.js';
import { evaluateClaim, type Evaluation } from '../core/evaluation.js';
import { builtinPolicy } from '../core/policies.js';
import { resolvePolicy, type PolicyConfig } from '../core/policy-config.js';
import {
  buildReceiptCore,
  chainReceipt,
  receiptHash,
  signReceipt,
  type Receipt,
  type ReceiptCore,
} from '../core/receipt.js';
import type { Clock } from '../ports/clock.js';
import type { LedgerEntry, LedgerStore } from '../ports/ledger-store.js';
import type { PolicyStore } from '../ports/policy-store.js';
import type { ServerKey } from '../ports/signer.js';

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
  policy: Evaluation['policy'] & { config: Evaluation['config'] };
  replay: Evaluation['replay'];
  receipt: Receipt;
}

/** A simulated receipt is never signed nor chained: it cannot pass /v1/verify. */
export type SimulatedReceipt = ReceiptCore & { attestations: []; chain: null };

export interface SimulateResponse extends Omit<EvaluateResponse, 'receipt'> {
  simulated: true;
  receipt: SimulatedReceipt;
}

export interface ClaimServiceDeps {
  ledger: LedgerStore;
  policies: PolicyStore;
  serverKey: ServerKey;
  clock: Clock;
}

export class ClaimService {
  private readonly nextUlid: (seedTime?: number) => string;

  constructor(private readonly deps: ClaimServiceDeps) {
    this.nextUlid = monotonicFactory(pooledRandom());
  }

  /**
   * Evaluates, signs and appends. The same claim_id with the same inputs answers the stored
   * receipt (`replayed`); with different inputs it is a claim_conflict (contract §7).
   */
  async evaluate(
    claim: ClaimInput,
    context: { apiKeyId: string | null },
  ): Promise<{ response: EvaluateResponse; replayed: boolean }> {
    const existing = await this.deps.ledger.getByClaimId(claim.claim_id);
    if (existing)
      return { response: this.replayed(existing, hashCanonical(claim)), replayed: true };

    const evaluation = evaluateClaim(claim, await this.effectivePolicy(claim));
    const now = this.deps.clock.now();
    const core = buildReceiptCore({
      receiptId: `dr-${this.nextUlid(now)}`,
      issuedAt: new Date(now).toISOString(),
      claim,
      evaluation,
    });
    // Signing happens before the append: receipt-core-v1 does not sign the chain position,
    // so the ledger's critical section only places an already signed receipt.
    const signed = signReceipt(core, this.deps.serverKey);
    const hash = receiptHash(signed);
    const stored = {
      policy: evaluation.policy,
      replay: evaluation.replay,
      config: evaluation.config,
    };
    const result = await this.deps.ledger.append({
      claimId: claim.claim_id,
      build: (head) => ({
        entry: {
          receipt: chainReceipt(signed, head, hash),
          claim,
          evaluation: stored,
          apiKeyId: context.apiKeyId,
        },
      }),
    });
    if (result.status === 'exists') {
      return { response: this.replayed(result.entry, evaluation.inputs_hash), replayed: true };
    }
    return { response: responseOf(result.entry), replayed: false };
  }

  /** The evaluation of evaluate, with nothing signed and nothing written. */
  async simulate(claim: ClaimInput): Promise<SimulateResponse> {
    const evaluation = evaluateClaim(claim, await this.effectivePolicy(claim));
    const now = this.deps.clock.now();
    const core = buildReceiptCore({
      receiptId: `dr-sim-${this.nextUlid(now)}`,
      issuedAt: new Date(now).toISOString(),
      claim,
      evaluation,
    });
    return {
      simulated: true,
      ...responseParts(claim, evaluation, evaluation.admissibility.status),
      receipt: { ...core, attestations: [], chain: null },
    };
  }

  /** The named policy (built-in first, then custom) with the claim's policyConfig on top. */
  private async effectivePolicy(claim: ClaimInput): Promise<PolicyConfig> {
    if (claim.policy === undefined) return resolvePolicy(claim.policyConfig);
    const named =
      builtinPolicy(claim.policy)?.config ?? (await this.deps.policies.get(claim.policy))?.config;
    if (!named) throw new SvcError('validation_failed', `policy: unknown policy "${claim.policy}"`);
    return resolvePolicy(named, claim.policyConfig);
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
  const proceed = verdict === 'ALLOWED' && admissibility === 'ACCEPTED';
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
