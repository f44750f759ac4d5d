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

  it('halve the young generation, and set no heap ceiling', () => {
    expect(start).toContain('--max-semi-space-size=8');
    // A ceiling low enough to change when V8 collects made searches, whose pages are buffers
    // outside the heap, about 40 % dearer (docs/BENCHMARKS.md, "Memory").
    expect(start.some((flag) => flag.startsWith('--max-old-space-size'))).toBe(false);
  });

  it('are the same in npm start and in the container image', () => {
    expect(cmd).toBeDefined();
    expect(flagsOf(JSON.parse(cmd!) as string[])).toEqual(start);
  });

  it('are read by the bench from npm start, not written there a second time', () => {
    // The bench and the soak take them from one reader of package.json.
    expect(read('bench/start-flags.ts')).toContain('pkg.scripts.start');
    for (const file of ['bench/run.ts', 'bench/soak.ts']) {
      expect(read(file)).toContain('startFlags(ROOT)');
      expect(read(file)).not.toMatch(/--max-semi-space-size=\d/);
    }
  });
});
