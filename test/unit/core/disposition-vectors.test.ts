import { describe, expect, it } from '@jest/globals';
// Imported before @noble/ed25519 is used: it installs the SHA-512 that noble's sync API needs.
import '@svc/verify';
import * as ed from '@noble/ed25519';
import { createPrivateKey, sign as nodeSign } from 'node:crypto';
import type { ClaimInput } from '../../../src/core/claim-schema.js';
import { buildDispositionParts } from '../../../src/core/disposition.js';
import { CHECK_NAMES, parentEvidenceOf, verifyOffline } from '@svc/verify';
import type { PolicyConfig } from '../../../src/core/policy-config.js';
import { sealReceipt, type Receipt, type ReceiptDraft } from '../../../src/core/receipt.js';
import {
  clone,
  loadFixture,
  PINNED_DISPOSITION_FIELDS,
  PINNED_V2_FIELDS,
  referenceHash,
  referenceJcs,
  unhex,
  utf8,
} from './reference.js';

// Tampering reaches into nested members of untyped JSON.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = Record<string, any>;
interface Vector {
  claim: Loose;
  effective_policy: Loose;
  rules: Loose[];
  receipt: Loose;
}
const fixture = loadFixture<{
  signer: { public_key: string; key_id: string };
  parent: Vector;
  disposition: Vector;
}>('disposition-vectors.json');
const chain = loadFixture<{ signer: { secret_key: string }; receipts_v2: { receipt: Loose }[] }>(
  'receipt-vectors.json',
);
const publicKey = unhex(fixture.signer.public_key);
const key = { raw: publicKey, keyId: fixture.signer.key_id };

const V2 = PINNED_V2_FIELDS;
const DISPOSITION = PINNED_DISPOSITION_FIELDS;
const coreOf = (receipt: Loose, fields: readonly string[]) =>
  Object.fromEntries(fields.map((f) => [f, receipt[f]]));
const hashOf = (receipt: Loose, fields: readonly string[]) =>
  referenceHash({ core: coreOf(receipt, fields), attestations: receipt.attestations });
const nobleVerifies = (receipt: Loose, fields: readonly string[]) =>
  ed.verify(
    new Uint8Array(Buffer.from(receipt.attestations[0].signature, 'base64')),
    utf8(referenceJcs(coreOf(receipt, fields))),
    publicKey,
    { zip215: false },
  );

