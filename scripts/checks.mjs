// The checks `npm test` runs before Jest: the type-check, ESLint and Prettier, at the same time
// (each is mostly one core's work; one after the other they took over a minute and a half).
// Each one's output is printed whole once it ends, in this order, and the exit code is 1 when
// any of them failed.
//   node scripts/checks.mjs
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';

const CHECKS = [
  ['type-check', 'npm', ['run', '--silent', 'typecheck']],
  ['eslint', npx, ['eslint', '.']],
  ['prettier', npx, ['prettier', '--check', '.']],
];

function run([name, command, args]) {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
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

const results = await Promise.all(CHECKS.map(run));
for (const { name, code, output } of results) {
  process.stdout.write(output);
  if (code !== 0) process.stderr.write(`${name} failed (exit code ${code})\n`);
}
process.exit(results.every((r) => r.code === 0) ? 0 : 1);
