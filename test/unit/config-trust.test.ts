import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { loadKeyEncryptionSecret } from '../../src/secrets/key-encryption.js';

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

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
