import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

// svc-hook is installed alone where an agent runs, with nothing but Node: the package declares
// no dependency and its source imports only its own modules and Node's.
const ROOT = fileURLToPath(new URL('../../../packages/hook/', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sources(join(dir, e.name))
      : e.name.endsWith('.ts')
        ? [join(dir, e.name)]
        : [],
  );
}

describe('@svc/hook', () => {
  it('declares no dependencies', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
      expect(pkg[field]).toBeUndefined();
    }
    expect(pkg['bin']).toEqual({ 'svc-hook': 'bin/svc-hook.js' });
  });

  it('imports only its own modules and Node built-ins', () => {
    const files = sources(join(ROOT, 'src'));
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
      for (const { fileName } of importedFiles) {
        expect([file, fileName]).toEqual([file, expect.stringMatching(/^(\.\.?\/|node:)/)]);
      }
    }
  });
});
