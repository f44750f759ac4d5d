import { describe, expect, it } from '@jest/globals';
import { parseReceiptInput } from '@svc/verify';

describe('parseReceiptInput', () => {
  it('takes a receipt as it is', () => {
    const parsed = parseReceiptInput('{"receipt_id":"dr-x","receipt":{"a":1}}');
    expect(parsed).toEqual({
      receipt: { receipt_id: 'dr-x', receipt: { a: 1 } },
      fromEvaluateResponse: false,
    });
  });

  it('takes the .receipt of a whole evaluate response', () => {
    const parsed = parseReceiptInput(
      '\uFEFF{"policy":{"verdict":"ALLOWED"},"receipt":{"receipt_id":"dr-x"}}',
    );
    expect(parsed).toEqual({ receipt: { receipt_id: 'dr-x' }, fromEvaluateResponse: true });
  });

  it('refuses duplicate keys, naming where, at any depth', () => {
    expect(() => parseReceiptInput('{"receipt_id":"a","receipt_id":"b"}')).toThrow(
      /duplicate key "receipt_id"/,
    );
    expect(() =>
      parseReceiptInput('{"receipt":{"policy":{"verdict":"BLOCKED","verdict":"ALLOWED"}}}'),
    ).toThrow(/receipt\.policy: duplicate key "verdict"/);
  });

  it('refuses integers outside ±(2^53−1)', () => {
    expect(() => parseReceiptInput('{"chain":{"sequence":9007199254740993}}')).toThrow(
      /chain\.sequence: integer outside the exactly representable range/,
    );
    expect(() => parseReceiptInput('{"n":-9007199254740992}')).toThrow(/outside/);
    expect(parseReceiptInput('{"n":9007199254740991}').receipt).toEqual({ n: 9007199254740991 });
  });

  it('refuses text that is not JSON, and JSON that is not an object', () => {
    expect(() => parseReceiptInput('{"a":')).toThrow(/not valid JSON/);
    expect(() => parseReceiptInput('[1]')).toThrow(/expected a receipt or an evaluate response/);
    expect(() => parseReceiptInput('{"receipt":[1]}')).toThrow(/receipt: expected the receipt/);
  });

  it('refuses lone surrogates and prototype keys', () => {
    expect(() => parseReceiptInput('{"claim_id":"\\ud800"}')).toThrow(/lone UTF-16 surrogate/);
    expect(() => parseReceiptInput('{"__proto__":{}}')).toThrow(/not allowed/);
  });
});
