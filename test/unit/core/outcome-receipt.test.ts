import { describe, expect, it } from '@jest/globals';
import { receiptHash, verifyReceipt, type VerifyResult } from '@svc/verify';
import { buildOutcomeParts, type OutcomeDecision } from '../../../src/core/outcome.js';
import {
  sealReceipt,
  signReceipt,
  type Receipt,
  type ChainHead,
} from '../../../src/core/receipt.js';
import { toolCallOf } from '../../../src/core/tool-call.js';
import { signClaim } from '../../contract/ledger-fixtures.js';
import { newServerKey } from '../../support/harness.js';
import { nobleVerifies } from '../../support/receipts.js';
import { toolCallClaim, type ToolCallKind } from '../../support/tool-calls.js';

const key = newServerKey();
const HEAD: ChainHead = { sequence: 4, receipt_hash: `sha256:${'1'.repeat(64)}` };
const submitter = { kind: 'api_key', key_id: `kid_${'2'.repeat(26)}` } as const;

function decisionOf(kind: ToolCallKind): OutcomeDecision {
  const signed = signClaim(toolCallClaim({ kind }), key);
  const entry = signed.entryAt(HEAD);
  return {
    receipt: entry.receipt,
    claim: entry.claim,
    config: entry.evaluation.config,
    allowed: entry.receipt.policy.verdict === 'ALLOWED',
  };
}

function outcome(decision: OutcomeDecision | null, call = decision && toolCallOf(decision.claim)) {
  const parts = buildOutcomeParts({
    receiptId: 'dr-01JHGZ3Q4W5E6R7T8Y9V0A1B2C',
    issuedAt: '2026-01-15T10:00:01.000Z',
    decision,
    call: call ?? {
      sessionId: 'sess-1',
      harness: 'codex',
      toolName: 'shell',
      inputDigest: `sha256:${'c'.repeat(64)}`,
    },
    report: { status: 'failed', exit_code: 2, output_digest: `sha256:${'d'.repeat(64)}` },
    submitter,
  });
  const receipt = sealReceipt(
    parts.draft,
    { sequence: 5, receipt_hash: `sha256:${'e'.repeat(64)}` },
    {
      signer: key,
      log: 'svc/test',
    },
  );
  return { parts, receipt };
}

const verify = (receipt: unknown, parent?: Receipt | null): VerifyResult =>
  verifyReceipt(receipt, {
    publicKey: key.publicKeyRaw,
    keyId: key.keyId,
    ...(parent === undefined
      ? {}
      : {
          parent:
            parent === null
              ? { missing: 'no parent' }
              : { receiptId: parent.receipt_id, receiptHash: receiptHash(parent) },
        }),
  });
const statusOf = (result: VerifyResult, name: string) =>
  result.checks.find((c) => c.name === name)?.status;

