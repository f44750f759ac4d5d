import { createHash, createPublicKey } from 'node:crypto';
import { expect } from '@jest/globals';
import * as ed from '@noble/ed25519';
import canonicalize from 'canonicalize';
import request from 'supertest';
import type { TestApp } from '../../support/harness.js';
import { H, type Json, type Res } from './helpers.js';

export const KEY_ID = /^kid_[0-9A-HJKMNP-TV-Z]{26}$/;

export const V1_FIELDS = [
  'receipt_id',
  'issued_at',
  'claim_id',
  'admissibility',
  'subject',
  'evidence',
  'replay',
  'policy',
  'signed_fields',
];
export const V2_FIELDS = [...V1_FIELDS, 'submitter', 'position'];
export const V2_SIGNED_FIELDS = { contract: 'receipt-core-v2', fields: V2_FIELDS };

export const DEFAULT_CONFIG = {
  minSources: 1,
  minSourceTypes: 1,
  minConfidence: 0.5,
  requireProvenance: false,
  requireReplay: true,
  requireHumanApproval: false,
  maxRiskScope: 5,
};
export const STRICT_CONFIG = {
  minSources: 2,
  minSourceTypes: 2,
  minConfidence: 0.8,
  requireProvenance: true,
  requireReplay: true,
  requireHumanApproval: true,
  maxRiskScope: 3,
};
export const PERMISSIVE_CONFIG = {
  minSources: 1,
  minSourceTypes: 1,
  minConfidence: 0.3,
  requireProvenance: false,
  requireReplay: false,
  requireHumanApproval: false,
  maxRiskScope: 10,
};

/** The policyConfig of issue 8's attack: every rule switched off. */
export const ZEROED_CONFIG = {
  minSources: 0,
  minSourceTypes: 0,
  minConfidence: 0,
  requireProvenance: false,
  requireHumanApproval: false,
  maxRiskScope: 10000,
};

let counter = 0;
export const trustEmail = (prefix = 'trust') => `${prefix}-${process.pid}-${++counter}@example.com`;

export interface Account {
  apiKey: string;
  keyId: string;
  email: string;
}

/** Signs up through the API; returns the raw key and its key_id. */
export async function signupAccount(t: TestApp, email = trustEmail()): Promise<Account> {
  const res = await request(t.app).post('/v1/signup').send({ email });
  expect(res.status).toBe(201);
  expect(res.body.key_id).toMatch(KEY_ID);
  return { apiKey: res.body.api_key as string, keyId: res.body.key_id as string, email };
}

export const evaluate = (t: TestApp, key: string, claim: unknown) =>
  request(t.app)
    .post('/v1/evaluate')
    .set('X-API-Key', key)
    .send(claim as object);

export const verify = (t: TestApp, receipt: unknown, query: Record<string, string> = {}) =>
  request(t.app)
    .post('/v1/verify')
    .query(query)
    .send(receipt as object);

/** The signed core of a receipt: exactly the members its signed_fields lists. */
export function coreOf(receipt: Json): Json {
  const fields = (receipt.signed_fields as { fields: string[] }).fields;
  return Object.fromEntries(fields.map((field) => [field, receipt[field]]));
}

/** Strict RFC 8032 verification of a receipt's first attestation with @noble/ed25519. */
export async function nobleVerifiesCore(receipt: Json, publicKey: Uint8Array): Promise<boolean> {
  const [attestation] = receipt.attestations as { signature: string }[];
  const signature = new Uint8Array(Buffer.from(attestation!.signature, 'base64'));
  const message = new TextEncoder().encode(canonicalize(coreOf(receipt))!);
  return ed.verifyAsync(signature, message, publicKey, { zip215: false });
}

/** The raw public key and the attestation key_id (SHA-256 of the SPKI DER) of a PEM. */
export function keyOfPem(pem: string): { raw: Uint8Array; keyId: string } {
  const key = createPublicKey(pem);
  const jwk = key.export({ format: 'jwk' });
  const der = key.export({ format: 'der', type: 'spki' });
  return {
    raw: new Uint8Array(Buffer.from(jwk.x!, 'base64url')),
    keyId: `sha256:${createHash('sha256').update(der).digest('hex')}`,
  };
}

/** The default ledger origin of contract §8: svc/ and 16 hex digits of the key's key_id. */
export const defaultLogOrigin = (pem: string) =>
  `svc/${keyOfPem(pem).keyId.slice('sha256:'.length, 'sha256:'.length + 16)}`;

/** v1 chain hash of contract §4. */
export const v1ReceiptHash = (r: Json) =>
  H({ evidence: r.evidence, policy: r.policy, replay: r.replay, attestations: r.attestations });

/** v2 chain hash of contract §8. */
export const v2ReceiptHash = (r: Json) => H({ core: coreOf(r), attestations: r.attestations });

/**
 * Everything contract §8 says of a receipt-core-v2 receipt, checked independently of src/:
 * the declaration, position = chain, the receipt hash, and the signature with @noble/ed25519.
 */
export async function expectValidV2(
  receipt: Json,
  publicKey: Uint8Array,
  expected: { log?: string; keyId?: string } = {},
): Promise<void> {
  expect(receipt.signed_fields).toEqual(V2_SIGNED_FIELDS);
  const chain = receipt.chain as Json;
  const position = receipt.position as Json;
  expect(Object.keys(position).sort()).toEqual(['log', 'previous_receipt_hash', 'sequence']);
  expect(position.sequence).toBe(chain.sequence);
  expect(position.previous_receipt_hash).toBe(chain.previous_receipt_hash);
  if (expected.log !== undefined) expect(position.log).toBe(expected.log);
  expect(chain.receipt_hash).toBe(v2ReceiptHash(receipt));
  expect(await nobleVerifiesCore(receipt, publicKey)).toBe(true);
  if (expected.keyId !== undefined)
    expect(receipt.submitter).toEqual({ kind: 'api_key', key_id: expected.keyId });
}

export type Check = { name: string; layer: string; status: string; detail?: string };
export const statusOf = (res: Res): Record<string, string> =>
  Object.fromEntries((res.body.checks as Check[]).map((c) => [c.name, c.status]));

/** Every string in a JSON value, flattened, to search a body for something it must not hold. */
export const textOf = (res: Res) => `${JSON.stringify(res.body)}\n${res.text ?? ''}`;
