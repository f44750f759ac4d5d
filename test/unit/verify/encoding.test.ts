import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { concatBytes, fromBase64, fromHex, toBase64, toHex, utf8Bytes } from '@svc/verify';

describe('base64 (contract §3: standard alphabet, padded)', () => {
  it('agrees with Buffer for every length around the padding boundaries', () => {
    for (let length = 0; length <= 70; length++) {
      const bytes = new Uint8Array(randomBytes(length));
      const text = Buffer.from(bytes).toString('base64');
      expect(toBase64(bytes)).toBe(text);
      expect(fromBase64(text)).toEqual(bytes);
    }
  });

  it('reads the RFC 4648 §10 test vectors', () => {
    const cases: [string, string][] = [
      ['', ''],
      ['f', 'Zg=='],
      ['fo', 'Zm8='],
      ['foo', 'Zm9v'],
      ['foob', 'Zm9vYg=='],
      ['fooba', 'Zm9vYmE='],
      ['foobar', 'Zm9vYmFy'],
    ];
    for (const [plain, encoded] of cases) {
      expect(toBase64(utf8Bytes(plain))).toBe(encoded);
      expect(fromBase64(encoded)).toEqual(utf8Bytes(plain));
    }
  });

  it.each([
    ['non-zero padding bits before ==', 'Zh=='],
    ['non-zero padding bits before =', 'Zm9='],
    ['AB== (one byte with a stray bit)', 'AB=='],
    ['missing padding', 'Zg'],
    ['missing one pad character', 'Zg='],
    ['too much padding', 'Zg==='],
    ['padding in the middle', 'Zg==Zg=='],
    ['the URL-safe alphabet', '-_8='],
    ['white space inside', 'Zm9v Yg=='],
    ['a line break', 'Zm9v\nYmFy'],
    ['a trailing newline', 'Zm9vYmFy\n'],
    ['a length that is not a multiple of 4', 'Zm9vY'],
    ['a non-ASCII letter', 'Zm9vYmF\u00e9'],
  ])('refuses %s', (_, text) => {
    expect(fromBase64(text)).toBeNull();
  });

  it('gives one text form per byte string, so a signature cannot be re-encoded', () => {
    const signature = new Uint8Array(randomBytes(64));
    const text = toBase64(signature);
    const last = text.at(-3)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    // 64 bytes end in "x==", where x holds 2 data bits and 4 bits that must be zero.
    const index = alphabet.indexOf(last);
    const variants = [1, 2, 3].map((low) => alphabet[(index & ~3) | low]!);
    for (const variant of variants.filter((c) => c !== last)) {
      expect(fromBase64(`${text.slice(0, -3)}${variant}==`)).toBeNull();
    }
  });
});

describe('hex and bytes', () => {
  it('writes lowercase hex and reads either case', () => {
    const bytes = Uint8Array.from([0, 1, 0x7f, 0x80, 0xab, 0xff]);
    expect(toHex(bytes)).toBe('00017f80abff');
    expect(fromHex('00017F80ABff')).toEqual(bytes);
  });

  it.each([
    ['an odd length', 'abc'],
    ['a non-hex digit', 'zz'],
    ['a sign', '-1'],
    ['white space', 'ab cd'],
  ])('refuses %s', (_, text) => {
    expect(() => fromHex(text)).toThrow(TypeError);
  });

  it('writes UTF-8, surrogate pairs as one 4-byte sequence', () => {
    expect(toHex(utf8Bytes('é€😀'))).toBe(Buffer.from('é€😀', 'utf8').toString('hex'));
    expect(utf8Bytes('😀')).toHaveLength(4);
  });

  it('concatenates in order', () => {
    expect(concatBytes(Uint8Array.of(1), new Uint8Array(0), Uint8Array.of(2, 3))).toEqual(
      Uint8Array.of(1, 2, 3),
    );
  });
});
