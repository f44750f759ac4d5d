import { afterEach, describe, expect, it } from '@jest/globals';
import { HOUR_MS, type LimitStatus, type RateLimiter } from '../../src/ports/rate-limiter.js';
import { SlidingWindowLimiter } from '../../src/services/rate-limiter.js';
import { ManualClock } from '../support/harness.js';

export type ClosableLimiter = RateLimiter & { close(): void | Promise<void> };

/**
 * Opens limiters on one fresh backend per case: every call of `open` within a case answers
 * another handle on the same windows (another process or instance), with the given clock.
 */
export type LimiterBackend = () => Promise<(clock: ManualClock) => Promise<ClosableLimiter>>;

/**
 * What every RateLimiter must do, checked against the in-memory SlidingWindowLimiter as the
 * reference, and, for limiters shared between processes, across handles.
 */
export function describeRateLimiterContract(name: string, backend: LimiterBackend): void {
  describe(`${name} rate limiter`, () => {
    const opened: ClosableLimiter[] = [];
    afterEach(async () => {
      for (const limiter of opened.splice(0)) await limiter.close();
    });
    const openOn = async () => {
      const open = await backend();
      return async (clock: ManualClock) => {
        const limiter = await open(clock);
        opened.push(limiter);
        return limiter;
      };
    };

    it('answers as the in-memory reference over a sequence of requests, peeks included', async () => {
      const clock = new ManualClock();
      const reference = new SlidingWindowLimiter(clock);
      const limiter = await (await openOn())(clock);
      const steps: [string, number, number][] = [];
      for (let i = 0; i < 40; i++) steps.push([`key:${i % 3}`, 5, (i % 7) * 60_000]);
      steps.push(['key:0', 5, HOUR_MS], ['key:1', 5, 1], ['ip:x', Infinity, 0], ['ip:y', 1, 0]);
      steps.push(['ip:y', 1, 0], ['signup:y', 2, HOUR_MS - 1], ['ip:y', 1, 1]);
      for (const [client, limit, advance] of steps) {
        clock.advance(advance);
        expect(await limiter.peek(client, limit)).toEqual(reference.peek(client, limit));
        expect(await limiter.consume(client, limit)).toEqual(reference.consume(client, limit));
      }
    });

    it('refuses past the limit with the seconds until the oldest request leaves', async () => {
      const clock = new ManualClock();
      const limiter = await (await openOn())(clock);
      expect(await limiter.consume('key:a', 2)).toMatchObject({ allowed: true, remaining: 1 });
      clock.advance(HOUR_MS / 2);
      expect(await limiter.consume('key:a', 2)).toMatchObject({ allowed: true, remaining: 0 });
      const refused = await limiter.consume('key:a', 2);
      expect(refused).toMatchObject({ allowed: false, used: 2, retryAfterSeconds: 1800 });
      expect(refused.resetAt).toBe(clock.now() + HOUR_MS);
      // A refusal is not counted: the window is the same after it.
      expect(await limiter.peek('key:a', 2)).toMatchObject({ used: 2, remaining: 0 });
      clock.advance(HOUR_MS / 2);
      expect(await limiter.consume('key:a', 2)).toMatchObject({ allowed: true, remaining: 0 });
      // Other clients have windows of their own.
      expect(await limiter.consume('ip:a', 2)).toMatchObject({ allowed: true, used: 1 });
    });

    it('is empty again, with no reset time, once every request has left the window', async () => {
      const clock = new ManualClock();
      const limiter = await (await openOn())(clock);
      await limiter.consume('key:idle', 10);
      clock.advance(HOUR_MS);
      const status: LimitStatus = await limiter.peek('key:idle', 10);
      expect(status).toEqual({ allowed: true, limit: 10, remaining: 10, used: 0, resetAt: null });
    });
  });
}

/** What a limiter shared between processes or instances must do besides. */
export function describeSharedLimiterContract(name: string, backend: LimiterBackend): void {
  describe(`${name} rate limiter shared by several handles`, () => {
    const opened: ClosableLimiter[] = [];
    afterEach(async () => {
      for (const limiter of opened.splice(0)) await limiter.close();
    });

    it('grants exactly the limit to requests racing through several handles', async () => {
      const clock = new ManualClock();
      const open = await backend();
      const handles = [await open(clock), await open(clock), await open(clock)];
      opened.push(...handles);
      const answers = await Promise.all(
        Array.from({ length: 60 }, (_, i) => handles[i % handles.length]!.consume('key:free', 25)),
      );
      expect(answers.filter((a) => a.allowed)).toHaveLength(25);
      for (const handle of handles) {
        expect(await handle.peek('key:free', 25)).toMatchObject({ used: 25, remaining: 0 });
      }
      clock.advance(HOUR_MS);
      expect(await handles[1]!.consume('key:free', 25)).toMatchObject({ allowed: true, used: 1 });
    });
  });
}
