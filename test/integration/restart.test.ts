import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { loadConfig } from '../../src/config/config.js';
import type { ServerKey } from '../../src/ports/signer.js';
import {
  createAesGcmBox,
  KEY_ENCRYPTION_FILE,
  loadKeyEncryptionSecret,
} from '../../src/secrets/key-encryption.js';
import { loadServerKey, SIGNING_KEY_FILE, serverKeyFrom } from '../../src/secrets/server-key.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { runNode } from '../fixtures/run-node.js';
import { transpileTree, type TranspiledTree } from '../fixtures/transpile-tree.js';
import { validClaim } from '../support/claims.js';
import { buildTestApp, SystemTimeClock, type TestApp } from '../support/harness.js';

interface Running extends TestApp {
  key: ServerKey;
  source: string;
}

/** What server.ts does at start, minus listening: config, keys and store from the data dir. */
function start(dataDir: string, env: Record<string, string> = {}): Running {
  const config = loadConfig({
    SVC_DATA_DIR: dataDir,
    SVC_ANON_LIMIT_PER_HOUR: 'unlimited',
    SVC_SIGNUP_LIMIT_PER_HOUR: 'unlimited',
    ...env,
  });
  const { key, source } = loadServerKey({ pem: config.signingKeyPem, dataDir: config.dataDir });
  const box = createAesGcmBox(
    loadKeyEncryptionSecret({ secret: config.keyEncryptionSecret, dataDir: config.dataDir }).secret,
  );
  const t = buildTestApp({
    store: openSqliteStore(join(config.dataDir, 'ledger.db')),
    serverKey: key,
    box,
    clock: new SystemTimeClock(),
    config,
  });
  return { ...t, key, source };
}

const pemOf = (key: ReturnType<typeof generateKeyPairSync>['privateKey']) =>
  key.export({ format: 'pem', type: 'pkcs8' }).toString();

let root: string;
let dataDir: string;
const running: Running[] = [];

function boot(env?: Record<string, string>): Running {
  const r = start(dataDir, env);
  running.push(r);
  return r;
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'svc-restart-'));
  dataDir = join(root, 'data');
});
afterEach(async () => {
  for (const r of running.splice(0)) await r.close();
  rmSync(root, { recursive: true, force: true });
});

