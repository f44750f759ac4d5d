import { open, rename, rm } from 'node:fs/promises';

/**
 * Replaces a file atomically: written to a temporary file beside it, flushed to disk, then
 * renamed over it, so a reader or a crash sees the old content or the new, never half.
 */
export async function writeAtomically(path: string, content: string | Uint8Array): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  try {
    const file = await open(tmp, 'w');
    try {
      await file.writeFile(content);
      await file.datasync();
    } finally {
      await file.close();
    }
    await rename(tmp, path);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}
