import { describe, expect, it } from '@jest/globals';
import { createPrivateKey, sign as nodeSign } from 'node:crypto';
// Imported before @noble/ed25519 is used: it installs the SHA-512 that noble's sync API needs.
import '@svc/verify';
import * as ed from '@noble/ed25519';
import { verifyReceipt } from '@svc/verify';
import { claimInputSchema } from '../../../src/core/claim-schema.js';
import { evaluateClaim } from '../../../src/core/evaluation.js';
import type { Receipt } from '../../../src/core/receipt.js';
import {
  clone,
  loadFixture,
  PINNED_V2_FIELDS,
  referenceHash,
  referenceJcs,
  unhex,
  utf8,
} from './reference.js';

interface V2Vector {
  name: string;
  claim: Record<string, unknown>;
  policy_name: string;
  named_policy: Record<string, unknown>;
  effective_policy: Record<string, unknown>;
  rules: unknown[];
  receipt: Receipt & Record<string, unknown>;
}
const fixture = loadFixture<{
  signer: { secret_key: string; public_key: string; key_id: string };
  receipts: { receipt: Receipt }[];
  receipts_v2: V2Vector[];
}>('receipt-vectors.json');
const { signer } = fixture;

const privateKey = createPrivateKey({
  key: Buffer.from(`302e020100300506032b657004220420${signer.secret_key}`, 'hex'),
  format: 'der',
  type: 'pkcs8',
});
const publicKey = unhex(signer.public_key);
// Tampering reaches into nested members of untyped JSON.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = Record<string, any>;
const coreOf = (receipt: Record<string, unknown>) =>
  Object.fromEntries(PINNED_V2_FIELDS.map((f) => [f, receipt[f]]));

describe.each(fixture.receipts_v2.map((v) => [v.name, v] as const))('%s', (_, v) => {
  const { receipt } = v;
  const core = coreOf(receipt);
  const message = utf8(referenceJcs(core));
  const signature = new Uint8Array(Buffer.from(receipt.attestations[0]!.signature, 'base64'));
  const chainHash = referenceHash({ core, attestations: receipt.attestations });

  it('declares receipt-core-v2 with its exact field list', () => {
    expect(receipt.signed_fields).toEqual({
      contract: 'receipt-core-v2',
      fields: PINNED_V2_FIELDS,
    });
  });

  it('is signed by the vector key over UTF-8(JCS(core)), position included', () => {
    expect(ed.verify(signature, message, publicKey, { zip215: false })).toBe(true);
    expect(nodeSign(null, message, privateKey).toString('base64')).toBe(
      receipt.attestations[0]!.signature,
    );
  });

  it('names the policy: config_hash = H(effective policy), overrides = effective differs from named', () => {
    expect(receipt.policy.name).toBe(v.policy_name);
    expect(receipt.policy.config_hash).toBe(referenceHash(v.effective_policy));
    expect(receipt.policy.overrides).toBe(
      referenceJcs(v.effective_policy) !== referenceJcs(v.named_policy),
    );
    expect(receipt.replay.replay_hash).toBe(
      referenceHash({
        inputs_hash: referenceHash(v.claim),
        policy: v.effective_policy,
        verdict: receipt.policy.verdict,
        rules: v.rules,
      }),
    );
    const validated = claimInputSchema.parse(v.claim);
    expect(evaluateClaim(validated, v.effective_policy as never).policy.rules).toEqual(v.rules);
  });

  it('signs a position equal to its chain members, and chain.receipt_hash = H({core, attestations})', () => {
    expect(receipt.position).toEqual({
      log: 'svc.example.com/ledger',
      sequence: receipt.chain.sequence,
      previous_receipt_hash: receipt.chain.previous_receipt_hash,
    });
    expect(receipt.chain.receipt_hash).toBe(chainHash);
  });

  it('verifies with the shared verifier, reports what is signed, and binds expectations', () => {
    const options = { publicKey, keyId: signer.key_id, ledgerHash: chainHash };
    const result = verifyReceipt(receipt, options);
    expect(result.valid).toBe(true);
    expect(result.checks.find((c) => c.name === 'chain_linkage')?.status).toBe('PASS');
    expect(result.signed).toEqual({
      contract: 'receipt-core-v2',
      submitter: receipt.submitter,
      policy: {
        name: receipt.policy.name,
        config_hash: receipt.policy.config_hash,
        overrides: receipt.policy.overrides,
      },
      position: receipt.position,
    });
    const bound = verifyReceipt(receipt, {
      ...options,
      expect: { policy: v.policy_name, configHash: referenceHash(v.effective_policy) },
    });
    expect(bound.checks.find((c) => c.name === 'policy_binding')?.status).toBe('PASS');
    const wrong = verifyReceipt(receipt, { ...options, expect: { policy: 'permissive' } });
    expect(wrong.valid).toBe(false);
    expect(wrong.checks.find((c) => c.name === 'policy_binding')).toMatchObject({
      status: 'FAIL',
      detail: `policy "${v.policy_name}" is not the expected "permissive"`,
    });
  });

  it.each([
    ['policy.name', (r: Loose) => (r.policy.name = 'permissive')],
    ['policy.config_hash', (r: Loose) => (r.policy.config_hash = `sha256:${'0'.repeat(64)}`)],
    ['policy.overrides', (r: Loose) => (r.policy.overrides = !r.policy.overrides)],
    [
      'submitter',
      (r: Loose) => (r.submitter = { kind: 'api_key', key_id: 'kid_01JNF0B8Q4W5E6R7T8Y9V0ZZZZ' }),
    ],
    ['position.sequence', (r: Loose) => (r.position.sequence += 1)],
    ['position.log', (r: Loose) => (r.position.log = 'evil.example/ledger')],
    [
      'position.previous_receipt_hash',
      (r: Loose) => (r.position.previous_receipt_hash = `sha256:${'1'.repeat(64)}`),
    ],
  ])('tampering with %s breaks the signature and the hash', (_name, mutate) => {
    const tampered = clone(receipt) as Loose;
    mutate(tampered);
    const tamperedCore = utf8(referenceJcs(coreOf(tampered)));
    expect(ed.verify(signature, tamperedCore, publicKey, { zip215: false })).toBe(false);
    const result = verifyReceipt(tampered, {
      publicKey,
      keyId: signer.key_id,
      ledgerHash: chainHash,
    });
    expect(result.valid).toBe(false);
    expect(result.signed).toBeNull();
    expect(result.checks.find((c) => c.name === 'signature_valid')?.status).toBe('FAIL');
    expect(result.checks.find((c) => c.name === 'hash_integrity')?.status).toBe('FAIL');
  });
});

describe('v1 then v2: one chain', () => {
  it('continues the v1 receipts without a gap, each linked to the previous receipt_hash', () => {
    const chains = [...fixture.receipts, ...fixture.receipts_v2].map((v) => v.receipt.chain);
    chains.forEach((chain, i) => {
      expect(chain.sequence).toBe(i + 1);
      expect(chain.previous_receipt_hash).toBe(i === 0 ? null : chains[i - 1]!.receipt_hash);
    });
    expect(fixture.receipts_v2.length).toBeGreaterThanOrEqual(2);
  });

  it('covers both submitter kinds and a policy overridden by the claim', () => {
    const kinds = fixture.receipts_v2.map((v) => (v.receipt.submitter as { kind: string }).kind);
    expect(new Set(kinds)).toEqual(new Set(['api_key', 'github_app']));
    expect(fixture.receipts_v2.some((v) => v.receipt.policy.overrides)).toBe(true);
  });
});
