import type { Socket } from 'node:net';

// A single HTTP/1.1 POST over a plain socket, for svc-hook alone. Loading node:http costs a
// command hook 30-140 ms of start-up on a busy two-core machine, node:net a few: svc-hook runs
// once per tool call, so it speaks the little HTTP it needs itself. One request per
// connection (Connection: close), the answer read to the end, bounded.

/** A response: status, lower-cased headers, body bytes. */
export interface Http1Response {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface Http1Request {
  url: URL;
  headers: Record<string, string>;
  body: string;
  /** Bounds the body of the answer (the headers are bounded separately). */
  maxBodyBytes: number;
}

/** A problem with the exchange, named for the operator. */
export class Http1Error extends Error {
  override name = 'Http1Error';
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

const MAX_HEADER_BYTES = 64 * 1024;
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;
const CRLF = '\r\n';

/** The request's bytes; a header value with a line break would forge headers: refused. */
export function requestBytes(request: Http1Request): Buffer {
  const { url } = request;
  const lines = [`POST ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`];
  for (const [name, value] of Object.entries(request.headers)) {
    if (!HEADER_VALUE.test(value)) {
      throw new Http1Error(`the ${name} header holds characters a header cannot carry`);
    }
    lines.push(`${name}: ${value}`);
  }
  lines.push(`content-length: ${Buffer.byteLength(request.body)}`, 'connection: close');
  return Buffer.concat([
    Buffer.from(lines.join(CRLF) + CRLF + CRLF, 'latin1'),
    Buffer.from(request.body),
  ]);
}

/** Decodes a chunked body; null when it is malformed or incomplete. */
function unchunk(data: Buffer): Buffer | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const end = data.indexOf(CRLF, at);
    if (end < 0) return null;
    const sizeText = data.toString('latin1', at, end).split(';')[0]!.trim();
    if (!/^[0-9a-fA-F]{1,8}$/.test(sizeText)) return null;
    const size = parseInt(sizeText, 16);
    at = end + 2;
    if (size === 0) return Buffer.concat(parts);
    if (at + size + 2 > data.length) return null;
    parts.push(data.subarray(at, at + size));
    at += size + 2;
  }
}

/**
 * Whether the bytes so far hold a whole response, by its content-length or its last chunk: a
 * server or proxy that keeps the connection open despite `connection: close` is not waited on.
 */
function isComplete(data: Buffer): boolean {
  const split = data.indexOf(CRLF + CRLF);
  if (split < 0) return false;
  const head = data.toString('latin1', 0, split).toLowerCase();
  const body = data.subarray(split + 4);
  if (/\ntransfer-encoding:[^\n]*chunked/.test(head)) return unchunk(body) !== null;
  const length = /\ncontent-length:[ \t]*(\d+)/.exec(head);
  return length !== null && body.length >= Number(length[1]);
}

/** Parses a whole response read to the end of the connection. */
export function parseResponse(data: Buffer, maxBodyBytes: number): Http1Response {
  const split = data.indexOf(CRLF + CRLF);
  if (split < 0 || split > MAX_HEADER_BYTES) {
    throw new Http1Error('svc closed the connection without a complete HTTP answer');
  }
  const [statusLine, ...headerLines] = data.toString('latin1', 0, split).split(CRLF);
  const status = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(statusLine ?? '');
  if (!status) throw new Http1Error('svc answered something other than HTTP/1.1');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Http1Error('svc answered a malformed HTTP header');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body: Buffer | null = data.subarray(split + 4);
  if (/\bchunked\b/i.test(headers['transfer-encoding'] ?? '')) {
    body = unchunk(body);
    if (body === null) throw new Http1Error("svc's chunked answer is malformed or incomplete");
  } else if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    if (!Number.isSafeInteger(length) || length < 0 || body.length < length) {
      throw new Http1Error("svc's answer is shorter than its content-length");
    }
    body = body.subarray(0, length);
  }
  if (body.length > maxBodyBytes) {
    throw new Http1Error(`svc's answer is larger than ${maxBodyBytes} bytes`);
  }
  return { status: Number(status[1]), headers, body };
}

/**
 * POSTs the request and resolves with the whole answer; rejects with an Http1Error (or the
 * socket's error, with its code) and destroys the socket when `signal` aborts.
 */
export async function post(request: Http1Request, signal: AbortSignal): Promise<Http1Response> {
  const bytes = requestBytes(request);
  const { url } = request;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  // Only the transport that is needed is loaded: node:tls costs start-up time too.
  const socket: Socket =
    url.protocol === 'https:'
      ? (await import('node:tls')).connect({ host, port })
      : (await import('node:net')).connect({ host, port });
  return new Promise<Http1Response>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const limit = MAX_HEADER_BYTES + request.maxBodyBytes + 1024;
    const settle = (outcome: () => Http1Response) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', abort);
      socket.destroy();
      try {
        resolve(outcome());
      } catch (error) {
        reject(error as Error);
      }
    };
    const fail = (error: Error) =>
      settle(() => {
        throw error;
      });
    const abort = () => fail(new Http1Error('aborted'));
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    // Written, not ended: a half-closed request makes some servers and proxies hang up early;
    // the server closes the connection after its answer (connection: close).
    socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => socket.write(bytes));
    const whole = () => parseResponse(Buffer.concat(chunks), request.maxBodyBytes);
    socket.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return fail(new Http1Error(`svc's answer is larger than ${limit} bytes`));
      chunks.push(chunk);
      if (isComplete(Buffer.concat(chunks))) settle(whole);
    });
    socket.on('error', (error: NodeJS.ErrnoException) =>
      fail(new Http1Error(error.message, error.code)),
    );
    socket.on('end', () => settle(whole));
  });
}