describe('outcome receipts (contract §12)', () => {
  it('the outcome of an allowed call is ALLOWED, signs its link and verifies with @noble', async () => {
    const decision = decisionOf('allowed');
    const { receipt, parts } = outcome(decision);
    expect(receipt.signed_fields.fields.at(-1)).toBe('outcome');
    expect(receipt.outcome).toEqual({
      parent_receipt_id: decision.receipt.receipt_id,
      parent_receipt_hash: decision.receipt.chain.receipt_hash,
      status: 'failed',
      exit_code: 2,
      output_digest: `sha256:${'d'.repeat(64)}`,
    });
    expect(receipt.policy).toMatchObject({ verdict: 'ALLOWED', status: 'PASS', checks: [] });
    expect(parts.evaluation.policy.rules).toEqual([
      expect.objectContaining({ rule: 'ran_without_allow', passed: true }),
    ]);
    expect(receipt.claim_id).toBe(`outcome:${decision.receipt.receipt_id}`);
    expect(await nobleVerifies(receipt, key.publicKeyRaw)).toBe(true);
    const result = verify(receipt, decision.receipt);
    expect(result.valid).toBe(false); // no ledger consulted: hash_integrity SKIPPED
    expect(statusOf(result, 'signature_valid')).toBe('PASS');
    expect(statusOf(result, 'outcome_valid')).toBe('PASS');
    expect(statusOf(result, 'parent_link')).toBe('PASS');
    expect(result.checks.filter((c) => c.status === 'FAIL')).toEqual([]);
  });

  it.each(['blocked', 'escalated'] as const)(
    'the outcome of a %s call is BLOCKED by ran_without_allow',
    (kind) => {
      const { receipt } = outcome(decisionOf(kind));
      expect(receipt.policy.verdict).toBe('BLOCKED');
      expect(receipt.admissibility.status).toBe('REJECTED');
      expect(receipt.policy.checks).toEqual([
        expect.objectContaining({ rule: 'ran_without_allow', passed: false }),
      ]);
      expect(statusOf(verify(receipt), 'outcome_valid')).toBe('PASS');
    },
  );

  it('an approved escalation allows the call and names the approval', () => {
    const decision = { ...decisionOf('escalated'), allowed: true, approvedBy: 'dr-approval' };
    const { receipt, parts } = outcome(decision);
    expect(receipt.policy.verdict).toBe('ALLOWED');
    expect(parts.evaluation.policy.reason).toContain('dr-approval');
  });

  it('a call the ledger never decided is recorded, BLOCKED, with no parent to link', () => {
    const { receipt, parts } = outcome(null);
    expect(receipt.outcome).toMatchObject({ parent_receipt_id: null, parent_receipt_hash: null });
    expect(receipt.policy.verdict).toBe('BLOCKED');
    expect(toolCallOf(parts.claim)).toMatchObject({ sessionId: 'sess-1', toolName: 'shell' });
    const result = verify(receipt);
    expect(statusOf(result, 'signature_valid')).toBe('PASS');
    expect(statusOf(result, 'outcome_valid')).toBe('PASS');
    expect(statusOf(result, 'parent_link')).toBe('SKIPPED');
  });

  it('a changed status breaks the signature', () => {
    const { receipt } = outcome(decisionOf('allowed'));
    const tampered = { ...receipt, outcome: { ...receipt.outcome!, status: 'succeeded' } };
    expect(statusOf(verify(tampered), 'signature_valid')).toBe('FAIL');
  });

  it('a link to another parent fails parent_link', () => {
    const { receipt } = outcome(decisionOf('allowed'));
    const other = decisionOf('allowed').receipt;
    expect(statusOf(verify(receipt, other), 'parent_link')).toBe('FAIL');
    expect(statusOf(verify(receipt, null), 'parent_link')).toBe('FAIL');
  });

  // Signed by the key, so only the contract's rules on the member can refuse them.
  const resigned = (receipt: Receipt, change: (r: Record<string, unknown>) => void) => {
    const copy = structuredClone(receipt) as unknown as Record<string, unknown>;
    change(copy);
    delete copy.attestations;
    delete copy.chain;
    return { ...signReceipt(copy as never, key), chain: receipt.chain };
  };

  it.each([
    [
      'an unknown status',
      (r: Record<string, unknown>) => ((r.outcome as Record<string, unknown>).status = 'ran'),
    ],
    [
      'a fractional exit code',
      (r: Record<string, unknown>) => ((r.outcome as Record<string, unknown>).exit_code = 1.5),
    ],
    [
      'a malformed output digest',
      (r: Record<string, unknown>) =>
        ((r.outcome as Record<string, unknown>).output_digest = 'md5:x'),
    ],
    [
      'a member the contract does not define',
      (r: Record<string, unknown>) => ((r.outcome as Record<string, unknown>).approved = true),
    ],
    [
      'no decision but an ALLOWED verdict',
      (r: Record<string, unknown>) => {
        const o = r.outcome as Record<string, unknown>;
        o.parent_receipt_id = null;
        o.parent_receipt_hash = null;
      },
    ],
  ])('outcome_valid fails for %s, even when signed', (_name, change) => {
    const { receipt } = outcome(decisionOf('allowed'));
    const forged = resigned(receipt, change);
    const result = verify(forged);
    expect(statusOf(result, 'signature_valid')).toBe('PASS');
    expect(statusOf(result, 'outcome_valid')).toBe('FAIL');
  });
});
