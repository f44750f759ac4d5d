import { afterAll, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HOUR_MS, SlidingWindowLimiter } from '../../../src/services/rate-limiter.js';
import { SqliteWindowLimiter } from '../../../src/storage/sqlite/sqlite-rate-limiter.js';
import { ManualClock } from '../../support/harness.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-limits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = () => join(dir, `limits-${n++}.db`);

describe('SqliteWindowLimiter', () => {
  it('answers exactly as the in-memory limiter over the same sequence of requests', () => {
    const clock = new ManualClock();
    const memory = new SlidingWindowLimiter(clock);
    const shared = new SqliteWindowLimiter(file(), clock);
    const steps: [string, number, number][] = [];
    for (let i = 0; i < 40; i++) steps.push([`key:${i % 3}`, 5, (i % 7) * 60_000]);
    steps.push(['key:0', 5, HOUR_MS], ['key:1', 5, 1], ['ip:x', Infinity, 0]);
    for (const [client, limit, advance] of steps) {
      clock.advance(advance);
      expect(shared.peek(client, limit)).toEqual(memory.peek(client, limit));
      expect(shared.consume(client, limit)).toEqual(memory.consume(client, limit));
    }
    shared.close();
  });

  it('is one window for every limiter on the same file, as for several processes', () => {
    const clock = new ManualClock();
    const path = file();
    const a = new SqliteWindowLimiter(path, clock);
    const b = new SqliteWindowLimiter(path, clock);
    let allowed = 0;
    for (let i = 0; i < 150; i++) if ((i % 2 ? a : b).consume('key:free', 100).allowed) allowed++;
    expect(allowed).toBe(100);
    expect(a.peek('key:free', 100)).toMatchObject({ used: 100, remaining: 0 });
    clock.advance(HOUR_MS);
    expect(b.consume('key:free', 100)).toMatchObject({ allowed: true, used: 1 });
    a.close();
    b.close();
  });

  it('drops the windows of quiet clients, so the table does not grow without bound', () => {
    const clock = new ManualClock();
    const path = file();
    const limiter = new SqliteWindowLimiter(path, clock);
    for (let i = 0; i < 500; i++) limiter.consume(`ip:${i}`, 10);
    clock.advance(HOUR_MS + 60_000);
    limiter.consume('ip:late', 10);
    for (let i = 0; i < 500; i++) expect(limiter.peek(`ip:${i}`, 10).used).toBe(0);
    limiter.close();
    // Only the late request is left in the file.
    const db = new Database(path, { readonly: true });
    expect(db.prepare('SELECT count(*) AS n FROM rate_hits').get()).toEqual({ n: 1 });
    db.close();
  });
});
