import express, { type RequestHandler } from 'express';
import { SvcError } from '../../core/errors.js';
import { MAX_BODY_BYTES } from '../../core/limits.js';
import { parseStrictJson } from '../../core/strict-json.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Every POST body is JSON, whatever its Content-Type says, read as raw bytes (at most 1 MiB,
 * also after decompression) and parsed strictly: duplicate keys, unsafe numbers and the rest
 * of contract §1 are refused before any handler sees the value. An empty body is undefined.
 */
export function jsonBody(): RequestHandler[] {
  const raw = express.raw({ type: () => true, limit: MAX_BODY_BYTES });
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
    (req, res, next) => (req.method === 'POST' ? raw(req, res, next) : next()),
    (req, res, next) => (req.method === 'POST' ? parse(req, res, next) : next()),
  ];
}
