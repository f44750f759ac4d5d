import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runNode } from '../../fixtures/run-node.js';
import { BUNDLE } from './run-action.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

describe('action/dist', () => {
  it('is the bundle of the current source (run npm run build:action and commit it)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-action-build-'));
    try {
      const fresh = join(dir, 'index.js');
      const build = await runNode(join(ROOT, 'scripts/build-action.mjs'), [fresh], 60_000);
      expect(build.stderr).toBe('');
      expect(build.code).toBe(0);
      // Compared as text so a failure shows where the committed bundle differs.
      const same = readFileSync(fresh, 'utf8') === readFileSync(BUNDLE, 'utf8');
      expect({ same, hint: 'npm run build:action' }).toEqual({
        same: true,
        hint: 'npm run build:action',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  // Runners check the repository out and run the file: it must be tracked, not ignored.
  (existsSync(join(ROOT, '.git')) ? it : it.skip)('is tracked by git', () => {
    const listed = execFileSync('git', ['ls-files', 'action/dist/index.js'], { cwd: ROOT });
    expect(listed.toString().trim()).toBe('action/dist/index.js');
  });
});

describe('action/action.yml', () => {
  const yml = read('action/action.yml');
  const section = (name: string) => {
    const start = yml.indexOf(`\n${name}:\n`);
    const rest = yml.slice(start + name.length + 3);
    const end = rest.search(/\n\S/);
    return end === -1 ? rest : rest.slice(0, end);
  };
  const names = (text: string) => [...text.matchAll(/^ {2}([a-z-]+):$/gm)].map((m) => m[1]).sort();

  it('runs the bundle on node24', () => {
    expect(section('runs')).toMatch(/^ {2}using: node24$/m);
    expect(section('runs')).toMatch(/^ {2}main: dist\/index\.js$/m);
  });

  it('declares exactly the inputs the Action reads and the outputs it sets', () => {
    const source = read('action/src/inputs.ts');
    const read_ = [...new Set([...source.matchAll(/get\('([a-z-]+)'\)/g)].map((m) => m[1]))].sort();
    expect(names(section('inputs'))).toEqual(read_);
    const main = read('action/src/main.ts');
    const set = [...main.matchAll(/setOutput\('([a-z-]+)'/g)].map((m) => m[1]).sort();
    expect(names(section('outputs'))).toEqual(set);
    expect(set).toEqual([
      'admissibility',
      'attestation-path',
      'disposition',
      'disposition-receipt-id',
      'log-quorum',
      'log-root',
      'log-size',
      'log-witness',
      'receipt-id',
      'receipt-path',
      'valid',
      'verdict',
    ]);
  });
});
