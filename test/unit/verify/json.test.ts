import { describe, expect, it } from '@jest/globals';
import { isObject, parseStrictJson } from '@svc/verify';

describe('isObject', () => {
  it('is true for a parsed JSON object, empty or not', () => {
    expect(isObject(parseStrictJson('{}'))).toBe(true);
    expect(isObject(parseStrictJson('{"receipt_id": "dr-1"}'))).toBe(true);
    expect(isObject(Object.create(null))).toBe(true);
  });

  it('is false for null, arrays and every other JSON value', () => {
    for (const text of ['null', '[]', '[{}]', '"{}"', '1', 'true', 'false'])
      expect(isObject(parseStrictJson(text))).toBe(false);
    expect(isObject(undefined)).toBe(false);
  });
});
