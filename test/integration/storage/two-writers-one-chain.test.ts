import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { runNode } from '../../fixtures/run-node.js';
import { transpileTree, type TranspiledTree } from '../../fixtures/transpile-tree.js';
import { type Json } from '../../support/api.js';
import {
  defaultLogOrigin,
  keyOfPem,
  nobleVerifies,
  V2_SIGNED_FIELDS,
  v2ReceiptHash,
} from '../../support/receipts.js';

describe('two processes issuing receipt-core-v2 receipts on one data dir', () => {
  const WORKERS = 2;
  const PER_WORKER = 40;
  const worker = fileURLToPath(new URL('../../fixtures/evaluate-worker.mjs', import.meta.url));
  let tree: TranspiledTree;
  let root: string;

  beforeAll(() => {
    tree = transpileTree([
      'test/support/harness.ts',
      'test/support/claims.ts',
      'src/storage/sqlite/sqlite-store.ts',
      'src/secrets/server-key.ts',
    ]);
    root = mkdtempSync(join(tmpdir(), 'svc-two-writers-'));
  });
  afterAll(() => {
    tree?.cleanup();
    rmSync(root, { recursive: true, force: true });
  });

  it('one gap-free chain; every signed position is the stored one; every signature verifies', async () => {
    const file = join(root, 'ledger.db');
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const publicPem = publicKey.export({ format: 'pem', type: 'spki' }).toString();
    const { raw } = keyOfPem(publicPem);
    const log = defaultLogOrigin(publicPem);
    // The file exists (migrated) before the workers race for appends.
    await openSqliteStore(file).close();

    const barrier = join(root, 'barrier');
    mkdirSync(barrier);
    const names = Array.from({ length: WORKERS }, (_, i) => `writer${i}`);
    const runs = await Promise.all(
      names.map((name) =>
        runNode(
          worker,
          [tree.dir, file, name, String(PER_WORKER), barrier, String(WORKERS)],
          60_000,
          {
            ...process.env,
            SVC_TEST_SIGNING_KEY: pem,
          },
        ),
      ),
    );
    for (const run of runs) expect(run).toMatchObject({ code: 0, stderr: '' });
    const outputs = runs.map(
      (run) => JSON.parse(run.stdout) as { key_id: string; receipt_ids: string[] },
    );

    const store = openSqliteStore(file, { readonly: true });
    try {
      const entries = await store.ledger.list(0, 1000);
      expect(entries).toHaveLength(WORKERS * PER_WORKER);
      const receipts = entries.map((e) => e.receipt as unknown as Json);
      // The writes of the two processes interleave (otherwise this test shows little).
      const order = receipts.map((r) => (r.submitter as Json).key_id);
      const switches = order.filter((k, i) => i > 0 && k !== order[i - 1]).length;
      expect(switches).toBeGreaterThan(1);

      for (const [i, r] of receipts.entries()) {
        const chain = r.chain as Json;
        const position = r.position as Json;
        expect(r.signed_fields).toEqual(V2_SIGNED_FIELDS);
        expect(chain.sequence).toBe(i + 1);
        expect(chain.previous_receipt_hash).toBe(
          i === 0 ? null : (receipts[i - 1]!.chain as Json).receipt_hash,
        );
        expect(position).toEqual({
          log,
          sequence: chain.sequence,
          previous_receipt_hash: chain.previous_receipt_hash,
        });
        expect(chain.receipt_hash).toBe(v2ReceiptHash(r));
        expect(await nobleVerifies(r, raw)).toBe(true);
      }
      for (const [w, output] of outputs.entries()) {
        const mine = receipts.filter((r) => (r.submitter as Json).key_id === output.key_id);
        expect(mine.map((r) => r.receipt_id)).toEqual(output.receipt_ids);
        expect(mine.map((r) => r.claim_id)).toEqual(
          Array.from({ length: PER_WORKER }, (_, i) => `${names[w]}-${i}`),
        );
      }
      expect(await store.ledger.head()).toEqual({
        sequence: WORKERS * PER_WORKER,
        receipt_hash: (receipts.at(-1)!.chain as Json).receipt_hash,
      });
    } finally {
      await store.close();
    }
  }, 120_000);
});
