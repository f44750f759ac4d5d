import { describe, expect, it } from '@jest/globals';
import { sessionCoverage } from '../../../src/core/session-coverage.js';
import type { SessionRecord } from '../../../src/core/session-record.js';

let sequence = 0;
const record = (
  kind: SessionRecord['kind'],
  verdict: SessionRecord['verdict'],
  extra: Partial<SessionRecord> = {},
): SessionRecord => {
  sequence += 1;
  return {
    receipt_id: `dr-${sequence}`,
    sequence,
    issued_at: '2026-01-15T10:00:00.000Z',
    kind,
    verdict,
    tool_name: 'Bash',
    input_digest: `sha256:${'a'.repeat(64)}`,
    parent_receipt_id: null,
    ran_without_allow: false,
    ...extra,
  };
};
const outcomeOf = (decision: SessionRecord, extra: Partial<SessionRecord> = {}) =>
  record('outcome', 'ALLOWED', { parent_receipt_id: decision.receipt_id, ...extra });
const bypass = (parent: string | null = null) =>
  record('outcome', 'BLOCKED', { parent_receipt_id: parent, ran_without_allow: true });

describe('sessionCoverage', () => {
  it('an empty session is covered and counts nothing', () => {
    expect(sessionCoverage([], 'claude-code')).toEqual({
      decisions: { ALLOWED: 0, BLOCKED: 0, ESCALATED: 0 },
      dispositions: 0,
      outcomes: 0,
      ran_without_allow: 0,
      reports_outcomes: false,
      missing_outcomes: [],
      covered: true,
    });
  });

  it('counts decisions by verdict, dispositions and outcomes apart', () => {
    const allowed = record('decision', 'ALLOWED');
    const escalated = record('decision', 'ESCALATED');
    const coverage = sessionCoverage(
      [
        allowed,
        record('decision', 'BLOCKED'),
        escalated,
        record('disposition', 'ALLOWED', { parent_receipt_id: escalated.receipt_id }),
        outcomeOf(allowed),
      ],
      'claude-code',
    );
    expect(coverage.decisions).toEqual({ ALLOWED: 1, BLOCKED: 1, ESCALATED: 1 });
    expect(coverage.dispositions).toBe(1);
    expect(coverage.outcomes).toBe(1);
    expect(coverage.covered).toBe(true);
  });

  it('a harness that reports no outcomes leaves allowed decisions covered', () => {
    const coverage = sessionCoverage(
      [record('decision', 'ALLOWED'), record('decision', 'ALLOWED')],
      'claude-code',
    );
    expect(coverage.reports_outcomes).toBe(false);
    expect(coverage.missing_outcomes).toEqual([]);
    expect(coverage.covered).toBe(true);
  });

  it('where the harness reports outcomes, an allowed decision without one is not covered', () => {
    const first = record('decision', 'ALLOWED');
    const second = record('decision', 'ALLOWED');
    const coverage = sessionCoverage([first, outcomeOf(first), second], 'claude-code');
    expect(coverage.reports_outcomes).toBe(true);
    expect(coverage.missing_outcomes).toEqual([second.receipt_id]);
    expect(coverage.covered).toBe(false);
  });

  it('a blocked or escalated decision needs no outcome', () => {
    const allowed = record('decision', 'ALLOWED');
    const coverage = sessionCoverage(
      [allowed, record('decision', 'BLOCKED'), record('decision', 'ESCALATED'), outcomeOf(allowed)],
      'claude-code',
    );
    expect(coverage.covered).toBe(true);
  });

  it('one ran_without_allow outcome makes the session not covered', () => {
    const blocked = record('decision', 'BLOCKED');
    for (const stray of [bypass(blocked.receipt_id), bypass(null)]) {
      const coverage = sessionCoverage([blocked, stray], 'claude-code');
      expect(coverage.ran_without_allow).toBe(1);
      expect(coverage.covered).toBe(false);
    }
  });

  it('the outcome of an escalated call that was approved covers it', () => {
    const escalated = record('decision', 'ESCALATED');
    const coverage = sessionCoverage(
      [
        escalated,
        record('disposition', 'ALLOWED', { parent_receipt_id: escalated.receipt_id }),
        outcomeOf(escalated),
      ],
      'claude-code',
    );
    expect(coverage).toMatchObject({ outcomes: 1, ran_without_allow: 0, covered: true });
  });

  it('waits for no outcome of a Cursor file read, which Cursor reports nothing after', () => {
    const shell = record('decision', 'ALLOWED', { tool_name: 'Shell' });
    const read = record('decision', 'ALLOWED', { tool_name: 'Read' });
    const records = [shell, outcomeOf(shell, { tool_name: 'Shell' }), read];
    expect(sessionCoverage(records, 'cursor')).toMatchObject({
      missing_outcomes: [],
      covered: true,
    });
    // Elsewhere a read has its PostToolUse, and one not reported leaves the session uncovered.
    expect(sessionCoverage(records, 'claude-code')).toMatchObject({
      missing_outcomes: [read.receipt_id],
      covered: false,
    });
  });
});
