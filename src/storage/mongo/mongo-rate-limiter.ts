import type { Collection, Db } from 'mongodb';
import type { Clock } from '../../ports/clock.js';
import {
  HOUR_MS,
  allowedStatus,
  unlimitedStatus,
  type LimitStatus,
  type RateLimiter,
} from '../../ports/rate-limiter.js';
import { COLLECTIONS, type RateWindowDocument } from './documents.js';

/**
 * The sliding-window log of SlidingWindowLimiter, kept in MongoDB so that a client's window is
 * one window for every instance and worker on the database.
 *
 * A client is one document holding the times of its accepted requests in the window (never
 * more than its limit: 10,000 numbers for a pilot key, about 150 KB). A count is a single
 * findOneAndUpdate with an update pipeline: drop the times that left the window, accept when
 * fewer than `limit` remain, append now. An update of one document is atomic, so two instances
 * cannot both take the last request of a budget, without a transaction or a retry loop.
 * `accepted` records the outcome of the update that returned the document.
 *
 * Times come from each instance's clock (as the other stores' do), so instances need
 * synchronized clocks (NTP); a skew of seconds moves a window's edge by as much. Idle clients
 * leave through a TTL index on `expires_at` (the newest request + the window).
 */
export class MongoWindowLimiter implements RateLimiter {
  private readonly windows: Collection<RateWindowDocument>;

  constructor(
    db: Db,
    private readonly clock: Clock,
    private readonly windowMs = HOUR_MS,
  ) {
    this.windows = db.collection<RateWindowDocument>(COLLECTIONS.rateWindows);
  }

  async consume(client: string, limit: number): Promise<LimitStatus> {
    if (limit === Number.POSITIVE_INFINITY) return unlimitedStatus(limit);
    const now = this.clock.now();
    const cutoff = now - this.windowMs;
    const update = [
      {
        $set: {
          times: {
            $filter: { input: { $ifNull: ['$times', []] }, cond: { $gt: ['$$this', cutoff] } },
          },
        },
      },
      { $set: { accepted: { $lt: [{ $size: '$times' }, limit] } } },
      {
        $set: {
          times: { $cond: ['$accepted', { $concatArrays: ['$times', [now]] }, '$times'] },
          expires_at: {
            $cond: [
              '$accepted',
              new Date(now + this.windowMs),
              { $ifNull: ['$expires_at', new Date(now + this.windowMs)] },
            ],
          },
        },
      },
    ];
    const window = await this.upsert(client, update);
    const times = window.times;
    if (!window.accepted) {
      return {
        allowed: false,
        limit,
        remaining: 0,
        used: times.length,
        retryAfterSeconds: Math.max(1, Math.ceil((times[0]! + this.windowMs - now) / 1000)),
        resetAt: times[times.length - 1]! + this.windowMs,
      };
    }
    return allowedStatus(limit, times.length, now + this.windowMs);
  }

  async peek(client: string, limit: number): Promise<LimitStatus> {
    if (limit === Number.POSITIVE_INFINITY) return unlimitedStatus(limit);
    const cutoff = this.clock.now() - this.windowMs;
    const window = await this.windows.findOne({ _id: client }, { projection: { times: 1 } });
    const times = (window?.times ?? []).filter((at) => at > cutoff);
    return allowedStatus(
      limit,
      times.length,
      times.length > 0 ? times[times.length - 1]! + this.windowMs : null,
    );
  }

  /** The store's client closes the connection; nothing of its own to release. */
  close(): void {}

  // Two first requests of a new client can race to insert its document: the server retries
  // such an upsert itself when the filter is an equality on _id (MongoDB 4.2+); the retry here
  // covers older servers and sharded clusters, where it may not.
  private async upsert(client: string, update: object[]): Promise<RateWindowDocument> {
    for (let attempt = 1; ; attempt++) {
      try {
        const window = await this.windows.findOneAndUpdate({ _id: client }, update, {
          upsert: true,
          returnDocument: 'after',
        });
        return window!;
      } catch (error) {
        if ((error as { code?: unknown }).code !== 11000 || attempt >= 3) throw error;
      }
    }
  }
}
