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

describe('.node-version', () => {
  const version = read('.node-version').trim();
  const [major = NaN, minor = NaN] = version.split('.').map(Number);

  it('names one major.minor Node version', () => {
    expect(version).toMatch(/^\d+\.\d+$/);
  });

  it('is the minimum that package.json engines asks for', () => {
    expect(pkg.engines.node).toBe(`>=${version}.0`);
  });

  it('is the Node whose types the code is checked against', () => {
    expect(pkg.devDependencies['@types/node']).toBe(`^${version}.0`);
  });

  it('is met by the Node running the tests', () => {
    const [runningMajor = 0, runningMinor = 0] = process.versions.node.split('.').map(Number);
    expect(runningMajor * 1000 + runningMinor).toBeGreaterThanOrEqual(major * 1000 + minor);
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
