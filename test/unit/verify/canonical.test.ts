import { runInNewContext } from 'node:vm';
import { describe, expect, it } from '@jest/globals';
import rfcReference from 'canonicalize';
import { canonicalBytes, canonicalize } from '@svc/verify';
import { hex, loadFixture, randomJson, referenceJcs, seededRandom } from '../core/reference.js';

interface ObjectVector {
  name: string;
  input_json: string;
  jcs: string | null;
  jcs_utf8_hex?: string;
  contract: 'accept' | 'reject';
}
interface NumberVector {
  ieee754: string;
  jcs: string | null;
  contract: 'accept' | 'reject';
}
interface LiteralVector {
  json: string;
  jcs: string;
  contract: 'accept' | 'reject';
}
const vectors = loadFixture<{
  objects: ObjectVector[];
  numbers: NumberVector[];
  number_literals: LiteralVector[];
}>('jcs-vectors.json');

const fromBits = (bits: string): number => {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${bits}`));
  return view.getFloat64(0);
};

const accepted = <T extends { contract: string }>(list: T[]) =>
  list.filter((v) => v.contract === 'accept');
const rejected = <T extends { contract: string }>(list: T[]) =>
  list.filter((v) => v.contract === 'reject');

describe('canonicalize (RFC 8785 under contract §1)', () => {
  it('has vectors of both kinds, so neither loop below can pass vacuously', () => {
    expect(accepted(vectors.objects).length).toBeGreaterThanOrEqual(5);
    expect(rejected(vectors.objects).length).toBeGreaterThanOrEqual(5);
    expect(accepted(vectors.numbers).length).toBeGreaterThanOrEqual(10);
    expect(accepted(vectors.number_literals).length).toBeGreaterThanOrEqual(10);
  });

  describe.each(accepted(vectors.objects).map((v) => [v.name, v] as const))('%s', (_, vector) => {
    const value: unknown = JSON.parse(vector.input_json);

    it('canonicalizes to the RFC text', () => {
      expect(canonicalize(value)).toBe(vector.jcs);
    });

    it('agrees with the reference implementation', () => {
      expect(referenceJcs(value)).toBe(vector.jcs);
    });

    it('gives the UTF-8 of that text as bytes', () => {
      const expected = vector.jcs_utf8_hex ?? Buffer.from(vector.jcs!, 'utf8').toString('hex');
      expect(hex(canonicalBytes(value))).toBe(expected);
    });
  });

  it('writes the RFC sorting example in the order §3.2.3 lists', () => {
    const sorting = vectors.objects.find((v) => v.name.includes('§3.2.3 property sorting'))!;
    const text = canonicalize(JSON.parse(sorting.input_json));
    // Object.keys would put "1" first (integer-like keys), so read the order off the text.
    const order = [
      'Carriage Return',
      'One',
      'Control',
      'Latin Small Letter O With Diaeresis',
      'Euro Sign',
      'Emoji: Grinning Face',
      'Hebrew Letter Dalet With Dagesh',
    ].map((value) => text.indexOf(`"${value}"`));
    expect(order.every((at) => at > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('writes the RFC §3.2.2 sample as the §3.2.4 bytes where the contract allows its numbers', () => {
    const sample = vectors.objects.find((v) => v.name === 'RFC 8785 §3.2.2 sample')!;
    // The reference shows the fixture's text is the RFC's; the contract then refuses 1E30.
    expect(Buffer.from(referenceJcs(JSON.parse(sample.input_json))).toString('hex')).toBe(
      sample.jcs_utf8_hex,
    );
    expect(() => canonicalize(JSON.parse(sample.input_json))).toThrow(TypeError);
  });

  it.each(rejected(vectors.objects).map((v) => [v.name, v] as const))('rejects %s', (_, vector) => {
    expect(() => canonicalize(JSON.parse(vector.input_json))).toThrow(TypeError);
  });

  it.each(accepted(vectors.numbers).map((v) => [v.ieee754, v.jcs] as const))(
    'writes the binary64 0x%s as %s (RFC 8785 Appendix B)',
    (bits, expected) => {
      expect(canonicalize(fromBits(bits))).toBe(expected);
      expect(canonicalize([fromBits(bits)])).toBe(`[${expected}]`);
    },
  );

  it.each(rejected(vectors.numbers).map((v) => [v.ieee754, v.jcs] as const))(
    'rejects the binary64 0x%s (RFC text %s) instead of writing it',
    (bits) => {
      expect(() => canonicalize({ n: fromBits(bits) })).toThrow(TypeError);
    },
  );

  it.each(accepted(vectors.number_literals).map((v) => [v.json, v.jcs] as const))(
    'writes the JSON number %s as %s',
    (json, expected) => {
      expect(canonicalize(JSON.parse(json))).toBe(expected);
    },
  );

  it.each(rejected(vectors.number_literals).map((v) => [v.json, v.jcs] as const))(
    'rejects the JSON number %s, whose RFC 8785 form %s is outside the exact integer range',
    (json, jcs) => {
      expect(referenceJcs(JSON.parse(json))).toBe(jcs);
      expect(() => canonicalize(JSON.parse(json))).toThrow(TypeError);
    },
  );

  it('takes the safe integer bounds themselves', () => {
    expect(canonicalize([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER])).toBe(
      '[9007199254740991,-9007199254740991]',
    );
  });

  it.each([
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['-Infinity', Number.NEGATIVE_INFINITY],
    ['2**53', 2 ** 53],
    ['-(2**53)', -(2 ** 53)],
    ['2**53 + 2', 2 ** 53 + 2],
  ])('rejects %s wherever it sits', (_, n) => {
    expect(() => canonicalize(n)).toThrow(TypeError);
    expect(() => canonicalize([1, [n]])).toThrow(TypeError);
    expect(() => canonicalize({ a: { b: n } })).toThrow(TypeError);
  });

  it.each([
    ['a lone high surrogate', '\ud800'],
    ['a lone low surrogate', '\udc00'],
    ['a reversed pair', '\ude00\ud83d'],
    ['a high surrogate at the end', 'abc\ud83d'],
  ])('rejects %s in a value and in a key', (_, text) => {
    expect(() => canonicalize(text)).toThrow(TypeError);
    expect(() => canonicalize({ nested: [text] })).toThrow(TypeError);
    expect(() => canonicalize({ [text]: 1 })).toThrow(TypeError);
    expect(() => canonicalize({ outer: { [text]: 'x' } })).toThrow(TypeError);
  });

  class Wrapped {
    constructor(private readonly n: number) {}
    toJSON() {
      return this.n;
    }
  }
  it.each([
    // eslint-disable-next-line no-sparse-arrays -- the hole is the point
    ['an array with a hole', [1, , 2]],
    ['a typed array', { bytes: new Uint8Array(11) }],
    ['a Date', { at: new Date(0) }],
    ['a class instance with toJSON', { a: new Wrapped(Number.NaN) }],
    ['a Map', new Map([['a', 1]])],
    [
      'an accessor property',
      Object.defineProperty({}, 'n', { get: () => Number.NaN, enumerable: true }),
    ],
  ])('rejects %s: only plain JSON data is canonicalized', (_, value) => {
    expect(() => canonicalize(value)).toThrow(TypeError);
  });

  it('accepts objects without a prototype and plain objects of another realm', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { b: 1, a: [2] });
    expect(canonicalize(bare)).toBe('{"a":[2],"b":1}');
    const foreign: unknown = runInNewContext('({ z: { y: [1, "x"] } })');
    expect(canonicalize(foreign)).toBe('{"z":{"y":[1,"x"]}}');
  });

  it.each([
    ['undefined', undefined],
    ['a function', () => 1],
    ['a symbol', Symbol('s')],
    ['a bigint', 1n],
    ['undefined inside an object', { a: undefined }],
    ['undefined inside an array', [undefined]],
  ])('rejects %s, which has no JSON form, rather than dropping it', (_, value) => {
    expect(() => canonicalize(value)).toThrow(TypeError);
  });

  it('agrees with two other implementations on 5,000 random values', () => {
    // referenceJcs (naive, by the RFC's definition) and the `canonicalize` package (the
    // implementation the RFC's authors publish).
    const random = seededRandom(8785);
    for (let i = 0; i < 5000; i++) {
      const value = randomJson(random);
      const text = canonicalize(value);
      expect(text).toBe(referenceJcs(value));
      expect(text).toBe(rfcReference(value));
    }
  });

  it('agrees with both on long strings and wide objects, which take other paths in the library', () => {
    // Strings of 5,000 characters or more are escaped natively, objects of over 200 keys sorted
    // natively: both must still give the RFC text.
    const long = 'a"\\\u0001\u2028é😀'.repeat(800);
    const wide = Object.fromEntries(
      Array.from({ length: 450 }, (_, i) => [`k${(i * 7919) % 450}\u00e9${i % 3 ? '😀' : ''}`, i]),
    );
    for (const value of [long, { long }, wide, { wide: [wide, long] }]) {
      const text = canonicalize(value);
      expect(text).toBe(referenceJcs(value));
      expect(text).toBe(rfcReference(value));
    }
    expect(long.length).toBeGreaterThan(5000);
  });

  it('agrees with the `canonicalize` package on every accepted vector', () => {
    const inputs = [
      ...accepted(vectors.objects).map((v) => JSON.parse(v.input_json) as unknown),
      ...accepted(vectors.numbers).map((v) => fromBits(v.ieee754)),
      ...accepted(vectors.number_literals).map((v) => JSON.parse(v.json) as unknown),
    ];
    for (const value of inputs) expect(canonicalize(value)).toBe(rfcReference(value));
  });

  it('does not depend on the insertion order of keys', () => {
    const a = { z: 1, a: { y: [3, { q: 1, p: 2 }], x: null } };
    const b = { a: { x: null, y: [3, { p: 2, q: 1 }] }, z: 1 };
    expect(canonicalize(a)).toBe(canonicalize(b));
    expect(canonicalize(a)).toBe('{"a":{"x":null,"y":[3,{"p":2,"q":1}]},"z":1}');
  });
});
