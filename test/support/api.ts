import { expect } from '@jest/globals';
import request from 'supertest';
import type { Tier } from '../../src/ports/api-key-store.js';
import { claimOf, VERDICT_OF, type ClaimSpec, type Json } from './claims.js';
import type { TestApp } from './harness.js';

// Requests to the API of a buildTestApp app and the assertions every API test shares.

export type Res = request.Response;
export type { Json };

export const SERVICE_VERSION = '0.1.0';
export const SPEC_VERSION = '1.0';
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const API_KEY = /^sk_svc_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const KEY_ID = /^kid_[0-9A-HJKMNP-TV-Z]{26}$/;
export const HASH = /^sha256:[0-9a-f]{64}$/;
export const RECEIPT_ID = /^dr-[0-9A-HJKMNP-TV-Z]{26}$/;
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const HOUR_MS = 60 * 60 * 1000;

let emails = 0;
/** An address no other signup of this process (nor of a parallel Jest worker) has used. */
export const uniqueEmail = (prefix = 'user') => `${prefix}-${process.pid}-${++emails}@example.com`;

export interface Account {
  apiKey: string;
  keyId: string;
  email: string;
}

/** Signs up through the API and, for another tier than free, moves the account there. */
export async function signupAccount(
  t: TestApp,
  email = uniqueEmail(),
  tier: Tier = 'free',
): Promise<Account> {
  const res = await request(t.app).post('/v1/signup').send({ email });
  expect(res.status).toBe(201);
  expect(res.body.key_id).toMatch(KEY_ID);
  if (tier !== 'free') {
    const updated = await t.store.apiKeys.setTier(
      email.trim().toLowerCase(),
      tier,
      new Date(t.clock.now()).toISOString(),
    );
    expect(updated?.tier).toBe(tier);
  }
  return { apiKey: res.body.api_key as string, keyId: res.body.key_id as string, email };
}

/**
 * Grants an account's active key the reviewer capability (recording dispositions), as the
 * operator does with `svc keys set-reviewer <email> on`. Before the key's first request: the
 * app caches an authenticated key for a few seconds.
 */
export async function grantReviewer(t: TestApp, account: Pick<Account, 'email'>): Promise<void> {
  const updated = await t.store.apiKeys.setReviewer(
    account.email.trim().toLowerCase(),
    true,
    new Date(t.clock.now()).toISOString(),
  );
  expect(updated?.reviewer).toBe(true);
}

/** A new account (see signupAccount) whose key the operator made a reviewer. */
export async function signupReviewer(
  t: TestApp,
  email = uniqueEmail('reviewer'),
): Promise<Account> {
  const account = await signupAccount(t, email);
  await grantReviewer(t, account);
  return account;
}

/** The raw API key of a new account (see signupAccount), for tests that need only the key. */
export const newKey = async (t: TestApp, tier: Tier = 'free', email = uniqueEmail(tier)) =>
  (await signupAccount(t, email, tier)).apiKey;

/** POST /v1/evaluate with `key`; the response, whatever it is. */
export const evaluate = (t: TestApp, key: string, claim: unknown) =>
  request(t.app)
    .post('/v1/evaluate')
    .set('X-API-Key', key)
    .send(claim as object);

/** POST /v1/verify with an optional query. */
export const verify = (t: TestApp, receipt: unknown, query: Record<string, string> = {}) =>
  request(t.app)
    .post('/v1/verify')
    .query(query)
    .send(receipt as object);

/** POST /v1/evaluate, expecting a new receipt (200, not a replay); answers the body. */
export async function evaluateNew(t: TestApp, key: string, claim: Json): Promise<Json> {
  const res = await evaluate(t, key, claim);
  expect({ status: res.status, body: res.body }).toMatchObject({ status: 200 });
  expect(res.headers['idempotent-replay']).toBeUndefined();
  return res.body as Json;
}

/** Evaluates the claimOf `spec` and checks the verdict and admissibility of its kind. */
export async function issue(t: TestApp, key: string, spec: ClaimSpec = {}): Promise<Json> {
  const body = await evaluateNew(t, key, claimOf(spec));
  const receipt = body.receipt as {
    policy: { verdict: string };
    admissibility: { status: string };
  };
  expect([receipt.policy.verdict, receipt.admissibility.status]).toEqual(
    VERDICT_OF[spec.kind ?? 'allowed'],
  );
  return body;
}

export const receiptOf = (body: Json) => body.receipt as Json & { receipt_id: string };
export const idOf = (body: Json) => receiptOf(body).receipt_id;
export const sequenceOf = (receipt: Json) => (receipt.chain as { sequence: number }).sequence;

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

export type Check = { name: string; layer: string; status: string; detail?: string };
/** The status of each check of a POST /v1/verify answer, by check name. */
export const statusOf = (res: Res): Record<string, string> =>
  Object.fromEntries((res.body.checks as Check[]).map((c) => [c.name, c.status]));

/** The whole of a response, body and text, to search for something it must not hold. */
export const textOf = (res: Res) => `${JSON.stringify(res.body)}\n${res.text ?? ''}`;
