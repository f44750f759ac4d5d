import { describe, expect, it } from '@jest/globals';
import { MAX_JSON_DEPTH, parseStrictJson, isVerifyError } from '@svc/verify';
import { loadFixture, randomJson, seededRandom } from '../core/reference.js';

interface StrictCase {
  name: string;
  text: string;
  expect: 'accept' | 'malformed_json' | 'validation_failed';
}
const { cases } = loadFixture<{ cases: StrictCase[] }>('strict-json-vectors.json');

/** The error code parseStrictJson throws for `text`, or null when it parses. */
function codeOf(text: string, maxDepth?: number): string | null {
  try {
    parseStrictJson(text, maxDepth);
    return null;
  } catch (error) {
    if (!isVerifyError(error)) throw error;
    return error.code;
  }
}

const byExpectation = (kind: StrictCase['expect']) =>
  cases.filter((c) => c.expect === kind).map((c) => [c.name, c] as const);

describe('parseStrictJson (contract §1)', () => {
  it('has vectors of every kind', () => {
    for (const kind of ['accept', 'malformed_json', 'validation_failed'] as const) {
      expect(byExpectation(kind).length).toBeGreaterThanOrEqual(5);
    }
  });

  it.each(byExpectation('accept'))('accepts %s unchanged', (_, c) => {
    expect(parseStrictJson(c.text)).toEqual(JSON.parse(c.text));
  });

  it.each(byExpectation('validation_failed'))('refuses %s as validation_failed', (_, c) => {
    expect(codeOf(c.text)).toBe('validation_failed');
  });

  it.each(byExpectation('malformed_json'))('refuses %s as malformed_json', (_, c) => {
    expect(codeOf(c.text)).toBe('malformed_json');
  });

  it('accepts 300 random documents unchanged, however they are indented', () => {
    const random = seededRandom(7159);
    for (let i = 0; i < 300; i++) {
      const value = randomJson(random);
      for (const text of [JSON.stringify(value), JSON.stringify(value, null, 2)]) {
        expect(parseStrictJson(text)).toEqual(JSON.parse(text));
      }
    }
  });

  it('finds a key repeated at the top of 300 random objects', () => {
    const random = seededRandom(8259);
    let tried = 0;
    while (tried < 300) {
      const value = randomJson(random);
      if (value === null || typeof value !== 'object' || Array.isArray(value)) continue;
      const [key] = Object.keys(value);
      if (key === undefined || ['__proto__', 'constructor', 'prototype'].includes(key)) continue;
      tried += 1;
      const text = JSON.stringify(value).replace(/^\{/, `{${JSON.stringify(key)}:0,`);
      expect(codeOf(text)).toBe('validation_failed');
    }
  });

  it('keeps an escaped quote between backslashes inside the string', () => {
    expect(parseStrictJson('{"a":"a\\\\\\"b"}')).toEqual({ a: 'a\\"b' });
  });

  it('creates __proto__ nowhere, not even on refusal', () => {
    expect(codeOf('{"__proto__":{"polluted":true}}')).toBe('validation_failed');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('names the place of a duplicate key in its message', () => {
    expect(() => parseStrictJson('{"x":{"a":1,"a":2}}')).toThrow(/x: duplicate key "a"/);
    expect(() => parseStrictJson('{"a":1,"\\u0061":2}')).toThrow(/duplicate key "a"/);
  });

  it('takes nesting up to the limit and refuses one level more', () => {
    const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
    expect(codeOf(nested(MAX_JSON_DEPTH))).toBeNull();
    expect(codeOf(nested(MAX_JSON_DEPTH + 1))).toBe('validation_failed');
    const objects = (depth: number) => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
    expect(codeOf(objects(MAX_JSON_DEPTH))).toBeNull();
    expect(codeOf(objects(MAX_JSON_DEPTH + 1))).toBe('validation_failed');
  });

  it('honours a smaller depth limit given by the caller', () => {
    expect(codeOf('[[1]]', 2)).toBeNull();
    expect(codeOf('[[[1]]]', 2)).toBe('validation_failed');
  });

  it('does not count brackets inside strings towards the depth', () => {
    const text = JSON.stringify({ s: '['.repeat(MAX_JSON_DEPTH * 4) });
    expect(codeOf(text)).toBeNull();
  });

  it('refuses 100000 levels of nesting with an error, not a crash', () => {
    expect(codeOf('['.repeat(100_000) + ']'.repeat(100_000))).toBe('validation_failed');
    expect(codeOf('{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000))).toBe('validation_failed');
  });

  it('refuses 100000 unclosed brackets as malformed, not a crash', () => {
    expect(codeOf('['.repeat(100_000))).toBe('malformed_json');
  });

  it('throws VerifyError for every refusal, never a bare SyntaxError or RangeError', () => {
    for (const c of cases.filter((x) => x.expect !== 'accept')) {
      let thrown: unknown;
      try {
        parseStrictJson(c.text);
      } catch (error) {
        thrown = error;
      }
      expect(isVerifyError(thrown)).toBe(true);
    }
  });
});
