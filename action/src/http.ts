import { ActionFailure } from './failure.js';

/** What the client needs from its surroundings; tests inject `sleep` so retries take no time. */
export interface HttpDeps {
  fetch: typeof fetch;
  sleep: (ms: number) => Promise<void>;
  /** In [0, 1): the jitter. */
  random: () => number;
  log: (message: string) => void;
}

export interface SvcResponse {
  status: number;
  text: string;
  headers: Headers;
}

/** At most this many requests per call: the first and three retries. */
export const MAX_ATTEMPTS = 4;
/** A Retry-After longer than this is not waited for in a job: the step fails and says when. */
export const MAX_RETRY_AFTER_MS = 60_000;
const RETRIED = new Set([429, 503]);

/**
 * Seconds of Retry-After (delta or HTTP date) in ms; null when absent or unreadable.
 * Attacker-influenced header: anything odd falls back to our own backoff.
 */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Only the IMF-fixdate form of RFC 9110: Date.parse reads far more (even "-3" as a year).
  if (!/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text)) return null;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** The backoff before retry `n` (1-based): about 1, 2, 4, 8 s, each within ±25 %. */
export const backoffMs = (retry: number, random: () => number): number =>
  Math.round(1000 * 2 ** (retry - 1) * (0.75 + random() * 0.5));

const errorText = (res: SvcResponse): string => {
  try {
    const body = JSON.parse(res.text) as { error?: unknown; code?: unknown };
    const code = typeof body.code === 'string' ? ` ${body.code}` : '';
    return typeof body.error === 'string' ? `${res.status}${code}: ${body.error}` : `${res.status}`;
  } catch {
    return `${res.status}`;
  }
};

/** The message the step fails with for an answer that is not a success. */
export function describeFailure(res: SvcResponse, what: string): string {
  switch (res.status) {
    case 400:
      return `svc refused ${what} (${errorText(res)}). Not retried: fix the claim or the inputs.`;
    case 401:
      return `svc answered 401: the API key is missing or wrong. Pass it as api-key from a secret, e.g. api-key: \${{ secrets.SVC_API_KEY }}. Not retried.`;
    case 409:
      return `svc refused ${what} (${errorText(res)}): this claim_id was already used with other content.`;
    case 429:
      return `svc is rate-limiting this API key (${errorText(res)}) and still was after ${MAX_ATTEMPTS} attempts; wait for the hourly window or move the key to a higher tier.`;
    case 503:
      return `svc is unavailable (${errorText(res)}) and still was after ${MAX_ATTEMPTS} attempts.`;
    default:
      return `svc answered ${errorText(res)} to ${what}.`;
  }
}

/**
 * One call to svc with the client rules of the spec: 429 and 503 retried with exponential
 * backoff and jitter, honouring Retry-After, at most MAX_ATTEMPTS requests; every other answer
 * (400 and 401 above all) returned at once, since repeating an unchanged request cannot help.
 * A connection failure is retried like a 503.
 */
export async function callSvc(
  url: string,
  init: { method: 'GET' | 'POST'; apiKey?: string; body?: unknown },
  deps: HttpDeps,
): Promise<SvcResponse> {
  const headers: Record<string, string> = { Accept: 'application/json, text/plain' };
  if (init.apiKey) headers['X-API-Key'] = init.apiKey;
  if (init.body !== undefined) headers['Content-Type'] = 'application/json';
  for (let attempt = 1; ; attempt++) {
    let res: SvcResponse | null = null;
    let networkError: Error | null = null;
    try {
      const answer = await deps.fetch(url, {
        method: init.method,
        headers,
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        redirect: 'error',
        signal: AbortSignal.timeout(30_000),
      });
      res = { status: answer.status, text: await answer.text(), headers: answer.headers };
    } catch (error) {
      networkError = error as Error;
    }
    if (res && !RETRIED.has(res.status)) return res;
    const reason = res
      ? `answered ${res.status}`
      : `could not be reached (${networkError!.message})`;
    if (attempt >= MAX_ATTEMPTS) {
      if (res) return res;
      throw new ActionFailure(
        `svc at ${new URL(url).origin} could not be reached after ${MAX_ATTEMPTS} attempts: ${networkError!.message}`,
        { cause: networkError },
      );
    }
    const asked = res ? retryAfterMs(res.headers.get('retry-after')) : null;
    if (asked !== null && asked > MAX_RETRY_AFTER_MS)
      throw new ActionFailure(
        `${describeFailure(res!, url).replace(/ and still was after \d+ attempts/, '')} svc asks to retry after ${Math.ceil(asked / 1000)} s, longer than a job should wait.`,
      );
    const wait = asked ?? backoffMs(attempt, deps.random);
    deps.log(
      `svc ${reason}; attempt ${attempt + 1} of ${MAX_ATTEMPTS} in ${(wait / 1000).toFixed(1)} s`,
    );
    await deps.sleep(wait);
  }
}
