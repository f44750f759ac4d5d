import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The node flags of `npm start` (package.json): the bench measures the service as it is run,
 * and the Dockerfile runs it with the same flags (test/unit/node-flags.test.ts).
 */
export function startFlags(root: string): string[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    scripts: { start: string };
  };
  const words = pkg.scripts.start.trim().split(/\s+/);
  return words.slice(words.indexOf('node') + 1).filter((word) => word.startsWith('--'));
}
