import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import request from 'supertest';
import { ApiKeyService } from '../../../src/services/api-keys.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import {
  API_KEY,
  evaluate,
  expectError,
  KEY_ID,
  ledgerState,
  signupAccount,
  textOf,
  uniqueEmail,
} from '../../support/api.js';
import { validClaim } from '../../support/claims.js';

const signup = (t: TestApp, email: unknown) => request(t.app).post('/v1/signup').send({ email });
const account = (t: TestApp, key: string) =>
  request(t.app).get('/v1/account').set('X-API-Key', key);
const now = (t: TestApp) => new Date(t.clock.now()).toISOString();

describe('signup: an address that has a key gets 409, never the key (no account takeover)', () => {
  let t: TestApp;
  beforeEach(() => {
    t = buildTestApp();
  });
  afterEach(() => t.close());

  it('201 {api_key, key_id, message} for a new address', async () => {
    const res = await signup(t, 'fresh@example.com');
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['api_key', 'key_id', 'message']);
    expect(res.body.api_key).toMatch(API_KEY);
    expect(res.body.key_id).toMatch(KEY_ID);
    expect(typeof res.body.message).toBe('string');
  });

  it.each([
    'alice@example.com',
    ' Alice@Example.COM ',
    'ALICE@EXAMPLE.COM',
    '\talice@example.com\n',
  ])('409 email_registered for %j after alice@example.com, no key in the body', async (email) => {
    const first = await signup(t, 'alice@example.com');
    expect(first.status).toBe(201);
    const before = await t.store.apiKeys.list();
    const again = await signup(t, email);
    expectError(again, 409, 'email_registered');
    expect(textOf(again)).not.toContain(first.body.api_key);
    expect(textOf(again)).not.toMatch(/sk_svc_/);
    // Nothing issued: still exactly one key, the first still works.
    expect(await t.store.apiKeys.list()).toEqual(before);
    expect((await account(t, first.body.api_key)).status).toBe(200);
  });

  it('the first signup may itself be padded and in capitals', async () => {
    const first = await signup(t, ' Alice@Example.COM ');
    expect(first.status).toBe(201);
    expect((await account(t, first.body.api_key)).body.email).toBe('alice@example.com');
    expectError(await signup(t, 'alice@example.com'), 409, 'email_registered');
  });

  it('concurrent signups of one address: exactly one 201, the rest 409 without a key', async () => {
    const answers = await Promise.all(
      ['race@example.com', ' RACE@example.com', 'Race@Example.com ', 'race@EXAMPLE.com'].map((e) =>
        signup(t, e),
      ),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    for (const r of answers.filter((x) => x.status === 409)) {
      expectError(r, 409, 'email_registered');
      expect(textOf(r)).not.toMatch(/sk_svc_/);
    }
    expect(
      (await t.store.apiKeys.list()).filter((k) => k.email === 'race@example.com'),
    ).toHaveLength(1);
  });

  it('an enterprise key is not handed out either', async () => {
    const first = await signup(t, 'boss@example.com');
    const upgraded = await t.store.apiKeys.setTier('boss@example.com', 'enterprise', now(t));
    expect(upgraded?.tier).toBe('enterprise');
    for (const email of ['boss@example.com', ' BOSS@example.com ']) {
      const res = await signup(t, email);
      expectError(res, 409, 'email_registered');
      expect(textOf(res)).not.toContain(first.body.api_key);
      expect(textOf(res)).not.toMatch(/sk_svc_/);
    }
    expect((await account(t, first.body.api_key)).body.tier).toBe('enterprise');
  });

  it('after DELETE /v1/account the address stays registered: signup is 409, the operator may issue it a key', async () => {
    const first = await signupAccount(t, 'again@example.com');
    const revoked = await request(t.app).delete('/v1/account').set('X-API-Key', first.apiKey);
    expect(revoked.status).toBe(200);
    const before = await t.store.apiKeys.list();
    for (const email of ['again@example.com', ' Again@Example.com']) {
      const again = await signup(t, email);
      expectError(again, 409, 'email_registered');
      expect(textOf(again)).not.toMatch(/sk_svc_/);
    }
    expect(await t.store.apiKeys.list()).toEqual(before);
    expectError(await account(t, first.apiKey), 401, 'unauthorized');
    // Only the operator issues the address a key again.
    const keys = new ApiKeyService({ keys: t.store.apiKeys, clock: t.clock });
    const second = await keys.create({
      email: 'again@example.com',
      tier: 'free',
      lockedPolicy: null,
    });
    expect(second.record.keyId).not.toBe(first.keyId);
    expect((await account(t, second.apiKey)).body.key_id).toBe(second.record.keyId);
  });
});

