import { describe, expect, it } from '@jest/globals';
import { HOUR_MS, SlidingWindowLimiter } from '../../../src/services/rate-limiter.js';
import { ManualClock } from '../../support/harness.js';

describe('SlidingWindowLimiter', () => {
  it('slides: a request counts for exactly one hour after it was accepted', () => {
    const clock = new ManualClock();
    const limiter = new SlidingWindowLimiter(clock);
    expect(limiter.consume('key:a', 2).allowed).toBe(true);
    clock.advance(HOUR_MS / 2);
    expect(limiter.consume('key:a', 2)).toMatchObject({ allowed: true, remaining: 0 });
    const refused = limiter.consume('key:a', 2);
    expect(refused).toMatchObject({ allowed: false, retryAfterSeconds: 1800 });
    clock.advance(HOUR_MS / 2);
    expect(limiter.consume('key:a', 2)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('never forgets a key window, however many addresses come and go', () => {
    const clock = new ManualClock();
    const limiter = new SlidingWindowLimiter(clock, HOUR_MS, 1_000);
    expect(limiter.consume('key:spent', 1).allowed).toBe(true);
    for (let i = 0; i < 5_000; i++) limiter.consume(`ip:10.0.${i >> 8}.${i & 255}`, 10);
    expect(limiter.consume('key:spent', 1).allowed).toBe(false);
  });

  it('caps address windows, dropping the oldest', () => {
    const clock = new ManualClock();
    const limiter = new SlidingWindowLimiter(clock, HOUR_MS, 3);
    for (const ip of ['a', 'b', 'c']) expect(limiter.consume(`ip:${ip}`, 1).allowed).toBe(true);
    expect(limiter.consume('ip:c', 1).allowed).toBe(false);
    limiter.consume('ip:d', 1); // evicts a, the oldest
    expect(limiter.consume('ip:a', 1).allowed).toBe(true);
    expect(limiter.consume('ip:c', 1).allowed).toBe(false);
  });

  it('keeps no log for unlimited clients', () => {
    const limiter = new SlidingWindowLimiter(new ManualClock());
    for (let i = 0; i < 1000; i++) {
      expect(limiter.consume('key:big', Number.POSITIVE_INFINITY)).toMatchObject({
        allowed: true,
        used: 0,
      });
    }
  });
});
