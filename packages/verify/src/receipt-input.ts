import { VerifyError } from './errors.js';
import { parseStrictJson } from './strict-json.js';
import { isObject } from './json.js';

export interface ReceiptInput {
  /** The receipt to verify, still untrusted: the verifier's checks judge it. */
  receipt: Record<string, unknown>;
  /** Whether the input was a whole evaluate response, whose `.receipt` this is. */
  fromEvaluateResponse: boolean;
}

/**
 * Reads a receipt, or a whole evaluate response, from attacker-controlled text, strictly
 * (contract §1): duplicate keys, integers outside ±(2^53−1), non-finite numbers and lone
 * surrogates are refused with a VerifyError naming the place, because JSON.parse would
 * silently keep one of two keys or round a number, and then the verifier would check
 * different bytes than the ones a reader sees.
 */
export function parseReceiptInput(text: string): ReceiptInput {
  const value = parseStrictJson(text.replace(/^\uFEFF/, ''));
  if (!isObject(value))
    throw new VerifyError(
      'validation_failed',
      '(root): expected a receipt or an evaluate response object',
    );
  // An evaluate response carries the receipt under "receipt" and has no receipt_id itself.
  if (!Object.hasOwn(value, 'receipt_id') && Object.hasOwn(value, 'receipt')) {
    if (!isObject(value.receipt))
      throw new VerifyError('validation_failed', 'receipt: expected the receipt object');
    return { receipt: value.receipt, fromEvaluateResponse: true };
  }
  return { receipt: value, fromEvaluateResponse: false };
}
