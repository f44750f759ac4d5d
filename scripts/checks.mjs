// The checks `npm test` runs beside Jest (scripts/test.mjs): the type-check, ESLint and
// Prettier, at the same time (each is mostly one core's work; one after the other they took
// over a minute and a half). Run alone, each one's output is printed whole once it ends, in
// this order, and the exit code is 1 when any of them failed.
//   node scripts/checks.mjs
import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';

const CHECKS = [
  ['type-check', 'npm', ['run', '--silent', 'typecheck']],
  ['eslint', npx, ['eslint', '.']],
  ['prettier', npx, ['prettier', '--check', '.']],
];

// Below normal priority when asked (POSIX `nice`, inherited by what the check starts): beside
// Jest, the checks take the CPU the test files leave idle.
function run([name, command, args], nice) {
  const [file, argv] =
    nice && process.platform !== 'win32'
      ? ['nice', ['-n', '10', command, ...args]]
      : [command, args];
  return new Promise((resolve) => {
    const child = spawn(file, argv, {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      shell: process.platform === 'win32',
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => resolve({ name, code: 1, output: `${error.message}\n` }));
    child.on('close', (code) => resolve({ name, code: code ?? 1, output }));
  });
}

/** Runs every check at once; each result with its whole output. */
export function runChecks({ nice = false } = {}) {
  return Promise.all(CHECKS.map((check) => run(check, nice)));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const results = await runChecks();
  for (const { name, code, output } of results) {
    process.stdout.write(output);
    if (code !== 0) process.stderr.write(`${name} failed (exit code ${code})\n`);
  }
  process.exit(results.every((r) => r.code === 0) ? 0 : 1);
}
