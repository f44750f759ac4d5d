import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ResolvedAddress } from '../services/webhook-url-guard.js';

export interface PostOutcome {
  statusCode: number | null;
  error: string | null;
}

/**
 * POSTs to `url` over a connection to `address`, the address the guard checked: the pinned
 * lookup stops a second DNS answer (rebinding) from being used, while TLS still checks the
 * certificate against the URL's host name. Redirects are not followed (node:http never
 * does); the whole exchange is bounded by `timeoutMs`.
 */
export function postPinned(
  url: URL,
  address: ResolvedAddress,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<PostOutcome> {
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: address.address, family: address.family }]);
    else callback(null, address.address, address.family);
  };
  const options: RequestOptions = {
    method: 'POST',
    hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port || undefined,
    path: `${url.pathname}${url.search}`,
    headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body, 'utf8')) },
    lookup: pinned,
    agent: false,
  };
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(options, (res) => {
      // Only the status matters; drain the body without keeping it.
      res.resume();
      res.on('error', () => undefined);
      settle({ statusCode: res.statusCode ?? null, error: null });
    });
    const timer = setTimeout(() => {
      settle({ statusCode: null, error: `timed out after ${timeoutMs} ms` });
      req.destroy();
    }, timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) =>
      settle({ statusCode: null, error: error.code ?? error.message }),
    );
    req.end(body);
  });
}
