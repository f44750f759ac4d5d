import { describe, expect, it } from '@jest/globals';
// Imported before @noble/ed25519 is used: it installs the SHA-512 that noble's sync API needs.
import * as ed from '@noble/ed25519';
import { createPrivateKey } from 'node:crypto';
import { hashCanonical, rawPublicKeyFromPem, type VerifyOptions, verifyReceipt } from '@svc/verify';
import { claimInputSchema } from '../../../src/core/claim-schema.js';
import { evaluateClaim } from '../../../src/core/evaluation.js';
import { resolvePolicy } from '../../../src/core/policy-config.js';
import {
  buildReceiptDraft,
  sealReceipt,
  type Receipt,
  type ReceiptDraft,
} from '../../../src/core/receipt.js';
import { serverKeyFrom } from '../../../src/secrets/server-key.js';
import {
  clone,
  loadFixture,
  PINNED_V2_FIELDS,
  referenceHash,
  referenceJcs,
  unhex,
  utf8,
} from './reference.js';

type Json = Record<string, unknown>;

const fixture = loadFixture<{
  signer: { secret_key: string; public_key: string; public_key_pem: string; key_id: string };
  receipts: { name: string; receipt: Receipt }[];
  receipts_v2?: {
    name: string;
    policy_name: string;
    effective_policy: Json;
    receipt: Receipt;
  }[];
}>('receipt-vectors.json');

// The RFC 8032 TEST 1 key of the shared vectors, as a node:crypto signer for the code under test.
const signer = serverKeyFrom(
  createPrivateKey({
    key: Buffer.concat([
      Buffer.from('302e020100300506032b657004220420', 'hex'),
      Buffer.from(fixture.signer.secret_key, 'hex'),
    ]),
    format: 'der',
    type: 'pkcs8',
  }),
);
const publicKey = unhex(fixture.signer.public_key);
const LOG = 'svc/0123456789abcdef';

function draftOf(options: { policyName?: string; overrides?: boolean; submitter?: Json } = {}) {
  const claim = claimInputSchema.parse({
    claim_id: 'unit-v2-1',
    entity: 'acme/web',
    claim: 'Merge PR #7',
    action: { action_type: 'merge', target_system: 'github', pull_request: '7', agent: 'bot' },
    sources: [{ id: 's', type: 'ci', uri: 'https://ci.example/1', confidence: 0.9, content: 'ok' }],
  });
  const config = resolvePolicy(undefined);
  const evaluation = evaluateClaim(claim, config);
  return buildReceiptDraft({
    receiptId: 'dr-01JHGZ3Q4W5E6R7T8Y9V0A1B2C',
    issuedAt: '2026-01-15T10:00:00.000Z',
    claim,
    evaluation,
    policy: {
      name: options.policyName ?? 'default',
      config_hash: referenceHash(config),
      overrides: options.overrides ?? false,
    },
    submitter: (options.submitter ?? {
      kind: 'api_key',
      key_id: 'kid_01ARZ3NDEKTSV4RRFFQ69G5FAV',
    }) as ReceiptDraft['submitter'],
  });
}

const PREVIOUS = `sha256:${'11'.repeat(32)}`;
const sealed = (
  head = { sequence: 4, receipt_hash: PREVIOUS as string | null },
  draft = draftOf(),
) => sealReceipt(draft, head, { signer, log: LOG }) as unknown as Json;

const coreOf = (r: Json) =>
  Object.fromEntries((r.signed_fields as { fields: string[] }).fields.map((f) => [f, r[f]]));

const nobleOk = (r: Json) => {
  const [a] = r.attestations as { signature: string }[];
  return ed.verify(
    new Uint8Array(Buffer.from(a!.signature, 'base64')),
    utf8(referenceJcs(coreOf(r))),
    publicKey,
    { zip215: false },
  );
};

