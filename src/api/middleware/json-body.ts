import express, { type Request, type RequestHandler } from 'express';
import { parseStrictJson } from '@svc/verify';
import { SvcError } from '../../core/errors.js';
import { MAX_BODY_BYTES } from '../../core/limits.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

const hasBody = (req: Request) =>
  req.headers['transfer-encoding'] !== undefined ||
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

/**
 * Every POST body is JSON sent as `application/json` or `application/*+json`; anything else
 * is 415. Requiring the type is what makes a browser preflight a cross-origin POST, so no page
 * can post to svc behind its visitor's back with a "simple" text/plain request. The body is
 * read as raw bytes (at most 1 MiB, also after decompression) and parsed strictly: duplicate
 * keys, unsafe numbers and the rest of contract §1 are refused before any handler sees the
 * value. An empty body is undefined.
 */
export function jsonBody(
  options: { badMediaTypeIs400?: (req: Request) => boolean } = {},
): RequestHandler[] {
  const raw = express.raw({ type: () => true, limit: MAX_BODY_BYTES });
  const mediaType: RequestHandler = (req, _res, next) => {
    if (hasBody(req) && !req.is(['application/json', 'application/*+json'])) {
      throw new SvcError(
        options.badMediaTypeIs400?.(req) ? 'validation_failed' : 'unsupported_media_type',
        'Send the request body as JSON with "Content-Type: application/json"',
      );
    }
    next();
  };
  const parse: RequestHandler = (req, _res, next) => {
    const bytes: unknown = req.body;
    if (!(bytes instanceof Buffer) || bytes.length === 0) {
      req.body = undefined;
      return next();
    }
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      throw new SvcError('malformed_json', 'Request body is not valid UTF-8 JSON');
    }
    req.body = parseStrictJson(text);
    next();
  };
  return [
    (req, res, next) => (req.method === 'POST' ? mediaType(req, res, next) : next()),
    (req, res, next) => (req.method === 'POST' ? raw(req, res, next) : next()),
    (req, res, next) => (req.method === 'POST' ? parse(req, res, next) : next()),
  ];
}
