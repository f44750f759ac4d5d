import {
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

/**
 * Creates the file `path` holding `content`, readable and writable by its owner only, and on
 * disk before this returns. Fails (EEXIST) when the name exists: nothing is overwritten.
 */
export function writeNewPrivateFile(path: string, content: string): void {
  const fd = openSync(path, 'wx', 0o600);
  try {
    writeFileSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  // The umask may have taken bits away, never added any: exactly owner read and write.
  chmodSync(path, 0o600);
}

/**
 * Reads a secret kept as a file in the data directory, creating it with `create()` on first
 * use. The file is written with mode 0600 under a private name and then hard-linked into
 * place, which fails when the name exists: two processes starting at once cannot each keep a
 * different secret, and neither can read the other's file before it is complete.
 */
export function readOrCreateSecretFile(
  dataDir: string,
  name: string,
  create: () => string,
): { contents: string; created: boolean; path: string } {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, name);
  if (!existsSync(path)) {
    const draft = join(dataDir, `.${name}.${randomBytes(8).toString('hex')}.tmp`);
    // Durable before it becomes visible: a crash must not leave an empty secret behind.
    writeNewPrivateFile(draft, create());
    try {
      linkSync(draft, path);
      return { contents: readFileSync(path, 'utf8'), created: true, path };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(draft);
    }
  }
  // An operator may have copied the file in with looser rights; secrets stay owner-only.
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  return { contents: readFileSync(path, 'utf8'), created: false, path };
}
