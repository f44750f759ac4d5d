import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { writeNewPrivateFile } from '../../../src/secrets/secret-files.js';

describe('writeNewPrivateFile', () => {
  let dir: string;
  let umask: number;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-private-file-'));
    umask = process.umask(0o022);
  });
  afterEach(() => {
    process.umask(umask);
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the file with its content, owner read and write only', () => {
    const path = join(dir, 'key.pem');
    writeNewPrivateFile(path, 'secret\n');
    expect(readFileSync(path, 'utf8')).toBe('secret\n');
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('is exactly 0600 even under a umask that takes the owner’s write bit', () => {
    process.umask(0o277);
    const path = join(dir, 'key.pem');
    writeNewPrivateFile(path, 'secret');
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('refuses a name that exists and leaves that file as it was', () => {
    const path = join(dir, 'key.pem');
    writeFileSync(path, 'the old key');
    expect(() => writeNewPrivateFile(path, 'a new key')).toThrow(
      expect.objectContaining({ code: 'EEXIST' }),
    );
    expect(readFileSync(path, 'utf8')).toBe('the old key');
  });
});
