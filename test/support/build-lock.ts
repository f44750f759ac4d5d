import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// Jest runs test files in parallel workers. A few of them compile into the repository's own
// dist/ and packages/verify/dist/ (tsc, `npm pack`'s prepack) and then run or copy what is
// there; two of them at once would run or copy a file while the other rewrites it. They take
// this lock, one per checkout, around the build and every use of it.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LOCK = join(
  tmpdir(),
  `svc-build-lock-${createHash('sha256').update(ROOT).digest('hex').slice(0, 16)}`,
);

/** Whether the process that took the lock is still running. */
function holderAlive(): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
  } catch {
    // Taken a moment ago, the holder has not written its pid yet; or it died in between.
    try {
      return Date.now() - statSync(LOCK).mtimeMs < 10_000;
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Runs `fn` while no other test process of this checkout builds, runs or copies the
 * repository's build. A lock left by a process that died is taken over.
 */
export async function withRepositoryBuild<T>(fn: () => Promise<T> | T): Promise<T> {
  for (;;) {
    try {
      mkdirSync(LOCK); // Atomic: exactly one process creates it.
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (!holderAlive()) rmSync(LOCK, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  try {
    writeFileSync(join(LOCK, 'pid'), String(process.pid));
    return await fn();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

/**
 * The repository built as `npm run bench` builds it: the service (`npm run build`) when its
 * build is missing or stale, then the harness in bench/. Call it inside withRepositoryBuild.
 */
export async function buildWithBench(): Promise<void> {
  const node = (script: string, ...args: string[]) =>
    promisify(execFile)(process.execPath, [join(ROOT, script), ...args], { cwd: ROOT });
  await node('scripts/build-if-stale.mjs');
  await node('scripts/compile.mjs', 'bench');
}
