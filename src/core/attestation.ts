import {
  canonicalBytes,
  DSSE_PAYLOAD_TYPE,
  dssePae,
  IN_TOTO_STATEMENT_V1,
  proceeds,
  SLSA_VSA_V1,
  toBase64,
  type DsseEnvelope,
} from '@svc/verify';
import type { Receipt, ReceiptSigner } from './receipt.js';

const hexOf = (hash: string): string => hash.replace(/^sha256:/, '');

/** What was decided on, as a URI (contract §14): the repository at its ref, else the entity. */
function resourceUri(subject: Receipt['subject']): string {
  if (subject.repository) {
    const ref =
      subject.commit ??
      subject.branch ??
      (subject.pull_request !== undefined ? `refs/pull/${subject.pull_request}/head` : 'HEAD');
    return `git+https://github.com/${subject.repository}@${ref}`;
  }
  return `urn:svc:entity:${encodeURIComponent(subject.entity ?? '')}`;
}

/**
 * The in-toto Statement v1 of a receipt with the SLSA VSA v1 predicate (contract §14). Every
 * value comes from the receipt's signed members, so the statement says no more than the
 * receipt. `verifiedLevels`, which the VSA requires, is `["FAILED"]` for a receipt that does not
 * proceed and empty otherwise: svc checks a policy, not a SLSA track level.
 */
export function vsaStatement(receipt: Receipt, baseUrl: string): Record<string, unknown> {
  const base = baseUrl.replace(/\/+$/, '');
  const receiptHex = hexOf(receipt.chain.receipt_hash);
  const { subject, policy } = receipt;
  const passed = proceeds(policy.verdict, receipt.admissibility.status);
  const statementSubject = subject.commit
    ? [{ name: subject.repository ?? subject.entity, digest: { gitCommit: subject.commit } }]
    : [{ name: receipt.receipt_id, digest: { sha256: receiptHex } }];
  return {
    _type: IN_TOTO_STATEMENT_V1,
    subject: statementSubject,
    predicateType: SLSA_VSA_V1,
    predicate: {
      verifier: { id: base },
      timeVerified: receipt.issued_at,
      resourceUri: resourceUri(subject),
      policy: {
        uri: `${base}/v1/policies/${encodeURIComponent(policy.name ?? 'default')}`,
        ...(policy.config_hash ? { digest: { sha256: hexOf(policy.config_hash) } } : {}),
      },
      inputAttestations: [
        {
          uri: `${base}/v1/receipts/${encodeURIComponent(receipt.receipt_id)}`,
          digest: { sha256: receiptHex },
        },
      ],
      verificationResult: passed ? 'PASSED' : 'FAILED',
      verifiedLevels: passed ? [] : ['FAILED'],
    },
  };
}

/**
 * The DSSE envelope of a statement, signed with Ed25519 over PAE by `signer` (the key current
 * when it is made), `keyid` its key_id. The payload is the statement's canonical JSON, so the
 * same receipt and key give the same envelope.
 */
export function signAttestation(
  statement: Record<string, unknown>,
  signer: ReceiptSigner,
): DsseEnvelope {
  const payload = canonicalBytes(statement);
  const sig = signer.sign(dssePae(DSSE_PAYLOAD_TYPE, payload));
  return {
    payloadType: DSSE_PAYLOAD_TYPE,
    payload: toBase64(payload),
    signatures: [{ keyid: signer.keyId, sig: toBase64(sig) }],
  };
}