describe('GET /v1/account shows key_id, email, tier and locked_policy', () => {
  let t: TestApp;
  beforeEach(() => {
    t = buildTestApp();
  });
  afterEach(() => t.close());

  it('for a signup key: its key_id, the normalised email, free, no lock', async () => {
    const a = await signupAccount(t, 'Shown@Example.com');
    const res = await account(t, a.apiKey);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      key_id: a.keyId,
      email: 'shown@example.com',
      tier: 'free',
      locked_policy: null,
      limit: 100,
      window_seconds: 3600,
      usage: { requests_in_window: 1, receipts_issued: 0 },
    });
    expect(res.body.created_at).toBe(now(t));
    expect(textOf(res)).not.toContain(a.apiKey);
  });

  it('two accounts have different key_ids', async () => {
    const a = await signupAccount(t);
    const b = await signupAccount(t);
    expect(a.keyId).not.toBe(b.keyId);
  });

  it('the key_id is not derived from the key: it is not a prefix, hex or digest of it', async () => {
    const a = await signupAccount(t);
    const uuid = a.apiKey.slice('sk_svc_'.length).replace(/-/g, '');
    expect(a.keyId.toLowerCase()).not.toContain(uuid.slice(0, 8));
  });
});

describe('POST /v1/account/rotate and DELETE /v1/account', () => {
  let t: TestApp;
  beforeEach(() => {
    t = buildTestApp();
  });
  afterEach(() => t.close());

  const rotate = (key: string) => request(t.app).post('/v1/account/rotate').set('X-API-Key', key);

  it('rotate: 201 {api_key, key_id, message}, new key and key_id; the old key is 401 at once', async () => {
    const a = await signupAccount(t);
    const res = await rotate(a.apiKey);
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['api_key', 'key_id', 'message']);
    expect(res.body.api_key).toMatch(API_KEY);
    expect(res.body.api_key).not.toBe(a.apiKey);
    expect(res.body.key_id).toMatch(KEY_ID);
    expect(res.body.key_id).not.toBe(a.keyId);

    expectError(await account(t, a.apiKey), 401, 'unauthorized');
    expectError(await evaluate(t, a.apiKey, validClaim()), 401, 'unauthorized');
    expectError(await rotate(a.apiKey), 401, 'unauthorized');
    const now = await account(t, res.body.api_key);
    expect(now.status).toBe(200);
    expect(now.body).toMatchObject({ key_id: res.body.key_id, email: a.email, tier: 'free' });
  });

  it('two rotations with the same key at once: one new key, the other 401', async () => {
    const a = await signupAccount(t);
    const both = await Promise.all([rotate(a.apiKey), rotate(a.apiKey)]);
    expect(both.map((r) => r.status).sort()).toEqual([201, 401]);
    const keys = (await t.store.apiKeys.list()).filter((k) => k.email === a.email);
    expect(keys.filter((k) => k.revokedAt === null)).toHaveLength(1);
  });

  it('a revoked key is refused in the Bearer form too', async () => {
    const a = await signupAccount(t);
    await request(t.app).delete('/v1/account').set('Authorization', `Bearer ${a.apiKey}`);
    expectError(
      await request(t.app).get('/v1/account').set('Authorization', `Bearer ${a.apiKey}`),
      401,
      'unauthorized',
    );
  });

  it('rotate keeps the tier and the locked policy', async () => {
    const a = await signupAccount(t);
    await t.store.apiKeys.setTier(a.email, 'pilot', now(t));
    const res = await rotate(a.apiKey);
    expect(res.status).toBe(201);
    const shown = await account(t, res.body.api_key);
    expect(shown.body).toMatchObject({ tier: 'pilot', limit: 10_000, locked_policy: null });
  });

  it('rotate needs a key and takes no body: without a key 401', async () => {
    expectError(await request(t.app).post('/v1/account/rotate'), 401, 'unauthorized');
  });

  it('a receipt issued before rotation names the old key_id and keeps verifying', async () => {
    const a = await signupAccount(t);
    const issued = await evaluate(t, a.apiKey, validClaim());
    expect(issued.status).toBe(200);
    expect(issued.body.receipt.submitter).toEqual({ kind: 'api_key', key_id: a.keyId });
    const rotated = await rotate(a.apiKey);
    expect(rotated.status).toBe(201);
    const checked = await request(t.app).post('/v1/verify').send(issued.body.receipt);
    expect(checked.body.valid).toBe(true);
    const next = await evaluate(t, rotated.body.api_key, validClaim());
    expect(next.body.receipt.submitter).toEqual({ kind: 'api_key', key_id: rotated.body.key_id });
  });

  it('the claim_id scope survives rotation: same claim replays, different inputs 409', async () => {
    const a = await signupAccount(t);
    const claim = validClaim();
    const first = await evaluate(t, a.apiKey, claim);
    expect(first.status).toBe(200);
    const { body } = await rotate(a.apiKey);
    const before = await ledgerState(t);
    const replay = await evaluate(t, body.api_key, claim);
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replay']).toBe('true');
    expect(replay.body.receipt.receipt_id).toBe(first.body.receipt.receipt_id);
    const conflict = await evaluate(t, body.api_key, { ...claim, claim: 'something else' });
    expectError(conflict, 409, 'claim_conflict');
    expect(await ledgerState(t)).toEqual(before);
  });

  it('the rate-limit window survives rotation', async () => {
    const a = await signupAccount(t);
    for (let i = 0; i < 3; i++) expect((await account(t, a.apiKey)).status).toBe(200);
    const { body } = await rotate(a.apiKey);
    const res = await account(t, body.api_key);
    // 3 reads, the rotation and this read, all in one account's window.
    expect(res.body.usage.requests_in_window).toBe(5);
    expect(res.body.remaining).toBe(95);
    expect(res.headers['x-ratelimit-remaining']).toBe('95');
  });

  it('a fresh key after rotation cannot escape an exhausted window', async () => {
    const a = await signupAccount(t);
    for (let i = 0; i < 99; i++) await account(t, a.apiKey);
    const { status, body } = await rotate(a.apiKey);
    expect(status).toBe(201);
    expectError(await account(t, body.api_key), 429, 'rate_limited');
  });

  it('custom policies stay the account’s after rotation', async () => {
    const a = await signupAccount(t);
    const created = await request(t.app)
      .post('/v1/policies')
      .set('X-API-Key', a.apiKey)
      .send({ name: 'kept', config: { minSources: 1 } });
    expect(created.status).toBe(201);
    const { body } = await rotate(a.apiKey);
    const list = await request(t.app).get('/v1/policies').set('X-API-Key', body.api_key);
    expect(list.body.policies.map((p: { name: string }) => p.name)).toContain('kept');
    const used = await evaluate(t, body.api_key, validClaim({ policy: 'kept' }));
    expect(used.status).toBe(200);
    expect(used.body.receipt.policy.name).toBe('kept');
    const deleted = await request(t.app).delete('/v1/policies/kept').set('X-API-Key', body.api_key);
    expect(deleted.status).toBe(204);
  });

  it('DELETE /v1/account: 200 {revoked: true, key_id}; the key is 401 at once', async () => {
    const a = await signupAccount(t);
    const res = await request(t.app).delete('/v1/account').set('X-API-Key', a.apiKey);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ revoked: true, key_id: a.keyId });
    expectError(await account(t, a.apiKey), 401, 'unauthorized');
    expectError(await evaluate(t, a.apiKey, validClaim()), 401, 'unauthorized');
    expectError(
      await request(t.app).delete('/v1/account').set('X-API-Key', a.apiKey),
      401,
      'unauthorized',
    );
    expectError(await rotate(a.apiKey), 401, 'unauthorized');
  });

  it("DELETE /v1/account disables the account's webhook receivers at the service clock's time", async () => {
    const a = await signupAccount(t);
    const owner = (await t.store.apiKeys.findActiveByEmail(a.email))!.id;
    await t.store.webhooks.insertReceiver(
      {
        id: 'whr_revoked_account',
        owner,
        url: 'https://hooks.example.com/svc',
        event: 'receipt.created',
        secretSealed: 'sealed',
        status: 'active',
        createdAt: now(t),
        disabledAt: null,
        disabledReason: null,
      },
      10,
    );
    t.clock.advance(90_000);
    expect((await request(t.app).delete('/v1/account').set('X-API-Key', a.apiKey)).status).toBe(
      200,
    );
    expect(await t.store.webhooks.listReceivers(owner)).toEqual([
      expect.objectContaining({
        id: 'whr_revoked_account',
        status: 'disabled',
        disabledAt: now(t),
        disabledReason: 'account revoked',
      }),
    ]);
  });

  it('revoking one account leaves another untouched', async () => {
    const a = await signupAccount(t);
    const b = await signupAccount(t);
    await request(t.app).delete('/v1/account').set('X-API-Key', a.apiKey);
    expect((await account(t, b.apiKey)).status).toBe(200);
  });
});

