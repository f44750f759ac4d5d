import { chmodSync, mkdirSync, statSync } from 'node:fs';

/**
 * Makes the data directory owner-only (0700), creating it when absent. The ledger, the signing
 * key and the encryption secret live there: a directory others can list or enter is refused
 * rather than used, with a message saying what to fix.
 */
export function secureDataDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (!statSync(dir).isDirectory()) throw new Error('not a directory');
    if ((statSync(dir).mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
  } catch (error) {
    throw new Error(
      `data directory ${dir} cannot be made private (mode 0700): ${(error as Error).message}; set SVC_DATA_DIR to a directory this user owns`,
      { cause: error },
    );
  }
  const mode = statSync(dir).mode & 0o777;
  if (mode !== 0o700) {
    throw new Error(
      `data directory ${dir} has mode ${mode.toString(8)} after chmod; expected 700 (is it on a file system that ignores modes?)`,
    );
  }
}
