import type { Sha256Hex } from '@svc/verify';
import { authzenClaim, AuthzenMappingError, isDryRun } from '../core/authzen/claim-mapping.js';
import { authzenDecision, type AuthzenDecision } from '../core/authzen/decision.js';
import {
  AuthzenRequestError,
  resolveEvaluations,
  stopsAfter,
} from '../core/authzen/evaluations.js';
import type { AuthzenEvaluation, AuthzenEvaluations } from '../core/authzen/request-schema.js';
import type { ClaimInput } from '../core/claim-schema.js';
import { isSvcError, SvcError, type ErrorCode } from '../core/errors.js';
import type { ClaimService, EvaluateResponse, SubmitterContext } from './claims.js';

/** One answer of a batch: a decision, or the error of that evaluation alone (AuthZEN §7.3). */
export type BatchAnswer = AuthzenDecision | { failed: { code: ErrorCode; message: string } };

/**
 * svc as an AuthZEN 1.0 Policy Decision Point (contract §13): each evaluation becomes a claim,
 * decided by the ClaimService like any other, its receipt on the ledger (a dry run is a
 * simulate and records nothing).
 */
export class AuthzenService {
  constructor(
    private readonly deps: {
      claims: ClaimService;
      sha256Hex: Sha256Hex;
      /** The service's public URL, for the receipt and approval links. */
      baseUrl: string;
      /** Told of every receipt issued (not of replays or dry runs): the metrics. */
      onReceipt?: (response: EvaluateResponse) => void;
    },
  ) {}

  /** The claim of one evaluation; a request svc cannot map is 400 validation_failed. */
  claimOf(evaluation: AuthzenEvaluation): ClaimInput {
    try {
      return authzenClaim(evaluation, { sha256Hex: this.deps.sha256Hex });
    } catch (error) {
      if (error instanceof AuthzenMappingError) {
        throw new SvcError('validation_failed', error.message, { cause: error });
      }
      throw error;
    }
  }

  /** POST /access/v1/evaluation. */
  async evaluate(
    evaluation: AuthzenEvaluation,
    submitter: SubmitterContext,
  ): Promise<AuthzenDecision> {
    const claim = this.claimOf(evaluation);
    const { baseUrl, claims } = this.deps;
    if (isDryRun(evaluation)) {
      const { receipt } = await claims.simulate(claim, submitter);
      return authzenDecision(receipt, { baseUrl, recorded: false });
    }
    const { response, replayed } = await claims.evaluate(claim, submitter);
    if (!replayed) this.deps.onReceipt?.(response);
    return authzenDecision(response.receipt, { baseUrl, recorded: true });
  }

  /**
   * POST /access/v1/evaluations: in order, one after another, stopping where the semantic
   * says. An evaluation that fails on its own (a request svc cannot map, an unknown policy, a
   * claim_id conflict) is answered `false` with its error and counts as a deny; a failure of
   * the service (a store that cannot be written) fails the whole request.
   */
  async evaluations(
    request: AuthzenEvaluations,
    submitter: SubmitterContext,
  ): Promise<
    { single: true; answer: AuthzenDecision } | { single: false; answers: BatchAnswer[] }
  > {
    const { evaluations, semantic, single } = resolved(request);
    if (single) return { single, answer: await this.evaluate(evaluations[0]!, submitter) };
    const answers: BatchAnswer[] = [];
    for (const evaluation of evaluations) {
      let answer: BatchAnswer;
      try {
        answer = await this.evaluate(evaluation, submitter);
      } catch (error) {
        if (!isSvcError(error) || error.code === 'internal' || error.code === 'unavailable') {
          throw error;
        }
        answer = { failed: { code: error.code, message: error.message } };
      }
      answers.push(answer);
      if (stopsAfter(semantic, 'decision' in answer && answer.decision)) break;
    }
    return { single, answers };
  }
}

/** The evaluations of a batch; one that lacks a member even after the defaults is a 400. */
function resolved(request: AuthzenEvaluations): ReturnType<typeof resolveEvaluations> {
  try {
    return resolveEvaluations(request);
  } catch (error) {
    if (error instanceof AuthzenRequestError) {
      throw new SvcError('validation_failed', error.message, { cause: error });
    }
    throw error;
  }
}