describe('stored keys: no reversible copy of the raw key anywhere in the database', () => {
  let dir: string;
  let t: TestApp;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-account-keys-'));
    t = buildTestApp({ store: openSqliteStore(join(dir, 'ledger.db')) });
  });
  afterEach(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Every text and blob cell of every table, as text. */
  function dump(): string {
    const db = new Database(join(dir, 'ledger.db'), { readonly: true });
    try {
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
        name: string;
      }[];
      const cells: string[] = [];
      for (const { name } of tables) {
        for (const row of db.prepare(`SELECT * FROM "${name}"`).all() as Json[]) {
          for (const value of Object.values(row)) {
            if (value instanceof Buffer)
              cells.push(value.toString('latin1'), value.toString('hex'));
            else if (value !== null) cells.push(String(value));
          }
        }
      }
      return cells.join('\n');
    } finally {
      db.close();
    }
  }
  type Json = Record<string, unknown>;

  const formsOf = (raw: string) => {
    const uuid = raw.slice('sk_svc_'.length);
    return [
      raw,
      uuid,
      uuid.replace(/-/g, ''),
      Buffer.from(raw, 'utf8').toString('base64'),
      Buffer.from(raw, 'utf8').toString('base64url'),
      Buffer.from(raw, 'utf8').toString('hex'),
      Buffer.from(uuid.replace(/-/g, ''), 'hex').toString('base64'),
    ];
  };

  it('neither the raw key nor its base64 or hex forms are stored, after signup, use and rotation', async () => {
    const a = await signupAccount(t, uniqueEmail('stored'));
    expect((await evaluate(t, a.apiKey, validClaim())).status).toBe(200);
    const rotated = await request(t.app).post('/v1/account/rotate').set('X-API-Key', a.apiKey);
    expect(rotated.status).toBe(201);
    const b = await signupAccount(t, uniqueEmail('stored'));
    await request(t.app).delete('/v1/account').set('X-API-Key', b.apiKey);

    const text = dump();
    // The dump does hold the accounts: the search is not vacuous.
    expect(text).toContain(a.keyId);
    expect(text).toContain(rotated.body.key_id);
    for (const raw of [a.apiKey, rotated.body.api_key as string, b.apiKey]) {
      for (const form of formsOf(raw)) expect(text).not.toContain(form);
    }
  });

  it('the api_keys table has no ciphertext column', () => {
    const db = new Database(join(dir, 'ledger.db'), { readonly: true });
    try {
      const columns = (db.prepare('PRAGMA table_info(api_keys)').all() as { name: string }[]).map(
        (c) => c.name,
      );
      expect(columns).toEqual(expect.arrayContaining(['key_id', 'email', 'tier']));
      for (const column of columns) {
        expect(column).not.toMatch(/cipher|encrypt|sealed|secret|raw|plain|api_key$/i);
      }
    } finally {
      db.close();
    }
  });

  it('the in-memory store’s records hold no form of the key either', async () => {
    const mem = buildTestApp();
    try {
      const a = await signupAccount(mem);
      const records = JSON.stringify(await mem.store.apiKeys.list());
      expect(records).toContain(a.keyId);
      for (const form of formsOf(a.apiKey)) expect(records).not.toContain(form);
    } finally {
      await mem.close();
    }
  });
});