const options = (r: Json, extra: Partial<VerifyOptions> = {}): VerifyOptions => ({
  publicKey,
  keyId: fixture.signer.key_id,
  ledgerHash: referenceHash({ core: coreOf(r), attestations: r.attestations }),
  ...extra,
});
const statusOf = (result: ReturnType<typeof verifyReceipt>) =>
  Object.fromEntries(result.checks.map((c) => [c.name, c.status]));

describe('sealReceipt: a receipt-core-v2 receipt signed at its ledger position', () => {
  it('the shared signer’s key_id is the vectors’ key_id', () => {
    expect(signer.keyId).toBe(fixture.signer.key_id);
    expect(rawPublicKeyFromPem(fixture.signer.public_key_pem)).toEqual(publicKey);
  });

  it('declares v2, signs submitter and position = chain, hash = H({core, attestations})', () => {
    const r = sealed();
    expect(r.signed_fields).toEqual({ contract: 'receipt-core-v2', fields: PINNED_V2_FIELDS });
    expect(r.position).toEqual({ log: LOG, sequence: 5, previous_receipt_hash: PREVIOUS });
    expect(r.chain).toEqual({
      sequence: 5,
      previous_receipt_hash: PREVIOUS,
      receipt_hash: referenceHash({ core: coreOf(r), attestations: r.attestations }),
    });
    expect(r.submitter).toEqual({ kind: 'api_key', key_id: 'kid_01ARZ3NDEKTSV4RRFFQ69G5FAV' });
    expect(r.policy).toMatchObject({
      name: 'default',
      config_hash: referenceHash(resolvePolicy(undefined)),
      overrides: false,
    });
    expect(r.subject).toMatchObject({ pull_request: 7 });
    expect(nobleOk(r)).toBe(true);
    // The code under test and the reference agree on H.
    expect(hashCanonical(coreOf(r))).toBe(referenceHash(coreOf(r)));
  });

  it('the first receipt of a ledger: sequence 1, previous null', () => {
    const r = sealed({ sequence: 0, receipt_hash: null });
    expect(r.position).toEqual({ log: LOG, sequence: 1, previous_receipt_hash: null });
    expect(nobleOk(r)).toBe(true);
  });

  it('re-signing the same draft at another head signs another position; both verify; the draft is untouched', () => {
    const draft = draftOf();
    const before = clone(draft);
    const a = sealed({ sequence: 4, receipt_hash: PREVIOUS }, draft);
    const b = sealed({ sequence: 9, receipt_hash: `sha256:${'22'.repeat(32)}` }, draft);
    expect(draft).toEqual(before);
    expect((a.attestations as Json[])[0]!.signature).not.toBe(
      (b.attestations as Json[])[0]!.signature,
    );
    expect(nobleOk(a)).toBe(true);
    expect(nobleOk(b)).toBe(true);
    // A signature of one position does not fit the other.
    const swapped = clone(b);
    swapped.attestations = a.attestations;
    expect(nobleOk(swapped)).toBe(false);
  });
});

