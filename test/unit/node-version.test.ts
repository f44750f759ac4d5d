import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const pkg = JSON.parse(read('package.json')) as {
  engines: { node: string };
  devDependencies: Record<string, string>;
};

// The supported Node lines: 24 (active LTS) and 22 (maintenance LTS). `.node-version` names
// the line the project is developed and tested on; the oldest supported line sets the types,
// so the code uses no API that line lacks.
const SUPPORTED = { newest: 24, oldest: 22 };

describe('.node-version', () => {
  const version = read('.node-version').trim();
  const major = Number(version);

  it('names the newest supported major line', () => {
    expect(version).toMatch(/^\d+$/);
    expect(major).toBe(SUPPORTED.newest);
  });

  it('package.json engines asks for the supported lines and nothing older', () => {
    expect(pkg.engines.node).toBe('^22.20.0 || >=24.11.0');
    const verifyPkg = JSON.parse(read('packages/verify/package.json')) as typeof pkg;
    expect(verifyPkg.engines.node).toBe(pkg.engines.node);
  });

  it('checks the code against the types of the oldest supported line', () => {
    expect(pkg.devDependencies['@types/node']).toMatch(new RegExp(`^\\^${SUPPORTED.oldest}\\.`));
  });

  it('is met by the Node running the tests', () => {
    const runningMajor = Number(process.versions.node.split('.')[0]);
    expect([SUPPORTED.oldest, SUPPORTED.newest]).toContain(runningMajor);
  });

  it('sets the Action bundle target: the build script reads it and names no Node itself', () => {
    const script = read('scripts/build-action.mjs');
    expect(script).toContain("'../.node-version'");
    expect(script).toMatch(/target: `node\$\{nodeVersion\}`/);
    expect(script).not.toMatch(/target: ['"]node\d/);
  });

  it('is the version CI installs', () => {
    expect(read('.github/workflows/ci.yml')).toMatch(/^ +node-version-file: \.node-version$/m);
  });

  it('is the version scripts/provision-node.sh provisions by default', () => {
    expect(read('scripts/provision-node.sh')).toMatch(new RegExp(`\\$\\{1:-${major}\\}`));
  });

  it('has the major of the container images', () => {
    const bases = [...read('docker/Dockerfile').matchAll(/^FROM node:(\d+)-/gm)].map((m) => m[1]);
    expect(bases.length).toBeGreaterThan(0);
    expect(new Set(bases)).toEqual(new Set([String(major)]));
  });
});

// Generated files are marked so diffs and GitHub's language statistics pass over them.
(existsSync(join(ROOT, '.git')) ? describe : describe.skip)('.gitattributes', () => {
  const attributes = (path: string) =>
    execFileSync('git', ['check-attr', 'linguist-generated', 'diff', '--', path], {
      cwd: ROOT,
      encoding: 'utf8',
    });

  it('marks the Action bundle generated and leaves it out of diffs', () => {
    const out = attributes('action/dist/index.js');
    expect(out).toContain('action/dist/index.js: linguist-generated: true');
    expect(out).toContain('action/dist/index.js: diff: unset');
  });

  it('leaves source files alone', () => {
    const out = attributes('action/src/index.ts');
    expect(out).toContain('linguist-generated: unspecified');
    expect(out).toContain('diff: unspecified');
  });
});
