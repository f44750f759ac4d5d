import { VerifyError } from './errors.js';

/**
 * Parses attacker-controlled JSON the way the receipt contract (§1) wants it read:
 * duplicate keys, prototype-polluting keys, unsafe integers, non-finite numbers, lone
 * surrogates and deep nesting are refused with a typed error naming the place, never
 * silently "fixed" as JSON.parse would.
 */
export const MAX_JSON_DEPTH = 32;

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export function parseStrictJson(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    if (error instanceof SyntaxError) {
      throw new VerifyError('malformed_json', `Request body is not valid JSON: ${error.message}`);
    }
    throw new VerifyError('validation_failed', `(root): nesting deeper than ${maxDepth} levels`);
  }
  scanStructure(text, maxDepth);
  checkValues(value, []);
  return value;
}

interface Frame {
  keys: Set<string> | null; // null for an array
  key: string | number;
}

// A second pass over text that JSON.parse accepted: depth and duplicate keys, both of which
// JSON.parse cannot report. Iterative, so nesting cannot exhaust the stack.
function scanStructure(text: string, maxDepth: number): void {
  const stack: Frame[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const end = stringEnd(text, i);
      const top = stack[stack.length - 1];
      if (expectKey && top?.keys) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.keys.has(key)) {
          throw new VerifyError('validation_failed', `${pathOf(stack)}: duplicate key "${key}"`);
        }
        top.keys.add(key);
        top.key = key;
        expectKey = false;
      }
      i = end;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (stack.length >= maxDepth) {
        throw new VerifyError(
          'validation_failed',
          `${pathOf(stack)}: nesting deeper than ${maxDepth} levels`,
        );
      }
      const isObject = c === 0x7b;
      stack.push({ keys: isObject ? new Set() : null, key: isObject ? '' : 0 });
      expectKey = isObject;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      expectKey = false;
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top?.keys) expectKey = true;
      else if (top) top.key = (top.key as number) + 1;
    }
  }
}

function stringEnd(text: string, start: number): number {
  let j = start + 1;
  for (;;) {
    const quote = text.indexOf('"', j);
    let backslashes = 0;
    for (let k = quote - 1; text.charCodeAt(k) === 0x5c; k--) backslashes++;
    if (backslashes % 2 === 0) return quote;
    j = quote + 1;
  }
}

function pathOf(stack: Frame[]): string {
  const parts = stack.slice(0, -1).map((frame) => String(frame.key));
  return parts.length ? parts.join('.') : '(root)';
}

function checkValues(value: unknown, path: (string | number)[]): void {
  const where = () => (path.length ? path.join('.') : '(root)');
  if (typeof value === 'number') {
    if (!Number.isFinite(value))
      throw new VerifyError('validation_failed', `${where()}: number out of range`);
    if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
      throw new VerifyError(
        'validation_failed',
        `${where()}: integer outside the exactly representable range ±(2^53-1)`,
      );
    }
  } else if (typeof value === 'string') {
    if (!value.isWellFormed())
      throw new VerifyError('validation_failed', `${where()}: lone UTF-16 surrogate`);
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => checkValues(item, [...path, i]));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (FORBIDDEN_KEYS.has(key)) {
        throw new VerifyError('validation_failed', `${where()}: key "${key}" is not allowed`);
      }
      if (!key.isWellFormed())
        throw new VerifyError('validation_failed', `${where()}: lone UTF-16 surrogate in a key`);
      checkValues(item, [...path, key]);
    }
  }
}