describe('the disposition vector (contract §11)', () => {
  const { parent, disposition } = fixture;
  const p = parent.receipt;
  const d = disposition.receipt;

  it('continues the chain of receipt-vectors.json: an ESCALATED parent, then its disposition', () => {
    const last = chain.receipts_v2.at(-1)!.receipt;
    expect(p.policy.verdict).toBe('ESCALATED');
    expect(p.chain).toEqual({
      sequence: last.chain.sequence + 1,
      previous_receipt_hash: last.chain.receipt_hash,
      receipt_hash: hashOf(p, V2),
    });
    expect(d.chain).toEqual({
      sequence: p.chain.sequence + 1,
      previous_receipt_hash: p.chain.receipt_hash,
      receipt_hash: hashOf(d, DISPOSITION),
    });
    expect(d.position).toEqual({
      log: p.position.log,
      sequence: d.chain.sequence,
      previous_receipt_hash: d.chain.previous_receipt_hash,
    });
  });

  it('signs the v2 list then "disposition", verified with @noble/ed25519 (strict)', () => {
    expect(d.signed_fields).toEqual({ contract: 'receipt-core-v2', fields: DISPOSITION });
    expect(Object.keys(d).sort()).toEqual([...DISPOSITION, 'attestations', 'chain'].sort());
    expect(nobleVerifies(p, V2)).toBe(true);
    expect(nobleVerifies(d, DISPOSITION)).toBe(true);
    // Without the disposition member the signature covers something else.
    expect(nobleVerifies(d, V2)).toBe(false);
  });

  it('links to the parent by id and recomputed receipt hash, and records the decision', () => {
    expect(d.disposition).toEqual({
      parent_receipt_id: p.receipt_id,
      parent_receipt_hash: hashOf(p, V2),
      decision: 'approve',
      reviewer: { kind: 'user', id: 'sam@acme.example', name: 'Sam Lead' },
      reason: 'Scoped to the deploy path; expires with SEC-12',
    });
    expect(d.policy).toMatchObject({
      status: 'PASS',
      verdict: 'ALLOWED',
      checks: [],
      name: p.policy.name,
      config_hash: p.policy.config_hash,
      overrides: p.policy.overrides,
    });
    expect(d.admissibility.status).toBe('ACCEPTED');
    expect(d.subject).toEqual(p.subject);
    expect(disposition.rules).toEqual([
      {
        rule: 'human_disposition',
        passed: true,
        reason: d.disposition.reason,
        reviewer: d.disposition.reviewer,
      },
    ]);
    // The hashes of contract §4, over the decision in ClaimInput form.
    expect(d.evidence.inputs_hash).toBe(referenceHash(disposition.claim));
    expect(d.replay.replay_hash).toBe(
      referenceHash({
        inputs_hash: d.evidence.inputs_hash,
        policy: disposition.effective_policy,
        rules: disposition.rules,
        verdict: 'ALLOWED',
      }),
    );
    expect(p.policy.config_hash).toBe(referenceHash(parent.effective_policy));
  });

  it('is rebuilt byte for byte by the code (Ed25519 signatures are deterministic)', () => {
    const secret = chain.signer.secret_key;
    const privateKey = createPrivateKey({
      key: Buffer.from(`302e020100300506032b657004220420${secret}`, 'hex'),
      format: 'der',
      type: 'pkcs8',
    });
    const parts = buildDispositionParts({
      receiptId: d.receipt_id,
      issuedAt: d.issued_at,
      parent: {
        receipt: p as Receipt,
        claim: parent.claim as ClaimInput,
        config: parent.effective_policy as PolicyConfig,
      },
      decision: d.disposition.decision,
      reviewer: d.disposition.reviewer,
      reason: d.disposition.reason,
      submitter: d.submitter,
    });
    expect(parts.claim).toEqual(disposition.claim);
    const rebuilt = sealReceipt(
      parts.draft as ReceiptDraft,
      { sequence: p.chain.sequence, receipt_hash: p.chain.receipt_hash },
      {
        signer: { keyId: key.keyId, sign: (m) => new Uint8Array(nodeSign(null, m, privateKey)) },
        log: p.position.log,
      },
    );
    expect(JSON.stringify(rebuilt)).toBe(JSON.stringify(d));
  });

  it('parent_link: PASS with the parent, UNVERIFIED without, FAIL with another', () => {
    const withParent = verifyOffline(
      d,
      key,
      {},
      undefined,
      undefined,
      parentEvidenceOf(p, verifyOffline(p, key)),
    );
    const status = (r: { checks: { name: string; status: string }[] }) =>
      r.checks.find((c) => c.name === 'parent_link')?.status;
    expect(withParent.valid).toBe(true);
    expect(status(withParent)).toBe('PASS');
    // A disposition's offline verification names every check there is but an outcome's own,
    // in report order.
    expect(withParent.checks.map((c) => c.name)).toEqual(
      CHECK_NAMES.filter((name) => name !== 'outcome_valid'),
    );
    expect(status(verifyOffline(d, key))).toBe('UNVERIFIED');
    const last = chain.receipts_v2.at(-1)!.receipt;
    const other = verifyOffline(
      d,
      key,
      {},
      undefined,
      undefined,
      parentEvidenceOf(last, verifyOffline(last, key)),
    );
    expect(other.valid).toBe(false);
    expect(status(other)).toBe('FAIL');
  });

  it('refuses a one-byte change to any signed member of the disposition', () => {
    for (const field of DISPOSITION) {
      const tampered = clone(d);
      const text = referenceJcs(tampered[field]);
      // Change one character inside the member's canonical text, keeping it JSON.
      const at = text.search(/[0-9a-z]/);
      const changed = `${text.slice(0, at)}${text[at] === 'a' ? 'b' : 'a'}${text.slice(at + 1)}`;
      tampered[field] = JSON.parse(changed);
      expect({ field, ok: nobleVerifies(tampered, DISPOSITION) }).toEqual({ field, ok: false });
      expect({ field, valid: verifyOffline(tampered, key).valid }).toEqual({
        field,
        valid: false,
      });
    }
  });
});
