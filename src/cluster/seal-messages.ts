import { receiptOfSeal, sealPartsOf, type SealParts } from '../core/receipt.js';
import type { AppendResult } from '../ports/ledger-store.js';
import type { SealRequest } from '../ports/receipt-sealer.js';

/** A worker's request to the writing process. */
export interface SealAsk {
  type: 'svc:seal';
  id: number;
  request: SealRequest;
}

/**
 * The writer's answer. A receipt appended from the worker's draft comes back as only what
 * sealing added (the worker holds the draft, the claim and the evaluation it sent); a receipt
 * the ledger already held comes whole, as the result; a failure as its message.
 */
export type SealAnswer =
  | { type: 'svc:sealed'; id: number; sealed: SealParts }
  | { type: 'svc:sealed'; id: number; result: AppendResult }
  | { type: 'svc:sealed'; id: number; error: string };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null;

export const isSealAsk = (message: unknown): message is SealAsk =>
  isRecord(message) && message.type === 'svc:seal' && typeof message.id === 'number';

export const isSealAnswer = (message: unknown): message is SealAnswer =>
  isRecord(message) && message.type === 'svc:sealed' && typeof message.id === 'number';

/** The answer to `id` carrying `result`, as small as the worker's request allows. */
export function sealAnswer(id: number, result: AppendResult): SealAnswer {
  const sealed = result.status === 'appended' ? sealPartsOf(result.entry.receipt) : null;
  return sealed ? { type: 'svc:sealed', id, sealed } : { type: 'svc:sealed', id, result };
}

/** The append's result an answer stands for, given the request it answers. */
export function resultOfAnswer(
  answer: Exclude<SealAnswer, { error: string }>,
  request: SealRequest,
): AppendResult {
  if ('result' in answer) return answer.result;
  const { draft, claim, evaluation, apiKeyId } = request;
  return {
    status: 'appended',
    entry: { receipt: receiptOfSeal(draft, answer.sealed), claim, evaluation, apiKeyId },
  };
}
