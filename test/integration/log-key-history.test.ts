import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { canonicalize, readCheckpointNote, toBase64, utf8Bytes } from '@svc/verify';
import type { ServerKey } from '../../src/ports/signer.js';
import type { Store } from '../../src/ports/store.js';
import { SigningKeyService } from '../../src/services/signing-keys.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { ManualClock, newServerKey } from '../support/harness.js';
import { startLiveService, type LiveService } from '../support/live-service.js';
import { readLeaves, signCheckpoint, writeLogDir } from '../support/log-dir.js';
import { runNode } from '../fixtures/run-node.js';
import { signRevocation } from '../../src/core/key-history.js';
import { forgedPrefixHistory } from '../support/forged-key.js';
import { transpileTree, type TranspiledTree } from '../fixtures/transpile-tree.js';
import { startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ORIGIN = 'log-history.example/ledger';

/** A log leaf whose attestation is replaced by one `key` makes over the same core. */
const resign = (leaf: Uint8Array, key: Pick<ServerKey, 'keyId' | 'sign'>) => {
  const { core } = JSON.parse(Buffer.from(leaf).toString('utf8')) as Json;
  const coreText = canonicalize(core);
  const attestations = [
    {
      signer: 'svc-server',
      algorithm: 'Ed25519',
      key_id: key.keyId,
      signature: toBase64(key.sign(utf8Bytes(coreText))),
      timestamp: core.issued_at,
    },
  ];
  return utf8Bytes(`{"attestations":${canonicalize(attestations)},"core":${coreText}}`);
};

// `svc-verify ledger` and `svc-verify witness` across a real signing-key rotation: two
// services over one store, the old one handing over with `SigningKeyService.rotate` (as
// `svc signing-key rotate` does). Sequences 1-3 are the old key's, 4-6 the new key's.
describe('the log commands under the signing-key history', () => {
  let tree: TranspiledTree;
  let dir: string;
  let store: Store;
  let keys: SigningKeyService;
  let before: LiveService;
  let after: LiveService;
  let oldKey: ServerKey;
  let newKey: ServerKey;
  let historyFile: string;
  let oldPem: string;
  let otherPem: string;
  let keptBefore: string;
  const path = (name: string) => join(dir, name);
  const file = (name: string, content: string) => {
    writeFileSync(path(name), content);
    return path(name);
  };
  const verify = (...args: string[]) =>
    runNode(fileURLToPath(tree.url('packages/verify/src/cli/svc-verify.ts')), args, 60_000);
  const svc = (...args: string[]) =>
    runNode(fileURLToPath(tree.url('src/cli/svc.ts')), args, 60_000, {
      ...process.env,
      SVC_DATA_DIR: dir,
      LOG_LEVEL: 'silent',
    });
  const state = () => path('witness.state');

  beforeAll(async () => {
    tree = transpileTree(['src/cli/svc.ts', 'packages/verify/src/cli/svc-verify.ts']);
    dir = mkdtempSync(join(tmpdir(), 'svc-log-history-'));
    store = openSqliteStore(join(dir, 'ledger.db'));
    const clock = new ManualClock(Date.now());
    keys = new SigningKeyService({ store: store.signingKeys, clock, origin: ORIGIN });
    oldKey = newServerKey();
    newKey = newServerKey();
    await keys.register(oldKey);
    before = await startLiveService({ store, serverKey: oldKey, logOrigin: ORIGIN });
    const { apiKey } = await before.signup();
    for (let i = 0; i < 3; i++) await before.evaluate(apiKey);
    // A witness pinned to the old key, before the rotation: it keeps the old key's checkpoint.
    const first = await verify(
      'witness',
      '--state',
      state(),
      '--url',
      before.url,
      '--fingerprint',
      oldKey.keyId,
    );
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    keptBefore = readFileSync(state(), 'utf8');
    expect(readCheckpointNote(keptBefore)!.size).toBe(3);

    await keys.rotate(oldKey, newKey);
    after = await startLiveService({ store, serverKey: newKey, logOrigin: ORIGIN });
    for (let i = 0; i < 3; i++) await after.evaluate(apiKey);
    expect(
      readCheckpointNote(await (await fetch(`${after.url}/v1/log/checkpoint`)).text())!.size,
    ).toBe(6);
    historyFile = file('keys.json', await (await fetch(`${after.url}/v1/keys`)).text());
    oldPem = file('old.pem', oldKey.publicKeyPem);
    otherPem = file('other.pem', newServerKey().publicKeyPem);
  }, 60_000);
  afterAll(async () => {
    await before.close();
    await after.close();
    tree.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('svc-verify ledger', () => {
    const audit = async (...args: string[]) => {
      const run = await verify('ledger', ...args, '--json');
      return { ...run, report: run.stdout ? (JSON.parse(run.stdout) as Json) : null };
    };

    it('pinned to the old key, follows the signed transition and audits every receipt', async () => {
      for (const key of [['--key-url', after.url], []]) {
        const run = await audit('--url', after.url, '--fingerprint', oldKey.keyId, ...key);
        expect(run.stderr).toBe('');
        expect(run.code).toBe(0);
        expect(run.report).toMatchObject({
          ok: true,
          size: 6,
          signatures_verified: 6,
          failure_count: 0,
          root_matches: true,
        });
      }
      const table = await verify('ledger', '--url', after.url, '--fingerprint', oldKey.keyId);
      expect(table.stdout).toContain(
        '6 of 6 receipt-core-v2 leaves verified under the key history followed from the pin',
      );
      expect(table.stdout).toContain('LEDGER OK');
    });

    it('pinned to the new key, audits the retired key’s receipts only when it is pinned too', async () => {
      const alone = await audit('--url', after.url, '--fingerprint', newKey.keyId);
      expect(alone.code).toBe(1);
      expect(alone.report).toMatchObject({ ok: false, signatures_verified: 3 });
      const both = ['--fingerprint', newKey.keyId, '--fingerprint', oldKey.keyId];
      const run = await audit('--url', after.url, ...both, '--key-url', after.url);
      expect(run.code).toBe(0);
      expect(run.report).toMatchObject({ ok: true, signatures_verified: 6 });
      const file = await audit('--url', after.url, ...both, '--key-history', historyFile);
      expect(file.code).toBe(0);
    });

    it('does not trust a key put before the pin with a transition it signed itself', async () => {
      const forgedKey = newServerKey();
      const served = JSON.parse(readFileSync(historyFile, 'utf8')) as never;
      const forgedHistory = file(
        'forged-prefix.json',
        JSON.stringify(forgedPrefixHistory(served, newKey, forgedKey)),
      );
      // Every leaf and the checkpoint signed by the forged key.
      expect((await svc('log', 'export', path('log-genuine'))).code).toBe(0);
      const leaves = readLeaves((p) => readFileSync(path(`log-genuine/${p}`)), 6);
      writeLogDir(
        path('log-forged-prefix'),
        leaves.map((leaf) => resign(leaf, forgedKey)),
        ORIGIN,
        forgedKey,
      );
      const run = await audit(
        '--dir',
        path('log-forged-prefix'),
        '--fingerprint',
        newKey.keyId,
        '--key-history',
        forgedHistory,
      );
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('REFUSED (bad_signature)');
    });

    it('fails pinned to an unrelated key, and to the old key alone without its history', async () => {
      let run = await audit('--url', after.url, '--key', otherPem);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('REFUSED (bad_signature)');
      run = await audit('--url', after.url, '--fingerprint', newServerKey().keyId);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(
        /key history refused: the pinned key sha256:[0-9a-f]+ is not in the history/,
      );
      // The old key alone did not sign the newest checkpoint (size 6, the new key's).
      run = await audit('--url', after.url, '--key', oldPem);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('REFUSED (bad_signature)');
    });

    it('audits an export with --dir, the history from a file or from the service', async () => {
      const exported = await svc('log', 'export', path('log'));
      expect(exported.stderr).toBe('');
      expect(exported.code).toBe(0);
      expect(exported.stdout).toContain(`${ORIGIN} at size 6`);
      let run = await audit(
        '--dir',
        path('log'),
        '--fingerprint',
        oldKey.keyId,
        '--key-history',
        historyFile,
      );
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.report).toMatchObject({ ok: true, size: 6, signatures_verified: 6 });
      run = await audit('--dir', path('log'), '--key', oldPem, '--key-history', historyFile);
      expect(run.code).toBe(0);
      run = await audit(
        '--dir',
        path('log'),
        '--fingerprint',
        newKey.keyId,
        '--fingerprint',
        oldKey.keyId,
        '--key-url',
        after.url,
      );
      expect(run.code).toBe(0);
    });

    it('fails a leaf signed by a key of the history that did not sign its sequence, or by a key outside it', async () => {
      const leaves = readLeaves((p) => readFileSync(path(`log/${p}`)), 6);
      const other = newServerKey();
      for (const [name, key, reason] of [
        [
          'log-old-late',
          oldKey,
          `signed by ${oldKey.keyId}, which did not sign sequence 6: it signed sequences 1 to 3`,
        ],
        [
          'log-foreign',
          other,
          `signed by ${other.keyId}, which is not in the key history followed from the pin`,
        ],
      ] as const) {
        const forged = [...leaves];
        forged[5] = resign(leaves[5]!, key);
        writeLogDir(path(name), forged, ORIGIN, newKey);
        const run = await audit(
          '--dir',
          path(name),
          '--fingerprint',
          oldKey.keyId,
          '--key-history',
          historyFile,
        );
        expect(run.code).toBe(1);
        expect(run.report).toMatchObject({ ok: false, root_matches: true, signatures_verified: 5 });
        expect(run.report!.failures).toEqual([{ index: 5, reason }]);
      }
      // A checkpoint signed by the old key at a size after its retirement is not trusted.
      writeLogDir(path('log-old-checkpoint'), leaves, ORIGIN, oldKey);
      const run = await audit(
        '--dir',
        path('log-old-checkpoint'),
        '--fingerprint',
        oldKey.keyId,
        '--key-history',
        historyFile,
      );
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        `REFUSED (bad_signature): checkpoint of ${ORIGIN}: ${oldKey.keyId} was retired at size 3, before this checkpoint of size 6`,
      );
    });
  });

  it('documents the key-history options in both commands’ help', async () => {
    for (const command of ['ledger', 'witness']) {
      const run = await verify(command, '--help');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('--key-history <file>');
      expect(run.stdout).toContain('each only for the sequences it signed');
    }
  });

  describe('svc-verify witness', () => {
    let fake: ScriptedServer;
    const witness = (url: string, ...extra: string[]) =>
      verify('witness', '--state', state(), '--url', url, '--json', ...extra);

    beforeAll(async () => {
      fake = await startScriptedServer();
    });
    afterAll(() => fake.close());

    it('pinned to the old key, accepts the new key’s checkpoint across the rotation', async () => {
      writeFileSync(state(), keptBefore);
      // Without the history, the old key alone refuses the new key's checkpoint.
      let run = await verify('witness', '--state', state(), '--url', after.url, '--key', oldPem);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('REFUSED (bad_signature)');
      expect(readFileSync(state(), 'utf8')).toBe(keptBefore);

      run = await witness(after.url, '--fingerprint', oldKey.keyId);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({
        ok: true,
        outcome: 'consistent',
        previous_size: 3,
        size: 6,
      });
      const served = await (await fetch(`${after.url}/v1/log/checkpoint`)).text();
      expect(readFileSync(state(), 'utf8')).toBe(served);

      writeFileSync(state(), keptBefore);
      run = await witness(after.url, '--fingerprint', oldKey.keyId, '--key-history', historyFile);
      expect(run.code).toBe(0);
      expect(readFileSync(state(), 'utf8')).toBe(served);
    });

    it('refuses a forged transition, leaving the state as it was', async () => {
      writeFileSync(state(), keptBefore);
      const history = JSON.parse(readFileSync(historyFile, 'utf8')) as Json;
      history.keys[1].transition.statement.issued_at = '2020-01-01T00:00:00.000Z';
      const checkpoint = await (await fetch(`${after.url}/v1/log/checkpoint`)).text();
      fake.routes = {
        '/v1/keys': { body: JSON.stringify(history) },
        '/v1/log/checkpoint': { body: checkpoint },
      };
      for (const extra of [[], ['--key-history', file('forged.json', JSON.stringify(history))]]) {
        const run = await witness(fake.url, '--fingerprint', oldKey.keyId, ...extra);
        expect(run.code).toBe(2);
        expect(run.stderr).toContain(
          `key history refused: keys[1]: the transition is not signed by the previous key ${oldKey.keyId}`,
        );
        expect(readFileSync(state(), 'utf8')).toBe(keptBefore);
      }
    });

    it('does not trust a key put before the pin with a transition it signed itself', async () => {
      rmSync(state(), { force: true });
      const forgedKey = newServerKey();
      const served = JSON.parse(readFileSync(historyFile, 'utf8')) as never;
      const genuine = readCheckpointNote(
        await (await fetch(`${after.url}/v1/log/checkpoint`)).text(),
      )!;
      fake.routes = {
        '/v1/keys': { body: JSON.stringify(forgedPrefixHistory(served, newKey, forgedKey)) },
        '/v1/log/checkpoint': {
          body: signCheckpoint(ORIGIN, genuine.size + 1, genuine.root, forgedKey),
        },
      };
      const run = await witness(fake.url, '--fingerprint', newKey.keyId);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('REFUSED (bad_signature)');
      expect(existsSync(state())).toBe(false);
    });

    it('refuses a history that drops a revocation it was shown before', async () => {
      writeFileSync(state(), keptBefore);
      const known = JSON.parse(readFileSync(historyFile, 'utf8')) as Json;
      const at = known.keys[0].activated_at as string;
      known.keys[0] = {
        ...known.keys[0],
        status: 'revoked',
        revoked_from_sequence: 2,
        revoked_at: at,
        revocation: signRevocation(
          {
            type: 'svc-key-revocation-v1',
            log: ORIGIN,
            key_id: oldKey.keyId,
            revoked_from_sequence: 2,
            signer_key_id: newKey.keyId,
            issued_at: at,
          },
          (m) => newKey.sign(m),
        ),
      };
      const knownFile = file('known-keys.json', JSON.stringify(known));
      const run = await witness(
        after.url,
        '--fingerprint',
        oldKey.keyId,
        '--known-history',
        knownFile,
      );
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(
        `the history omits the revocation of ${oldKey.keyId} from sequence 2 (signed by ${newKey.keyId} at ${at}) that this verifier has seen`,
      );
      expect(readFileSync(state(), 'utf8')).toBe(keptBefore);
    });

    it('keeps the revocations of the histories it accepted, and refuses a history that drops one', async () => {
      rmSync(state(), { force: true });
      rmSync(`${state()}.revocations`, { force: true });
      const known = JSON.parse(readFileSync(historyFile, 'utf8')) as Json;
      const at = known.keys[0].activated_at as string;
      known.keys[0] = {
        ...known.keys[0],
        status: 'revoked',
        revoked_from_sequence: 2,
        revoked_at: at,
        revocation: signRevocation(
          {
            type: 'svc-key-revocation-v1',
            log: ORIGIN,
            key_id: oldKey.keyId,
            revoked_from_sequence: 2,
            signer_key_id: newKey.keyId,
            issued_at: at,
          },
          (m) => newKey.sign(m),
        ),
      };
      const checkpoint = await (await fetch(`${after.url}/v1/log/checkpoint`)).text();
      fake.routes = {
        '/v1/keys': { body: JSON.stringify(known) },
        '/v1/log/checkpoint': { body: checkpoint },
      };
      let run = await witness(fake.url, '--fingerprint', oldKey.keyId);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const kept = JSON.parse(readFileSync(`${state()}.revocations`, 'utf8')) as Json[];
      expect(kept).toEqual([known.keys[0].revocation]);
      // The same log, its history served without the revocation.
      fake.routes['/v1/keys'] = { body: readFileSync(historyFile, 'utf8') };
      run = await witness(fake.url, '--fingerprint', oldKey.keyId);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`the history omits the revocation of ${oldKey.keyId}`);
      rmSync(`${state()}.revocations`, { force: true });
    });

    it('refuses as bad_signature a checkpoint by a key the pin does not reach', async () => {
      writeFileSync(state(), keptBefore);
      const kept = readCheckpointNote(keptBefore)!;
      for (const signer of [newServerKey(), oldKey]) {
        fake.routes = {
          '/v1/keys': { body: readFileSync(historyFile, 'utf8') },
          '/v1/log/checkpoint': { body: signCheckpoint(ORIGIN, kept.size + 1, kept.root, signer) },
        };
        const run = await witness(fake.url, '--fingerprint', oldKey.keyId);
        expect(run.code).toBe(1);
        expect(run.stderr).toContain('REFUSED (bad_signature)');
        expect(readFileSync(state(), 'utf8')).toBe(keptBefore);
      }
    });
  });

  // Last: the revocation changes the history the tests above follow.
  describe('revocation', () => {
    it('fails the receipts of a revoked key from the sequence it is revoked from', async () => {
      await keys.revoke(oldKey.keyId, 2, newKey);
      const run = await verify(
        'ledger',
        '--url',
        after.url,
        '--fingerprint',
        newKey.keyId,
        '--fingerprint',
        oldKey.keyId,
        '--json',
      );
      expect(run.code).toBe(1);
      const report = JSON.parse(run.stdout) as Json;
      expect(report).toMatchObject({ ok: false, signatures_verified: 4, root_matches: true });
      expect(report.failures.map((f: Json) => f.index)).toEqual([1, 2]);
      expect(report.failures[0].reason).toMatch(
        new RegExp(
          `^signed by ${oldKey.keyId}, which is revoked from sequence 2 \\(revoked .*\\): receipt 2 is not trusted$`,
        ),
      );
      expect(run.stderr).toContain('svc-verify ledger: NOT OK: 2 failure(s)');
    });
  });
});