describe('verifyReceipt (the shared core verifier) on receipt-core-v2', () => {
  it('intact, with the ledger’s hashes: valid, chain_linkage PASS, signed facts reported', () => {
    const r = sealed();
    const result = verifyReceipt(r, options(r, { previousLedgerHash: PREVIOUS, logOrigin: LOG }));
    expect(result.valid).toBe(true);
    expect(statusOf(result)).toMatchObject({
      signature_valid: 'PASS',
      hash_integrity: 'PASS',
      chain_linkage: 'PASS',
      policy_binding: 'SKIPPED',
    });
    expect(result.signed).toEqual({
      contract: 'receipt-core-v2',
      submitter: { kind: 'api_key', key_id: 'kid_01ARZ3NDEKTSV4RRFFQ69G5FAV' },
      policy: {
        name: 'default',
        config_hash: referenceHash(resolvePolicy(undefined)),
        overrides: false,
      },
      position: { log: LOG, sequence: 5, previous_receipt_hash: PREVIOUS },
    });
  });

  it('offline (no ledger): the signature and the signed facts still check', () => {
    const r = sealed();
    const result = verifyReceipt(r, { publicKey, keyId: fixture.signer.key_id });
    expect(statusOf(result)).toMatchObject({ signature_valid: 'PASS', chain_linkage: 'PASS' });
    expect(result.signed?.position).toEqual(r.position);
  });

  it('the ledger’s previous receipt differs from the signed previous_receipt_hash: chain_linkage FAIL', () => {
    const r = sealed();
    const result = verifyReceipt(
      r,
      options(r, { previousLedgerHash: `sha256:${'33'.repeat(32)}` }),
    );
    expect(statusOf(result).chain_linkage).toBe('FAIL');
    expect(result.valid).toBe(false);
  });

  it('a position.log of another ledger: chain_linkage FAIL', () => {
    const r = sealed();
    const result = verifyReceipt(r, options(r, { logOrigin: 'svc/ffffffffffffffff' }));
    expect(statusOf(result).chain_linkage).toBe('FAIL');
    expect(result.valid).toBe(false);
  });

  const TAMPER: [string, (r: Json) => void][] = [
    ['policy.name', (r) => ((r.policy as Json).name = 'strict')],
    ['policy.config_hash', (r) => ((r.policy as Json).config_hash = `sha256:${'44'.repeat(32)}`)],
    ['policy.overrides', (r) => ((r.policy as Json).overrides = true)],
    ['submitter.key_id', (r) => ((r.submitter as Json).key_id = 'kid_01BX5ZZKBKACTAV9WEVGEMMVRY')],
    ['submitter.kind', (r) => ((r.submitter as Json).kind = 'github_app')],
    ['position.sequence', (r) => ((r.position as Json).sequence = 6)],
    ['position.log', (r) => ((r.position as Json).log = 'svc/other')],
    [
      'position.previous_receipt_hash',
      (r) => ((r.position as Json).previous_receipt_hash = `sha256:${'55'.repeat(32)}`),
    ],
  ];
  it.each(TAMPER)(
    'tampering with %s: signature FAIL, valid false, nothing reported as signed',
    (_n, change) => {
      const r = sealed();
      const ledgerHash = options(r).ledgerHash;
      const tampered = clone(r);
      change(tampered);
      expect(nobleOk(tampered)).toBe(false);
      const result = verifyReceipt(tampered, options(r, { ledgerHash }));
      expect(result.valid).toBe(false);
      expect(statusOf(result).signature_valid).toBe('FAIL');
      expect(statusOf(result).hash_integrity).toBe('FAIL');
      expect(result.signed).toBeNull();
    },
  );

  it('chain members that differ from the signed position: chain_linkage FAIL', () => {
    for (const change of [
      (r: Json) => ((r.chain as Json).sequence = 6),
      (r: Json) => ((r.chain as Json).previous_receipt_hash = null),
    ]) {
      const r = sealed();
      const tampered = clone(r);
      change(tampered);
      const result = verifyReceipt(tampered, options(r));
      expect(statusOf(result)).toMatchObject({ signature_valid: 'PASS', chain_linkage: 'FAIL' });
      expect(result.valid).toBe(false);
    }
  });

  it('expectations: PASS when they match, FAIL when any differs', () => {
    const r = sealed({ sequence: 4, receipt_hash: PREVIOUS }, draftOf({ policyName: 'strict' }));
    const configHash = (r.policy as Json).config_hash as string;
    const match = verifyReceipt(
      r,
      options(r, {
        expect: {
          policy: 'strict',
          configHash,
          submitter: 'kid_01ARZ3NDEKTSV4RRFFQ69G5FAV',
        },
      }),
    );
    expect(statusOf(match).policy_binding).toBe('PASS');
    expect(match.valid).toBe(true);
    for (const expectation of [
      { policy: 'default' },
      { configHash: `sha256:${'66'.repeat(32)}` },
      { submitter: 'kid_01BX5ZZKBKACTAV9WEVGEMMVRY' },
    ]) {
      const result = verifyReceipt(r, options(r, { expect: expectation }));
      expect(statusOf(result).policy_binding).toBe('FAIL');
      expect(result.valid).toBe(false);
    }
  });

  it('a github_app submitter is reported and matched as github_app:<app_id>:<installation_id>', () => {
    const r = sealed(
      undefined,
      draftOf({ submitter: { kind: 'github_app', app_id: 12, installation_id: 34 } }),
    );
    expect(nobleOk(r)).toBe(true);
    const result = verifyReceipt(r, options(r, { expect: { submitter: 'github_app:12:34' } }));
    expect(result.signed?.submitter).toEqual({
      kind: 'github_app',
      app_id: 12,
      installation_id: 34,
    });
    expect(statusOf(result).policy_binding).toBe('PASS');
  });
});

