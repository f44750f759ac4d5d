import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import request from 'supertest';
import { STORE_WRITE_PROBE_INTERVAL_MS } from '../../../src/services/health.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import { ledgerState, newKey } from '../../support/api.js';
import { validClaim } from '../../support/claims.js';

const chattr = (flag: '+i' | '-i', paths: string[]) =>
  spawnSync('chattr', [flag, ...paths], { encoding: 'utf8' });

/**
 * Why the kernel cannot be made to refuse the ledger's writes here, or null when it can: the
 * immutable attribute (root with CAP_LINUX_IMMUTABLE, a filesystem that keeps it, and a
 * kernel that refuses writes through descriptors opened before it was set, Linux >= 5.3).
 */
function immutableUnavailable(): string | null {
  const dir = mkdtempSync(join(tmpdir(), 'svc-immutable-check-'));
  const file = join(dir, 'f');
  writeFileSync(file, 'x');
  const fd = openSync(file, 'r+');
  try {
    const set = chattr('+i', [file]);
    if (set.error) return `chattr is not available (${set.error.message})`;
    if (set.status !== 0) return `chattr +i is refused here: ${set.stderr.trim()}`;
    try {
      writeSync(fd, 'y', 0);
      return 'this kernel lets a descriptor opened before chattr +i write to the file';
    } catch {
      return null;
    } finally {
      chattr('-i', [file]);
    }
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
}

const unavailable = immutableUnavailable();

describe('/health?deep=true commits a write, so it sees a store the disk will not take writes for', () => {
  let root: string;
  let file: string;
  let locked: string[] = [];
  const apps: TestApp[] = [];
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'svc-deep-health-'));
    file = join(root, 'ledger.db');
  });
  afterEach(async () => {
    if (locked.length > 0) chattr('-i', locked.splice(0));
    for (const t of apps.splice(0)) await t.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('the probe is committed: another connection reads the time of the last deep check', async () => {
    const t = buildTestApp({ store: openSqliteStore(file) });
    apps.push(t);
    const before = await ledgerState(t);
    expect((await request(t.app).get('/health?deep=true')).status).toBe(200);
    const reader = new Database(file, { readonly: true });
    try {
      const rows = reader.prepare('SELECT id, at FROM health_probe').all();
      expect(rows).toEqual([{ id: 1, at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) }]);
      // The service's clock, not the machine's.
      expect(rows).toEqual([{ id: 1, at: new Date(t.clock.now()).toISOString() }]);
    } finally {
      reader.close();
    }
    expect(await ledgerState(t)).toEqual(before);
  });

  (unavailable ? it.skip : it)(
    unavailable
      ? `a ledger whose files the kernel refuses to write: 503 (skipped: ${unavailable})`
      : 'a ledger whose files the kernel refuses to write: 503, the ledger unchanged; 200 again once writable',
    async () => {
      const t = buildTestApp({ store: openSqliteStore(file) });
      apps.push(t);
      const key = await newKey(t);
      const evaluate = () =>
        request(t.app).post('/v1/evaluate').set('X-API-Key', key).send(validClaim());
      expect((await evaluate()).status).toBe(200);
      expect((await request(t.app).get('/health?deep=true')).status).toBe(200);
      const before = await ledgerState(t);

      // The database, its WAL and the directory (no new journal file either). Not the -shm
      // file: SQLite maps it into memory, and a store to a mapped page of an immutable file
      // is a SIGBUS that would end the test run.
      locked = [file, `${file}-wal`, root];
      const set = chattr('+i', locked);
      expect(set.stderr).toBe('');
      t.clock.advance(STORE_WRITE_PROBE_INTERVAL_MS);

      const deep = await request(t.app).get('/health?deep=true');
      expect(deep.status).toBe(503);
      expect(deep.body.ok).toBe(false);
      expect(deep.body.checks.store).toEqual({
        ok: false,
        latency_ms: expect.any(Number),
        error: expect.stringMatching(/I\/O|read-?only|write/i),
      });
      expect(deep.body.checks.signer.ok).toBe(true);
      // What the check predicts: an append fails too, and nothing reaches the ledger.
      expect((await evaluate()).status).toBeGreaterThanOrEqual(500);
      expect((await request(t.app).get('/health')).status).toBe(200);
      expect(await ledgerState(t)).toEqual(before);

      chattr('-i', locked.splice(0));
      t.clock.advance(STORE_WRITE_PROBE_INTERVAL_MS);
      const healed = await request(t.app).get('/health?deep=true');
      expect(healed.status).toBe(200);
      expect(healed.body.checks.store.ok).toBe(true);
      expect((await evaluate()).status).toBe(200);
    },
  );
});
