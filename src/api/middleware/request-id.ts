import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

// The caller's id is echoed only when it is short and plain: it lands in logs and headers.
const SAFE_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** The request id: the caller's X-Request-Id when safe, else a fresh UUID; set on the response. */
export function assignRequestId(req: IncomingMessage, res: ServerResponse): string {
  const header = req.headers['x-request-id'];
  const id = typeof header === 'string' && SAFE_ID.test(header) ? header : randomUUID();
  res.setHeader('X-Request-Id', id);
  return id;
}
