import type { Collection, Db } from 'mongodb';
import type { Clock } from '../../ports/clock.js';
import {
  HOUR_MS,
  allowedStatus,
  refusedStatus,
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
 * leave through a TTL index on `expires_at` (the newest request + the window, by the server's
 * clock).
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
    // The TTL monitor compares expires_at with the server's clock, so the expiry comes from
    // it too ($$NOW): a skew between this instance and the server cannot drop a live window.
    const expiry = { $add: ['$$NOW', this.windowMs] };
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
          expires_at: { $cond: ['$accepted', expiry, { $ifNull: ['$expires_at', expiry] }] },
        },
      },
    ];
    const window = await this.upsert(client, update);
    if (!window.accepted) {
      return refusedStatus({ ...window, limit }, now, this.windowMs);
    }
    return allowedStatus(limit, window.used, now + this.windowMs);
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
  // covers older servers and sharded clusters, where it may not. Only the window's size and
  // ends come back, not its times (up to 10,000 for a pilot key).
  private async upsert(client: string, update: object[]): Promise<CountedWindow> {
    for (let attempt = 1; ; attempt++) {
      try {
        const window = await this.windows.findOneAndUpdate({ _id: client }, update, {
          upsert: true,
          returnDocument: 'after',
          projection: {
            _id: 0,
            accepted: 1,
            used: { $size: '$times' },
            oldest: { $first: '$times' },
            newest: { $last: '$times' },
          },
        });
        return window as unknown as CountedWindow;
      } catch (error) {
        if ((error as { code?: unknown }).code !== 11000 || attempt >= 3) throw error;
      }
    }
  }
}

/** What a count answers: the outcome, and the window's size and ends after it. */
interface CountedWindow {
  accepted: boolean;
  used: number;
  oldest: number;
  newest: number;
}
