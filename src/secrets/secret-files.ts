import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Reads a secret kept as a file in the data directory, creating it with `create()` on first
 * use. The file is written with mode 0600 and exclusively ('wx'), so two processes starting
 * at once cannot each keep a different secret: the loser reads the winner's file.
 */
export function readOrCreateSecretFile(
  dataDir: string,
  name: string,
  create: () => string,
): { contents: string; created: boolean; path: string } {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, name);
  try {
    writeFileSync(path, create(), { mode: 0o600, flag: 'wx' });
    return { contents: readFileSync(path, 'utf8'), created: true, path };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  // An operator may have copied the file in with looser rights; secrets stay owner-only.
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  return { contents: readFileSync(path, 'utf8'), created: false, path };
}
