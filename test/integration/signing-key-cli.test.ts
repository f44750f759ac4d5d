import { createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import jcs from 'canonicalize';
import { systemClock } from '../../src/ports/clock.js';
import { loadServerKey } from '../../src/secrets/server-key.js';
import { SigningKeyService } from '../../src/services/signing-keys.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { runNode } from '../fixtures/run-node.js';
import { transpileTree, type TranspiledTree } from '../fixtures/transpile-tree.js';

jest.setTimeout(120_000);

// svc signing-key as a child process on a data directory the service has started on.
describe('svc signing-key', () => {
  let tree: TranspiledTree;
  let dataDir: string;
  const cli = (...args: string[]) =>
    runNode(fileURLToPath(tree.url('src/cli/svc.ts')), args, 30_000, {
      ...process.env,
      SVC_DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
    });

  beforeAll(async () => {
    tree = transpileTree(['src/cli/svc.ts']);
    dataDir = mkdtempSync(join(tmpdir(), 'svc-signing-key-cli-'));
    // What the service's first start leaves: the key file, the ledger, the key registered.
    const key = loadServerKey({ dataDir }).key;
    const store = openSqliteStore(join(dataDir, 'ledger.db'));
    const origin = await store.tree.initOrigin('svc.example/cli');
    await new SigningKeyService({ store: store.signingKeys, clock: systemClock, origin }).register(
      key,
    );
    await store.close();
  });
  afterAll(() => {
    tree.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('rotates: the new key replaces signing-key.pem, the history lists both', async () => {
    const oldKey = loadServerKey({ dataDir }).key;
    const run = await cli('signing-key', 'rotate');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('restart the service');
    const newKey = loadServerKey({ dataDir }).key;
    expect(newKey.keyId).not.toBe(oldKey.keyId);
    expect(existsSync(join(dataDir, 'signing-key.next.pem'))).toBe(false);
    const list = await cli('signing-key', 'list');
    expect(list.code).toBe(0);
    const lines = list.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^${oldKey.keyId}  retired  sequences 1-0 `));
    expect(lines[1]).toMatch(
      new RegExp(`^${newKey.keyId}  current  sequences 1-  .*transition from ${oldKey.keyId}`),
    );
    // The old key's process is refused at its next start.
    const store = openSqliteStore(join(dataDir, 'ledger.db'));
    try {
      const keys = new SigningKeyService({
        store: store.signingKeys,
        clock: systemClock,
        origin: 'svc.example/cli',
      });
      await expect(keys.register(oldKey)).rejects.toThrow(/is retired/);
      await expect(keys.register(newKey)).resolves.toHaveLength(2);
    } finally {
      await store.close();
    }
  });

  it('refuses a revoke without --from-sequence or with a malformed key_id (exit 2)', async () => {
    expect((await cli('signing-key', 'revoke', `sha256:${'a'.repeat(64)}`)).code).toBe(2);
    expect((await cli('signing-key', 'revoke', 'nope', '--from-sequence', '1')).code).toBe(2);
    const unknown = await cli(
      'signing-key',
      'revoke',
      `sha256:${'a'.repeat(64)}`,
      '--from-sequence',
      '1',
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no key');
  });

  it('revokes with a statement the current key signs', async () => {
    const current = loadServerKey({ dataDir }).key;
    const run = await cli('signing-key', 'revoke', current.keyId, '--from-sequence', '1');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`revocation signed by ${current.keyId}`);
    const store = openSqliteStore(join(dataDir, 'ledger.db'));
    let revocation;
    try {
      revocation = (await store.signingKeys.list()).find(
        (k) => k.key_id === current.keyId,
      )!.revocation!;
    } finally {
      await store.close();
    }
    expect(revocation.statement).toMatchObject({
      type: 'svc-key-revocation-v1',
      log: 'svc.example/cli',
      key_id: current.keyId,
      revoked_from_sequence: 1,
      signer_key_id: current.keyId,
    });
    // Checked with node:crypto over another RFC 8785 implementation's bytes.
    const ok = cryptoVerify(
      null,
      Buffer.from(jcs(revocation.statement)!, 'utf8'),
      createPublicKey(current.publicKeyPem),
      Buffer.from(revocation.signature, 'base64'),
    );
    expect(ok).toBe(true);
  });
});
