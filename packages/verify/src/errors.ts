/**
 * Why the verifier refuses an input outright (a parse failure, a malformed key or history):
 * `malformed_json` when the text is no JSON at all, `validation_failed` for everything else.
 * A receipt that parses but does not verify is never an error: its checks FAIL instead. The
 * codes are a subset of the service's own, which answers both with 400.
 */
export type VerifyErrorCode = 'malformed_json' | 'validation_failed';

export class VerifyError extends Error {
  readonly code: VerifyErrorCode;

  constructor(code: VerifyErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'VerifyError';
    this.code = code;
  }
}

export const isVerifyError = (value: unknown): value is VerifyError => value instanceof VerifyError;
