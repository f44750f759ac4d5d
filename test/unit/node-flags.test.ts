import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };

/** The flags between `node` and the entry point of a command line. */
const flagsOf = (words: string[]) => {
  const node = words.indexOf('node');
  const entry = words.indexOf('dist/src/server.js');
  expect(node).toBeGreaterThanOrEqual(0);
  expect(entry).toBeGreaterThan(node);
  return words.slice(node + 1, entry);
};

describe('the node flags the service runs with', () => {
  const start = flagsOf(pkg.scripts.start!.trim().split(/\s+/));
  const cmd = /^CMD (\[.*\])$/m.exec(read('docker/Dockerfile'))?.[1];

  it('set a heap ceiling, so that V8 collects garbage before the heap grows to its default share of the machine', () => {
    const ceiling = start.find((flag) => flag.startsWith('--max-old-space-size='));
    expect(ceiling).toBeDefined();
    const mb = Number(ceiling!.split('=')[1]);
    // Far above the live heap (tens of MB), well below the default ceiling of a large machine.
    expect(mb).toBeGreaterThanOrEqual(512);
    expect(mb).toBeLessThanOrEqual(2048);
  });

  it('are the same in npm start and in the container image', () => {
    expect(cmd).toBeDefined();
    expect(flagsOf(JSON.parse(cmd!) as string[])).toEqual(start);
  });

  it('are read by the bench from npm start, not written there a second time', () => {
    const bench = read('bench/run.ts');
    expect(bench).toContain('pkg.scripts.start');
    expect(bench).not.toContain('--max-old-space-size');
  });
});
