import { describe, expect, it } from '@jest/globals';
import { portableSha256Hex, receiptHash, type Sha256Hex, verifyReceipt } from '@svc/verify';
import { nativeSha256Hex } from '@svc/verify/node';
import { evaluateClaim } from '../../../src/core/evaluation.js';
import { resolvePolicy } from '../../../src/core/policy-config.js';
import { buildReceiptDraft, sealReceipt } from '../../../src/core/receipt.js';
import { newServerKey } from '../../support/harness.js';
import { claimWith } from '../../support/claims.js';
import { referenceHash, referenceJcs, sha256Hex } from '../core/reference.js';

const key = newServerKey();

/** Counts the texts a hasher is given, to pin that the server's hasher is the one used. */
function counting(inner: Sha256Hex): { hash: Sha256Hex; texts: string[] } {
  const texts: string[] = [];
  return {
    texts,
    hash: (text) => {
      texts.push(text);
      return inner(text);
    },
  };
}

const claim = claimWith();

function v2(sha: Sha256Hex) {
  const config = resolvePolicy(claim.policyConfig);
  const evaluation = evaluateClaim(claim, config, sha);
  return sealReceipt(
    buildReceiptDraft({
      receiptId: 'dr-01JH8Z6Q3V9W2X4Y5Z6A7B8C9E',
      issuedAt: '2026-01-15T10:00:00.000Z',
      claim,
      evaluation,
      policy: { name: 'default', config_hash: evaluation.config_hash, overrides: false },
      submitter: { kind: 'api_key', key_id: 'kid_01JH8Z6Q3V9W2X4Y5Z6A7B8C9D' },
    }),
    { sequence: 6, receipt_hash: `sha256:${'b'.repeat(64)}` },
    { signer: key, log: 'svc.example/ledger', sha256Hex: sha },
  );
}

describe('node:crypto SHA-256 injected into the core', () => {
  it('hashes the UTF-8 of any text exactly as the portable implementation does', () => {
    for (const text of ['', 'abc', '{"a":"é€😀"}', 'x'.repeat(10_000), '\u0000\n\u2028']) {
      expect(nativeSha256Hex(text)).toBe(portableSha256Hex(text));
      expect(nativeSha256Hex(text)).toBe(sha256Hex(Buffer.from(text, 'utf8')));
    }
  });

  it('gives the same evaluation, hashes included, and is the hasher evaluateClaim uses', () => {
    const claim = claimWith();
    const config = resolvePolicy({ minSources: 2 });
    const native = counting(nativeSha256Hex);
    const evaluation = evaluateClaim(claim, config, native.hash);
    expect(evaluation).toEqual(evaluateClaim(claim, config));
    expect(evaluation.inputs_hash).toBe(referenceHash(claim));
    expect(evaluation.config_hash).toBe(referenceHash(config));
    expect(evaluation.replay.replay_hash).toBe(
      referenceHash({
        inputs_hash: evaluation.inputs_hash,
        policy: config,
        verdict: evaluation.policy.verdict,
        rules: evaluation.policy.rules,
      }),
    );
    // inputs_hash, config_hash and the replay hash, each once: the replay's outcome is compared
    // with the first's, not hashed again.
    expect(native.texts).toHaveLength(3);
    expect(native.texts[0]).toBe(referenceJcs(claim));
    expect(native.texts.map((text) => `sha256:${sha256Hex(Buffer.from(text, 'utf8'))}`)).toEqual([
      evaluation.inputs_hash,
      evaluation.config_hash,
      evaluation.replay.replay_hash,
    ]);
  });

  it('seals and verifies a v2 receipt with the same receipt_hash as the portable hasher', () => {
    const native = v2(nativeSha256Hex);
    const portable = v2(portableSha256Hex);
    expect(native.chain.receipt_hash).toBe(portable.chain.receipt_hash);
    expect(native.chain.receipt_hash).toBe(
      referenceHash({
        core: Object.fromEntries(
          native.signed_fields.fields.map((f) => [f, (native as Record<string, unknown>)[f]]),
        ),
        attestations: native.attestations,
      }),
    );
    expect(receiptHash(native, { sha256Hex: nativeSha256Hex })).toBe(native.chain.receipt_hash);
    const hasher = counting(nativeSha256Hex);
    const result = verifyReceipt(native, {
      publicKey: key.publicKeyRaw,
      keyId: key.keyId,
      ledgerHash: native.chain.receipt_hash,
      sha256Hex: hasher.hash,
    });
    expect(result.checks.find((c) => c.name === 'hash_integrity')?.status).toBe('PASS');
    expect(result.valid).toBe(true);
    expect(hasher.texts).toHaveLength(1);
  });

  it('fails hash_integrity for a tampered v2 receipt whose core text it reuses', () => {
    const receipt = v2(nativeSha256Hex);
    const tampered = { ...receipt, claim_id: 'another' };
    const result = verifyReceipt(tampered, {
      publicKey: key.publicKeyRaw,
      keyId: key.keyId,
      ledgerHash: receipt.chain.receipt_hash,
      sha256Hex: nativeSha256Hex,
    });
    expect(result.checks.find((c) => c.name === 'signature_valid')?.status).toBe('FAIL');
    expect(result.checks.find((c) => c.name === 'hash_integrity')?.status).toBe('FAIL');
  });
});
