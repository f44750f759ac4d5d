import { createHash } from 'node:crypto';

/**
 * Second, deliberately naive implementations of what the core computes, so tests compare
 * against something other than the code under test. Only for well-formed input.
 */

/** RFC 8785 by its definition: ECMAScript serialization of primitives, keys in code-unit order. */
export function referenceJcs(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError('non-finite');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(referenceJcs).join(',')}]`;
  const record = value as Record<string, unknown>;
  // JavaScript's < on strings compares UTF-16 code units, which is exactly RFC 8785 §3.2.3.
  const keys = Object.keys(record).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${keys.map((k) => `${JSON.stringify(k)}:${referenceJcs(record[k])}`).join(',')}}`;
}

export const sha256Hex = (data: string | Uint8Array): string =>
  createHash('sha256').update(data).digest('hex');

// The signed members of each receipt contract, written out rather than imported: pinned on
// purpose, the one copy in the tests, so that a change to the contract module (packages/verify)
// or to the core fails the core's receipt tests and vectors. Other tests read the lists from
// the contract module (test/support/receipts.ts).
/** Contract §2: the signed members of receipt-core-v1. */
export const PINNED_V1_FIELDS: readonly string[] = [
  'receipt_id',
  'issued_at',
  'claim_id',
  'admissibility',
  'subject',
  'evidence',
  'replay',
  'policy',
  'signed_fields',
];
/** Contract §8: the signed members of receipt-core-v2. */
export const PINNED_V2_FIELDS: readonly string[] = [...PINNED_V1_FIELDS, 'submitter', 'position'];
/** Contract §11: a disposition receipt signs its disposition too. */
export const PINNED_DISPOSITION_FIELDS: readonly string[] = [...PINNED_V2_FIELDS, 'disposition'];

/** `H(x)` of contract §1, from node:crypto over the reference canonical text. */
export const referenceHash = (value: unknown): string =>
  `sha256:${sha256Hex(Buffer.from(referenceJcs(value), 'utf8'))}`;

export const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
export const unhex = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'hex'));
export const utf8 = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'utf8'));

export { loadFixture } from '../../support/fixtures.js';

/** A fresh deep copy, so a test can tamper with one part of a shared value. */
export const clone = <T>(value: T): T => structuredClone(value);

/** A small seeded generator, so random cases are the same on every run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALPHABET = [
  'a',
  'b',
  'Z',
  '1',
  '_',
  ' ',
  '"',
  '\\',
  '\n',
  '\u0001',
  '\u001f',
  '\u007f',
  '\u2028',
  'é',
  '€',
  '\ufb33',
  '😀',
];

/** Random JSON-compatible values of well-formed strings and exactly representable numbers. */
export function randomJson(random: () => number, depth = 0): unknown {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const text = () =>
    Array.from({ length: Math.floor(random() * 6) }, () => pick(ALPHABET)).join('');
  const kind = depth >= 4 ? Math.floor(random() * 4) : Math.floor(random() * 6);
  switch (kind) {
    case 0:
      return pick([null, true, false]);
    case 1:
      return pick([
        0,
        -1,
        Math.floor(random() * 2 ** 53) * (random() < 0.5 ? -1 : 1),
        (random() - 0.5) * 10 ** Math.floor(random() * 30 - 15),
      ]);
    case 2:
    case 3:
      return text();
    case 4:
      return Array.from({ length: Math.floor(random() * 4) }, () => randomJson(random, depth + 1));
    default: {
      const entries = Array.from({ length: Math.floor(random() * 5) }, () => [
        text(),
        randomJson(random, depth + 1),
      ]);
      return Object.fromEntries(entries);
    }
  }
}
