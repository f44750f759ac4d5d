import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { loadKeyEncryptionSecret } from '../../src/secrets/key-encryption.js';

const SECRET_HEX = 'ab'.repeat(32);

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('has defaults for everything', () => {
    expect(loadConfig({})).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      dataDir: './data',
      signingKeyPem: undefined,
      baseUrl: 'http://localhost:3000',
      webhookSecret: undefined,
      allowPrivateWebhookUrls: false,
      logLevel: 'info',
      keyEncryptionSecret: undefined,
      anonLimitPerHour: 1000,
      signupLimitPerHour: 20,
      publicReads: true,
      trustProxy: false,
    });
  });

  it('reads SVC_WORKERS as a count of processes, auto as the cores', () => {
    expect(loadConfig({}).workers).toBe(1);
    expect(loadConfig({ SVC_WORKERS: '3' }).workers).toBe(3);
    expect(loadConfig({ SVC_WORKERS: 'auto' }).workers).toBe(availableParallelism());
    for (const bad of ['0', '-1', '1.5', 'all', '1000'])
      expect(configError({ SVC_WORKERS: bad }).message).toContain('SVC_WORKERS');
  });

  it('does not read process.env when given an environment', () => {
    const saved = process.env.PORT;
    process.env.PORT = '4321';
    try {
      expect(loadConfig({}).port).toBe(3000);
    } finally {
      if (saved === undefined) delete process.env.PORT;
      else process.env.PORT = saved;
    }
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '127.0.0.1',
      SVC_DATA_DIR: '/var/lib/svc',
      SVC_BASE_URL: 'https://svc.example.com/',
      WEBHOOK_SECRET: 'hook',
      SVC_ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
      LOG_LEVEL: 'debug',
      SVC_KEY_ENCRYPTION_SECRET: SECRET_HEX,
      SVC_ANON_LIMIT_PER_HOUR: '50',
      SVC_SIGNUP_LIMIT_PER_HOUR: '5',
      SVC_TRUST_PROXY: '1',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      dataDir: '/var/lib/svc',
      signingKeyPem: undefined,
      // Without the trailing slash, so paths can be appended.
      baseUrl: 'https://svc.example.com',
      webhookSecret: 'hook',
      allowPrivateWebhookUrls: true,
      logLevel: 'debug',
      keyEncryptionSecret: Buffer.from(SECRET_HEX, 'hex'),
      anonLimitPerHour: 50,
      signupLimitPerHour: 5,
      publicReads: true,
      trustProxy: 1,
    });
  });

  it('derives the base URL from the port when SVC_BASE_URL is unset', () => {
    expect(loadConfig({ PORT: '8080' }).baseUrl).toBe('http://localhost:8080');
  });

  it('treats empty variables as unset', () => {
    const empty = Object.fromEntries(
      [
        'PORT',
        'HOST',
        'SVC_DATA_DIR',
        'SVC_SIGNING_KEY',
        'SVC_BASE_URL',
        'WEBHOOK_SECRET',
        'SVC_ALLOW_PRIVATE_WEBHOOK_URLS',
        'LOG_LEVEL',
        'SVC_KEY_ENCRYPTION_SECRET',
        'SVC_ANON_LIMIT_PER_HOUR',
        'SVC_SIGNUP_LIMIT_PER_HOUR',
        'SVC_TRUST_PROXY',
      ].map((name) => [name, '']),
    );
    expect(loadConfig(empty)).toEqual(loadConfig({}));
  });

  it('accepts "unlimited" hourly limits', () => {
    const config = loadConfig({
      SVC_ANON_LIMIT_PER_HOUR: 'unlimited',
      SVC_SIGNUP_LIMIT_PER_HOUR: 'unlimited',
    });
    expect(config.anonLimitPerHour).toBe(Number.POSITIVE_INFINITY);
    expect(config.signupLimitPerHour).toBe(Number.POSITIVE_INFINITY);
  });

  it.each([
    ['false', false],
    ['0', 0],
    ['2', 2],
    ['loopback', ['loopback']],
    ['loopback, 10.0.0.0/8', ['loopback', '10.0.0.0/8']],
    ['192.168.1.1,fc00::/7,10.0.0.0/255.0.0.0', ['192.168.1.1', 'fc00::/7', '10.0.0.0/255.0.0.0']],
    ['linklocal,uniquelocal', ['linklocal', 'uniquelocal']],
  ])('reads SVC_TRUST_PROXY=%j as %j', (value, expected) => {
    expect(loadConfig({ SVC_TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });

  it.each([
    ['1', true],
    ['yes', true],
    ['0', false],
    ['no', false],
    ['false', false],
  ])('reads SVC_ALLOW_PRIVATE_WEBHOOK_URLS=%j as %j', (value, expected) => {
    expect(loadConfig({ SVC_ALLOW_PRIVATE_WEBHOOK_URLS: value }).allowPrivateWebhookUrls).toBe(
      expected,
    );
  });

  it('reads SVC_KEY_ENCRYPTION_SECRET as 64 hex characters or as base64 of 32 bytes', () => {
    const bytes = Buffer.alloc(32, 9);
    expect(
      loadConfig({ SVC_KEY_ENCRYPTION_SECRET: bytes.toString('hex') }).keyEncryptionSecret,
    ).toEqual(bytes);
    expect(
      loadConfig({ SVC_KEY_ENCRYPTION_SECRET: bytes.toString('base64') }).keyEncryptionSecret,
    ).toEqual(bytes);
  });

  it('accepts SVC_SIGNING_KEY as a PEM, with real newlines or literal "\\n"', () => {
    const pem = generateKeyPairSync('ed25519')
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString();
    expect(loadConfig({ SVC_SIGNING_KEY: pem }).signingKeyPem).toBe(pem);
    expect(loadConfig({ SVC_SIGNING_KEY: pem.replace(/\n/g, '\\n') }).signingKeyPem).toBe(pem);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['LOG_LEVEL', 'loud'],
    ['SVC_ALLOW_PRIVATE_WEBHOOK_URLS', 'maybe'],
    ['SVC_KEY_ENCRYPTION_SECRET', 'short'],
    ['SVC_KEY_ENCRYPTION_SECRET', 'ab'.repeat(31)],
    ['SVC_ANON_LIMIT_PER_HOUR', '0'],
    ['SVC_ANON_LIMIT_PER_HOUR', '-5'],
    ['SVC_ANON_LIMIT_PER_HOUR', '1.5'],
    ['SVC_SIGNUP_LIMIT_PER_HOUR', 'lots'],
    ['SVC_BASE_URL', 'ftp://x'],
    ['SVC_BASE_URL', 'not a url'],
    ['SVC_SIGNING_KEY', 'not a pem'],
    ['SVC_TRUST_PROXY', 'yes'],
    ['SVC_TRUST_PROXY', 'true'],
    ['SVC_TRUST_PROXY', 'loopback,not-an-address'],
    ['SVC_TRUST_PROXY', '10.0.0.0/33'],
    ['SVC_WEBHOOK_RETRY_DELAYS', '60,,300'],
    ['SVC_WEBHOOK_RETRY_DELAYS', '60,5m'],
    ['SVC_WEBHOOK_RETRY_DELAYS', '0'],
    ['SVC_WEBHOOK_RETRY_DELAYS', '-1'],
    ['SVC_WEBHOOK_RETRY_DELAYS', '1.5'],
    ['SVC_WEBHOOK_RETRY_DELAYS', '604801'],
    ['SVC_WEBHOOK_RETRY_DELAYS', Array(21).fill('1').join(',')],
    ['SVC_JOB_RETENTION_DAYS', '0'],
    ['SVC_JOB_RETENTION_DAYS', '0.0'],
    ['SVC_JOB_RETENTION_DAYS', '-1'],
    ['SVC_JOB_RETENTION_DAYS', '7d'],
    ['SVC_JOB_RETENTION_DAYS', '1e3'],
    ['SVC_JOB_RETENTION_DAYS', 'forever'],
    ['SVC_JOB_RETENTION_DAYS', '36501'],
  ])('refuses %s=%j with a ConfigError naming the variable', (name, value) => {
    const error = configError({ [name]: value });
    expect(error.name).toBe('ConfigError');
    expect(error.message).toContain(`${name}:`);
  });

  it('reads SVC_WEBHOOK_RETRY_DELAYS as seconds, with the documented default', () => {
    expect(loadConfig({}).webhookRetryDelays).toEqual([60, 300, 1800, 7200, 21600]);
    expect(loadConfig({ SVC_WEBHOOK_RETRY_DELAYS: '5, 10,604800' }).webhookRetryDelays).toEqual([
      5, 10, 604800,
    ]);
    expect(loadConfig({ SVC_WEBHOOK_RETRY_DELAYS: '' }).webhookRetryDelays).toEqual([
      60, 300, 1800, 7200, 21600,
    ]);
  });

  it('reads SVC_JOB_RETENTION_DAYS as days, fractions allowed, default 7', () => {
    const DAY = 24 * 60 * 60 * 1000;
    expect(loadConfig({}).jobRetentionMs).toBe(7 * DAY);
    expect(loadConfig({ SVC_JOB_RETENTION_DAYS: '' }).jobRetentionMs).toBe(7 * DAY);
    expect(loadConfig({ SVC_JOB_RETENTION_DAYS: '30' }).jobRetentionMs).toBe(30 * DAY);
    expect(loadConfig({ SVC_JOB_RETENTION_DAYS: '0.5' }).jobRetentionMs).toBe(DAY / 2);
    expect(loadConfig({ SVC_JOB_RETENTION_DAYS: '36500' }).jobRetentionMs).toBe(36_500 * DAY);
    expect(configError({ SVC_JOB_RETENTION_DAYS: '0' }).message).toMatch(
      /SVC_JOB_RETENTION_DAYS: must be more than 0/,
    );
  });

  it('reads the HTTP timeouts as seconds, fractions allowed, with the documented defaults', () => {
    expect(loadConfig({}).httpTimeouts).toEqual({
      headersMs: 10_000,
      requestMs: 30_000,
      keepAliveMs: 5_000,
    });
    expect(
      loadConfig({
        SVC_HEADERS_TIMEOUT: '0.5',
        SVC_REQUEST_TIMEOUT: '120',
        SVC_KEEP_ALIVE_TIMEOUT: '65',
      }).httpTimeouts,
    ).toEqual({ headersMs: 500, requestMs: 120_000, keepAliveMs: 65_000 });
    for (const name of ['SVC_HEADERS_TIMEOUT', 'SVC_REQUEST_TIMEOUT', 'SVC_KEEP_ALIVE_TIMEOUT']) {
      for (const bad of ['0', '-1', '10s', '3601'])
        expect(configError({ [name]: bad }).message).toContain(`${name}:`);
    }
    // The headers are part of the request: node refuses the opposite when the server is made.
    expect(configError({ SVC_HEADERS_TIMEOUT: '40' }).message).toContain(
      'SVC_HEADERS_TIMEOUT must not exceed SVC_REQUEST_TIMEOUT',
    );
  });

  it('reads SVC_WITNESSES as a JSON list of cosigner vkeys (type 0x04) and submission URLs', () => {
    const raw = generateKeyPairSync('ed25519')
      .publicKey.export({ format: 'der', type: 'spki' })
      .subarray(12);
    const vkeyOf = (name: string, type = 0x04) => {
      const id = createHash('sha256')
        .update(`${name}\n`)
        .update(Buffer.of(type))
        .update(raw)
        .digest()
        .subarray(0, 4);
      return `${name}+${id.toString('hex')}+${Buffer.concat([Buffer.of(type), raw]).toString('base64')}`;
    };
    const a = vkeyOf('witness.example/a');
    const b = vkeyOf('w2.example.org');
    expect(loadConfig({}).witnesses).toEqual([]);
    expect(
      loadConfig({
        SVC_WITNESSES: JSON.stringify([
          { vkey: a, url: 'https://witness.example/a/' },
          { vkey: b, url: 'http://10.0.0.5:8080' },
        ]),
      }).witnesses,
    ).toEqual([
      { name: 'witness.example/a', verifierKey: a, url: 'https://witness.example/a' },
      { name: 'w2.example.org', verifierKey: b, url: 'http://10.0.0.5:8080' },
    ]);
    const one = (entry: unknown) => JSON.stringify([entry]);
    const bad: [string, string][] = [
      ['not json', 'not JSON'],
      ['{"vkey": "x"}', 'JSON array'],
      [one({ vkey: a }), 'JSON array'],
      [one({ vkey: a, url: 'https://w.example', name: 'x' }), 'unknown member name'],
      [one({ vkey: 'witness.example/a+1234', url: 'https://w.example' }), 'not a verifier key'],
      // An ordinary signed-note key (type 0x01) is not a cosignature key.
      [one({ vkey: vkeyOf('w.example', 0x01), url: 'https://w.example' }), 'not 0x04'],
      [
        one({ vkey: a.replace(/\+[0-9a-f]{8}\+/, '+00000000+'), url: 'https://w.example' }),
        'key ID',
      ],
      [one({ vkey: a, url: 'ftp://w.example' }), 'http(s) URL'],
      [one({ vkey: a, url: 'https://w.example/?x=1' }), 'http(s) URL'],
      [one({ vkey: a, url: 'witness' }), 'not a URL'],
      [
        JSON.stringify([
          { vkey: a, url: 'https://x' },
          { vkey: a, url: 'https://y' },
        ]),
        'twice',
      ],
      [
        JSON.stringify(Array.from({ length: 16 }, () => ({ vkey: a, url: 'https://x' }))),
        'at most 15',
      ],
    ];
    for (const [value, words] of bad) {
      const { message } = configError({ SVC_WITNESSES: value });
      expect(message).toMatch(/^invalid configuration: SVC_WITNESSES: /);
      expect(message).toContain(words);
      expect(message).not.toContain('\n');
    }
  });

  it('names every bad variable in one error', () => {
    const { message } = configError({ PORT: 'abc', LOG_LEVEL: 'loud', SVC_BASE_URL: 'ftp://x' });
    expect(message).toMatch(/^invalid configuration: /);
    for (const name of ['PORT', 'LOG_LEVEL', 'SVC_BASE_URL']) expect(message).toContain(name);
  });

  it('does not echo secret values in its errors', () => {
    const secret = 'hunter2-but-much-longer-than-that-and-still-wrong';
    expect(configError({ SVC_KEY_ENCRYPTION_SECRET: secret }).message).not.toContain(secret);
  });
});

describe('SVC_TRUST_PROXY', () => {
  it('true is refused, and the message says what to set instead', () => {
    const error = configError({ SVC_TRUST_PROXY: 'true' });
    expect(error.message).toContain('SVC_TRUST_PROXY');
    // A hop count or the proxies' addresses.
    expect(error.message).toMatch(/\b1\b|hop|number/i);
    expect(error.message).toMatch(/loopback|address|10\.0\.0\.0\/8/i);
  });

  it.each([
    ['1', 1],
    ['2', 2],
    ['false', false],
  ])('%s is accepted as %j', (value, expected) => {
    expect(loadConfig({ SVC_TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });

  it('loopback and a list of addresses or subnets are accepted', () => {
    const loopback = loadConfig({ SVC_TRUST_PROXY: 'loopback' }).trustProxy;
    expect([loopback].flat()).toEqual(['loopback']);
    const list = loadConfig({ SVC_TRUST_PROXY: '10.0.0.0/8,loopback' }).trustProxy;
    expect([list].flat()).toEqual(['10.0.0.0/8', 'loopback']);
  });

  it('unset trusts no proxy', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
  });

  it.each(['yes-please', '10.0.0.0/99', 'TRUE '])('%j is refused', (value) => {
    configError({ SVC_TRUST_PROXY: value });
  });
});

describe('SVC_LOG_ORIGIN and SVC_KEY_ENCRYPTION_SECRET_FILE', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-trust-config-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('SVC_LOG_ORIGIN is read', () => {
    expect(loadConfig({ SVC_LOG_ORIGIN: 'ledger.example.com/main' }).logOrigin).toBe(
      'ledger.example.com/main',
    );
  });

  it('without SVC_LOG_ORIGIN the origin is the host of SVC_BASE_URL followed by /ledger', () => {
    expect(loadConfig({ SVC_BASE_URL: 'https://svc.example.com:8443/' }).logOrigin).toBe(
      'svc.example.com:8443/ledger',
    );
    expect(
      loadConfig({ SVC_BASE_URL: 'https://svc.example.com', SVC_LOG_ORIGIN: 'x/y' }).logOrigin,
    ).toBe('x/y');
  });

  it.each([
    ['64 hex characters', 'ab'.repeat(32)],
    ['base64 of 32 bytes', Buffer.alloc(32, 9).toString('base64')],
  ])('SVC_KEY_ENCRYPTION_SECRET_FILE holding %s is accepted', (_name, contents) => {
    const file = join(dir, `secret-${contents.length}`);
    writeFileSync(file, `${contents}\n`, { mode: 0o600 });
    const config = loadConfig({ SVC_KEY_ENCRYPTION_SECRET_FILE: file });
    expect(config.keyEncryptionSecretFile).toBe(file);
    // The secret is read from that file, not from (or into) the data directory.
    const dataDir = join(dir, `data-${contents.length}`);
    const loaded = loadKeyEncryptionSecret({ file, dataDir });
    expect(loaded.source).toBe('file');
    expect(loaded.secret).toEqual(
      /^[0-9a-f]{64}$/.test(contents)
        ? Buffer.from(contents, 'hex')
        : Buffer.from(contents, 'base64'),
    );
  });

  it('a secret file that does not hold 32 bytes is refused, naming the variable', () => {
    const file = join(dir, 'short');
    writeFileSync(file, 'abcd\n');
    expect(() => loadKeyEncryptionSecret({ file, dataDir: join(dir, 'd') })).toThrow(
      /SVC_KEY_ENCRYPTION_SECRET_FILE/,
    );
  });

  it('SVC_KEY_ENCRYPTION_SECRET and _FILE together are refused', () => {
    const error = configError({
      SVC_KEY_ENCRYPTION_SECRET: 'ab'.repeat(32),
      SVC_KEY_ENCRYPTION_SECRET_FILE: join(dir, 'x'),
    });
    expect(error.message).toContain('SVC_KEY_ENCRYPTION_SECRET');
  });
});

describe('SVC_TRUST_PROXY ranges that trust everyone', () => {
  it.each(['0.0.0.0/0', '::/0', '10.0.0.0/8,0.0.0.0/0', '0.0.0.0/0.0.0.0'])(
    'refuses %s',
    (value) => {
      expect(() => loadConfig({ SVC_TRUST_PROXY: value })).toThrow(ConfigError);
    },
  );
});
