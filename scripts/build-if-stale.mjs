// Builds the service (`npm run build`) only when the build is missing or older than its
// sources, so `npm run svc -- …` and `npm start` start at once when nothing changed.
//   node scripts/build-if-stale.mjs            build when stale
//   node scripts/build-if-stale.mjs --stamp    record that a build just finished (npm run build)
//   node scripts/build-if-stale.mjs --check    exit 0 when current, 1 when stale; build nothing
// "Current" means: every output below exists and the stamp `npm run build` writes last is
// newer than every input file. tsc's incremental build leaves unchanged outputs untouched, so
// the outputs' own times cannot say when the build ran; the stamp does.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const STAMP = 'dist/.build-stamp';
const INPUTS = [
  'src',
  'packages/verify/src',
  'packages/hook/src',
  'package.json',
  'package-lock.json',
  'packages/verify/package.json',
  'packages/hook/package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'packages/verify/tsconfig.json',
  'packages/hook/tsconfig.json',
  'scripts/compile.mjs',
  'scripts/build-explorer.mjs',
];
const OUTPUTS = [
  'dist/src/server.js',
  'dist/src/cli/svc.js',
  'dist/explorer/explorer.js',
  'packages/verify/dist/index.js',
  'packages/verify/dist/cli/svc-verify.js',
  'packages/hook/dist/index.js',
  'packages/hook/dist/cli/svc-hook.js',
];

/** The newest modification time of a file, or of any file below a directory. */
function newest(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let max = 0;
  for (const entry of readdirSync(path)) max = Math.max(max, newest(join(path, entry)));
  return max;
}

/** Why the build is stale, or null when it is current. */
export function staleness(dir = root) {
  const missing = OUTPUTS.find((o) => !existsSync(join(dir, o)));
  if (missing) return `${missing} is missing`;
  const stamp = join(dir, STAMP);
  if (!existsSync(stamp)) return 'no build recorded';
  const built = statSync(stamp).mtimeMs;
  const changed = INPUTS.find((i) => newest(join(dir, i)) > built);
  return changed ? `${changed} changed since the last build` : null;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const flag = process.argv[2];
  if (flag === '--stamp') writeFileSync(join(root, STAMP), `${new Date().toISOString()}\n`);
  else if (flag === '--check') process.exit(staleness() ? 1 : 0);
  else if (flag !== undefined) {
    process.stderr.write('usage: node scripts/build-if-stale.mjs [--stamp | --check]\n');
    process.exit(2);
  } else {
    const why = staleness();
    if (why) {
      process.stderr.write(`building (${why}) …\n`);
      const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
      const result = spawnSync(npm, ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
      process.exit(result.status ?? 1);
    }
  }
}
