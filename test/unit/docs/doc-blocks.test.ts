import { describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runnableDocuments, shellBlocks } from '../../support/doc-blocks.js';

// What the documented-commands test runs: which blocks, which documents, and the markers.
describe('the shell blocks of a document', () => {
  const markdown = [
    '# Guide',
    '```bash',
    'echo one',
    '```',
    '',
    '<!-- not-runnable: needs Docker -->',
    '',
    '```sh',
    'docker ps',
    '```',
    '```console',
    '$ svc --help',
    '```',
    '1. A step:',
    '',
    '   ```bash',
    '   echo indented',
    '     echo deeper',
    '   ```',
    '````markdown',
    '```bash',
    'echo inside another fence',
    '```',
    '````',
    '<!-- not-runnable: -->',
    '```bash',
    'echo an empty reason is no reason',
    '```',
  ].join('\n');

  it('are the bash and sh blocks, with their marker, in order', () => {
    expect(shellBlocks('g.md', markdown)).toEqual([
      { file: 'g.md', line: 2, code: 'echo one', notRunnable: null },
      { file: 'g.md', line: 8, code: 'docker ps', notRunnable: 'needs Docker' },
      { file: 'g.md', line: 16, code: 'echo indented\n  echo deeper', notRunnable: null },
      { file: 'g.md', line: 26, code: 'echo an empty reason is no reason', notRunnable: null },
    ]);
  });

  it('come from the three READMEs, then the guides that say they are runnable', () => {
    const root = mkdtempSync(join(tmpdir(), 'svc-doc-blocks-'));
    try {
      mkdirSync(join(root, 'docs'));
      writeFileSync(join(root, 'docs/B.md'), '# B\n\n<!-- runnable-guide -->\n');
      writeFileSync(join(root, 'docs/A.md'), '# A\n\n<!-- runnable-guide -->\n');
      writeFileSync(join(root, 'docs/C.md'), '# C mentions `<!-- runnable-guide -->` inline\n');
      expect(runnableDocuments(root)).toEqual([
        'README.md',
        'packages/verify/README.md',
        'action/README.md',
        'docs/A.md',
        'docs/B.md',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
