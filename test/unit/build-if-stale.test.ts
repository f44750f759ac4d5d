import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// scripts/build-if-stale.mjs, which lets `npm run svc` and `npm start` skip the build, run in a
// tree of its own: outputs, inputs and the stamp are files whose times the test sets.
const SCRIPT = fileURLToPath(new URL('../../scripts/build-if-stale.mjs', import.meta.url));
const OUTPUTS = [
  'dist/src/server.js',
  'dist/src/cli/svc.js',
  'dist/explorer/explorer.js',
  'packages/verify/dist/index.js',
  'packages/verify/dist/cli/svc-verify.js',
  'packages/hook/dist/index.js',
  'packages/hook/dist/cli/svc-hook.js',
];

function tree() {
  const root = mkdtempSync(join(tmpdir(), 'svc-stale-'));
  const write = (path: string, at: number) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), '');
    utimesSync(join(root, path), at, at);
  };
  mkdirSync(join(root, 'scripts'));
  copyFileSync(SCRIPT, join(root, 'scripts/build-if-stale.mjs'));
  const check = () =>
    spawnSync(process.execPath, ['scripts/build-if-stale.mjs', '--check'], { cwd: root }).status;
  return { root, write, check };
}

describe('build-if-stale', () => {
  it('is current only with every output and a stamp newer than every input', () => {
    const { root, write, check } = tree();
    try {
      write('src/server.ts', 1000);
      write('packages/verify/src/index.ts', 1000);
      for (const o of OUTPUTS) write(o, 1500);
      expect(check()).toBe(1); // no build recorded
      write('dist/.build-stamp', 2000);
      expect(check()).toBe(0);
      write('src/cli/svc.ts', 2500); // a source changed since
      expect(check()).toBe(1);
      write('dist/.build-stamp', 3000);
      expect(check()).toBe(0);
      write('packages/verify/src/tlog/note.ts', 3500); // the verifier's sources count too
      expect(check()).toBe(1);
      write('dist/.build-stamp', 4000);
      write('packages/hook/src/forward.ts', 4500); // and svc-hook's
      expect(check()).toBe(1);
      write('dist/.build-stamp', 5000);
      rmSync(join(root, 'dist/explorer/explorer.js'));
      expect(check()).toBe(1); // an output is missing
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('records a build with --stamp', () => {
    const { root, write, check } = tree();
    try {
      write('src/server.ts', 1000);
      for (const o of OUTPUTS) write(o, 1500);
      expect(check()).toBe(1);
      const stamp = spawnSync(process.execPath, ['scripts/build-if-stale.mjs', '--stamp'], {
        cwd: root,
      });
      expect(stamp.status).toBe(0);
      expect(check()).toBe(0);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
