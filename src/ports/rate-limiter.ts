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

/** Sliding-window request budgets by client (`key:<account>`, `ip:<address>`, ...). */
export interface RateLimiter {
  /** Counts a request when it fits the client's budget, and says whether it did. */
  consume(client: string, limit: number): LimitStatus;
  /** The client's status without counting a request. */
  peek(client: string, limit: number): LimitStatus;
}
