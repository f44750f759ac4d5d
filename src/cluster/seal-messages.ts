import { receiptOfSeal, sealPartsOf, type SealParts } from '../core/receipt.js';
import type { ErrorCode } from '../core/errors.js';
import type { AppendResult } from '../ports/ledger-store.js';
import type { SealRequest } from '../ports/receipt-sealer.js';
import { isObject } from '@svc/verify';

/**
 * A worker's requests to the writing process: those made in one turn of its event loop, in
 * one message (one write, one wake-up of the writer).
 */
export interface SealAsk {
  type: 'svc:seal';
  asks: { id: number; request: SealRequest }[];
}

/**
 * The writer's answer to one request. A receipt appended from the worker's draft comes back
 * as only what sealing added (the worker holds the draft, the claim and the evaluation it
 * sent); a receipt the ledger already held comes whole, as the result; a failure as its
 * message.
 */
export type SealAnswer =
  | { id: number; sealed: SealParts }
  | { id: number; result: AppendResult }
  /** `code`: a refusal the worker answers as the writer's store did (e.g. approval_refused). */
  | { id: number; error: string; code?: ErrorCode };

/** The answers the writer has for one worker after a turn: a group commit's, together. */
export interface SealAnswers {
  type: 'svc:sealed';
  answers: SealAnswer[];
}

export const isSealAsk = (message: unknown): message is SealAsk =>
  isObject(message) && message.type === 'svc:seal' && Array.isArray(message.asks);

export const isSealAnswers = (message: unknown): message is SealAnswers =>
  isObject(message) && message.type === 'svc:sealed' && Array.isArray(message.answers);

/** The answer to `id` carrying `result`, as small as the worker's request allows. */
export function sealAnswer(id: number, result: AppendResult): SealAnswer {
  const sealed = result.status === 'appended' ? sealPartsOf(result.entry.receipt) : null;
  return sealed ? { id, sealed } : { id, result };
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

/**
 * Sends what `add` is given in one message per turn of the event loop: everything added
 * until the event loop comes round (setImmediate) goes out together.
 */
export function perTurn<T>(send: (items: T[]) => void): (item: T) => void {
  let items: T[] = [];
  return (item) => {
    items.push(item);
    if (items.length > 1) return;
    setImmediate(() => {
      const batch = items;
      items = [];
      send(batch);
    });
  };
}
