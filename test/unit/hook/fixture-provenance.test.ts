import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { HARNESS_NAMES } from '@svc/hook';

// A recorded hook event is only as good as its source: each folder's README names every file
// in it and says where it comes from (verbatim, assembled or constructed from a schema).
const DIR = fileURLToPath(new URL('../../fixtures/hooks/', import.meta.url));

describe.each(HARNESS_NAMES)('the recorded %s events', (harness) => {
  const files = readdirSync(`${DIR}${harness}`).filter((f) => f.endsWith('.json'));
  const readme = readFileSync(`${DIR}${harness}/README.md`, 'utf8');

  it('include a pre-tool event and are each named in the README, with their source', () => {
    expect(files.some((f) => /^(pre-tool-use|before-)/.test(f))).toBe(true);
    for (const file of files) expect(readme).toContain(`| \`${file}\` |`);
    expect(readme).toMatch(/Sources?:/);
  });

  it('are JSON objects', () => {
    for (const file of files) {
      const body = JSON.parse(readFileSync(`${DIR}${harness}/${file}`, 'utf8')) as unknown;
      expect(typeof body === 'object' && body !== null && !Array.isArray(body)).toBe(true);
    }
  });
});
