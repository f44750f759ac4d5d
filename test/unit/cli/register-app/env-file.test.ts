import {
  chmodSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  lstatSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { EnvConflictError, updateEnvFile } from '../../../../src/cli/register-app/env-file.js';
import { RegistrationError } from '../../../../src/cli/register-app/errors.js';

const VALUES = { APP_ID: '424242', WEBHOOK_SECRET: 'e3b0c442' };

describe('updateEnvFile', () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-env-file-'));
    path = join(dir, '.env');
  });
  afterEach(() => {
    chmodSync(dir, 0o700);
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates a missing file owner-only, with the settings, and leaves no temporary file', () => {
    const merged = updateEnvFile(path, VALUES, { force: false });
    expect(readFileSync(path, 'utf8')).toBe('APP_ID=424242\nWEBHOOK_SECRET=e3b0c442\n');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(merged).toMatchObject({ replaced: [], removed: [] });
    expect(readdirSync(dir)).toEqual(['.env']);
  });

  it('keeps the other lines and replaces the file in one step: a new inode, owner-only', () => {
    writeFileSync(path, '# svc\nPORT=3000\nAPP_ID=1\n', { mode: 0o644 });
    const before = statSync(path).ino;
    const merged = updateEnvFile(path, VALUES, { force: true });
    expect(readFileSync(path, 'utf8')).toBe(
      '# svc\nPORT=3000\nAPP_ID=424242\nWEBHOOK_SECRET=e3b0c442\n',
    );
    expect(merged.replaced).toEqual(['APP_ID']);
    // Renamed over the old file, not rewritten in place: a reader saw the old or the new.
    expect(statSync(path).ino).not.toBe(before);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['.env']);
  });

  it('refuses another App’s settings without force and leaves the file as it was', () => {
    writeFileSync(path, 'APP_ID=1\nPORT=3000\n');
    const before = statSync(path).ino;
    expect(() => updateEnvFile(path, VALUES, { force: false })).toThrow(EnvConflictError);
    expect(readFileSync(path, 'utf8')).toBe('APP_ID=1\nPORT=3000\n');
    expect(statSync(path).ino).toBe(before);
  });

  it('updates the file a symlink points at, and the link stays a link', () => {
    const real = join(dir, 'real.env');
    writeFileSync(real, 'PORT=3000\n');
    symlinkSync(real, path);
    updateEnvFile(path, VALUES, { force: false });
    expect(lstatSync(path).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, 'utf8')).toBe('PORT=3000\nAPP_ID=424242\nWEBHOOK_SECRET=e3b0c442\n');
  });

  it('a directory that is not there is a RegistrationError, and nothing is created', () => {
    const missing = join(dir, 'no-such-dir', '.env');
    const update = () => updateEnvFile(missing, VALUES, { force: false });
    expect(update).toThrow(RegistrationError);
    expect(update).toThrow(`cannot write ${missing}: ENOENT`);
    expect(readdirSync(dir)).toEqual([]);
  });

  (process.getuid?.() === 0 ? it.skip : it)(
    'a directory it cannot write to is a RegistrationError, and the file stays whole',
    () => {
      writeFileSync(path, 'PORT=3000\n');
      chmodSync(dir, 0o500);
      expect(() => updateEnvFile(path, VALUES, { force: false })).toThrow(RegistrationError);
      expect(readFileSync(path, 'utf8')).toBe('PORT=3000\n');
    },
  );
});
