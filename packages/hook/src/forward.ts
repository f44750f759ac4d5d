import type { IncomingMessage } from 'node:http';
import { EXIT_HEADER, hookPath } from './protocol.js';
import type { Harness, HookAnswer } from './types.js';

/** Where and how svc-hook asks svc. */
export interface ForwardOptions {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  /** The event name, for harnesses whose payload does not carry it (?event=). */
  event?: string;
  /** A policy to evaluate under instead of the key's (?policy=). */
  policy?: string;
}

/** svc's answer, or the problem that stands in for it. */
export type ForwardResult = { ok: true; answer: HookAnswer } | { ok: false; problem: string };

/** Bounds on what svc may send back: an answer is a few hundred bytes. */
const MAX_ANSWER_BYTES = 1 << 20;

function urlOf(harness: Harness, options: ForwardOptions): URL {
  const url = new URL(options.baseUrl.replace(/\/+$/, '') + hookPath(harness.name));
  if (options.event) url.searchParams.set('event', options.event);
  if (options.policy) url.searchParams.set('policy', options.policy);
  return url;
}

function readBody(response: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) {
        response.destroy();
        resolve(null);
        return;
      }
      chunks.push(chunk);
    });
    response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    response.on('error', reject);
  });
}

/** The `error` (and request id) of svc's error body, for the message that names the problem. */
function errorDetail(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown; code?: unknown; request_id?: unknown };
    const parts = [body.error, body.code, body.request_id && `request ${String(body.request_id)}`]
      .filter((p) => typeof p === 'string' && p.length > 0)
      .map((p) => String(p).slice(0, 200));
    return parts.length ? `: ${parts.join(', ')}` : '';
  } catch {
    return '';
  }
}

function interpret(harness: Harness, status: number, exitHeader: unknown, text: string | null) {
  if (text === null) return problem(`svc's answer is larger than ${MAX_ANSWER_BYTES} bytes`);
  if (status < 200 || status > 299)
    return problem(`svc answered HTTP ${status}${errorDetail(text)}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return problem(`svc's answer is not JSON (HTTP ${status})`);
  }
  if (!harness.isAnswer(body)) {
    return problem(`svc's answer is not a ${harness.name} hook answer`);
  }
  const header = typeof exitHeader === 'string' ? exitHeader.trim() : '';
  if (!/^\d{1,3}$/.test(header) || Number(header) > 255) {
    return problem(`svc's answer has no valid ${EXIT_HEADER} header`);
  }
  const exitCode = Number(header);
  const answer: HookAnswer = { body, exit_code: exitCode };
  if (exitCode !== 0) {
    // With a non-zero status the harnesses read the reason from stderr.
    answer.stderr = harness.reasonOf(body) ?? `svc-hook: svc answered with exit status ${exitCode}`;
  }
  return { ok: true as const, answer };
}

function problem(message: string): ForwardResult {
  return { ok: false, problem: message };
}

/**
 * POSTs the harness's event, as the harness sent it, to svc's hook endpoint and reads the
 * harness's answer back. Never throws: every failure is a problem for the caller to fail on.
 */
export async function forward(
  harness: Harness,
  event: string,
  options: ForwardOptions,
): Promise<ForwardResult> {
  let url: URL;
  try {
    url = urlOf(harness, options);
  } catch {
    return problem(`SVC_URL is not a URL: ${options.baseUrl.slice(0, 200)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return problem(`SVC_URL must be an http or https URL, not ${url.protocol}`);
  }
  // Only the transport that is needed is loaded: node:https costs start-up time.
  const { request } =
    url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  return new Promise<ForwardResult>((resolve) => {
    let settled = false;
    const settle = (result: ForwardResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(event),
          accept: 'application/json',
          'x-api-key': options.apiKey,
          'user-agent': 'svc-hook',
        },
      },
      (response) => {
        readBody(response).then(
          (text) =>
            settle(
              interpret(
                harness,
                response.statusCode ?? 0,
                response.headers['x-svc-hook-exit'],
                text,
              ),
            ),
          (error: Error) => settle(problem(`svc's answer broke off: ${error.message}`)),
        );
      },
    );
    const timer = setTimeout(() => {
      settle(problem(`svc did not answer within ${options.timeoutMs} ms`));
      req.destroy();
    }, options.timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => {
      const code = error.code ? `${error.code} ` : '';
      settle(problem(`svc cannot be reached at ${url.origin}: ${code}${error.message}`.trim()));
    });
    req.end(event);
  });
}
