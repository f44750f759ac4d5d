import { readFileSync } from 'node:fs';

/** The URL of a shared fixture file, test/fixtures/<name>. */
export const fixtureUrl = (name: string): URL => new URL(`../fixtures/${name}`, import.meta.url);

/** The one loader of the shared JSON fixtures (test/fixtures/*.json), parsed. */
export function loadFixture<T>(name: string): T {
  return JSON.parse(readFileSync(fixtureUrl(name), 'utf8')) as T;
}
