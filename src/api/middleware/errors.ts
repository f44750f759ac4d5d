import type { ErrorRequestHandler, RequestHandler } from 'express';
import { isVerifyError } from '@svc/verify';
import { isSvcError, SvcError, type ErrorCode } from '../../core/errors.js';

/** The one place an error code becomes an HTTP status. */
export const STATUS_OF: Readonly<Record<ErrorCode, number>> = {
  malformed_json: 400,
  validation_failed: 400,
  unauthorized: 401,
  not_found: 404,
  claim_conflict: 409,
  not_escalated: 409,
  already_disposed: 409,
  approval_refused: 409,
  separation_of_duties: 403,
  policy_conflict: 409,
  policy_override_refused: 400,
  rule_budget_exceeded: 400,
  email_registered: 409,
  locked_key: 403,
  forbidden: 403,
  method_not_allowed: 405,
  unsupported_media_type: 415,
  receiver_limit: 409,
  payload_too_large: 413,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
  payment_not_configured: 503,
};

/**
 * 5xx answers that are a state the operator chose, not a failure (checkout without a payment
 * provider): the request's log line stays at info, without the error's stack.
 */
const DELIBERATE: ReadonlySet<ErrorCode> = new Set(['payment_not_configured']);

/** Whether the answer is a deliberate 5xx (errorHandler marks it), to log at info. */
export const isDeliberateFailure = (res: { locals?: Record<string, unknown> }): boolean =>
  res.locals?.deliberateFailure === true;

export const notFound: RequestHandler = (req) => {
  throw new SvcError('not_found', `No route for ${req.method} ${req.path}`);
};

// Failures of reading the request (body-parser, decompression, path decoding) are the
// client's fault; they arrive as plain errors with a 4xx status, never as SvcErrors.
function fromRequestReading(error: {
  type?: unknown;
  status?: unknown;
  statusCode?: unknown;
}): SvcError | null {
  switch (error.type) {
    case 'entity.too.large':
      return new SvcError('payload_too_large', 'Request body exceeds 1 MiB');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new SvcError('validation_failed', 'Unsupported content encoding or charset');
  }
  const status = error.status ?? error.statusCode;
  if (typeof status !== 'number' || status < 400 || status > 499) return null;
  if (status === 413) return new SvcError('payload_too_large', 'Request body exceeds 1 MiB');
  if (error instanceof URIError) {
    return new SvcError('validation_failed', 'Malformed percent-encoding in the request path');
  }
  return new SvcError('malformed_json', 'Request body could not be read or decompressed');
}

export const errorHandler: ErrorRequestHandler = (error: unknown, req, res, _next) => {
  const known =
    (isSvcError(error) && error) ||
    // The verifier's refusals (strict JSON, keys, histories): codes svc shares.
    (isVerifyError(error) && new SvcError(error.code, error.message, { cause: error })) ||
    (typeof error === 'object' && error !== null ? fromRequestReading(error) : null);
  const failure = known ?? new SvcError('internal', 'Internal server error', { cause: error });
  const status = STATUS_OF[failure.code];
  // pino-http logs the request's one line with this error attached (stack included).
  if (DELIBERATE.has(failure.code)) res.locals.deliberateFailure = true;
  else if (status >= 500) res.err = error instanceof Error ? error : new Error(String(error));
  if (res.headersSent) return;
  res.set(failure.headers);
  // No stack, no cause: clients get the message of a known error, or a generic one.
  res.status(status).json({ error: failure.message, code: failure.code, request_id: req.id });
};
