import { describe, expect, it } from '@jest/globals';
import { APPROVAL_SOURCE_ID, approvalOf, withApprovalSource } from '../../../src/core/approval.js';
import { evaluateClaim } from '../../../src/core/evaluation.js';
import { resolvePolicy } from '../../../src/core/policy-config.js';
import { claimWith } from '../../support/claims.js';
import { toolCallClaim } from '../../support/tool-calls.js';

const approval = {
  receiptId: 'dr-01JHGZ3Q4W5E6R7T8Y9V0A1B2C',
  receiptHash: `sha256:${'a'.repeat(64)}`,
};
const evaluate = (claim: ReturnType<typeof toolCallClaim>) =>
  evaluateClaim(claim, resolvePolicy(claim.policyConfig));

describe('argument-bound approval in the evaluation (contract §12)', () => {
  it('an escalated tool call that cites an approval is ALLOWED by rule:approved, and replays', () => {
    const claim = toolCallClaim({ kind: 'escalated' });
    expect(evaluate(claim).policy.verdict).toBe('ESCALATED');
    const approved = evaluate(withApprovalSource(claim, approval));
    expect(approved.policy.verdict).toBe('ALLOWED');
    expect(approved.admissibility.status).toBe('ACCEPTED');
    expect(approved.replay).toMatchObject({ passed: true, deterministic: true });
    expect(approved.policy.rules.at(-1)).toEqual({
      rule: 'rule:approved',
      passed: true,
      reason: `disposition ${approval.receiptId} approved this input in this session`,
    });
  });

  it('an approval never lifts a BLOCKED verdict', () => {
    const result = evaluate(withApprovalSource(toolCallClaim({ kind: 'blocked' }), approval));
    expect(result.policy.verdict).toBe('BLOCKED');
    expect(result.policy.rules.map((r) => r.rule)).toContain('rule:approved');
  });

  it('the source is read only from tool calls, and only when well formed', () => {
    const cited = withApprovalSource(toolCallClaim(), approval);
    expect(approvalOf(cited)).toEqual(approval);
    // A merge claim citing an approval approves nothing.
    const merge = claimWith();
    expect(approvalOf(withApprovalSource(merge, approval))).toBeNull();
    const badHash = withApprovalSource(toolCallClaim(), { ...approval, receiptHash: 'sha256:x' });
    expect(approvalOf(badHash)).toBeNull();
    expect(
      evaluate(
        withApprovalSource(toolCallClaim({ kind: 'escalated' }), {
          ...approval,
          receiptId: 'dr-x',
        }),
      ).policy.verdict,
    ).toBe('ESCALATED');
  });

  it('citing again replaces the earlier citation', () => {
    const twice = withApprovalSource(withApprovalSource(toolCallClaim(), approval), {
      ...approval,
      receiptHash: `sha256:${'b'.repeat(64)}`,
    });
    expect(twice.sources.filter((s) => s.id === APPROVAL_SOURCE_ID)).toHaveLength(1);
    expect(approvalOf(twice)?.receiptHash).toBe(`sha256:${'b'.repeat(64)}`);
  });
});
