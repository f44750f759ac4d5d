import { afterAll, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HOUR_MS } from '../../../src/services/rate-limiter.js';
import { SqliteWindowLimiter } from '../../../src/storage/sqlite/sqlite-rate-limiter.js';
import { ManualClock } from '../../support/harness.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-limits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = () => join(dir, `limits-${n++}.db`);

describe('SqliteWindowLimiter', () => {
  // Its answers and sharing are checked with every limiter's in test/contract/rate-limiters.test.ts.
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
