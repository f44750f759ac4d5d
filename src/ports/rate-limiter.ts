export const HOUR_MS = 60 * 60 * 1000;

export interface LimitStatus {
  allowed: boolean;
  /** The hourly cap; Infinity for unlimited tiers. */
  limit: number;
  remaining: number;
  /** Requests counted in the current window. */
  used: number;
  /** Seconds until one more request fits; set when the request was refused. */
  retryAfterSeconds?: number;
  /** When the window is empty again (ms since epoch), null when it is empty now. */
  resetAt: number | null;
}

/**
 * Sliding-window request budgets by client (`key:<account>`, `ip:<address>`, ...). A window
 * kept in process memory answers at once; one shared by several processes or instances (a
 * SQLite file, MongoDB) may answer with a promise.
 */
export interface RateLimiter {
  /** Counts a request when it fits the client's budget, and says whether it did. */
  consume(client: string, limit: number): LimitStatus | Promise<LimitStatus>;
  /** The client's status without counting a request. */
  peek(client: string, limit: number): LimitStatus | Promise<LimitStatus>;
}

/** The status of a client whose request fits (or would fit) its budget. */
export const allowedStatus = (
  limit: number,
  used: number,
  resetAt: number | null,
): LimitStatus => ({
  allowed: true,
  limit,
  remaining: Math.max(0, limit - used),
  used,
  resetAt,
});

/**
 * The status of a refused request: the window holds `used` requests, the oldest accepted at
 * `oldest` and the newest at `newest` (ms since the epoch).
 */
export const refusedStatus = (
  window: { limit: number; used: number; oldest: number; newest: number },
  now: number,
  windowMs: number,
): LimitStatus => ({
  allowed: false,
  limit: window.limit,
  remaining: 0,
  used: window.used,
  retryAfterSeconds: Math.max(1, Math.ceil((window.oldest + windowMs - now) / 1000)),
  resetAt: window.newest + windowMs,
});

/** Unlimited tiers keep no window. */
export const unlimitedStatus = (limit: number): LimitStatus => ({
  allowed: true,
  limit,
  remaining: limit,
  used: 0,
  resetAt: null,
});
