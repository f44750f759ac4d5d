import { describe, expect, it } from '@jest/globals';
import {
  loosens,
  PREVIEW_HEADING,
  renderPreview,
  renderWithoutReceipt,
  type Preview,
} from '../../../src/github/check-run.js';

const base = renderWithoutReceipt('failure', 'BLOCKED · REJECTED', '## BLOCKED');
const evaluated = (verdict: 'ALLOWED' | 'ESCALATED' | 'BLOCKED'): Preview => ({
  kind: 'evaluated',
  verdict,
  admissibility: 'ACCEPTED',
  policy: 'permissive',
  failing: verdict === 'ALLOWED' ? [] : [{ rule: 'rule:infra', reason: 'needs 2 approvals' }],
});

describe('the preview of a proposed .github/svc.yml', () => {
  it.each([
    ['BLOCKED', 'ESCALATED', true],
    ['BLOCKED', 'ALLOWED', true],
    ['ESCALATED', 'ALLOWED', true],
    ['ESCALATED', 'ESCALATED', false],
    ['ALLOWED', 'BLOCKED', false],
    ['ESCALATED', 'BLOCKED', false],
  ] as const)('%s under the base, %s proposed: loosens is %s', (now, then, expected) => {
    expect(loosens(now, evaluated(then))).toBe(expected);
  });

  it('not gated loosens anything but ALLOWED; an invalid file loosens nothing', () => {
    expect(loosens('BLOCKED', { kind: 'not_gated', author: 'bot' })).toBe(true);
    expect(loosens('ALLOWED', { kind: 'not_gated', author: 'bot' })).toBe(false);
    expect(loosens('BLOCKED', { kind: 'invalid', problem: 'x' })).toBe(false);
  });

  it('keeps the verdict, adds the section with the failing rules, and keeps the conclusion', () => {
    const out = renderPreview(base, { verdict: 'ALLOWED' }, evaluated('BLOCKED'));
    expect(out.conclusion).toBe('failure');
    expect(out.title).toBe(base.title);
    expect(out.summary.startsWith('## BLOCKED\n')).toBe(true);
    expect(out.summary).toContain(`### ${PREVIEW_HEADING}`);
    expect(out.summary).toContain('**BLOCKED · ACCEPTED** under policy **permissive**');
    expect(out.summary).toContain('| ❌ | `rule:infra` | needs 2 approvals |');
    expect(out.summary).not.toContain('loosens');
  });

  it('says plainly when the change loosens the gate', () => {
    const out = renderPreview(base, { verdict: 'BLOCKED' }, evaluated('ALLOWED'));
    expect(out.summary).toContain(
      '**This change loosens the gate**: under the proposed file this pull request would be ALLOWED instead of BLOCKED',
    );
  });

  it('escapes what the pull request controls', () => {
    const out = renderPreview(
      base,
      { verdict: 'BLOCKED' },
      {
        kind: 'invalid',
        problem: 'policy: unknown policy "[x](https://evil.example)"',
      },
    );
    expect(out.summary).toContain('**Invalid configuration**');
    expect(out.summary).not.toContain('[x](https://evil.example)');
  });
});
