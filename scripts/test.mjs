// `npm test`: the checks (scripts/checks.mjs: type-check, ESLint, Prettier) and Jest at the
// same time. The checks run at a lower CPU priority, so they take what the test files leave
// idle (the files wait on child processes, sockets and timers) rather than slowing them; their
// output is printed once Jest is done. The closing "N passed, M failed" line counts a failed
// check as one failure, and the exit code is 1 when the checks or the tests failed.
//   node scripts/test.mjs [jest arguments]
import { spawn } from 'node:child_process';
import { runChecks } from './checks.mjs';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

const checks = runChecks({ nice: true });
const jest = new Promise((resolve) => {
  const child = spawn(npm, ['run', '--silent', 'test:jest', '--', ...process.argv.slice(2)], {
    stdio: ['inherit', 'pipe', 'inherit'],
    shell: process.platform === 'win32',
  });
  // Jest's output is passed on as it comes; the summary reporter's closing line is kept back,
  // to be written last.
  let held = '';
  let summary = null;
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    const lines = (held + chunk).split('\n');
    held = lines.pop();
    for (const line of lines) {
      if (/^\d+ passed, \d+ failed/.test(line)) summary = line;
      else process.stdout.write(`${line}\n`);
    }
  });
  child.on('error', (error) => resolve({ code: 1, summary: null, error }));
  child.on('close', (code) => {
    if (/^\d+ passed, \d+ failed/.test(held)) summary = held;
    else if (held) process.stdout.write(held);
    resolve({ code: code ?? 1, summary });
  });
});

const [jestResult, checkResults] = await Promise.all([jest, checks]);
if (jestResult.error) process.stderr.write(`could not run Jest: ${jestResult.error.message}\n`);
let failedChecks = 0;
for (const { name, code, output } of checkResults) {
  process.stdout.write(output);
  if (code !== 0) {
    failedChecks += 1;
    process.stderr.write(`${name} failed (exit code ${code})\n`);
  }
}
const match = /^(\d+) passed, (\d+) failed(.*)$/.exec(jestResult.summary ?? '');
const passed = match ? Number(match[1]) : 0;
// No summary from Jest: it did not get to run its tests, which counts as one failure.
const failed = (match ? Number(match[2]) : 1) + failedChecks;
process.stdout.write(`\n${passed} passed, ${failed} failed${match ? match[3] : ''}\n`);
process.exit(jestResult.code === 0 && failedChecks === 0 ? 0 : 1);
