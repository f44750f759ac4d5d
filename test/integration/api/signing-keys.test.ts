import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import request from 'supertest';
import { type SigningKeyRecord, transitionStatementBytes } from '@svc/verify';
import type { ServerKey } from '../../../src/ports/signer.js';
import type { Store } from '../../../src/ports/store.js';
import { SigningKeyService } from '../../../src/services/signing-keys.js';
import { TransparencyLog } from '../../../src/services/transparency-log.js';
import { migrate, VERSION_AFTER } from '../../../src/storage/sqlite/migrations.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { appendRequest, makeClaim, signClaim } from '../../contract/ledger-fixtures.js';
import { buildTestApp, ManualClock, newServerKey, type TestApp } from '../../support/harness.js';
import { newKey } from '../../support/api.js';
import { validClaim } from '../../support/claims.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ORIGIN = 'svc.example/ledger';

// A key rotation on the embedded store: receipts of both keys verify, the history names
// both with the sequences they signed, and the old key's process signs nothing more.
describe('signing-key history', () => {
  let dir: string;
  let store: Store;
  const clock = new ManualClock();
  const keys = () => new SigningKeyService({ store: store.signingKeys, clock, origin: ORIGIN });
  const apps: TestApp[] = [];
  const appWith = (serverKey: ServerKey) => {
    const t = buildTestApp({ store, serverKey, clock, logOrigin: ORIGIN });
    apps.push(t);
    return t;
  };
  const apiKeys = new Map<TestApp, string>();
  const evaluate = async (t: TestApp) => {
    if (!apiKeys.has(t)) apiKeys.set(t, await newKey(t));
    return request(t.app).post('/v1/evaluate').set('X-API-Key', apiKeys.get(t)!).send(validClaim());
  };
  const verify = async (t: TestApp, receipt: Json) => {
    const res = await request(t.app).post('/v1/verify').send(receipt);
    expect(res.status).toBe(200);
    return res.body as Json;
  };
  const check = (result: Json, name: string) =>
    (result.checks as Json[]).find((c) => c.name === name)!;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-signing-keys-'));
    store = openSqliteStore(join(dir, 'ledger.db'));
  });
  afterEach(async () => {
    for (const t of apps.splice(0)) await t.jobs.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('rotation keeps every receipt verifiable and partitions the ledger between the keys', async () => {
    const oldKey = newServerKey();
    const newKey = newServerKey();
    await keys().register(oldKey);
    const before = appWith(oldKey);
    const r1 = (await evaluate(before)).body.receipt as Json;
    const r2 = (await evaluate(before)).body.receipt as Json;
    expect(r2.position.sequence).toBe(2);

    clock.advance(1000);
    await keys().rotate(oldKey, newKey);
    // The process still holding the old key signs no receipt and no checkpoint now.
    const refused = await evaluate(before);
    expect(refused.status).toBe(503);
    expect(refused.body.code).toBe('unavailable');
    expect(refused.body.error).toContain('the signing key was rotated');
    expect((await store.ledger.head()).sequence).toBe(2);
    // Deep health says so too: a probe must not keep routing traffic to a process that
    // cannot sign; the shallow check (liveness) stays 200.
    const deep = await request(before.app).get('/health?deep=true');
    expect(deep.status).toBe(503);
    expect(deep.body.ok).toBe(false);
    expect(deep.body.checks.signer).toEqual({
      ok: false,
      latency_ms: expect.any(Number),
      error: expect.stringContaining('no longer the ledger'),
    });
    expect(deep.body.checks.store.ok).toBe(true);
    expect((await request(before.app).get('/health')).status).toBe(200);
    const oldLog = new TransparencyLog({
      tree: store.tree,
      ledger: store.ledger,
      serverKey: oldKey,
      clock,
      origin: ORIGIN,
      signingKeys: keys(),
    });
    await expect(oldLog.makeCheckpoint()).rejects.toThrow(/no longer the ledger's current key/);

    const after = appWith(newKey);
    expect((await request(after.app).get('/health?deep=true')).status).toBe(200);
    const r3 = (await evaluate(after)).body.receipt as Json;
    expect(r3.position.sequence).toBe(3);
    expect(r3.attestations[0].key_id).toBe(newKey.keyId);

    for (const receipt of [r1, r2, r3]) {
      const result = await verify(after, receipt);
      expect(result.valid).toBe(true);
      expect(check(result, 'signature_valid').status).toBe('PASS');
      expect(check(result, 'chain_linkage').status).toBe('PASS');
      expect(check(result, 'hash_integrity').status).toBe('PASS');
    }

    const listed = await request(after.app).get('/v1/keys');
    expect(listed.status).toBe(200);
    expect(listed.body.origin).toBe(ORIGIN);
    const [a, b] = listed.body.keys as SigningKeyRecord[];
    expect(listed.body.keys).toHaveLength(2);
    expect(a).toMatchObject({
      key_id: oldKey.keyId,
      status: 'retired',
      first_sequence: 1,
      last_sequence: 2,
      public_key_pem: oldKey.publicKeyPem,
      transition: null,
    });
    expect(a!.verifier_key).toMatch(new RegExp(`^${ORIGIN}\\+[0-9a-f]{8}\\+`));
    expect(b).toMatchObject({
      key_id: newKey.keyId,
      status: 'current',
      first_sequence: 3,
      last_sequence: null,
      public_key_pem: newKey.publicKeyPem,
    });
    expect(b!.transition!.statement).toEqual({
      type: 'svc-key-transition-v1',
      log: ORIGIN,
      previous_key_id: oldKey.keyId,
      new_key_id: newKey.keyId,
      new_public_key: Buffer.from(newKey.publicKeyRaw).toString('base64'),
      first_sequence: 3,
      issued_at: new Date(clock.now()).toISOString(),
    });
    // Signed by the old key over the statement's canonical bytes.
    expect(
      oldKey.verify(
        Buffer.from(b!.transition!.signature, 'base64'),
        transitionStatementBytes(b!.transition!.statement),
        oldKey.publicKeyRaw,
      ),
    ).toBe(true);
    // The current key stays at /v1/keys/server.
    const server = await request(after.app).get('/v1/keys/server');
    expect(server.headers['x-svc-key-id']).toBe(newKey.keyId);
    // The new key's process signs checkpoints.
    const log = new TransparencyLog({
      tree: store.tree,
      ledger: store.ledger,
      serverKey: newKey,
      clock,
      origin: ORIGIN,
      signingKeys: keys(),
    });
    expect((await log.makeCheckpoint()).size).toBe(3);
  });

  it('refuses at start a retired key, and a key the history does not hold', async () => {
    const oldKey = newServerKey();
    const newKey = newServerKey();
    await keys().register(oldKey);
    await keys().rotate(oldKey, newKey);
    await expect(keys().register(oldKey)).rejects.toThrow(
      `the signing key ${oldKey.keyId} is retired in this ledger's key history; the current key is ${newKey.keyId}`,
    );
    await expect(keys().register(newServerKey())).rejects.toThrow(
      /is not in this ledger's key history/,
    );
    await expect(keys().register(newKey)).resolves.toHaveLength(2);
  });

  it('a receipt whose key did not sign its sequence fails with the reason', async () => {
    const oldKey = newServerKey();
    const newKey = newServerKey();
    await keys().register(oldKey);
    const before = appWith(oldKey);
    await evaluate(before);
    await keys().rotate(oldKey, newKey);
    const after = appWith(newKey);
    const r2 = (await evaluate(after)).body.receipt as Json;
    // The same receipt re-signed by the old key at a sequence the old key never signed.
    const forged = signClaim(makeClaim(), oldKey, { log: ORIGIN }).entryAt({
      sequence: 1,
      receipt_hash: r2.position.previous_receipt_hash,
    }).receipt as unknown as Json;
    const result = await verify(after, forged);
    expect(result.valid).toBe(false);
    expect(check(result, 'signature_valid')).toMatchObject({
      status: 'FAIL',
      detail: `key ${oldKey.keyId} did not sign sequence 2: it signed sequences 1 to 1`,
    });
    const stranger = signClaim(makeClaim(), newServerKey(), { log: ORIGIN }).entryAt({
      sequence: 0,
      receipt_hash: null,
    }).receipt as unknown as Json;
    expect(check(await verify(after, stranger), 'signature_valid').detail).toMatch(
      /which is not a key of this ledger's key history/,
    );
  });

  it('revocation fails the revoked key’s receipts from that sequence, with the reason', async () => {
    const oldKey = newServerKey();
    const newKey = newServerKey();
    await keys().register(oldKey);
    const before = appWith(oldKey);
    const r1 = (await evaluate(before)).body.receipt as Json;
    const r2 = (await evaluate(before)).body.receipt as Json;
    await keys().rotate(oldKey, newKey);
    const revoked = await keys().revoke(oldKey.keyId, 2, newKey);
    expect(revoked[0]).toMatchObject({
      status: 'revoked',
      last_sequence: 2,
      revoked_from_sequence: 2,
    });
    const after = appWith(newKey);
    expect((await verify(after, r1)).valid).toBe(true);
    const result = await verify(after, r2);
    expect(result.valid).toBe(false);
    expect(check(result, 'signature_valid').detail).toMatch(
      new RegExp(
        `^key ${oldKey.keyId} is revoked from sequence 2 \\(revoked .*\\): receipt 2 is not trusted$`,
      ),
    );
    await expect(keys().revoke(oldKey.keyId, 1, newKey)).rejects.toThrow(/already revoked/);
    await expect(keys().revoke(newKey.keyId, 9, newKey)).rejects.toThrow(
      /--from-sequence must be from 3 to 3/,
    );
    // The store itself refuses a change the triggers do not allow.
    const db = new Database(join(dir, 'ledger.db'));
    try {
      expect(() =>
        db.prepare("UPDATE signing_keys SET status = 'current' WHERE key_id = ?").run(oldKey.keyId),
      ).toThrow('not an allowed signing-key transition');
      expect(() => db.prepare('DELETE FROM signing_keys').run()).toThrow('append-only');
      expect(() =>
        db.prepare('UPDATE signing_keys SET first_sequence = 7 WHERE key_id = ?').run(newKey.keyId),
      ).toThrow(
        /identity, start and transition never change|not an allowed signing-key transition/,
      );
    } finally {
      db.close();
    }
  });

  it('an upgraded ledger takes its history from its receipts', async () => {
    // The migration that adds the history leaves it empty beside the receipts.
    await store.close();
    const file = join(dir, 'ledger.db');
    rmSync(file);
    const old = new Database(file);
    migrate(old, VERSION_AFTER.signingKeys - 1);
    expect(() => old.prepare('SELECT 1 FROM signing_keys').get()).toThrow(/no such table/);
    old.close();
    store = openSqliteStore(file);
    expect(await store.signingKeys.list()).toEqual([]);
    const earlier = newServerKey();
    const serverKey = newServerKey();
    // Receipts of a key whose private key is gone, then of the server's key, appended while
    // the history is empty (as before it existed: nothing checks the signer then).
    for (const key of [earlier, earlier, serverKey])
      await store.ledger.append(appendRequest(signClaim(makeClaim(), key, { log: ORIGIN })));
    const history = await keys().register(serverKey);
    expect(history).toEqual([
      expect.objectContaining({
        key_id: earlier.keyId,
        status: 'retired',
        first_sequence: 1,
        last_sequence: 2,
        public_key_pem: null,
        transition: null,
      }),
      expect.objectContaining({
        key_id: serverKey.keyId,
        status: 'current',
        first_sequence: 3,
        last_sequence: null,
        public_key_pem: serverKey.publicKeyPem,
      }),
    ]);
    // Registering again changes nothing.
    expect(await keys().register(serverKey)).toEqual(history);
  });

  it('a ledger signed by the server key alone adopts it from sequence 1', async () => {
    const serverKey = newServerKey();
    for (let i = 0; i < 3; i++)
      await store.ledger.append(appendRequest(signClaim(makeClaim(), serverKey, { log: ORIGIN })));
    const history = await keys().register(serverKey);
    expect(history).toEqual([
      expect.objectContaining({ key_id: serverKey.keyId, status: 'current', first_sequence: 1 }),
    ]);
  });
});