describe('a restart on the same data directory', () => {
  it('keeps the signing key, the API keys and the chain', async () => {
    const first = boot();
    expect(first.source).toBe('generated');
    const email = 'ops@example.com';
    const signup = await request(first.app).post('/v1/signup').send({ email });
    expect(signup.status).toBe(201);
    const apiKey = signup.body.api_key as string;
    const receipts = [];
    for (let i = 0; i < 2; i++) {
      const res = await request(first.app)
        .post('/v1/evaluate')
        .set('X-API-Key', apiKey)
        .send(validClaim());
      expect(res.status).toBe(200);
      receipts.push(res.body.receipt);
    }
    const pem = (await request(first.app).get('/v1/keys/server')).text;
    await first.store.close();

    const second = boot();
    expect(second.source).toBe('file');
    const keyRes = await request(second.app).get('/v1/keys/server');
    expect(keyRes.text).toBe(pem);
    expect(keyRes.headers['x-svc-key-id']).toBe(first.key.keyId);

    for (const receipt of receipts) {
      const verified = await request(second.app).post('/v1/verify').send(receipt);
      expect(verified.status).toBe(200);
      expect(verified.body.valid).toBe(true);
    }

    const third = await request(second.app)
      .post('/v1/evaluate')
      .set('X-API-Key', apiKey)
      .send(validClaim());
    expect(third.status).toBe(200);
    expect(third.body.receipt.chain).toMatchObject({
      sequence: 3,
      previous_receipt_hash: receipts[1].chain.receipt_hash,
    });

    // The key still authenticates (its digest is stored), and its email stays registered.
    const account = await request(second.app).get('/v1/account').set('X-API-Key', apiKey);
    expect(account.body.email).toBe(email);
    const again = await request(second.app).post('/v1/signup').send({ email });
    expect(again.status).toBe(409);
  });

  it('keeps the signing key and the API-key secret in owner-only files', () => {
    boot();
    for (const name of [SIGNING_KEY_FILE, KEY_ENCRYPTION_FILE]) {
      expect(statSync(join(dataDir, name)).mode & 0o777).toBe(0o600);
    }
  });

  it('tightens a key file an operator copied in with looser rights', () => {
    mkdirSync(dataDir);
    const file = join(dataDir, SIGNING_KEY_FILE);
    writeFileSync(file, pemOf(generateKeyPairSync('ed25519').privateKey), { mode: 0o644 });
    expect(boot().source).toBe('file');
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});

describe('a configured signing key (SVC_SIGNING_KEY)', () => {
  it('is used instead of the key file, which is neither read nor created', async () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const configured = serverKeyFrom(privateKey);
    const r = boot({ SVC_SIGNING_KEY: pemOf(privateKey) });
    expect(r.source).toBe('environment');
    expect(r.key.keyId).toBe(configured.keyId);
    expect(existsSync(join(dataDir, SIGNING_KEY_FILE))).toBe(false);
    const keyRes = await request(r.app).get('/v1/keys/server');
    expect(keyRes.text).toBe(configured.publicKeyPem);
  });

  it('wins over a key file already in the data directory', () => {
    const fromFile = boot().key;
    const { privateKey } = generateKeyPairSync('ed25519');
    const r = boot({ SVC_SIGNING_KEY: pemOf(privateKey) });
    expect(r.key.keyId).toBe(serverKeyFrom(privateKey).keyId);
    expect(r.key.keyId).not.toBe(fromFile.keyId);
  });

  it('may be given on one line with literal "\\n"', () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const r = boot({ SVC_SIGNING_KEY: pemOf(privateKey).replace(/\n/g, '\\n') });
    expect(r.key.keyId).toBe(serverKeyFrom(privateKey).keyId);
  });

  it.each([
    ['an RSA key', 'rsa', () => generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey],
    ['an EC key', 'ec', () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey],
    ['an Ed448 key', 'ed448', () => generateKeyPairSync('ed448').privateKey],
  ])('refuses %s with a message naming the variable and the key type', (_name, type, make) => {
    const pem = pemOf(make());
    expect(() => loadServerKey({ pem, dataDir })).toThrow(
      `SVC_SIGNING_KEY: expected an Ed25519 key, found ${type}`,
    );
  });

  it('refuses text that is not a private key PEM', () => {
    const pem = '-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n';
    expect(() => loadServerKey({ pem, dataDir })).toThrow(
      'SVC_SIGNING_KEY: not a PKCS#8 PEM private key',
    );
  });

  it('refuses a key file holding another key type, naming the file', () => {
    mkdirSync(dataDir);
    const file = join(dataDir, SIGNING_KEY_FILE);
    writeFileSync(file, pemOf(generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey), {
      mode: 0o600,
    });
    expect(() => loadServerKey({ dataDir })).toThrow(`${file}: expected an Ed25519 key, found ec`);
    // The refused file is left as it was, not replaced by a new key.
    expect(createPrivateKey(readFileSync(file, 'utf8')).asymmetricKeyType).toBe('ec');
  });
});

describe('processes starting at once on a new data directory', () => {
  const worker = fileURLToPath(new URL('../fixtures/secret-race-worker.mjs', import.meta.url));
  let tree: TranspiledTree;

  beforeAll(() => {
    tree = transpileTree(['src/secrets/server-key.ts', 'src/secrets/key-encryption.ts']);
  });
  afterAll(() => tree?.cleanup());

  it('agree on one signing key and one API-key secret', async () => {
    const startAt = String(Date.now() + 750);
    const runs = await Promise.all(
      Array.from({ length: 4 }, () => runNode(worker, [tree.dir, dataDir, startAt])),
    );
    for (const run of runs) expect(run).toMatchObject({ code: 0, stderr: '' });
    const loaded = runs.map(
      (run) => JSON.parse(run.stdout) as { keyId: string; source: string; secret: string },
    );

    expect(new Set(loaded.map((l) => l.keyId)).size).toBe(1);
    expect(new Set(loaded.map((l) => l.secret)).size).toBe(1);
    expect(loaded.filter((l) => l.source === 'generated')).toHaveLength(1);

    const later = boot();
    expect(later.key.keyId).toBe(loaded[0]!.keyId);
    expect(loadKeyEncryptionSecret({ dataDir }).secret.toString('hex')).toBe(loaded[0]!.secret);
    // Nothing but the secrets themselves (and the ledger opened just now) is left behind.
    expect(
      readdirSync(dataDir)
        .filter((name) => !name.startsWith('ledger.db'))
        .sort(),
    ).toEqual([KEY_ENCRYPTION_FILE, SIGNING_KEY_FILE].sort());
  });
});
