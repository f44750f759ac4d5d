import { configure } from 'safe-stable-stringify';
import { sha256 } from '@noble/hashes/sha2.js';
import { toHex, utf8Bytes } from './encoding.js';

/**
 * JSON.stringify's serialization of primitives with every object's keys in UTF-16 code-unit
 * order: on the values assertCanonicalizable admits (finite numbers, well-formed strings),
 * that is RFC 8785 exactly. safe-stable-stringify rather than the `canonicalize` package, the
 * reference implementation: the same bytes at about 2.5 times the speed on receipts (it skips
 * the reference's per-character surrogate scan, which assertCanonicalizable does natively).
 * The tests hold the two, and a naive third, to the same text on the shared vectors and on
 * generated values.
 */
const jcs = configure({ deterministic: true, circularValue: Error, bigint: false });

/**
 * RFC 8785 (JCS) canonical text: the one canonicalizer for everything signed or hashed.
 * Throws a TypeError on values JCS cannot represent exactly; callers validate input first
 * (strict-json.ts), so reaching the throw here is a programming error.
 */
export function canonicalize(value: unknown): string {
  assertCanonicalizable(value);
  const text = jcs(value);
  if (text === undefined) throw new TypeError('value has no JSON form');
  return text;
}

export const canonicalBytes = (value: unknown): Uint8Array => utf8Bytes(canonicalize(value));

/**
 * SHA-256 over the UTF-8 bytes of a text, as lowercase hex. The verifier hashes through this
 * type and never imports `node:*`, so the CLI, the Action and browsers run it on @noble/hashes
 * (the default everywhere below); the server passes node:crypto's, about three times faster,
 * where it calls the package.
 */
export type Sha256Hex = (text: string) => string;

/** The portable SHA-256 (@noble/hashes): the default wherever the package hashes. */
export const portableSha256Hex: Sha256Hex = (text) => toHex(sha256(utf8Bytes(text)));

/** "sha256:" + the hex SHA-256 of a text that is already canonical. */
export const hashText = (text: string, sha256Hex: Sha256Hex = portableSha256Hex): string =>
  `sha256:${sha256Hex(text)}`;

/** `H(x)` of the receipt contract: "sha256:" + lowercase hex of SHA-256 over JCS(x). */
export const hashCanonical = (value: unknown, sha256Hex: Sha256Hex = portableSha256Hex): string =>
  hashText(canonicalize(value), sha256Hex);

export const sha256Prefixed = (bytes: Uint8Array): string => `sha256:${toHex(sha256(bytes))}`;

export const HASH_PATTERN = /^sha256:[0-9a-f]{64}$/;

// Plain in any realm (objects made by another context's JSON.parse have its Object.prototype):
// an Object whose prototype, if any, is the end of its chain.
function isPlainObject(value: object): boolean {
  if (Object.prototype.toString.call(value) !== '[object Object]') return false;
  const prototype = Object.getPrototypeOf(value) as object | null;
  return prototype === null || Object.getPrototypeOf(prototype) === null;
}

// Some JCS libraries silently escape lone surrogates or round unsafe integers; the contract
// wants an error instead, so the canonicalizer refuses them itself. It admits plain JSON data
// only (what a parser produces): arrays without holes and objects whose prototype is
// Object.prototype or null, with data properties. Class instances, typed arrays, Dates and
// accessors could serialize through toJSON or a getter to something this check never saw.
function assertCanonicalizable(value: unknown): void {
  // The way down to the value checked, kept as segments and spelled out only for an error:
  // building every member's path text was most of this walk's cost on a receipt.
  const way: (string | number)[] = [];
  const at = () =>
    way.reduce<string>(
      (path, step) =>
        typeof step === 'number' ? `${path}[${step}]` : path ? `${path}.${step}` : step,
      '',
    );
  const fail = (problem: string, path = at()): never => {
    throw new TypeError(`${path || '(root)'}: ${problem}`);
  };
  const walk = (value: unknown): void => {
    switch (typeof value) {
      case 'number':
        if (!Number.isFinite(value)) fail('non-finite number');
        if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
          fail('integer outside the exactly representable range');
        }
        return;
      case 'string':
        if (!value.isWellFormed()) fail('lone surrogate');
        return;
      case 'object':
        if (value === null) return;
        if (Array.isArray(value)) {
          for (let i = 0; i < value.length; i++) {
            way.push(i);
            if (!(i in value)) fail('hole in an array');
            walk(value[i]);
            way.pop();
          }
          return;
        }
        if (!isPlainObject(value)) fail('not a plain object');
        for (const key of Object.keys(value)) {
          if (!key.isWellFormed()) throw new TypeError(`${at()}: lone surrogate in a key`);
          way.push(key);
          const descriptor = Object.getOwnPropertyDescriptor(value, key)!;
          if (!('value' in descriptor)) fail('accessor property');
          walk(descriptor.value);
          way.pop();
        }
        return;
      case 'boolean':
        return;
      default:
        fail(`${typeof value} has no JSON form`);
    }
  };
  walk(value);
}
