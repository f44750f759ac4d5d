import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { AUTH_CACHE_TTL_MS } from '../../src/services/api-keys.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { runNode } from '../fixtures/run-node.js';
import { transpileTree, type TranspiledTree } from '../fixtures/transpile-tree.js';
import { buildTestApp, SystemTimeClock } from '../support/harness.js';

const packageVersion = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

// The operator CLI and the server entry run as real child processes on a temp data dir.
describe('svc operator CLI and process entry', () => {
  let tree: TranspiledTree;
  let dataDir: string;
  const env = () => ({ ...process.env, SVC_DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const cli = (...args: string[]) =>
    runNode(fileURLToPath(tree.url('src/cli/svc.ts')), args, 20_000, env());

  beforeAll(async () => {
    tree = transpileTree(['src/cli/svc.ts', 'src/server.ts']);
    dataDir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
    // The ledger the service's first start leaves: the CLI works only where there is one.
    await openSqliteStore(join(dataDir, 'ledger.db')).close();
  });
  afterAll(() => {
    tree.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  });

  // System time, moved forward by a test to let cached key records expire.
  const clock = new SystemTimeClock();

  /** The service on the CLI's data dir. */
  const appOnDataDir = () =>
    buildTestApp({
      dataDir,
      clock,
      config: { anonLimitPerHour: 1000, signupLimitPerHour: 100 },
    });

  it('prints its usage with --help and with no arguments', async () => {
    for (const args of [['--help'], []]) {
      const run = await cli(...args);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('svc keys set-tier <email|key_id> <tier>');
      expect(run.stdout).toContain('svc keys create --email <e>');
      expect(run.stdout).toContain(
        'free (100 requests/hour), pilot (10,000/hour), enterprise (unlimited)',
      );
    }
  });

  it('prints its version with --version', async () => {
    const run = await cli('--version');
    expect(run).toEqual({ code: 0, stdout: `svc ${packageVersion}\n`, stderr: '' });
  });

  it('its help names the store it works on: MONGODB_URI when set, else SVC_DATA_DIR', async () => {
    const run = await cli('--help');
    expect(run.stdout).toMatch(/MONGODB_URI[\s\S]*SVC_DATA_DIR/);
    expect(run.stdout).toContain('svc --version');
  });

  it('refuses wrong usage with exit code 2 and a hint', async () => {
    for (const args of [
      ['frobnicate'],
      ['keys', 'delete', 'a@b.co'],
      ['keys', 'set-tier', 'a@b.co', 'gold'],
      ['keys', 'set-tier'],
      ['--nope'],
    ]) {
      const run = await cli(...args);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/^svc: .+\nRun "svc --help" for usage\.\n$/);
    }
  });

  it('changes the tier of an existing key, which the service applies within its cache bound', async () => {
    const { app, close } = appOnDataDir();
    try {
      const signup = await request(app).post('/v1/signup').send({ email: 'Ops@Example.com' });
      expect(signup.status).toBe(201);
      const key = signup.body.api_key as string;
      expect((await request(app).get('/v1/account').set('X-API-Key', key)).body.tier).toBe('free');

      const run = await cli('keys', 'set-tier', 'ops@example.com', 'pilot');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(
        `${signup.body.key_id}  ops@example.com  tier pilot (10000 requests/hour)  policy -  created `,
      );

      // The service authenticated the key before: its cached record holds for the bound.
      clock.advance(AUTH_CACHE_TTL_MS);
      const account = await request(app).get('/v1/account').set('X-API-Key', key);
      expect(account.body).toMatchObject({ tier: 'pilot', limit: 10000 });
      expect(account.headers['x-ratelimit-limit']).toBe('10000');

      const show = await cli('keys', 'show', ' OPS@example.com ');
      expect(show.code).toBe(0);
      expect(show.stdout).toMatch(
        /^kid_\w{26} {2}ops@example\.com {2}tier pilot \(10000 requests\/hour\) {2}policy - {2}created \d{4}-.* {2}active\n$/,
      );
    } finally {
      await close();
    }
  });

  it('fails with exit code 1 for an address that has no key', async () => {
    const run = await cli('keys', 'set-tier', 'nobody@example.com', 'enterprise');
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('svc: no active key matches nobody@example.com\n');
  });

  it('stops the server with one clear line and exit code 1 on a bad configuration', async () => {
    const server = fileURLToPath(tree.url('src/server.ts'));
    const run = await runNode(server, [], 20_000, { ...env(), PORT: 'abc', LOG_LEVEL: 'loud' });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      'svc: invalid configuration: PORT: must be a port number; LOG_LEVEL: Invalid option: expected one of "fatal"|"error"|"warn"|"info"|"debug"|"trace"|"silent"\n',
    );
  });
});
