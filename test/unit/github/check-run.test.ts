import { describe, expect, it } from '@jest/globals';
import {
  APPROVE,
  completedCheckRun,
  REEVALUATE,
  REJECT,
  renderWithoutReceipt,
} from '../../../src/github/check-run.js';

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

describe('completedCheckRun', () => {
  const options = {
    decidable: true,
    baseUrl: 'https://svc.example.com',
    completedAt: '2026-10-02T10:00:02.000Z',
  };

  it('an escalated pull request gets Approve and Reject, and the receipt link', () => {
    const output = {
      conclusion: 'action_required' as const,
      title: 'Escalated',
      summary: 'why',
      receiptId: 'dr-1',
    };
    expect(completedCheckRun(output, options)).toEqual({
      status: 'completed',
      conclusion: 'action_required',
      completed_at: '2026-10-02T10:00:02.000Z',
      output: { title: 'Escalated', summary: 'why' },
      actions: [REEVALUATE, APPROVE, REJECT],
      external_id: 'dr-1',
      details_url: 'https://svc.example.com/explorer/receipts/dr-1',
    });
  });

  it('a merge group is never decided from its check: Re-evaluate only', () => {
    const output = {
      conclusion: 'action_required' as const,
      title: 'Escalated',
      summary: 'why',
      receiptId: 'dr-2',
    };
    expect(completedCheckRun(output, { ...options, decidable: false }).actions).toEqual([
      REEVALUATE,
    ]);
  });

  it('an output without a receipt has no receipt link, and a decided one no buttons to decide', () => {
    const completed = completedCheckRun(renderWithoutReceipt('failure', 'Invalid', 'x'), options);
    expect(completed.actions).toEqual([REEVALUATE]);
    expect(completed).not.toHaveProperty('external_id');
    expect(completed).not.toHaveProperty('details_url');
  });
});
