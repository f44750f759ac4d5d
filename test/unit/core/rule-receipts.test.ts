import { describe, expect, it } from '@jest/globals';
import {
  decisionOf,
  hashCanonical,
  parsePublicKeyPem,
  parseReceiptInput,
  verifyOffline,
} from '@svc/verify';
import { evaluateClaim } from '../../../src/core/evaluation.js';
import { policyConfigSchema, resolvePolicy } from '../../../src/core/policy-config.js';
import { receiptSchema } from '../../../src/core/receipt-schema.js';
import { buildReceiptDraft, sealReceipt } from '../../../src/core/receipt.js';
import { newServerKey } from '../../support/harness.js';
import { claimWith } from '../../support/claims.js';

const serverKey = newServerKey();
const key = parsePublicKeyPem(serverKey.publicKeyPem);

describe('receipts of policies with conditional rules', () => {
  const config = resolvePolicy(
    policyConfigSchema.parse({
      rules: [
        { name: 'needs-review', require: { approvals: { count: 1 } } },
        { name: 'not-infra', if: { paths: 'infra/**' }, require: { checks: ['plan'] } },
      ],
    }),
  );
  const claim = claimWith();
  const evaluation = evaluateClaim(claim, config);
  const receipt = sealReceipt(
    buildReceiptDraft({
      receiptId: 'dr-01JH8Z6Q3V9W2X4Y5Z6A7B8C9E',
      issuedAt: '2026-01-15T10:00:00.000Z',
      claim,
      evaluation,
      policy: { name: 'reviewed', config_hash: hashCanonical(config), overrides: false },
      submitter: { kind: 'api_key', key_id: 'kid_01JH8Z6Q3V9W2X4Y5Z6A7B8C9D' },
    }),
    { sequence: 6, receipt_hash: `sha256:${'b'.repeat(64)}` },
    { signer: serverKey, log: 'svc.example/ledger' },
  );

  it('sign the failed conditional rule by its rule:<name>', () => {
    expect(receipt.policy.verdict).toBe('BLOCKED');
    expect(receipt.policy.checks).toEqual([
      { rule: 'rule:needs-review', passed: false, reason: 'applies; 0 approvals, 1 required' },
    ]);
  });

  it('pass the receipt schema, the strict parser and offline verification', () => {
    expect(receiptSchema.safeParse(receipt).success).toBe(true);
    const input = parseReceiptInput(JSON.stringify(receipt));
    const result = verifyOffline(input.receipt, key, { configHash: hashCanonical(config) });
    expect(result.checks.filter((c) => c.status === 'FAIL')).toEqual([]);
    expect(result.valid).toBe(true);
    expect(decisionOf(input.receipt, result)).toMatchObject({
      verdict: 'BLOCKED',
      proceed: false,
      failedRules: [{ rule: 'rule:needs-review', reason: 'applies; 0 approvals, 1 required' }],
    });
  });

  it('the receipt schema refuses a rule name that is neither a threshold rule nor rule:<name>', () => {
    const forged = structuredClone(receipt) as unknown as {
      policy: { checks: { rule: string }[] };
    };
    forged.policy.checks[0]!.rule = 'needs-review';
    expect(receiptSchema.safeParse(forged).success).toBe(false);
  });
});
