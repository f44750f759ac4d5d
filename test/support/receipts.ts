import { createHash, createPublicKey } from 'node:crypto';
import { expect } from '@jest/globals';
import * as ed from '@noble/ed25519';
import canonicalize from 'canonicalize';
import request from 'supertest';
import {
  RECEIPT_CORE_V2,
  SIGNED_FIELDS_DISPOSITION,
  SIGNED_FIELDS_V1,
  SIGNED_FIELDS_V2,
} from '@svc/verify';
import type { Json } from './claims.js';
import type { TestApp } from './harness.js';

// Receipt checks done independently of src/: hashes with the canonicalize package and
// node:crypto, signatures with @noble/ed25519 (not the node:crypto that signed). Only the
// lists of signed members come from the contract module itself (packages/verify), so a new
// signed member is named in one place.

/** The signed members of receipt-core-v1 (contract §3). */
export const V1_FIELDS: readonly string[] = SIGNED_FIELDS_V1;
/** The signed members of receipt-core-v2 (contract §8). */
export const V2_FIELDS: readonly string[] = SIGNED_FIELDS_V2;
/** The signed members of a disposition receipt (contract §11). */
export const DISPOSITION_FIELDS: readonly string[] = SIGNED_FIELDS_DISPOSITION;
/** The signed_fields declaration of every new receipt. */
export const V2_SIGNED_FIELDS = { contract: RECEIPT_CORE_V2, fields: [...V2_FIELDS] };

/** `H(x)` of the receipt contract, computed independently of src/. */
export function H(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('no canonical form');
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}

/** The signed core of a receipt: exactly the members its signed_fields lists. */
export function coreOf(receipt: Json): Json {
  const fields = (receipt.signed_fields as { fields: string[] }).fields;
  return Object.fromEntries(fields.map((field) => [field, receipt[field]]));
}

/** The signed message of contract §3: UTF-8 of JCS of the members signed_fields lists. */
export const signedMessage = (receipt: Json): Uint8Array =>
  new TextEncoder().encode(canonicalize(coreOf(receipt))!);

/** Strict RFC 8032 verification of a receipt's first attestation with @noble/ed25519. */
export async function nobleVerifies(receipt: Json, publicKey: Uint8Array): Promise<boolean> {
  const [attestation] = receipt.attestations as { signature: string }[];
  const signature = new Uint8Array(Buffer.from(attestation!.signature, 'base64'));
  return ed.verifyAsync(signature, signedMessage(receipt), publicKey, { zip215: false });
}

/** The raw Ed25519 public key of GET /v1/keys/server, read with node:crypto. */
export async function serverPublicKey(t: TestApp): Promise<Uint8Array> {
  const res = await request(t.app).get('/v1/keys/server');
  expect(res.status).toBe(200);
  return keyOfPem(res.text).raw;
}

/** The raw public key and the attestation key_id (SHA-256 of the SPKI DER) of a PEM. */
export function keyOfPem(pem: string): { raw: Uint8Array; keyId: string } {
  const key = createPublicKey(pem);
  const jwk = key.export({ format: 'jwk' });
  expect(jwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519' });
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
  expect(await nobleVerifies(receipt, publicKey)).toBe(true);
  if (expected.keyId !== undefined)
    expect(receipt.submitter).toEqual({ kind: 'api_key', key_id: expected.keyId });
}
