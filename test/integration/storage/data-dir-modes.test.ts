import { spawn } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  afterAll,
  afterEach,
  beforeAll,
  beforeEach,
  describe,
  expect,
  it,
  jest,
} from '@jest/globals';
import request from 'supertest';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { transpileTree, type TranspiledTree } from '../../fixtures/transpile-tree.js';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import { ledgerState, newKey } from '../../support/api.js';
import { validClaim } from '../../support/claims.js';

// Child processes on a machine shared with other test runs: generous time limits.
jest.setTimeout(120_000);

interface Started {
  /** Exit code when the process ended before listening; null while it runs. */
  code: number | null;
  stdout: string;
  stderr: string;
  stop(): Promise<void>;
}

/** Starts `node server.js` and resolves once it listens, or once it exits. */
function startServer(
  script: string,
  env: Record<string, string | undefined>,
  timeoutMs = 20_000,
): Promise<Started> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: env as NodeJS.ProcessEnv,
    });
    const state: Started = {
      code: null,
      stdout: '',
      stderr: '',
      stop: () =>
        new Promise<void>((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done();
          child.once('close', () => done());
          child.kill('SIGTERM');
        }),
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start: ${state.stdout}${state.stderr}`));
    }, timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      state.stdout += chunk;
      if (state.stdout.includes('svc listening')) {
        clearTimeout(timer);
        resolve(state);
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (state.stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      state.code = code;
      resolve(state);
    });
  });
}

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('data at rest: the server makes its data directory private', () => {
  let tree: TranspiledTree;
  let root: string;
  const running: Started[] = [];
  const env = (dataDir: string, extra: Record<string, string> = {}) => ({
    ...process.env,
    SVC_DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    SVC_KEY_ENCRYPTION_SECRET: '',
    SVC_KEY_ENCRYPTION_SECRET_FILE: '',
    ...extra,
  });
  const start = async (dataDir: string, extra?: Record<string, string>) => {
    const started = await startServer(
      fileURLToPath(tree.url('src/server.ts')),
      env(dataDir, extra),
    );
    running.push(started);
    return started;
  };

  beforeAll(() => {
    tree = transpileTree(['src/server.ts']);
  });
  afterAll(() => tree.cleanup());
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'svc-trust-modes-'));
  });
  afterEach(async () => {
    for (const r of running.splice(0)) await r.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('a new data dir is created 0700 and ledger.db 0600', async () => {
    const dataDir = join(root, 'fresh');
    const run = await start(dataDir);
    expect(run.code).toBeNull();
    expect(modeOf(dataDir)).toBe(0o700);
    expect(modeOf(join(dataDir, 'ledger.db'))).toBe(0o600);
    // Every file the service keeps there (WAL, shared memory, keys, secret) is owner-only.
    const files = readdirSync(dataDir);
    expect(files).toContain('ledger.db');
    for (const name of files)
      expect({ name, mode: modeOf(join(dataDir, name)) }).toEqual({ name, mode: 0o600 });
  });

  it('an existing 0755 data dir becomes 0700; an existing 0644 ledger.db becomes 0600', async () => {
    const dataDir = join(root, 'existing');
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o755);
    expect(modeOf(dataDir)).toBe(0o755);
    const first = await start(dataDir);
    expect(first.code).toBeNull();
    expect(modeOf(dataDir)).toBe(0o700);
    await first.stop();

    chmodSync(dataDir, 0o755);
    chmodSync(join(dataDir, 'ledger.db'), 0o644);
    const second = await start(dataDir);
    expect(second.code).toBeNull();
    expect(modeOf(dataDir)).toBe(0o700);
    expect(modeOf(join(dataDir, 'ledger.db'))).toBe(0o600);
  });

  it('a data dir that cannot be made (under a regular file): exit 1 and a clear message', async () => {
    const file = join(root, 'a-file');
    writeFileSync(file, 'not a directory');
    const dataDir = join(file, 'data');
    const run = await start(dataDir);
    expect(run.code).toBe(1);
    expect(run.stdout).not.toContain('svc listening');
    expect(run.stderr).toMatch(/^svc: /);
    expect(run.stderr).toContain(dataDir);
    expect(run.stderr).toMatch(/data dir/i);
  });

  it('without SVC_KEY_ENCRYPTION_SECRET(_FILE) start-up warns that backups of the data dir hold the secret', async () => {
    const run = await start(join(root, 'warn'));
    expect(run.code).toBeNull();
    const warnings = run.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { level: number; msg: string })
      .filter((entry) => entry.level === 40);
    expect(warnings.some((w) => /backup/i.test(w.msg) && /secret/i.test(w.msg))).toBe(true);
  });

  it('with SVC_KEY_ENCRYPTION_SECRET_FILE there is no such warning, and no secret file in the data dir', async () => {
    const secretFile = join(root, 'mounted-secret');
    writeFileSync(secretFile, `${'ab'.repeat(32)}\n`, { mode: 0o600 });
    const dataDir = join(root, 'mounted');
    const run = await start(dataDir, { SVC_KEY_ENCRYPTION_SECRET_FILE: secretFile });
    expect(run.code).toBeNull();
    expect(run.stdout).not.toMatch(/backup/i);
    expect(() => statSync(join(dataDir, 'encryption-secret'))).toThrow();
  });

  it('a SVC_KEY_ENCRYPTION_SECRET_FILE that cannot be read stops the start with exit 1, naming it', async () => {
    const missing = join(root, 'no-such-secret');
    const run = await start(join(root, 'missing-secret'), {
      SVC_KEY_ENCRYPTION_SECRET_FILE: missing,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('SVC_KEY_ENCRYPTION_SECRET_FILE');
    expect(run.stdout).not.toContain('svc listening');
  });

  it('SVC_TRUST_PROXY=true is refused at start with exit 1, saying what to set', async () => {
    const run = await start(join(root, 'proxy'), { SVC_TRUST_PROXY: 'true' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('SVC_TRUST_PROXY');
    expect(run.stderr).toMatch(/loopback|hop|number of proxies/i);
  });
});

describe('/health?deep=true checks that the store takes writes, without touching the ledger', () => {
  let root: string;
  let file: string;
  const apps: TestApp[] = [];
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'svc-trust-health-'));
    file = join(root, 'ledger.db');
  });
  afterEach(async () => {
    for (const t of apps.splice(0)) await t.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('a writable store: 200, store ok; the ledger is the same before and after', async () => {
    const t = buildTestApp({ store: openSqliteStore(file) });
    apps.push(t);
    const key = await newKey(t);
    expect(
      (await request(t.app).post('/v1/evaluate').set('X-API-Key', key).send(validClaim())).status,
    ).toBe(200);
    const before = await ledgerState(t);
    for (let i = 0; i < 3; i++) {
      const res = await request(t.app).get('/health?deep=true');
      expect(res.status).toBe(200);
      expect(res.body.ok).toBe(true);
      expect(res.body.checks.store.ok).toBe(true);
    }
    expect(await ledgerState(t)).toEqual(before);
  });

  it('a read-only store: 503, the store reported unhealthy; the ledger unchanged', async () => {
    const writer = buildTestApp({ store: openSqliteStore(file) });
    apps.push(writer);
    const key = await newKey(writer);
    await request(writer.app).post('/v1/evaluate').set('X-API-Key', key).send(validClaim());
    const before = await writer.store.ledger.head();

    const t = buildTestApp({ store: openSqliteStore(file, { readonly: true }) });
    apps.push(t);
    const readBefore = await ledgerState(t);
    const res = await request(t.app).get('/health?deep=true');
    expect(res.status).toBe(503);
    expect(res.body.ok).toBe(false);
    expect(res.body.checks.store.ok).toBe(false);
    expect(res.body.checks.signer.ok).toBe(true);
    // Shallow health still answers: the process is alive.
    expect((await request(t.app).get('/health')).status).toBe(200);
    expect(await ledgerState(t)).toEqual(readBefore);
    expect(await writer.store.ledger.head()).toEqual(before);
  });
});
