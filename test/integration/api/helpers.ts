import { createHash, createPublicKey } from 'node:crypto';
import { expect } from '@jest/globals';
import * as ed from '@noble/ed25519';
import canonicalize from 'canonicalize';
import request from 'supertest';
import type { Tier } from '../../../src/ports/api-key-store.js';
import type { TestApp } from '../../support/harness.js';

export type Res = request.Response;
export type Json = Record<string, unknown>;

export const SERVICE_VERSION = '0.1.0';
export const SPEC_VERSION = '1.0';
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const API_KEY = /^sk_svc_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const HASH = /^sha256:[0-9a-f]{64}$/;
export const RECEIPT_ID = /^dr-[0-9A-HJKMNP-TV-Z]{26}$/;
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const HOUR_MS = 60 * 60 * 1000;

/** `H(x)` of the receipt contract, computed independently of src/. */
export function H(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('no canonical form');
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}

let emails = 0;
export const uniqueEmail = (prefix = 'user') => `${prefix}-${++emails}@example.com`;

/** Signs up through the API and, for another tier, moves the key there. */
export async function newKey(
  t: TestApp,
  tier: Tier = 'free',
  email = uniqueEmail(tier),
): Promise<string> {
  const res = await request(t.app).post('/v1/signup').send({ email });
  expect(res.status).toBe(201);
  if (tier !== 'free') {
    const updated = await t.store.apiKeys.setTier(
      email.trim().toLowerCase(),
      tier,
      new Date(t.clock.now()).toISOString(),
    );
    expect(updated?.tier).toBe(tier);
  }
  return res.body.api_key as string;
}

/** The error envelope: exactly {error, code, request_id}, request_id the X-Request-Id header. */
export function expectError(res: Res, status: number, code: string): string {
  expect({ status: res.status, body: res.body }).toMatchObject({ status, body: { code } });
  expect(Object.keys(res.body).sort()).toEqual(['code', 'error', 'request_id']);
  expect(typeof res.body.error).toBe('string');
  expect(res.body.error.length).toBeGreaterThan(0);
  expect(res.headers['x-request-id']).toBeDefined();
  expect(res.body.request_id).toBe(res.headers['x-request-id']);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  return res.body.error as string;
}

/** The headers every response carries. */
export function expectCommonHeaders(res: Res): void {
  expect(res.headers['x-svc-version']).toBe(SERVICE_VERSION);
  expect(res.headers['x-svc-spec']).toBe(SPEC_VERSION);
  expect(res.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:@/+=-]{1,128}$/);
  expect(res.headers['x-ratelimit-limit']).toMatch(/^(\d+|unlimited)$/);
  expect(res.headers['x-ratelimit-remaining']).toMatch(/^(\d+|unlimited)$/);
  expect(res.headers['x-content-type-options']).toBe('nosniff');
}

/** Everything the ledger holds, to compare before and after a request. */
export async function ledgerState(t: TestApp) {
  const [head, entries, stats] = await Promise.all([
    t.store.ledger.head(),
    t.store.ledger.list(0, 1000),
    t.store.ledger.stats(),
  ]);
  return { head, entries, stats };
}

/**
 * Sends a raw body as application/json, bypassing supertest's serializer (which would turn a
 * Buffer into a JSON object): text and bytes reach the service exactly as given.
 */
export const postRaw = (t: TestApp, path: string, key: string | null, body: string | Buffer) => {
  const req = request(t.app)
    .post(path)
    .set('Content-Type', 'application/json')
    .serialize((data: unknown) => data as string);
  if (key !== null) req.set('X-API-Key', key);
  return req.send(body as string);
};

export const clone = <T>(value: T): T => structuredClone(value);

/** The raw Ed25519 public key of GET /v1/keys/server, read with node:crypto. */
export async function serverPublicKey(t: TestApp): Promise<Uint8Array> {
  const res = await request(t.app).get('/v1/keys/server');
  expect(res.status).toBe(200);
  const jwk = createPublicKey(res.text).export({ format: 'jwk' });
  expect(jwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519' });
  return new Uint8Array(Buffer.from(jwk.x!, 'base64url'));
}

/** The signed message of contract §3: UTF-8 of JCS of the members signed_fields lists. */
export function signedMessage(receipt: Json): Uint8Array {
  const fields = (receipt.signed_fields as { fields: string[] }).fields;
  const core = Object.fromEntries(fields.map((field) => [field, receipt[field]]));
  return new TextEncoder().encode(canonicalize(core)!);
}

/** Strict RFC 8032 verification with @noble/ed25519, not the node:crypto that signed. */
export async function nobleVerifies(receipt: Json, publicKey: Uint8Array): Promise<boolean> {
  const [attestation] = receipt.attestations as { signature: string }[];
  const signature = new Uint8Array(Buffer.from(attestation!.signature, 'base64'));
  return ed.verifyAsync(signature, signedMessage(receipt), publicKey, { zip215: false });
}
