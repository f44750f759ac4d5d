import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  afterAll,
  afterEach,
  beforeAll,
  beforeEach,
  describe,
  expect,
  it,
  jest,
} from '@jest/globals';
import request from 'supertest';
import { AUTH_CACHE_TTL_MS } from '../../src/services/api-keys.js';
import { buildTestApp, ManualClock } from '../support/harness.js';
import type { Store } from '../../src/ports/store.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { runNode } from '../fixtures/run-node.js';
import { transpileTree, type TranspiledTree } from '../fixtures/transpile-tree.js';
import { expectError, KEY_ID } from '../support/api.js';
import { H } from '../support/receipts.js';
import { STRICT_CONFIG } from '../support/policies.js';
import { escalatedClaim, validClaim } from '../support/claims.js';

// Child processes on a machine shared with other test runs: generous time limits.
jest.setTimeout(120_000);

const RAW_KEY = /sk_svc_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

// The operator CLI runs as a real child process on a temp data dir; the service is an app over
// the same SQLite file.
describe('svc keys and svc policies (operator CLI)', () => {
  let tree: TranspiledTree;
  let dataDir: string;
  let store: Store | undefined;
  const env = () => ({ ...process.env, SVC_DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const cli = (...args: string[]) =>
    runNode(fileURLToPath(tree.url('src/cli/svc.ts')), args, 20_000, env());

  beforeAll(() => {
    tree = transpileTree(['src/cli/svc.ts']);
  });
  afterAll(() => tree.cleanup());
  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-keys-cli-'));
    // The ledger the service's first start leaves: the CLI works only where there is one.
    await openSqliteStore(join(dataDir, 'ledger.db')).close();
  });
  afterEach(async () => {
    await store?.close();
    store = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The service on the CLI's data dir; every app of a test shares one store. */
  function app(publicReads = true) {
    store ??= openSqliteStore(join(dataDir, 'ledger.db'));
    return buildTestApp({
      dataDir,
      store,
      clock,
      config: { anonLimitPerHour: 1000, signupLimitPerHour: 100, publicReads },
    }).app;
  }
  // An operator's change reaches a running service within the key cache's bound.
  const clock = new ManualClock(Date.now());
  const afterCacheBound = () => clock.advance(AUTH_CACHE_TTL_MS);

  /** The raw key and key_id a create/rotate printed. */
  function issued(stdout: string): { apiKey: string; keyId: string } {
    const apiKey = RAW_KEY.exec(stdout)?.[0];
    const keyId = /kid_[0-9A-HJKMNP-TV-Z]{26}/.exec(stdout)?.[0];
    expect(apiKey).toBeDefined();
    expect(keyId).toMatch(KEY_ID);
    return { apiKey: apiKey!, keyId: keyId! };
  }

  /** A key locked to `policy`, made with the CLI: its raw key and key_id. */
  const lockedKey = async (email: string, policy: string) =>
    issued((await cli('keys', 'create', '--email', email, '--policy', policy, '--locked')).stdout);

  /** A shared policy made with the CLI, which must succeed. */
  async function createPolicy(name: string, config: string, overrides: string): Promise<void> {
    expect(
      (await cli('policies', 'create', name, '--config', config, '--overrides', overrides)).code,
    ).toBe(0);
  }

  it('keys create prints a working key and its key_id; list never shows a raw key', async () => {
    const run = await cli('keys', 'create', '--email', 'Ops@Example.com', '--tier', 'enterprise');
    expect(run.code).toBe(0);
    const { apiKey, keyId } = issued(run.stdout);
    const account = await request(app()).get('/v1/account').set('X-API-Key', apiKey);
    expect(account.status).toBe(200);
    expect(account.body).toMatchObject({
      key_id: keyId,
      email: 'ops@example.com',
      tier: 'enterprise',
      locked_policy: null,
    });

    const list = await cli('keys', 'list');
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(keyId);
    expect(list.stdout).toContain('ops@example.com');
    expect(list.stdout).toContain('enterprise');
    expect(list.stdout).toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/);
    expect(list.stdout).not.toMatch(/sk_svc_/);
    expect(list.stdout).not.toContain(apiKey.slice('sk_svc_'.length));
  });

  it('signup through the API of an address the CLI created (enterprise) is 409, no key', async () => {
    const run = await cli('keys', 'create', '--email', 'big@example.com', '--tier', 'enterprise');
    const { apiKey } = issued(run.stdout);
    const res = await request(app()).post('/v1/signup').send({ email: ' BIG@example.com' });
    expectError(res, 409, 'email_registered');
    expect(JSON.stringify(res.body)).not.toContain(apiKey);
  });

  it('keys create refuses an address signup refuses, with the same reason (exit 2, no key)', async () => {
    for (const email of ['notanemail', '', '  ', 'a@b', `${'x'.repeat(250)}@example.com`]) {
      const signup = await request(app()).post('/v1/signup').send({ email });
      expectError(signup, 400, 'validation_failed');
      // The API names the field `email`, the CLI its option `--email`; the reasons are the same.
      const reasons = (signup.body.error as string).replaceAll('email: ', '--email: ');
      const run = await cli('keys', 'create', '--email', email);
      expect({ email, code: run.code, stdout: run.stdout }).toEqual({ email, code: 2, stdout: '' });
      expect(run.stderr).toBe(`svc: ${reasons}\nRun "svc --help" for usage.\n`);
    }
    expect((await cli('keys', 'list')).stdout).toBe('no keys\n');
  });

  it('keys show by key_id shows a revoked key as revoked; by email, every key of the address', async () => {
    const first = issued((await cli('keys', 'create', '--email', 'shown@example.com')).stdout);
    const second = issued((await cli('keys', 'rotate', first.keyId)).stdout);
    const byId = await cli('keys', 'show', first.keyId);
    expect(byId.code).toBe(0);
    expect(byId.stdout).toMatch(
      new RegExp(
        `^${first.keyId} {2}shown@example\\.com .* {2}revoked \\d{4}-\\d{2}-\\d{2}T[^ ]+\\n$`,
      ),
    );
    const active = await cli('keys', 'show', second.keyId);
    expect(active.stdout).toMatch(new RegExp(`^${second.keyId} .* {2}active\\n$`));

    expect((await cli('keys', 'revoke', second.keyId)).code).toBe(0);
    const byEmail = await cli('keys', 'show', ' SHOWN@example.com ');
    expect(byEmail.code).toBe(0);
    const lines = byEmail.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^${first.keyId} .* {2}revoked \\d{4}-`));
    expect(lines[1]).toMatch(new RegExp(`^${second.keyId} .* {2}revoked \\d{4}-`));

    const none = await cli('keys', 'show', 'nobody@example.com');
    expect(none.code).toBe(1);
    expect(none.stderr).toBe('svc: no key matches nobody@example.com\n');
  });

  it('a data dir without a ledger is refused with exit 2 and left as it was, by every command', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'svc-keys-cli-empty-'));
    const absent = join(empty, 'not-there');
    try {
      for (const dir of [empty, absent]) {
        for (const args of [
          ['keys', 'list'],
          ['keys', 'create', '--email', 'first@example.com'],
          ['keys', 'show', 'first@example.com'],
          ['policies', 'list'],
          ['policies', 'create', 'production', '--config', '{}'],
        ]) {
          const run = await runNode(fileURLToPath(tree.url('src/cli/svc.ts')), args, 20_000, {
            ...env(),
            SVC_DATA_DIR: dir,
          });
          expect({ args, code: run.code, stdout: run.stdout }).toEqual({
            args,
            code: 2,
            stdout: '',
          });
          expect(run.stderr).toBe(
            `svc: no ledger in ${dir} (it has no ledger.db): the service creates it when it first starts; set SVC_DATA_DIR (or MONGODB_URI) to the store the service uses\nRun "svc --help" for usage.\n`,
          );
        }
      }
      expect(readdirSync(empty)).toEqual([]);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('keys create for an address that has a key fails with exit 1', async () => {
    expect((await cli('keys', 'create', '--email', 'dup@example.com')).code).toBe(0);
    const again = await cli('keys', 'create', '--email', ' DUP@example.com ');
    expect(again.code).toBe(1);
    expect(again.stdout).not.toMatch(/sk_svc_/);
    expect(again.stderr).toMatch(/^svc: /);
  });

  it('keys revoke by key_id and by email: the key is 401 once the key cache bound passed', async () => {
    const one = issued((await cli('keys', 'create', '--email', 'r1@example.com')).stdout);
    const two = issued((await cli('keys', 'create', '--email', 'r2@example.com')).stdout);
    const a = app();
    expect((await request(a).get('/v1/account').set('X-API-Key', one.apiKey)).status).toBe(200);

    const byId = await cli('keys', 'revoke', one.keyId);
    expect(byId.code).toBe(0);
    afterCacheBound();
    expectError(
      await request(a).get('/v1/account').set('X-API-Key', one.apiKey),
      401,
      'unauthorized',
    );
    const byEmail = await cli('keys', 'revoke', 'R2@example.com');
    expect(byEmail.code).toBe(0);
    afterCacheBound();
    expectError(
      await request(a).get('/v1/account').set('X-API-Key', two.apiKey),
      401,
      'unauthorized',
    );

    const list = await cli('keys', 'list');
    expect(list.stdout).toMatch(new RegExp(`${one.keyId}.*revoked`));
    // Revoking again: no active key matches.
    expect((await cli('keys', 'revoke', one.keyId)).code).toBe(1);
    // The revoked account's address stays registered: only the operator issues it a key.
    expectError(
      await request(a).post('/v1/signup').send({ email: 'r1@example.com' }),
      409,
      'email_registered',
    );
    const reissued = await cli('keys', 'create', '--email', 'r1@example.com');
    expect(reissued.code).toBe(0);
    expect(issued(reissued.stdout).keyId).not.toBe(one.keyId);
  });

  it('keys rotate prints a new key; the old is 401, tier kept', async () => {
    const old = issued(
      (await cli('keys', 'create', '--email', 'rot@example.com', '--tier', 'pilot')).stdout,
    );
    const run = await cli('keys', 'rotate', 'rot@example.com');
    expect(run.code).toBe(0);
    const next = issued(run.stdout);
    expect(next.apiKey).not.toBe(old.apiKey);
    expect(next.keyId).not.toBe(old.keyId);
    const a = app();
    expectError(
      await request(a).get('/v1/account').set('X-API-Key', old.apiKey),
      401,
      'unauthorized',
    );
    const account = await request(a).get('/v1/account').set('X-API-Key', next.apiKey);
    expect(account.body).toMatchObject({ key_id: next.keyId, tier: 'pilot' });
    // Rotate by key_id as well.
    const again = await cli('keys', 'rotate', next.keyId);
    expect(again.code).toBe(0);
    expect(issued(again.stdout).keyId).not.toBe(next.keyId);
  });

  it('keys set-tier by email and by key_id', async () => {
    const k = issued((await cli('keys', 'create', '--email', 'tier@example.com')).stdout);
    expect((await cli('keys', 'set-tier', 'TIER@example.com', 'pilot')).code).toBe(0);
    const a = app();
    expect((await request(a).get('/v1/account').set('X-API-Key', k.apiKey)).body.tier).toBe(
      'pilot',
    );
    expect((await cli('keys', 'set-tier', k.keyId, 'enterprise')).code).toBe(0);
    afterCacheBound();
    expect((await request(a).get('/v1/account').set('X-API-Key', k.apiKey)).body.tier).toBe(
      'enterprise',
    );
  });

  it('exit codes: 2 for wrong usage, 1 for a key that does not exist', async () => {
    for (const args of [
      ['keys', 'create'],
      ['keys', 'create', '--email', 'x@example.com', '--tier', 'gold'],
      ['keys', 'set-tier', 'x@example.com', 'gold'],
      ['policies', 'create', 'p', '--config', '{"minSources":2}', '--overrides', 'loosen'],
      ['policies', 'create', 'p', '--config', 'not json'],
      ['policies', 'frobnicate'],
    ]) {
      const run = await cli(...args);
      expect({ args, code: run.code }).toEqual({ args, code: 2 });
    }
    for (const args of [
      ['keys', 'revoke', 'nobody@example.com'],
      ['keys', 'rotate', 'kid_01ARZ3NDEKTSV4RRFFQ69G5FAV'],
      ['keys', 'set-tier', 'nobody@example.com', 'pilot'],
      ['policies', 'delete', 'no-such-policy'],
    ]) {
      const run = await cli(...args);
      expect({ args, code: run.code }).toEqual({ args, code: 1 });
    }
  });

  it('policies create makes a shared policy every key sees and uses; list and delete', async () => {
    const created = await cli(
      'policies',
      'create',
      'production',
      '--config',
      '{"minSources":2,"requireHumanApproval":true}',
      '--overrides',
      'none',
      '--description',
      'Prod gate',
    );
    expect(created.code).toBe(0);
    const effective = {
      minSources: 2,
      minSourceTypes: 1,
      minConfidence: 0.5,
      requireProvenance: false,
      requireReplay: true,
      requireHumanApproval: true,
      maxRiskScope: 5,
    };
    expect(created.stdout).toContain(H(effective));
    const a = app();
    const keys = [];
    for (const email of ['s1@example.com', 's2@example.com']) {
      keys.push((await request(a).post('/v1/signup').send({ email })).body.api_key as string);
    }
    for (const key of keys) {
      const list = await request(a).get('/v1/policies').set('X-API-Key', key);
      const view = list.body.policies.find((p: { name: string }) => p.name === 'production');
      expect(view).toMatchObject({
        name: 'production',
        description: 'Prod gate',
        builtin: false,
        shared: true,
        overrides: 'none',
        effective,
        config_hash: H(effective),
      });
      const used = await request(a)
        .post('/v1/evaluate')
        .set('X-API-Key', key)
        .send(validClaim({ policy: 'production' }));
      expect(used.status).toBe(200);
      expect(used.body.receipt.policy).toMatchObject({
        name: 'production',
        config_hash: H(effective),
      });
      // overrides none: no per-request change.
      const refused = await request(a)
        .post('/v1/evaluate')
        .set('X-API-Key', key)
        .send(validClaim({ policy: 'production', policyConfig: { minSources: 3 } }));
      expectError(refused, 400, 'policy_override_refused');
      // No key may delete the shared policy.
      expectError(
        await request(a).delete('/v1/policies/production').set('X-API-Key', key),
        404,
        'not_found',
      );
    }
    // A key cannot take the shared name for itself.
    const taken = await request(a)
      .post('/v1/policies')
      .set('X-API-Key', keys[0]!)
      .send({ name: 'production', config: {} });
    expectError(taken, 409, 'policy_conflict');

    const list = await cli('policies', 'list');
    expect(list.code).toBe(0);
    expect(list.stdout).toContain('production');
    expect(list.stdout).toContain(H(effective));
    expect(list.stdout).toContain(H(STRICT_CONFIG));

    expect((await cli('policies', 'delete', 'production')).code).toBe(0);
    expectError(
      await request(a).get('/v1/policies/production').set('X-API-Key', keys[0]!),
      404,
      'not_found',
    );
  });

  it('policies create refuses a built-in name (exit 1)', async () => {
    const run = await cli('policies', 'create', 'strict', '--config', '{}');
    expect(run.code).toBe(1);
  });

  describe('readers, when reads are private (SVC_PUBLIC_READS=false)', () => {
    const searchIds = async (a: ReturnType<typeof app>, key: string) => {
      const res = await request(a).get('/v1/receipts/search?limit=100').set('X-API-Key', key);
      expect(res.status).toBe(200);
      return res.body.receipts.map((r: { receipt_id: string }) => r.receipt_id).sort();
    };

    it('--reader all reads every account’s receipts; set-reader gives and takes it; rotate keeps it', async () => {
      const own = issued((await cli('keys', 'create', '--email', 'own@example.com')).stdout);
      const create = await cli('keys', 'create', '--email', 'audit@example.com', '--reader', 'all');
      expect(create.code).toBe(0);
      expect(create.stdout).toContain('reader all');
      const auditor = issued(create.stdout);
      const a = app(false);
      const mine = await request(a)
        .post('/v1/evaluate')
        .set('X-API-Key', own.apiKey)
        .send(validClaim());
      const theirs = await request(a)
        .post('/v1/evaluate')
        .set('X-API-Key', auditor.apiKey)
        .send(validClaim());
      const ids = [mine, theirs].map((r) => r.body.receipt.receipt_id as string);
      expect(await searchIds(a, own.apiKey)).toEqual([ids[0]]);
      expect(await searchIds(a, auditor.apiKey)).toEqual([...ids].sort());
      expect((await cli('keys', 'list')).stdout).toMatch(
        new RegExp(`${auditor.keyId} .* reader all`),
      );

      expect((await cli('keys', 'set-reader', 'AUDIT@example.com', 'own')).code).toBe(0);
      afterCacheBound();
      expect(await searchIds(a, auditor.apiKey)).toEqual([ids[1]]);
      const give = await cli('keys', 'set-reader', own.keyId, 'all');
      expect(give.code).toBe(0);
      expect(give.stdout).toContain('reader all');
      afterCacheBound();
      expect(await searchIds(a, own.apiKey)).toEqual([...ids].sort());

      const rotated = await cli('keys', 'rotate', own.keyId);
      expect(rotated.code).toBe(0);
      expect(await searchIds(a, issued(rotated.stdout).apiKey)).toEqual([...ids].sort());

      expect((await cli('keys', 'set-reader', 'own@example.com', 'everything')).code).toBe(2);
      expect((await cli('keys', 'create', '--email', 'x@example.com', '--reader', 'x')).code).toBe(
        2,
      );
      expect((await cli('keys', 'set-reader', 'nobody@example.com', 'all')).code).toBe(1);
    });
  });

  it('--reviewer grants recording dispositions; set-reviewer withdraws and gives it; rotate keeps it', async () => {
    const agent = issued((await cli('keys', 'create', '--email', 'agent@example.com')).stdout);
    const create = await cli('keys', 'create', '--email', 'lead@example.com', '--reviewer');
    expect(create.code).toBe(0);
    expect(create.stdout).toMatch(/ reviewer$/m);
    const lead = issued(create.stdout);
    const plain = issued((await cli('keys', 'create', '--email', 'plain@example.com')).stdout);
    expect((await cli('keys', 'show', plain.keyId)).stdout).not.toContain('reviewer');
    const a = app();
    const parent = await request(a)
      .post('/v1/evaluate')
      .set('X-API-Key', agent.apiKey)
      .send(escalatedClaim({ pull_request: 7 }));
    expect(parent.body.receipt.policy.verdict).toBe('ESCALATED');
    const dispose = (key: string) =>
      request(a)
        .post(`/v1/receipts/${parent.body.receipt.receipt_id}/disposition`)
        .set('X-API-Key', key)
        .send({ decision: 'approve', reviewer: { id: 'lead@example.com' }, reason: 'Reviewed' });

    expect(expectError(await dispose(plain.apiKey), 403, 'forbidden')).toContain('reviewer');
    expect((await cli('keys', 'set-reviewer', 'LEAD@example.com', 'off')).code).toBe(0);
    afterCacheBound();
    expectError(await dispose(lead.apiKey), 403, 'forbidden');
    const give = await cli('keys', 'set-reviewer', lead.keyId, 'on');
    expect(give.code).toBe(0);
    expect(give.stdout).toMatch(/ reviewer$/m);
    const rotated = await cli('keys', 'rotate', lead.keyId);
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toMatch(/ reviewer$/m);
    expect((await dispose(issued(rotated.stdout).apiKey)).status).toBe(201);

    expect((await cli('keys', 'set-reviewer', 'plain@example.com', 'yes')).code).toBe(2);
    expect((await cli('keys', 'set-reviewer', 'nobody@example.com', 'on')).code).toBe(1);
  });

  describe('the lock belongs to the account', () => {
    it('a locked key cannot revoke itself; the operator revokes it, and its address stays 409', async () => {
      const locked = await lockedKey('lk@example.com', 'strict');
      const a = app();
      const refused = await request(a).delete('/v1/account').set('X-API-Key', locked.apiKey);
      expectError(refused, 403, 'locked_key');
      expect((await request(a).get('/v1/account').set('X-API-Key', locked.apiKey)).status).toBe(
        200,
      );
      const revoke = await cli('keys', 'revoke', 'lk@example.com');
      expect(revoke.code).toBe(0);
      afterCacheBound();
      expectError(
        await request(a).get('/v1/account').set('X-API-Key', locked.apiKey),
        401,
        'unauthorized',
      );
      expectError(
        await request(a).post('/v1/signup').send({ email: 'lk@example.com' }),
        409,
        'email_registered',
      );
    });

    it('keys unlock lifts the lock; the key may then close its account', async () => {
      const locked = await lockedKey('ul@example.com', 'strict');
      const unlock = await cli('keys', 'unlock', locked.keyId);
      expect(unlock.code).toBe(0);
      expect(unlock.stdout).toContain('policy -');
      expect((await cli('keys', 'unlock', locked.keyId)).code).toBe(1);
      const a = app();
      expect(
        (await request(a).get('/v1/account').set('X-API-Key', locked.apiKey)).body.locked_policy,
      ).toBeNull();
      const closed = await request(a).delete('/v1/account').set('X-API-Key', locked.apiKey);
      expect(closed.status).toBe(200);
    });
  });

  describe('a key locked to a policy', () => {
    it('--policy strict --locked: every claim is evaluated under strict, whatever it names', async () => {
      const run = await cli(
        'keys',
        'create',
        '--email',
        'agent@example.com',
        '--policy',
        'strict',
        '--locked',
      );
      expect(run.code).toBe(0);
      const { apiKey, keyId } = issued(run.stdout);
      const a = app();
      expect(
        (await request(a).get('/v1/account').set('X-API-Key', apiKey)).body.locked_policy,
      ).toBe('strict');
      for (const named of [
        {},
        { policy: 'default' },
        { policy: 'permissive' },
        { policy: 'strict' },
      ]) {
        const res = await request(a)
          .post('/v1/evaluate')
          .set('X-API-Key', apiKey)
          .send(validClaim(named));
        expect(res.status).toBe(200);
        expect(res.body.policy.config).toEqual(STRICT_CONFIG);
        expect(res.body.receipt.policy).toMatchObject({
          name: 'strict',
          config_hash: H(STRICT_CONFIG),
          overrides: false,
        });
        expect(res.body.receipt.submitter).toEqual({ kind: 'api_key', key_id: keyId });
      }
      const list = await cli('keys', 'list');
      expect(list.stdout).toMatch(new RegExp(`${keyId}.*strict`));
    });

    it('a locked key that loosens its policy through policyConfig is refused, also when it names default', async () => {
      const { apiKey } = await lockedKey('agent2@example.com', 'strict');
      const a = app();
      const before = await store!.ledger.head();
      for (const policy of [undefined, 'default', 'strict']) {
        const res = await request(a)
          .post('/v1/evaluate')
          .set('X-API-Key', apiKey)
          .send(
            validClaim({
              ...(policy ? { policy } : {}),
              policyConfig: { minSources: 0, minConfidence: 0, requireHumanApproval: false },
            }),
          );
        expect(expectError(res, 400, 'policy_override_refused')).toMatch(/policyConfig\./);
      }
      expect(await store!.ledger.head()).toEqual(before);
      const tighter = await request(a)
        .post('/v1/evaluate')
        .set('X-API-Key', apiKey)
        .send(validClaim({ policyConfig: { minSources: 3 } }));
      expect(tighter.status).toBe(200);
      expect(tighter.body.receipt.policy).toMatchObject({ name: 'strict', overrides: true });
    });

    it('locked to a policy whose mode is "any", overrides may still only tighten', async () => {
      await createPolicy('open', '{"minSources":2}', 'any');
      const { apiKey } = await lockedKey('agent3@example.com', 'open');
      const a = app();
      const looser = await request(a)
        .post('/v1/evaluate')
        .set('X-API-Key', apiKey)
        .send(validClaim({ policyConfig: { minSources: 1 } }));
      expect(expectError(looser, 400, 'policy_override_refused')).toContain(
        'policyConfig.minSources',
      );
      const tighter = await request(a)
        .post('/v1/evaluate')
        .set('X-API-Key', apiKey)
        .send(validClaim({ policy: 'permissive', policyConfig: { minSources: 3 } }));
      expect(tighter.status).toBe(200);
      expect(tighter.body.receipt.policy).toMatchObject({ name: 'open', overrides: true });
      // An unlocked key may loosen the same policy.
      const free = (await request(a).post('/v1/signup').send({ email: 'free@example.com' })).body
        .api_key as string;
      const loosened = await request(a)
        .post('/v1/evaluate')
        .set('X-API-Key', free)
        .send(validClaim({ policy: 'open', policyConfig: { minSources: 1 } }));
      expect(loosened.status).toBe(200);
      expect(loosened.body.receipt.policy).toMatchObject({ name: 'open', overrides: true });
    });

    it('a locked key cannot put a policy of its own in place of the lock', async () => {
      await createPolicy('gate', '{"minSources":2}', 'none');
      const { apiKey } = await lockedKey('agent6@example.com', 'gate');
      const a = app();
      // While the shared policy exists the name is taken.
      const zeroed = {
        name: 'gate',
        config: { minSources: 0, minSourceTypes: 0, minConfidence: 0, requireReplay: false },
        overrides: 'any',
      };
      expectError(
        await request(a).post('/v1/policies').set('X-API-Key', apiKey).send(zeroed),
        409,
        'policy_conflict',
      );
      // The operator deletes the shared policy (or is refused, which is as safe).
      await cli('policies', 'delete', 'gate');
      const own = await request(a).post('/v1/policies').set('X-API-Key', apiKey).send(zeroed);
      expect([201, 409]).toContain(own.status);
      const before = await store!.ledger.head();
      const res = await request(a)
        .post('/v1/evaluate')
        .set('X-API-Key', apiKey)
        .send(
          validClaim({
            sources: [
              {
                id: 'ci',
                type: 'ci',
                uri: 'https://ci.example/9',
                confidence: 0.01,
                content: 'tests FAILED',
              },
            ],
          }),
        );
      // Evaluated under the operator's gate, or refused; never under the key's own config.
      if (res.status === 200) {
        expect(res.body.policy.config).toMatchObject({ minSources: 2, requireReplay: true });
        expect(res.body.decision.proceed).toBe(false);
      } else {
        expect(res.status).toBe(400);
        expect(await store!.ledger.head()).toEqual(before);
      }
    });

    it('a shared policy is listed for anonymous callers too', async () => {
      expect((await cli('policies', 'create', 'visible', '--config', '{}')).code).toBe(0);
      const a = app();
      const list = await request(a).get('/v1/policies');
      expect(list.body.policies.map((p: { name: string }) => p.name)).toContain('visible');
      const one = await request(a).get('/v1/policies/visible');
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({ shared: true, builtin: false, overrides: 'tighten' });
    });

    it('rotation keeps the lock', async () => {
      const { apiKey } = await lockedKey('agent4@example.com', 'strict');
      const a = app();
      const rotated = await request(a).post('/v1/account/rotate').set('X-API-Key', apiKey);
      expect(rotated.status).toBe(201);
      const account = await request(a).get('/v1/account').set('X-API-Key', rotated.body.api_key);
      expect(account.body.locked_policy).toBe('strict');
      const res = await request(a)
        .post('/v1/evaluate')
        .set('X-API-Key', rotated.body.api_key)
        .send(validClaim({ policy: 'permissive' }));
      expect(res.body.receipt.policy.name).toBe('strict');
    });

    it('locking to a policy that does not exist fails (exit 1), nothing created', async () => {
      const run = await cli(
        'keys',
        'create',
        '--email',
        'agent5@example.com',
        '--policy',
        'nope',
        '--locked',
      );
      expect(run.code).toBe(1);
      expect(run.stdout).not.toMatch(/sk_svc_/);
      expect((await cli('keys', 'list')).stdout).not.toContain('agent5@example.com');
    });
  });
});
