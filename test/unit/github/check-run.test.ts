import { describe, expect, it } from '@jest/globals';
import { renderWithoutReceipt } from '../../../src/github/check-run.js';

// GitHub's limits on a check run's output, in characters.
const MAX_TITLE = 255;
const MAX_SUMMARY = 65_535;
const ROCKET = '🚀';
const codePoints = (text: string) => [...text].length;

describe('check-run output within GitHub’s limits', () => {
  it('a title with an emoji at the limit is cut before it, never through it', () => {
    // 254 letters, then emoji: a UTF-16 cut falls inside the first rocket.
    const title = `${'t'.repeat(MAX_TITLE - 1)}${ROCKET.repeat(5)}`;
    const out = renderWithoutReceipt('failure', title, 'detail');
    expect(out.title.isWellFormed()).toBe(true);
    expect(out.title).toBe(`${'t'.repeat(MAX_TITLE - 1)}…`);
    expect(codePoints(out.title)).toBe(MAX_TITLE);
  });

  it('a title of emoji keeps as many as GitHub counts, not half as many', () => {
    const out = renderWithoutReceipt('neutral', ROCKET.repeat(300), 'detail');
    expect(out.title).toBe(`${ROCKET.repeat(MAX_TITLE - 1)}…`);
  });

  it('a summary of astral characters is cut on code points to exactly the limit', () => {
    const detail = `x${ROCKET.repeat(MAX_SUMMARY)}`;
    const out = renderWithoutReceipt('failure', 'Too long', detail);
    expect(out.summary.isWellFormed()).toBe(true);
    expect(codePoints(out.summary)).toBe(MAX_SUMMARY);
    // More UTF-16 units than the limit: it counts characters, as GitHub does.
    expect(out.summary.length).toBeGreaterThan(MAX_SUMMARY);
    expect(out.summary.endsWith(`${ROCKET}\n\n… (truncated)`)).toBe(true);
  });

  it('text within the limits is unchanged', () => {
    const out = renderWithoutReceipt('neutral', `Not gated ${ROCKET}`, `detail ${ROCKET}`);
    expect(out).toEqual({
      conclusion: 'neutral',
      title: `Not gated ${ROCKET}`,
      summary: `detail ${ROCKET}`,
    });
  });
});
