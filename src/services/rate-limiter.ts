import type { Clock } from '../ports/clock.js';
import {
  HOUR_MS,
  allowedStatus,
  refusedStatus,
  unlimitedStatus,
  type LimitStatus,
  type RateLimiter,
} from '../ports/rate-limiter.js';

export { HOUR_MS } from '../ports/rate-limiter.js';

export type { LimitStatus } from '../ports/rate-limiter.js';

interface Window {
  times: number[];
  start: number;
}

/**
 * An exact sliding-window log: a client's window holds the times of its accepted requests of
 * the last hour, never more than its limit, so memory per client is bounded by its tier.
 * Unlimited clients keep no log. State is per process (docs/API.md, "Rate limits"); several
 * worker processes share a SqliteWindowLimiter instead, and instances on MongoDB a
 * MongoWindowLimiter.
 */
export class SlidingWindowLimiter implements RateLimiter {
  // Key windows are never evicted (keys are few, and forgetting one would reset its budget);
  // windows of addresses are capped, since anyone can make up new addresses.
  private readonly keyWindows = new Map<string, Window>();
  private readonly addressWindows = new Map<string, Window>();
  private lastSweep = 0;

  constructor(
    private readonly clock: Clock,
    private readonly windowMs = HOUR_MS,
    private readonly maxClients = 100_000,
  ) {}

  consume(client: string, limit: number): LimitStatus {
    return this.check(client, limit, true);
  }

  /** The client's status without counting a request. */
  peek(client: string, limit: number): LimitStatus {
    return this.check(client, limit, false);
  }

  private check(client: string, limit: number, count: boolean): LimitStatus {
    const now = this.clock.now();
    if (limit === Number.POSITIVE_INFINITY) return unlimitedStatus(limit);
    this.sweepIfDue(now);
    const windows = client.startsWith('key:') ? this.keyWindows : this.addressWindows;
    let window = windows.get(client);
    if (window) this.prune(window, now);
    let used = window ? window.times.length - window.start : 0;
    if (count && used >= limit) {
      const oldest = window!.times[window!.start]!;
      const newest = window!.times[window!.times.length - 1]!;
      return refusedStatus({ limit, used, oldest, newest }, now, this.windowMs);
    }
    if (count) {
      if (!window) {
        window = { times: [], start: 0 };
        // At capacity the oldest address window goes, in O(1): Maps iterate in insertion order.
        if (windows === this.addressWindows && windows.size >= this.maxClients) {
          windows.delete(windows.keys().next().value!);
        }
        windows.set(client, window);
      }
      window.times.push(now);
      used++;
    }
    const newest = window && used > 0 ? window.times[window.times.length - 1]! : null;
    return allowedStatus(limit, used, newest === null ? null : newest + this.windowMs);
  }

  private prune(window: Window, now: number): void {
    const cutoff = now - this.windowMs;
    while (window.start < window.times.length && window.times[window.start]! <= cutoff)
      window.start++;
    if (window.start > 1024 && window.start * 2 > window.times.length) {
      window.times = window.times.slice(window.start);
      window.start = 0;
    }
  }

  // Idle windows are dropped lazily, at most once a minute.
  private sweepIfDue(now: number): void {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    for (const windows of [this.keyWindows, this.addressWindows]) {
      for (const [client, window] of windows) {
        this.prune(window, now);
        if (window.start >= window.times.length) windows.delete(client);
      }
    }
  }
}
