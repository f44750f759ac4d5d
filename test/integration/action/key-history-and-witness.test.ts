import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCheckpointNote } from '@svc/verify';
import type { ServerKey } from '../../../src/ports/signer.js';
import type { Store } from '../../../src/ports/store.js';
import { SigningKeyService } from '../../../src/services/signing-keys.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { ManualClock, newServerKey } from '../../support/harness.js';
import { startLiveService, type LiveService } from '../../support/live-service.js';
import { signCheckpoint } from '../../support/log-dir.js';
import { runAction } from './run-action.js';
import { forgedPrefixHistory, resignReceipt } from '../../support/forged-key.js';
import { startScriptedServer, type ScriptedServer } from '../../support/scripted-server.js';
import { ed25519Witness, logVkey } from '../../support/tlog-witnesses.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ORIGIN = 'action.example/ledger';

// The bundled Action across a real signing-key rotation (two services over one store, the old
// one handing over with `SigningKeyService.rotate`, as `svc signing-key rotate` does), and as
// a witness of the log: against the live service, and against a server on 127.0.0.1 that
// serves whatever the test makes it lie with.
describe('the bundled Action, key history and log witness', () => {
  let dir: string;
  let store: Store;
  let before: LiveService;
  let after: LiveService;
  let oldKey: ServerKey;
  let newKey: ServerKey;
  let apiKey: string;
  let oldReceipt: string;
  let newReceipt: string;
  let fake: ScriptedServer;
  const state = () => join(dir, 'cache', 'svc-witness', 'checkpoint');
  const served = async (path: string) => (await fetch(`${after.url}${path}`)).text();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-action-history-'));
    store = openSqliteStore(join(dir, 'ledger.db'));
    const clock = new ManualClock(Date.now());
    const keys = new SigningKeyService({ store: store.signingKeys, clock, origin: ORIGIN });
    oldKey = newServerKey();
    newKey = newServerKey();
    await keys.register(oldKey);
    before = await startLiveService({ store, serverKey: oldKey, logOrigin: ORIGIN });
    ({ apiKey } = await before.signup());
    const r1 = (await before.evaluate(apiKey)).receipt as Json;
    await keys.rotate(oldKey, newKey);
    after = await startLiveService({ store, serverKey: newKey, logOrigin: ORIGIN });
    const r2 = (await after.evaluate(apiKey)).receipt as Json;
    expect([r1.attestations[0].key_id, r2.attestations[0].key_id]).toEqual([
      oldKey.keyId,
      newKey.keyId,
    ]);
    oldReceipt = JSON.stringify(r1);
    newReceipt = JSON.stringify(r2);

    fake = await startScriptedServer();
  });
  afterAll(async () => {
    await fake.close();
    await before.close();
    await after.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('key history', () => {
    it('pinned to the old key, verifies a receipt the new key signed through the served transition', async () => {
      const run = await runAction({
        'api-url': after.url,
        'api-key': apiKey,
        'key-fingerprint': oldKey.keyId,
      });
      expect({ errors: run.errors, warnings: run.warnings, code: run.code }).toEqual({
        errors: [],
        warnings: [],
        code: 0,
      });
      expect(run.outputs).toMatchObject({
        verdict: 'ALLOWED',
        admissibility: 'ACCEPTED',
        valid: 'true',
      });
      expect((JSON.parse(run.receiptText!) as Json).attestations[0].key_id).toBe(newKey.keyId);
      expect(run.summary).toContain(
        `| Key | <code>${newKey.keyId}</code> from ${after.url}/v1/keys (a later key, linked to key-fingerprint by 1 signed key transition) |`,
      );
    });

    it('pinned to the new key, does not trust a receipt of the retired key before it', async () => {
      const run = await runAction(
        {
          'api-url': after.url,
          mode: 'verify',
          'receipt-file': 'old.json',
          'key-fingerprint': newKey.keyId,
        },
        { files: { 'old.json': oldReceipt } },
      );
      expect(run.code).toBe(1);
      expect(run.outputs.valid).toBe('false');
    });

    it('does not trust a key put before the pin with a transition it signed itself', async () => {
      const forgedKey = newServerKey();
      const history = forgedPrefixHistory(
        JSON.parse(await served('/v1/keys')) as never,
        newKey,
        forgedKey,
      );
      fake.routes = { '/v1/keys': { body: JSON.stringify(history) } };
      const forged = resignReceipt(JSON.parse(newReceipt) as Json, forgedKey);
      const run = await runAction(
        {
          'api-url': fake.url,
          mode: 'verify',
          'receipt-file': 'forged.json',
          'key-fingerprint': newKey.keyId,
        },
        { files: { 'forged.json': JSON.stringify(forged) } },
      );
      expect(run.code).toBe(1);
      expect(run.outputs.valid).toBe('false');
      expect(run.errors[0]).toContain('svc receipt not trusted');
      expect(run.errors[0]).toContain(`no Ed25519 attestation by key ${newKey.keyId}`);
    });

    it('refuses a history whose transition is not signed by the previous key', async () => {
      const history = JSON.parse(await served('/v1/keys')) as Json;
      history.keys[1].transition.statement.issued_at = '2020-01-01T00:00:00.000Z';
      fake.routes = {
        '/v1/keys': { body: JSON.stringify(history) },
        '/v1/keys/server': { body: newKey.publicKeyPem },
      };
      const run = await runAction(
        {
          'api-url': fake.url,
          mode: 'verify',
          'receipt-file': 'new.json',
          'key-fingerprint': oldKey.keyId,
          'fail-on': 'never',
        },
        { files: { 'new.json': newReceipt } },
      );
      expect(run.code).toBe(1);
      expect(run.errors[0]).toContain(
        `svc receipt not trusted: the key history served at ${fake.url}/v1/keys: key history refused: keys[1]: the transition is not signed by the previous key ${oldKey.keyId}`,
      );
      expect(run.summary.split('\n')[0]).toBe('## svc verify: receipt not trusted');
      expect(run.summary).toContain('the transition is not signed by the previous key');
      expect(run.outputs).toMatchObject({ verdict: '', admissibility: '', valid: 'false' });
    });

    it('refuses a receipt whose key the history says did not sign its sequence', async () => {
      const history = JSON.parse(await served('/v1/keys')) as Json;
      // The old key's record, as served, covers only sequence 1: a receipt of it at a later
      // sequence (here the new receipt relabelled) must not verify through the history.
      const relabelled = JSON.parse(newReceipt) as Json;
      relabelled.attestations[0].key_id = oldKey.keyId;
      fake.routes = { '/v1/keys': { body: JSON.stringify(history) } };
      const run = await runAction(
        {
          'api-url': fake.url,
          mode: 'verify',
          'receipt-file': 'r.json',
          'key-fingerprint': oldKey.keyId,
        },
        { files: { 'r.json': JSON.stringify(relabelled) } },
      );
      expect(run.code).toBe(1);
      expect(run.errors[0]).toContain(`key ${oldKey.keyId} did not sign sequence 2`);
      expect(run.outputs.valid).toBe('false');
    });
  });

  describe('witness-state', () => {
    // Each attempt of the run is a new claim, so a new receipt: the log grows by one.
    const witness = (attempt: number) =>
      runAction(
        {
          'api-url': after.url,
          'api-key': apiKey,
          'key-fingerprint': oldKey.keyId,
          'witness-state': state(),
        },
        { env: { GITHUB_RUN_ATTEMPT: String(attempt) } },
      );

    it('trusts the first checkpoint on first use, then accepts growth proved consistent', async () => {
      rmSync(state(), { force: true });
      let run = await witness(1);
      expect(run.errors).toEqual([]);
      expect(run.code).toBe(0);
      const first = readFileSync(state(), 'utf8');
      expect(first).toBe(await served('/v1/log/checkpoint'));
      const size = readCheckpointNote(first)!.size;
      expect(run.outputs).toMatchObject({
        'log-witness': 'first',
        'log-size': String(size),
        valid: 'true',
      });
      expect(run.outputs['log-root']).toMatch(/^[0-9a-f]{64}$/);
      expect(run.stdout).toContain('log witness: no state yet: trusting');
      expect(run.summary).toContain(`| Log witness | first: <code>${ORIGIN}</code> size ${size}`);

      // A re-run grows the log by one receipt; the checkpoint after it must extend the kept one.
      run = await witness(2);
      expect(run.errors).toEqual([]);
      expect(run.outputs).toMatchObject({
        'log-witness': 'consistent',
        'log-size': String(size + 1),
      });
      expect(readFileSync(state(), 'utf8')).toBe(await served('/v1/log/checkpoint'));

      // In verify mode nothing is added: the same checkpoint, the state is not rewritten.
      run = await runAction(
        {
          'api-url': after.url,
          mode: 'verify',
          'receipt-file': 'new.json',
          'key-fingerprint': oldKey.keyId,
          'witness-state': state(),
        },
        { files: { 'new.json': newReceipt } },
      );
      expect(run.errors).toEqual([]);
      expect(run.outputs).toMatchObject({ 'log-witness': 'unchanged', valid: 'true' });
    });

    const refused = async (body: string, outcome: string, extra: typeof fake.routes = {}) => {
      const kept = readFileSync(state(), 'utf8');
      fake.routes = { '/v1/log/checkpoint': { body }, ...extra };
      const run = await runAction(
        {
          'api-url': fake.url,
          mode: 'verify',
          'receipt-file': 'new.json',
          'public-key': newKey.publicKeyPem,
          'witness-state': state(),
          'fail-on': 'never',
        },
        { files: { 'new.json': newReceipt } },
      );
      expect(run.code).toBe(1);
      expect(run.errors[0]).toContain(`svc log witness REFUSED (${outcome}): `);
      expect(run.errors[0]).toContain(`${state()} was left as it was`);
      // The receipt itself verifies, but no output reads as a pass from a lying log.
      expect(run.outputs).toMatchObject({
        verdict: '',
        admissibility: '',
        valid: 'false',
        'log-witness': outcome,
        'log-size': '',
        'log-root': '',
      });
      expect(run.summary).toContain(`| Log witness | **REFUSED (${outcome})**`);
      expect(run.summary).toContain(`> **Failed:** log witness REFUSED (${outcome})`);
      // The signed evidence stays in the job log.
      expect(run.stdout).toContain(body);
      expect(readFileSync(state(), 'utf8')).toBe(kept);
      return run;
    };

    it('refuses a fork: the same size with another root, signed by the log key', async () => {
      const kept = readCheckpointNote(readFileSync(state(), 'utf8'))!;
      const forked = signCheckpoint(ORIGIN, kept.size, new Uint8Array(32).fill(7), newKey);
      const run = await refused(forked, 'fork');
      expect(run.errors[0]).toContain(`two signed checkpoints of size ${kept.size}`);
    });

    it('refuses a larger tree the log cannot prove consistent with the kept one', async () => {
      const kept = readCheckpointNote(readFileSync(state(), 'utf8'))!;
      const size = kept.size + 2;
      const grown = signCheckpoint(ORIGIN, size, new Uint8Array(32).fill(9), newKey);
      await refused(grown, 'inconsistent');
      await refused(grown, 'inconsistent', {
        [`/v1/log/consistency?from=${kept.size}&to=${size}`]: {
          body: JSON.stringify({ from: kept.size, to: size, proof: [] }),
        },
      });
    });

    it('refuses a rollback, a checkpoint signed by another key and one of another origin', async () => {
      const kept = readCheckpointNote(readFileSync(state(), 'utf8'))!;
      const run = await refused(signCheckpoint(ORIGIN, 1, kept.root, newKey), 'rollback');
      expect(run.errors[0]).toContain('smaller than the kept');
      await refused(
        signCheckpoint(ORIGIN, kept.size + 1, kept.root, newServerKey()),
        'bad_signature',
      );
      await refused(
        signCheckpoint('elsewhere.example/ledger', kept.size, kept.root, newKey),
        'other_origin',
      );
    });

    it('refuses a checkpoint by a key put before the pin with a transition it signed itself', async () => {
      const kept = readFileSync(state(), 'utf8');
      const { size, root } = readCheckpointNote(kept)!;
      const forgedKey = newServerKey();
      const history = forgedPrefixHistory(
        JSON.parse(await served('/v1/keys')) as never,
        newKey,
        forgedKey,
      );
      fake.routes = {
        '/v1/keys': { body: JSON.stringify(history) },
        '/v1/log/checkpoint': { body: signCheckpoint(ORIGIN, size, root, forgedKey) },
      };
      const run = await runAction(
        {
          'api-url': fake.url,
          mode: 'verify',
          'receipt-file': 'new.json',
          'key-fingerprint': newKey.keyId,
          'witness-state': state(),
          'fail-on': 'never',
        },
        { files: { 'new.json': newReceipt } },
      );
      expect(run.code).toBe(1);
      expect(run.errors[0]).toContain('svc log witness REFUSED (bad_signature): ');
      expect(run.outputs).toMatchObject({ valid: 'false', 'log-witness': 'bad_signature' });
      expect(readFileSync(state(), 'utf8')).toBe(kept);
    });

    it('with witness-policy, judges the quorum of the C2SP tlog-policy over the accepted checkpoint', async () => {
      const witnessA = ed25519Witness('a.example/witness', 11);
      const stranger = ed25519Witness('stranger.example/witness', 12);
      const kept = readFileSync(state(), 'utf8');
      // The kept checkpoint as a log would serve it once witness A has cosigned it.
      const body = kept.slice(0, kept.indexOf('\n\n') + 1);
      fake.routes = { '/v1/log/checkpoint': { body: kept + witnessA.line(body) } };
      const log = `log ${logVkey(ORIGIN, newKey.publicKeyPem)}`;
      const run = (policy: string) =>
        runAction(
          {
            'api-url': fake.url,
            mode: 'verify',
            'receipt-file': 'new.json',
            'public-key': newKey.publicKeyPem,
            'witness-state': state(),
            'witness-policy': 'svc.tlog-policy',
            'fail-on': 'never',
          },
          { files: { 'new.json': newReceipt, 'svc.tlog-policy': policy } },
        );
      let result = await run(`${log}\nwitness A ${witnessA.vkey}\nquorum A\n`);
      expect(result.errors).toEqual([]);
      expect(result.outputs).toMatchObject({
        'log-witness': 'unchanged',
        'log-quorum': 'met',
        valid: 'true',
      });
      expect(result.stdout).toContain('log witness A (cosignature/v1): cosigned');
      expect(result.stdout).toContain('log witness quorum: quorum A met: cosigned by A');

      result = await run(`${log}\nwitness S ${stranger.vkey}\nquorum S\n`);
      expect(result.code).toBe(1);
      expect(result.errors[0]).toContain(
        `svc log witness quorum NOT MET: quorum S NOT met: cosigned by no witness of the policy; ignored: ${witnessA.name} (not in the policy)`,
      );
      expect(result.outputs).toMatchObject({ 'log-quorum': 'not_met', valid: 'false' });

      // The checkpoint is not signed by the policy's log.
      result = await run(`log ${logVkey(ORIGIN, oldKey.publicKeyPem)}\nquorum none\n`);
      expect(result.code).toBe(1);
      expect(result.errors[0]).toContain('is not signed by a log of the policy');

      result = await run('quorum none\nwitnesses all\n');
      expect(result.code).toBe(1);
      expect(result.errors[0]).toContain('tlog-policy line 2: unknown line "witnesses"');
      expect(result.outputs).toMatchObject({ valid: 'false', 'log-quorum': '' });

      const without = await runAction(
        {
          'api-url': after.url,
          mode: 'verify',
          'receipt-file': 'new.json',
          'public-key': newKey.publicKeyPem,
          'witness-policy': 'svc.tlog-policy',
        },
        { files: { 'new.json': newReceipt, 'svc.tlog-policy': 'quorum none\n' } },
      );
      expect(without.code).toBe(1);
      expect(without.errors[0]).toBe(
        'input witness-policy needs witness-state: the policy judges the witnessed checkpoint',
      );
      expect(readFileSync(state(), 'utf8')).toBe(kept);
    });

    it('needs a pinned key and api-url, and leaves a state that is no checkpoint alone', async () => {
      let run = await runAction({
        'api-url': after.url,
        'api-key': apiKey,
        'witness-state': state(),
      });
      expect(run.code).toBe(1);
      expect(run.errors[0]).toBe(
        'input witness-state needs a pinned key: key-fingerprint or public-key',
      );
      run = await runAction(
        {
          mode: 'verify',
          'receipt-file': 'new.json',
          'public-key': newKey.publicKeyPem,
          'witness-state': 'state',
        },
        { files: { 'new.json': newReceipt } },
      );
      expect(run.errors[0]).toBe('input witness-state needs api-url: the log to witness');
      run = await runAction(
        {
          'api-url': after.url,
          mode: 'verify',
          'receipt-file': 'new.json',
          'public-key': newKey.publicKeyPem,
          'witness-state': 'state',
        },
        { files: { 'new.json': newReceipt, state: 'not a checkpoint\n' } },
      );
      expect(run.code).toBe(1);
      expect(run.errors[0]).toContain('does not hold a checkpoint; delete it');
      expect(run.outputs.valid).toBe('false');
      expect(existsSync(state())).toBe(true);
    });
  });
});
