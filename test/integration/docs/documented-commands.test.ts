import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withRepositoryBuild } from '../../support/build-lock.js';
import { runnableDocuments, shellBlocks, type ShellBlock } from '../../support/doc-blocks.js';

// Every shell block of the runnable documents (test/support/doc-blocks.ts says which), run as
// a reader pastes them: in order, in one bash session, in a fresh clone of this working tree,
// against the service started there on a free port. A block that exits non-zero, or a file
// the blocks leave behind that `git status` shows, fails the test.

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** The environment of the reader's shell: nothing of a configured service leaks in. */
function readerEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env))
    if (!/^(SVC_|MONGODB_|PORT$|HOST$|INPUT_|GITHUB_|npm_)/.test(name)) env[name] = value;
  // The node that runs the tests is the reader's node.
  env.PATH = `${dirname(process.execPath)}:${process.env.PATH ?? ''}`;
  return { ...env, ...extra };
}

/**
 * A clone of this repository holding the working tree as it is (tracked files with their
 * changes, untracked files that are not ignored), committed, so `git status` starts clean.
 * node_modules is the repository's, package by package, except the workspace link of
 * @svc/verify (and the .bin links), which point into the clone.
 */
async function cloneWorkingTree(dir: string): Promise<string> {
  const clone = join(dir, 'repo');
  git(dir, 'clone', '--quiet', '--no-checkout', ROOT, clone);
  const files = git(ROOT, 'ls-files', '-z', '--cached', '--others', '--exclude-standard')
    .split('\0')
    .filter((f) => f && existsSync(join(ROOT, f)));
  for (const file of files) {
    mkdirSync(dirname(join(clone, file)), { recursive: true });
    cpSync(join(ROOT, file), join(clone, file));
  }
  git(clone, 'add', '-A');
  git(
    clone,
    '-c',
    'user.name=svc docs test',
    '-c',
    'user.email=docs-test@example.invalid',
    'commit',
    '--quiet',
    '--no-verify',
    '--allow-empty',
    '-m',
    'the working tree',
  );

  const modules = join(clone, 'node_modules');
  mkdirSync(modules);
  for (const entry of readdirSync(join(ROOT, 'node_modules'))) {
    const from = join(ROOT, 'node_modules', entry);
    if (entry === '.bin') {
      mkdirSync(join(modules, '.bin'));
      // Relative links: recreated, they resolve inside the clone's node_modules.
      for (const bin of readdirSync(from))
        symlinkSync(readlinkSync(join(from, bin)), join(modules, '.bin', bin));
    } else if (entry === '@svc') {
      mkdirSync(join(modules, '@svc'));
      symlinkSync('../../packages/verify', join(modules, '@svc', 'verify'));
      symlinkSync('../../packages/hook', join(modules, '@svc', 'hook'));
    } else symlinkSync(from, join(modules, entry));
  }

  // The build: the repository's when it is current (scripts/build-if-stale.mjs), else made.
  // Copied while no other test file rewrites it.
  const current = await withRepositoryBuild(() => {
    try {
      execFileSync(process.execPath, ['scripts/build-if-stale.mjs', '--check'], { cwd: ROOT });
    } catch {
      return false;
    }
    cpSync(join(ROOT, 'dist'), join(clone, 'dist'), { recursive: true });
    for (const pkg of ['packages/verify/dist', 'packages/hook/dist'])
      cpSync(join(ROOT, pkg), join(clone, pkg), { recursive: true });
    return true;
  });
  if (current) {
    execFileSync(process.execPath, ['scripts/build-if-stale.mjs', '--stamp'], { cwd: clone });
  } else
    execFileSync('npm', ['run', '--silent', 'build'], {
      cwd: clone,
      env: readerEnv(),
      stdio: 'ignore',
      timeout: 240_000,
    });
  return clone;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function untilHealthy(url: string, server: ChildProcess, log: () => string) {
  for (let i = 0; i < 200; i++) {
    if (server.exitCode !== null) throw new Error(`the service exited: ${log()}`);
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the service did not start: ${log()}`);
}

/** One bash script: each block after a marker line naming it, stopping at the first failure. */
function scriptOf(blocks: ShellBlock[], port: number): string {
  const address = `127.0.0.1:${port}`;
  const parts = ['set -eo pipefail'];
  for (const b of blocks) {
    parts.push(`echo '@@ ${b.file}:${b.line}' >&2`);
    parts.push(b.code.replaceAll('localhost:3000', address).replaceAll('127.0.0.1:3000', address));
  }
  parts.push(`echo '@@ done' >&2`);
  return `${parts.join('\n')}\n`;
}

function runBash(script: string, cwd: string, timeoutMs: number) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn('bash', [script], {
      cwd,
      env: readerEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the documented commands', () => {
  const documents = runnableDocuments(ROOT);
  const blocks = documents.flatMap((file) =>
    shellBlocks(file, readFileSync(join(ROOT, file), 'utf8')),
  );

  it('are found in every runnable document, and each one not run says why', () => {
    for (const file of documents)
      expect([file, blocks.filter((b) => b.file === file && !b.notRunnable).length]).not.toEqual([
        file,
        0,
      ]);
    for (const b of blocks.filter((b) => b.notRunnable))
      expect(b.notRunnable!.length).toBeGreaterThan(5);
  });

  describe('run as written in a fresh clone', () => {
    let dir: string;
    let clone: string;
    let server: ChildProcess | undefined;
    let serverLog = '';
    let port: number;

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'svc-docs-'));
      clone = await cloneWorkingTree(dir);
      port = await freePort();
      // The service as the Quick start runs it (npm start), on the port the blocks are mapped to.
      server = spawn(process.execPath, ['dist/src/server.js'], {
        cwd: clone,
        env: readerEnv({ PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      server.stdout!.setEncoding('utf8').on('data', (c: string) => (serverLog += c));
      server.stderr!.setEncoding('utf8').on('data', (c: string) => (serverLog += c));
      await untilHealthy(`http://127.0.0.1:${port}`, server, () => serverLog);
    }, 300_000);

    afterAll(async () => {
      if (server && server.exitCode === null) {
        const exited = new Promise((r) => server!.once('exit', r));
        server.kill('SIGTERM');
        await exited;
      }
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('every block exits 0 and leaves no file git does not ignore', async () => {
      const script = join(dir, 'documented-commands.sh');
      writeFileSync(
        script,
        scriptOf(
          blocks.filter((b) => !b.notRunnable),
          port,
        ),
      );
      const run = await runBash(script, clone, 240_000);
      const reached = [...run.stderr.matchAll(/^@@ (.+)$/gm)].at(-1)?.[1];
      // On failure: the block that failed and what it printed last.
      expect({
        code: run.code,
        reached,
        tail: run.code === 0 ? '' : `${run.stdout.slice(-3000)}\n---\n${run.stderr.slice(-3000)}`,
      }).toEqual({ code: 0, reached: 'done', tail: '' });
      expect(git(clone, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    }, 300_000);
  });
});
