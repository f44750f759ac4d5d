import type { RequestHandler, Response } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import { isDeliberateFailure } from './errors.js';
import { assignRequestId } from './request-id.js';

// Only what an operator needs: never headers, which carry API keys.
const requestFields = (req: IncomingMessage & { id?: unknown }) => ({
  id: req.id,
  method: req.method,
  url: req.url,
  remote: req.socket?.remoteAddress,
});
const keyFields = (res: ServerResponse) => {
  const key = (res as Response).locals?.apiKey;
  // The public key_id (kid_…), as receipts and GET /v1/account name the key; never the
  // account id or anything derived from the secret.
  return key ? { key_id: key.keyId } : {};
};

/** What every request gets besides its log line: headers, and one observation when it ends. */
export interface RequestStart {
  /** Headers set before the request id (X-Svc-Version, X-Svc-Spec). */
  leadingHeaders(res: ServerResponse): void;
  /** Headers set after the request id (the security headers). */
  trailingHeaders(res: ServerResponse): void;
  /** Once per answer, when it has been handed to the socket: the seconds since it started. */
  finished(req: IncomingMessage, res: ServerResponse, seconds: number): void;
}

/**
 * One log line per request at `info` (errors at `error`), with the request id on the response
 * and in every line. When the logger's level is above `info` those lines would be dropped
 * anyway, and pino-http's per-request child logger, timers and serializers were a measurable
 * share of a cheap request: then one middleware sets the headers and assigns the id, and one
 * `finish` listener both calls `start.finished` and logs a failed request, in the same shape.
 */
export function requestLogging(logger: Logger, start: RequestStart): RequestHandler[] {
  if (logger.isLevelEnabled('info')) {
    return [
      (req, res, next) => {
        start.leadingHeaders(res);
        const started = performance.now();
        res.once('finish', () => start.finished(req, res, (performance.now() - started) / 1000));
        next();
      },
      pinoHttp({
        logger,
        genReqId: assignRequestId,
        customLogLevel: (_req, res, error) =>
          error || (res.statusCode >= 500 && !isDeliberateFailure(res as Response))
            ? 'error'
            : 'info',
        serializers: {
          req: (req: IncomingMessage & { id?: unknown; remoteAddress?: string }) => ({
            id: req.id,
            method: req.method,
            url: req.url,
            remote: req.remoteAddress,
          }),
          res: (res: ServerResponse) => ({ status: res.statusCode }),
        },
        customProps: (_req, res) => keyFields(res),
        // A deliberate 5xx is answered as designed: its line has no made-up error (pino-http
        // attaches one with a stack to every 5xx) and reads as a completed request.
        customErrorObject: (_req, res, _error, value: Record<string, unknown>) => {
          if (!isDeliberateFailure(res as Response)) return value;
          const rest = { ...value };
          delete rest.err;
          return rest;
        },
        customErrorMessage: (_req, res) =>
          isDeliberateFailure(res as Response) ? 'request completed' : 'request errored',
      }),
      (_req, res, next) => {
        start.trailingHeaders(res);
        next();
      },
    ];
  }
  const errors = logger.isLevelEnabled('error');
  return [
    (req, res, next) => {
      start.leadingHeaders(res);
      req.id = assignRequestId(req, res);
      start.trailingHeaders(res);
      const started = performance.now();
      res.once('finish', () => {
        const ms = performance.now() - started;
        start.finished(req, res, ms / 1000);
        if (!errors) return;
        const err = (res as ServerResponse & { err?: Error }).err;
        if (!err && (res.statusCode < 500 || isDeliberateFailure(res as Response))) return;
        logger.error(
          {
            req: requestFields(req),
            res: { status: res.statusCode },
            ...keyFields(res),
            err,
            responseTime: Math.round(ms),
          },
          'request errored',
        );
      });
      next();
    },
  ];
}
