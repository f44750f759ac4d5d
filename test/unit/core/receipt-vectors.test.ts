import { describe, expect, it } from '@jest/globals';
import { createPrivateKey, createPublicKey, sign as nodeSign } from 'node:crypto';
// Imported before @noble/ed25519 is used: it installs the SHA-512 that noble's sync API needs.
import * as ed from '@noble/ed25519';
import { rawPublicKeyFromPem, verifyReceipt } from '@svc/verify';
import { createNativeStrictVerify } from '@svc/verify/node';
import { claimInputSchema } from '../../../src/core/claim-schema.js';
import { evaluateClaim } from '../../../src/core/evaluation.js';
import type { Receipt } from '../../../src/core/receipt.js';
import {
  hex,
  loadFixture,
  PINNED_V1_FIELDS,
  referenceHash,
  referenceJcs,
  sha256Hex,
  unhex,
  utf8,
} from './reference.js';

interface ReceiptVector {
  name: string;
  claim: Record<string, unknown>;
  effective_policy: Record<string, unknown>;
  rules: unknown[];
  receipt: Receipt;
}
const fixture = loadFixture<{
  signer: { secret_key: string; public_key: string; public_key_pem: string; key_id: string };
  receipts: ReceiptVector[];
}>('receipt-vectors.json');
const { signer } = fixture;

// Contract §5, written out rather than imported from the code under test (the signed members
// are pinned in ./reference.ts).
const DEFAULTS = {
  minSources: 1,
  minSourceTypes: 1,
  minConfidence: 0.5,
  requireProvenance: false,
  requireReplay: true,
  requireHumanApproval: false,
  maxRiskScope: 5,
};

const privateKey = createPrivateKey({
  key: Buffer.from(`302e020100300506032b657004220420${signer.secret_key}`, 'hex'),
  format: 'der',
  type: 'pkcs8',
});

describe('receipt vectors: the signer', () => {
  it('is the key of the seed, with the PEM and key_id node:crypto gives it', () => {
    const publicKey = createPublicKey(privateKey);
    const spki = publicKey.export({ format: 'der', type: 'spki' });
    expect(spki.subarray(12).toString('hex')).toBe(signer.public_key);
    expect(publicKey.export({ format: 'pem', type: 'spki' })).toBe(signer.public_key_pem);
    expect(signer.key_id).toBe(`sha256:${sha256Hex(spki)}`);
    expect(hex(rawPublicKeyFromPem(signer.public_key_pem)!)).toBe(signer.public_key);
  });
});

describe.each(fixture.receipts.map((v) => [v.name, v] as const))('receipt vector: %s', (_, v) => {
  const { receipt } = v;
  const core = Object.fromEntries(PINNED_V1_FIELDS.map((f) => [f, (receipt as never)[f]]));
  const message = utf8(referenceJcs(core));
  const signature = new Uint8Array(Buffer.from(receipt.attestations[0]!.signature, 'base64'));
  const ledgerHash = referenceHash({
    evidence: receipt.evidence,
    policy: receipt.policy,
    replay: receipt.replay,
    attestations: receipt.attestations,
  });

  it('declares receipt-core-v1 and is attested by the vector key', () => {
    expect(receipt.signed_fields).toEqual({
      contract: 'receipt-core-v1',
      fields: PINNED_V1_FIELDS,
    });
    expect(receipt.attestations[0]).toMatchObject({
      signer: 'svc-server',
      algorithm: 'Ed25519',
      key_id: signer.key_id,
    });
  });

  it('has a signature @noble/ed25519 accepts over UTF-8(JCS(core))', () => {
    expect(ed.verify(signature, message, unhex(signer.public_key), { zip215: false })).toBe(true);
    expect(createNativeStrictVerify()(signature, message, unhex(signer.public_key))).toBe(true);
  });

  it('has exactly the signature node:crypto makes over that message (Ed25519 is deterministic)', () => {
    expect(nodeSign(null, message, privateKey).toString('base64')).toBe(
      receipt.attestations[0]!.signature,
    );
  });

  it('commits to its claim: inputs_hash = H(claim), as sent and as validated', () => {
    expect(receipt.evidence.inputs_hash).toBe(referenceHash(v.claim));
    const validated = claimInputSchema.parse(v.claim);
    expect(referenceHash(validated)).toBe(receipt.evidence.inputs_hash);
    expect(evaluateClaim(validated, v.effective_policy as never).inputs_hash).toBe(
      receipt.evidence.inputs_hash,
    );
  });

  it('uses the contract defaults under the claim policyConfig', () => {
    expect(v.effective_policy).toEqual({
      ...DEFAULTS,
      ...((v.claim.policyConfig as object | undefined) ?? {}),
    });
  });

  it('has replay_hash = H({ inputs_hash, policy, verdict, rules }) and checks = failed rules', () => {
    expect(receipt.replay.replay_hash).toBe(
      referenceHash({
        inputs_hash: receipt.evidence.inputs_hash,
        policy: v.effective_policy,
        verdict: receipt.policy.verdict,
        rules: v.rules,
      }),
    );
    expect(receipt.policy.checks).toEqual(
      (v.rules as { passed: boolean }[]).filter((r) => !r.passed),
    );
  });

  it('has chain.receipt_hash = H({ evidence, policy, replay, attestations })', () => {
    expect(receipt.chain.receipt_hash).toBe(ledgerHash);
  });

  it('verifies as valid with the ledger hash, and only then', () => {
    const options = {
      publicKey: unhex(signer.public_key),
      keyId: signer.key_id,
    };
    expect(verifyReceipt(receipt, { ...options, ledgerHash }).valid).toBe(true);
    expect(verifyReceipt(receipt, { ...options, ledgerHash: undefined }).valid).toBe(false);
  });
});

describe('receipt vectors: the chain', () => {
  it('starts at sequence 1 and links each receipt to the previous receipt_hash', () => {
    const chains = fixture.receipts.map((v) => v.receipt.chain);
    expect(chains.length).toBeGreaterThanOrEqual(2);
    chains.forEach((chain, i) => {
      expect(chain.sequence).toBe(i + 1);
      expect(chain.previous_receipt_hash).toBe(i === 0 ? null : chains[i - 1]!.receipt_hash);
    });
  });

  it('covers every verdict family a verifier meets: accepted and rejected', () => {
    const statuses = fixture.receipts.map((v) => v.receipt.admissibility.status);
    expect(statuses).toContain('ACCEPTED');
    expect(statuses).toContain('REJECTED');
  });
});
