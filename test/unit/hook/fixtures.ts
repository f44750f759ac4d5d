import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const DIR = fileURLToPath(new URL('../../fixtures/hooks/', import.meta.url));

/** The raw bytes of a recorded hook event, as the harness writes it. */
export function fixtureText(harness: string, name: string): string {
  return readFileSync(`${DIR}${harness}/${name}.json`, 'utf8');
}

/** A recorded hook event, parsed. */
export function fixture(harness: string, name: string): unknown {
  return JSON.parse(fixtureText(harness, name)) as unknown;
}
