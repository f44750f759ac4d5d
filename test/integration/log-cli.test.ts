import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { canonicalize, keyIdOf, readCheckpointNote, toBase64, utf8Bytes } from '@svc/verify';
import { ApiKeyService } from '../../src/services/api-keys.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { newServerKey } from '../support/harness.js';
import { startLiveService, type LiveService } from '../support/live-service.js';
import { readLeaves, signCheckpoint, writeLogDir } from '../support/log-dir.js';
import { runNode } from '../fixtures/run-node.js';
import { transpileTree, type TranspiledTree } from '../fixtures/transpile-tree.js';
import { startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';
import { logVkey } from '../support/tlog-witnesses.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ORIGIN = 'log-cli.example/ledger';

// `svc log export`, `svc-verify witness` and `svc-verify ledger` as real child processes,
// against a real service on 127.0.0.1 over a data directory, and against logs made to lie.
describe('the log commands: export, witness, ledger audit', () => {
  let tree: TranspiledTree;
  let live: LiveService;
  let apiKey: string;
  let dataDir: string;
  let work: string;
  let keyPath: string;
  let otherKeyPath: string;
  const svc = (...args: string[]) =>
    runNode(fileURLToPath(tree.url('src/cli/svc.ts')), args, 60_000, {
      ...process.env,
      SVC_DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
    });
  const verify = (...args: string[]) =>
    runNode(fileURLToPath(tree.url('packages/verify/src/cli/svc-verify.ts')), args, 60_000);
  const path = (name: string) => join(work, name);
  const addReceipts = async (n: number) => {
    for (let i = 0; i < n; i += 25) {
      await Promise.all(Array.from({ length: Math.min(25, n - i) }, () => live.evaluate(apiKey)));
    }
  };
  const checkpoint = async () => (await fetch(`${live.url}/v1/log/checkpoint`)).text();

  beforeAll(async () => {
    tree = transpileTree(['src/cli/svc.ts', 'packages/verify/src/cli/svc-verify.ts']);
    dataDir = mkdtempSync(join(tmpdir(), 'svc-log-data-'));
    work = mkdtempSync(join(tmpdir(), 'svc-log-work-'));
    live = await startLiveService({
      store: openSqliteStore(join(dataDir, 'ledger.db')),
      config: { logOrigin: ORIGIN },
    });
    // An unlimited key: a free key's 100 claims an hour would not make 300 receipts.
    const keys = new ApiKeyService({ keys: live.t.store.apiKeys, clock: live.t.clock });
    apiKey = (
      await keys.create({ email: 'log-cli@example.com', tier: 'enterprise', lockedPolicy: null })
    ).apiKey;
    keyPath = path('server.pem');
    writeFileSync(keyPath, live.t.serverKey.publicKeyPem);
    otherKeyPath = path('other.pem');
    writeFileSync(otherKeyPath, newServerKey().publicKeyPem);
    await addReceipts(300);
    await checkpoint();
  }, 120_000);
  afterAll(async () => {
    await live.close();
    tree.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  describe('svc log export and svc-verify ledger', () => {
    it('exports every tile of the newest checkpoint at the C2SP paths, which audit clean with the service gone', async () => {
      const run = await svc('log', 'export', path('log'));
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`${ORIGIN} at size 300`);
      for (const file of [
        'checkpoint',
        'tile/0/000',
        'tile/0/001.p/44',
        'tile/1/000.p/1',
        'tile/entries/000',
        'tile/entries/001.p/44',
      ])
        expect(existsSync(path(`log/${file}`))).toBe(true);
      expect(readFileSync(path('log/checkpoint'), 'utf8')).toBe(await checkpoint());
      expect(statSync(path('log/tile/0/000')).size).toBe(256 * 32);
      cpSync(path('log'), path('log-300'), { recursive: true });

      const audit = await verify('ledger', '--dir', path('log'), '--key', keyPath, '--json');
      expect(audit.code).toBe(0);
      const report = JSON.parse(audit.stdout) as Json;
      expect(report).toMatchObject({
        ok: true,
        origin: ORIGIN,
        size: 300,
        root_matches: true,
        leaves: { v2: 300, v1: 0, unreadable: 0 },
        signatures_verified: 300,
        failure_count: 0,
        by_admissibility: { ACCEPTED: 300 },
      });
      expect(
        Object.values(report.by_verdict as Record<string, number>).reduce((a, b) => a + b),
      ).toBe(300);
    });

    it('audits the running service over HTTP, and prints counts and a verdict line', async () => {
      const run = await verify('ledger', '--url', live.url, '--key', keyPath);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^size {10}300$/m);
      expect(run.stdout).toContain(
        '300 of 300 receipt-core-v2 leaves verified under the pinned key',
      );
      expect(run.stdout).toContain('LEDGER OK');
    });

    it('re-exports incrementally: full tiles already there are kept, the new partial ones written', async () => {
      const before = statSync(path('log/tile/entries/000')).mtimeMs;
      await addReceipts(20);
      await checkpoint();
      const run = await svc('log', 'export', path('log'));
      expect(run.code).toBe(0);
      // entries 000 and tile 0/000 kept; 0/001.p/64, 1/000.p/1, entries/001.p/64 and the
      // checkpoint written.
      expect(run.stdout).toContain('at size 320: 4 file(s) written, 2 full tile(s) already there');
      expect(statSync(path('log/tile/entries/000')).mtimeMs).toBe(before);
      expect(existsSync(path('log/tile/entries/001.p/64'))).toBe(true);
      const audit = await verify('ledger', '--dir', path('log'), '--key', keyPath, '--json');
      expect(audit.code).toBe(0);
      expect(JSON.parse(audit.stdout)).toMatchObject({ ok: true, size: 320 });
    });

    it('fails on an entry bundle with one byte changed', async () => {
      cpSync(path('log-300'), path('log-tampered'), { recursive: true });
      const bundle = readFileSync(path('log-tampered/tile/entries/000'));
      const at = bundle.indexOf('"ALLOWED"') + 2;
      bundle[at] = bundle[at]! ^ 0x01;
      writeFileSync(path('log-tampered/tile/entries/000'), bundle);
      const run = await verify('ledger', '--dir', path('log-tampered'), '--key', keyPath, '--json');
      expect(run.code).toBe(1);
      const report = JSON.parse(run.stdout) as Json;
      expect(report.ok).toBe(false);
      expect(report.failures[0].reason).toContain("the leaf hash in tile/0/000 is not the entry's");
      expect(run.stderr).toContain('svc-verify ledger: NOT OK');
    });

    it('fails on a truncated ledger: a checkpoint larger than the tiles beside it', async () => {
      cpSync(path('log-300'), path('log-truncated'), { recursive: true });
      cpSync(path('log/checkpoint'), path('log-truncated/checkpoint'));
      const run = await verify(
        'ledger',
        '--dir',
        path('log-truncated'),
        '--key',
        keyPath,
        '--json',
      );
      expect(run.code).toBe(1);
      const report = JSON.parse(run.stdout) as Json;
      expect(report.size).toBe(320);
      expect(report.failures.at(-1).reason).toContain('tile/entries/001.p/64 is missing');
    });

    it('fails on a receipt signed by another key, and on broken previous-hash linkage', async () => {
      const leaves = readLeaves((p) => readFileSync(path(`log-300/${p}`)), 300).slice(0, 10);
      const other = newServerKey();
      const resign = (leaf: Uint8Array, key: typeof other, change: (core: Json) => void) => {
        const { core } = JSON.parse(Buffer.from(leaf).toString('utf8')) as Json;
        change(core);
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

      const foreign = [...leaves];
      foreign[9] = resign(leaves[9]!, other, () => undefined);
      writeLogDir(path('log-foreign'), foreign, ORIGIN, live.t.serverKey);
      let run = await verify('ledger', '--dir', path('log-foreign'), '--key', keyPath, '--json');
      expect(run.code).toBe(1);
      let report = JSON.parse(run.stdout) as Json;
      expect(report.root_matches).toBe(true);
      expect(report.failures).toEqual([
        { index: 9, reason: `signed by ${keyIdOf(other.publicKeyRaw)}, not by a trusted key` },
      ]);

      const unlinked = [...leaves];
      unlinked[5] = resign(leaves[5]!, live.t.serverKey, (core) => {
        core.position.previous_receipt_hash = `sha256:${'0'.repeat(64)}`;
      });
      writeLogDir(path('log-unlinked'), unlinked, ORIGIN, live.t.serverKey);
      run = await verify('ledger', '--dir', path('log-unlinked'), '--key', keyPath, '--json');
      expect(run.code).toBe(1);
      report = JSON.parse(run.stdout) as Json;
      expect(report.failures[0].index).toBe(5);
      expect(report.failures[0].reason).toContain('position.previous_receipt_hash');
      // The next leaf names the hash of the original leaf 5, not of the re-signed one.
      expect(report.failures[1].index).toBe(6);
    });

    it('refuses a checkpoint signed by another key, and says why usage is wrong', async () => {
      let run = await verify('ledger', '--dir', path('log'), '--key', otherKeyPath);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('REFUSED (bad_signature)');
      run = await verify('ledger', '--key', keyPath);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('ledger needs one of --url <svc> or --dir <exported dir>');
      run = await verify('ledger', '--url', 'http://127.0.0.1:1', '--key', keyPath);
      expect(run.code).toBe(2);
      run = await verify('ledger', '--help');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('svc-verify ledger — audit the whole ledger');
    });

    it('svc log export --receipts writes each receipt beside its .tlog-proof, which verifies offline', async () => {
      const run = await svc('log', 'export', path('with-receipts'), '--receipts');
      expect(run.code).toBe(0);
      const size = readCheckpointNote(readFileSync(path('with-receipts/checkpoint'), 'utf8'))!.size;
      expect(run.stdout).toContain(`; ${size} receipt(s) with their .tlog-proof in `);
      const files = readdirSync(path('with-receipts/receipts')).sort();
      expect(files).toHaveLength(2 * size);
      const last = files.at(-1)!.replace(/\.tlog-proof$/, '');
      const proof = readFileSync(path(`with-receipts/receipts/${last}.tlog-proof`), 'utf8');
      expect(proof.split('\n').slice(0, 2)).toEqual([
        'c2sp.org/tlog-proof@v1',
        `index ${(JSON.parse(readFileSync(path(`with-receipts/receipts/${last}.json`), 'utf8')) as Json).chain.sequence - 1}`,
      ]);
      writeFileSync(
        path('svc.tlog-policy'),
        `log ${logVkey(ORIGIN, readFileSync(keyPath, 'utf8'))}\nquorum none\n`,
      );
      const checked = await verify(
        path(`with-receipts/receipts/${last}.json`),
        '--proof',
        path(`with-receipts/receipts/${last}.tlog-proof`),
        '--policy',
        path('svc.tlog-policy'),
      );
      expect(checked.code).toBe(0);
      expect(checked.stdout).toMatch(/^PASS\s+inclusion$/m);
      const typo = await svc('log', 'export', path('typo'), '--recipts');
      expect(typo.code).toBe(2);
    });

    it('svc log export has help, and refuses a missing directory argument', async () => {
      expect((await svc('--help')).stdout).toContain('svc log export <dir>');
      const run = await svc('log', 'export');
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('log export needs a directory');
    });
  });

  describe('svc-verify witness', () => {
    let fake: ScriptedServer;
    const state = () => path('witness.state');
    const witness = (url: string, ...extra: string[]) =>
      verify('witness', '--state', state(), '--url', url, '--key', keyPath, ...extra);

    beforeAll(async () => {
      fake = await startScriptedServer();
    });
    afterAll(() => fake.close());

    it('trusts the first checkpoint on first use, then accepts growth proved consistent', async () => {
      rmSync(state(), { force: true });
      let run = await witness(live.url);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('no state yet: trusting');
      expect(run.stdout).toContain('on first use');
      const first = readFileSync(state(), 'utf8');
      expect(first).toBe(await checkpoint());

      run = await witness(live.url);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('unchanged');

      await addReceipts(3);
      run = await witness(live.url, '--json');
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const result = JSON.parse(run.stdout) as Json;
      const before = readCheckpointNote(first)!.size;
      expect(result).toMatchObject({
        ok: true,
        outcome: 'consistent',
        origin: ORIGIN,
        previous_size: before,
        size: before + 3,
      });
      expect(readFileSync(state(), 'utf8')).toBe(await checkpoint());
    });

    const refused = async (body: string, outcome: string, extraRoutes = {}) => {
      const kept = readFileSync(state(), 'utf8');
      fake.routes = { '/v1/log/checkpoint': { body }, ...extraRoutes };
      const run = await witness(fake.url, '--json');
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`REFUSED (${outcome})`);
      expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, outcome, checkpoint: body, kept });
      expect(readFileSync(state(), 'utf8')).toBe(kept);
      return run;
    };

    it('refuses a fork: the same size with another root, signed by the log key', async () => {
      const kept = readCheckpointNote(readFileSync(state(), 'utf8'))!;
      const forked = signCheckpoint(
        ORIGIN,
        kept.size,
        new Uint8Array(32).fill(7),
        live.t.serverKey,
      );
      const run = await refused(forked, 'fork');
      expect(run.stderr).toContain(`two signed checkpoints of size ${kept.size}`);
    });

    it('refuses a larger tree that the log cannot prove consistent with the kept one', async () => {
      const kept = readCheckpointNote(readFileSync(state(), 'utf8'))!;
      const size = kept.size + 5;
      const grown = signCheckpoint(ORIGIN, size, new Uint8Array(32).fill(9), live.t.serverKey);
      // The honest service's proof for these sizes does not lead to a made-up root.
      await addReceipts(5);
      const proof = await (
        await fetch(`${live.url}/v1/log/consistency?from=${kept.size}&to=${size}`)
      ).text();
      await refused(grown, 'inconsistent', {
        [`/v1/log/consistency?from=${kept.size}&to=${size}`]: { body: proof },
      });
      // No proof at all is refused the same way.
      await refused(grown, 'inconsistent');
    });

    it('refuses a rollback, a checkpoint signed by another key and one of another origin', async () => {
      const kept = readCheckpointNote(readFileSync(state(), 'utf8'))!;
      const older = await (await fetch(`${live.url}/v1/log/checkpoint?size=300`)).text();
      expect(readCheckpointNote(older)!.size).toBeLessThan(kept.size);
      await refused(older, 'rollback');
      await refused(
        signCheckpoint(ORIGIN, kept.size + 1, kept.root, newServerKey()),
        'bad_signature',
      );
      await refused(
        signCheckpoint('elsewhere.example/ledger', kept.size, kept.root, live.t.serverKey),
        'other_origin',
      );
    });

    it('exits 2 when the service is unreachable or usage is wrong, leaving the state alone', async () => {
      const kept = readFileSync(state(), 'utf8');
      let run = await witness('http://127.0.0.1:1');
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('cannot fetch');
      run = await verify('witness', '--url', live.url, '--key', keyPath);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('witness needs --state');
      expect(readFileSync(state(), 'utf8')).toBe(kept);
      run = await verify('witness', '--help');
      expect(run.stdout).toContain('svc-verify witness — keep the log honest');
    });
  });
});
