import { Http1Error, post } from './http1.js';
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
  /** Nobody can answer an ask now: an escalated call is denied (?ask=false). */
  noAsk?: boolean;
  /** On a post-tool event, the repository's HEAD after the call (?git_head=). */
  gitHead?: string;
  /** The repository the session works in (?repository=). */
  repository?: string;
  /** Seconds an escalation that cannot be asked waits for a reviewer (?wait=). */
  waitSeconds?: number;
}

/** svc's answer, or the problem that stands in for it. */
export type ForwardResult = { ok: true; answer: HookAnswer } | { ok: false; problem: string };

/** Bounds on what svc may send back: an answer is a few hundred bytes. */
const MAX_ANSWER_BYTES = 1 << 20;

function problem(message: string): ForwardResult {
  return { ok: false, problem: message };
}

function urlOf(harness: Harness, options: ForwardOptions): URL {
  const url = new URL(options.baseUrl.replace(/\/+$/, '') + hookPath(harness.name));
  if (options.event) url.searchParams.set('event', options.event);
  if (options.policy) url.searchParams.set('policy', options.policy);
  if (options.noAsk) url.searchParams.set('ask', 'false');
  if (options.gitHead) url.searchParams.set('git_head', options.gitHead);
  if (options.repository) url.searchParams.set('repository', options.repository);
  if (options.waitSeconds) url.searchParams.set('wait', String(options.waitSeconds));
  return url;
}

/** The `error` (and code and request id) of svc's error body, for the message. */
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

function interpret(
  harness: Harness,
  status: number,
  exitHeader: string | undefined,
  text: string,
): ForwardResult {
  if (status < 200 || status > 299)
    return problem(`svc answered HTTP ${status}${errorDetail(text)}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return problem(`svc's answer is not JSON (HTTP ${status})`);
  }
  if (!harness.isAnswer(body)) return problem(`svc's answer is not a ${harness.name} hook answer`);
  const header = exitHeader?.trim() ?? '';
  if (!/^\d{1,3}$/.test(header) || Number(header) > 255) {
    return problem(`svc's answer has no valid ${EXIT_HEADER} header`);
  }
  const exitCode = Number(header);
  const answer: HookAnswer = { body, exit_code: exitCode };
  if (exitCode !== 0) {
    // With a non-zero status the harnesses read the reason from stderr.
    answer.stderr = harness.reasonOf(body) ?? `svc-hook: svc answered with exit status ${exitCode}`;
  }
  return { ok: true, answer };
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
  if (url.username || url.password) return problem('SVC_URL must not carry credentials');
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), options.timeoutMs);
  try {
    const response = await post(
      {
        url,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'x-api-key': options.apiKey,
          'user-agent': 'svc-hook',
        },
        body: event,
        maxBodyBytes: MAX_ANSWER_BYTES,
      },
      deadline.signal,
    );
    return interpret(
      harness,
      response.status,
      response.headers[EXIT_HEADER.toLowerCase()],
      response.body.toString('utf8'),
    );
  } catch (error) {
    if (deadline.signal.aborted)
      return problem(`svc did not answer within ${options.timeoutMs} ms`);
    if (error instanceof Http1Error && error.code) {
      return problem(`svc cannot be reached at ${url.origin}: ${error.code} ${error.message}`);
    }
    return problem((error as Error).message);
  } finally {
    clearTimeout(timer);
  }
}
