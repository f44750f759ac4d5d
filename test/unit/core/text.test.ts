import { describe, expect, it } from '@jest/globals';
import { clipText, codePointLength } from '../../../src/core/text.js';

const ROCKET = '🚀'; // one code point, two UTF-16 units
const FAMILY = '👨‍👩‍👧‍👦'; // seven code points joined by ZWJ
const FLAG = '🇩🇪'; // two regional indicators

describe('clipText', () => {
  it('leaves text that fits in code points alone, though its UTF-16 length is larger', () => {
    const text = ROCKET.repeat(10);
    expect(text.length).toBe(20);
    expect(clipText(text, 10)).toBe(text);
  });

  it('cuts astral characters whole: never half a surrogate pair', () => {
    // 'a' then rockets: a UTF-16 cut at 10 would end in a lone high surrogate.
    const text = `a${ROCKET.repeat(20)}`;
    const clipped = clipText(text, 10, '…');
    expect(clipped).toBe(`a${ROCKET.repeat(8)}…`);
    expect(clipped.isWellFormed()).toBe(true);
    expect(codePointLength(clipped)).toBe(10);
  });

  it('does not split an emoji sequence or a flag at the boundary', () => {
    expect(clipText(`ab${FAMILY}cd`, 6, '…')).toBe('ab…');
    expect(clipText(`abc${FLAG}${FLAG}`, 5, '…')).toBe('abc…');
    expect(clipText(`abc${FLAG}${FLAG}`, 6, '…')).toBe(`abc${FLAG}…`);
    expect(clipText('abcdé'.normalize('NFD') + 'xyz', 6, '…')).toBe('abcd…');
  });

  it('counts the marker in the limit and answers exactly max code points', () => {
    const marker = '\n\n… (truncated)';
    const text = ROCKET.repeat(70_000);
    const clipped = clipText(text, 65_535, marker);
    expect(codePointLength(clipped)).toBe(65_535);
    expect(clipped.endsWith(`${ROCKET}${marker}`)).toBe(true);
    expect(clipped.isWellFormed()).toBe(true);
  });

  it('cuts one grapheme longer than its window on a code point', () => {
    const zalgo = `a${'\u0301'.repeat(100)}`;
    const clipped = clipText(zalgo, 50);
    expect(codePointLength(clipped)).toBe(50);
  });
});