describe('receipt-core-v1 vectors keep verifying', () => {
  it.each(fixture.receipts.map((v) => [v.name, v.receipt] as const))('%s', (_name, receipt) => {
    const r = receipt as unknown as Json;
    expect(nobleOk(r)).toBe(true);
    const result = verifyReceipt(r, {
      publicKey,
      keyId: fixture.signer.key_id,
      ledgerHash: referenceHash({
        evidence: r.evidence,
        policy: r.policy,
        replay: r.replay,
        attestations: r.attestations,
      }),
    });
    expect(result.valid).toBe(true);
    expect(statusOf(result)).toMatchObject({
      signature_valid: 'PASS',
      hash_integrity: 'PASS',
      chain_linkage: 'UNVERIFIED',
      policy_binding: 'SKIPPED',
    });
    expect(result.signed).toEqual({
      contract: 'receipt-core-v1',
      submitter: null,
      policy: null,
      position: null,
    });
  });
});

describe('the shared receipt-core-v2 vectors continue the v1 chain', () => {
  const v1 = fixture.receipts.map((v) => v.receipt as unknown as Json);
  const v2 = (fixture.receipts_v2 ?? []).map((v) => ({ ...v, r: v.receipt as unknown as Json }));

  it('exist', () => {
    expect(v2.length).toBeGreaterThan(0);
  });

  it('one gap-free chain from v1 into v2; each v2 vector is self-consistent and verifies', () => {
    const all = [...v1, ...v2.map((v) => v.r)];
    all.forEach((r, i) => {
      const chain = r.chain as Json;
      expect(chain.sequence).toBe(i + 1);
      expect(chain.previous_receipt_hash).toBe(
        i === 0 ? null : (all[i - 1]!.chain as Json).receipt_hash,
      );
    });
    for (const { r, policy_name, effective_policy } of v2) {
      expect(r.signed_fields).toEqual({ contract: 'receipt-core-v2', fields: PINNED_V2_FIELDS });
      const chain = r.chain as Json;
      expect(r.position).toMatchObject({
        sequence: chain.sequence,
        previous_receipt_hash: chain.previous_receipt_hash,
      });
      expect(chain.receipt_hash).toBe(
        referenceHash({ core: coreOf(r), attestations: r.attestations }),
      );
      expect(r.policy).toMatchObject({
        name: policy_name,
        config_hash: referenceHash(effective_policy),
      });
      expect(nobleOk(r)).toBe(true);
      const previous = all[(chain.sequence as number) - 2]!.chain as Json;
      const result = verifyReceipt(
        r,
        options(r, { previousLedgerHash: previous.receipt_hash as string }),
      );
      expect(result.valid).toBe(true);
      expect(statusOf(result).chain_linkage).toBe('PASS');
      expect(result.signed?.policy?.name).toBe(policy_name);
    }
  });
});
