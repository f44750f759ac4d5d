import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServerKey } from '../../src/ports/signer.js';
import { SigningKeyService } from '../../src/services/signing-keys.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../../src/ports/store.js';
import { ManualClock, newServerKey } from '../support/harness.js';
import { startLiveService, type LiveService } from '../support/live-service.js';
import { runNode } from '../fixtures/run-node.js';
import { forgedPrefixHistory, resignReceipt } from '../support/forged-key.js';
import { startScriptedServer } from '../support/scripted-server.js';
import { transpileTree, type TranspiledTree } from '../fixtures/transpile-tree.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ORIGIN = 'svc.example/ledger';

// svc-verify pinned to one key verifies receipts of the other by following the signed
// transition of a real rotation, served by GET /v1/keys or given as a file.
describe('svc-verify across a key rotation', () => {
  let tree: TranspiledTree;
  let dir: string;
  let store: Store;
  let before: LiveService;
  let after: LiveService;
  let oldKey: ServerKey;
  let newKey: ServerKey;
  let oldReceipt: string;
  let newReceipt: string;
  let historyFile: string;
  const cli = (...args: string[]) =>
    runNode(fileURLToPath(tree.url('packages/verify/src/cli/svc-verify.ts')), args, 30_000);
  const file = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };

  beforeAll(async () => {
    tree = transpileTree(['packages/verify/src/cli/svc-verify.ts']);
    dir = mkdtempSync(join(tmpdir(), 'svc-verify-history-'));
    store = openSqliteStore(join(dir, 'ledger.db'));
    const clock = new ManualClock(Date.now());
    const keys = new SigningKeyService({ store: store.signingKeys, clock, origin: ORIGIN });
    oldKey = newServerKey();
    newKey = newServerKey();
    await keys.register(oldKey);
    before = await startLiveService({ store, serverKey: oldKey, logOrigin: ORIGIN });
    const account = await before.signup();
    const r1 = (await before.evaluate(account.apiKey)).receipt as Json;
    await keys.rotate(oldKey, newKey);
    after = await startLiveService({ store, serverKey: newKey, logOrigin: ORIGIN });
    const r2 = (await after.evaluate(account.apiKey)).receipt as Json;
    expect([r1.attestations[0].key_id, r2.attestations[0].key_id]).toEqual([
      oldKey.keyId,
      newKey.keyId,
    ]);
    oldReceipt = file('old.json', JSON.stringify(r1));
    newReceipt = file('new.json', JSON.stringify(r2));
    historyFile = file('keys.json', await (await fetch(`${after.url}/v1/keys`)).text());
  });
  afterAll(async () => {
    await before.close();
    await after.close();
    tree.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('pinned to the old key, verifies a newer receipt through the served transition', async () => {
    for (const receipt of [oldReceipt, newReceipt]) {
      const run = await cli(receipt, '--fingerprint', oldKey.keyId, '--key-url', after.url);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^PASS\s+signature_valid$/m);
      expect(run.stdout).toMatch(/^PASS\s+chain_linkage/m);
    }
    const run = await cli(newReceipt, '--fingerprint', oldKey.keyId, '--key-url', after.url);
    expect(run.stdout).toContain(`key           ${newKey.keyId}`);
  });

  it('pinned to the new key, trusts the old key only when it is pinned too', async () => {
    let run = await cli(newReceipt, '--fingerprint', newKey.keyId, '--key-history', historyFile);
    expect(run.code).toBe(0);
    run = await cli(oldReceipt, '--fingerprint', newKey.keyId, '--key-history', historyFile);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^FAIL\s+signature_valid/m);
    for (const receipt of [oldReceipt, newReceipt]) {
      run = await cli(
        receipt,
        '--fingerprint',
        newKey.keyId,
        '--fingerprint',
        oldKey.keyId,
        '--key-history',
        historyFile,
      );
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
    }
  });

  it('does not trust a key put before the pin with a transition it signed itself', async () => {
    const served = (await (await fetch(`${after.url}/v1/keys`)).json()) as never;
    const forgedKey = newServerKey();
    const history = forgedPrefixHistory(served, newKey, forgedKey);
    const forgedReceipt = file(
      'forged-receipt.json',
      JSON.stringify(
        resignReceipt(JSON.parse(readFileSync(newReceipt, 'utf8')) as Json, forgedKey),
      ),
    );
    const fake = await startScriptedServer();
    try {
      fake.routes = { '/v1/keys': { body: JSON.stringify(history) } };
      for (const source of [
        ['--key-url', fake.url],
        ['--key-history', file('forged-prefix.json', JSON.stringify(history))],
      ]) {
        const run = await cli(
          forgedReceipt,
          '--fingerprint',
          newKey.keyId,
          ...source,
          '--require-proceed',
        );
        expect(run.code).toBe(1);
        expect(run.stdout).toMatch(/^FAIL\s+signature_valid\s+no Ed25519 attestation by key/m);
      }
    } finally {
      await fake.close();
    }
  });

  it('refuses a history whose transition is not signed by the previous key', async () => {
    const history = JSON.parse(JSON.stringify(await (await fetch(`${after.url}/v1/keys`)).json()));
    history.keys[1].transition.statement.issued_at = '2020-01-01T00:00:00.000Z';
    const forged = file('forged.json', JSON.stringify(history));
    const run = await cli(newReceipt, '--fingerprint', oldKey.keyId, '--key-history', forged);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `the transition is not signed by the previous key ${oldKey.keyId}`,
    );
  });

  it('without a history, the old key alone does not verify the newer receipt', async () => {
    const pem = file('old.pem', oldKey.publicKeyPem);
    const run = await cli(newReceipt, '--key', pem);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^FAIL\s+signature_valid\s+no Ed25519 attestation by key/m);
  });
  it('with --proof, follows the history to the key that signed the checkpoint', async () => {
    // After the rotation the checkpoint is signed by the new key; the pin is the old one.
    const account = await after.signup();
    for (const [name, receipt] of [
      ['old', oldReceipt],
      ['new', newReceipt],
    ] as const) {
      const id = (JSON.parse(readFileSync(receipt, 'utf8')) as Json).receipt_id as string;
      const res = await fetch(`${after.url}/v1/receipts/${id}/proof`, {
        headers: { 'X-API-Key': account.apiKey },
      });
      expect(res.status).toBe(200);
      const proof = file(`${name}-proof.json`, await res.text());
      const run = await cli(
        receipt,
        '--fingerprint',
        oldKey.keyId,
        '--key-history',
        historyFile,
        '--proof',
        proof,
      );
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^PASS\s+inclusion$/m);
      // The old key alone does not vouch for the new key's checkpoint.
      const alone = await cli(
        receipt,
        '--key',
        file('old-alone.pem', oldKey.publicKeyPem),
        '--proof',
        proof,
      );
      expect(alone.code).toBe(1);
      expect(alone.stdout).toMatch(/^FAIL\s+inclusion\s+bad checkpoint signature: /m);
    }
  });
});
