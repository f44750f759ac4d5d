/**
 * The closed set of error codes of the receipt contract (§7). Each maps to one HTTP status
 * in api/middleware/error-handler.ts; nothing else decides a status.
 */
export type ErrorCode =
  | 'malformed_json'
  | 'validation_failed'
  | 'unauthorized'
  | 'not_found'
  | 'claim_conflict'
  | 'not_escalated'
  | 'already_disposed'
  | 'approval_refused'
  | 'separation_of_duties'
  | 'policy_conflict'
  | 'policy_override_refused'
  | 'rule_budget_exceeded'
  | 'email_registered'
  | 'locked_key'
  | 'forbidden'
  | 'method_not_allowed'
  | 'unsupported_media_type'
  | 'receiver_limit'
  | 'payload_too_large'
  | 'rate_limited'
  | 'internal'
  | 'unavailable'
  | 'payment_not_configured';

export class SvcError extends Error {
  readonly code: ErrorCode;
  /** Extra response headers, such as Retry-After for rate_limited. */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    code: ErrorCode,
    message: string,
    options: { cause?: unknown; headers?: Record<string, string> } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'SvcError';
    this.code = code;
    this.headers = options.headers ?? {};
  }
}

export const isSvcError = (value: unknown): value is SvcError => value instanceof SvcError;
