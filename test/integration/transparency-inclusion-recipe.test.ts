import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLiveService, type LiveService } from '../support/live-service.js';
import type { NodeRun } from '../fixtures/run-node.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** The `node --input-type=module -e '…'` program of the doc's section on offline inclusion. */
function recipe(): string {
  const doc = readFileSync(join(REPO, 'docs/TRANSPARENCY.md'), 'utf8');
  const start = doc.indexOf("## Check a receipt's inclusion offline");
  const end = doc.indexOf('\n## ', start + 1);
  expect(start).toBeGreaterThanOrEqual(0);
  const match = /^node --input-type=module -e '\n([\s\S]*?)\n'$/m.exec(doc.slice(start, end));
  expect(match).not.toBeNull();
  return match![1]!;
}

function runRecipe(code: string, cwd: string): Promise<NodeRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 20_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (status) => resolve({ code: status, stdout, stderr }));
  });
}

// The by-hand recipe of docs/TRANSPARENCY.md runs as written against a live service's receipt,
// proof and key, in a directory where `canonicalize` resolves as in a clone of the repository.
describe('the inclusion recipe of docs/TRANSPARENCY.md', () => {
  let live: LiveService;
  let dir: string;
  let receipt: Json;
  let proof: Json;
  const write = (receiptValue: Json, proofValue: Json) => {
    writeFileSync(join(dir, 'receipt.json'), JSON.stringify(receiptValue, null, 2));
    writeFileSync(join(dir, 'proof.json'), JSON.stringify(proofValue));
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-recipe-'));
    symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'));
    live = await startLiveService();
    const { apiKey } = await live.signup();
    receipt = (await live.evaluate(apiKey)).receipt as Json;
    for (let i = 0; i < 4; i++) await live.evaluate(apiKey);
    const res = await fetch(`${live.url}/v1/receipts/${receipt.receipt_id}/proof`, {
      headers: { 'X-API-Key': apiKey },
    });
    expect(res.status).toBe(200);
    proof = (await res.json()) as Json;
    expect(proof.inclusion.length).toBeGreaterThan(1);
    writeFileSync(join(dir, 'server.pem'), live.t.serverKey.publicKeyPem);
  });
  afterAll(async () => {
    await live.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints checkpoint signed: true and included: true for an honest receipt', async () => {
    write(receipt, proof);
    const run = await runRecipe(recipe(), dir);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('checkpoint signed: true\n');
    expect(run.stdout).toContain(`size: ${proof.tree_size}\n`);
    expect(run.stdout).toMatch(/included: true\n$/);
  });

  it('finds the log’s signature among witness cosignature lines, in any order', async () => {
    const witnessLine = `\u2014 witness.example/w1 ${Buffer.alloc(76, 9).toString('base64')}\n`;
    const at = (proof.checkpoint as string).indexOf('\n\n') + 2;
    const note = proof.checkpoint as string;
    for (const checkpoint of [
      `${note}${witnessLine}`,
      `${note.slice(0, at)}${witnessLine}${note.slice(at)}`,
    ]) {
      write(receipt, { ...proof, checkpoint });
      const run = await runRecipe(recipe(), dir);
      expect(run.stderr).toBe('');
      expect(run.stdout).toContain('checkpoint signed: true\n');
      expect(run.stdout).toMatch(/included: true\n$/);
    }
  });

  it('prints included: false for a tampered receipt', async () => {
    write({ ...receipt, policy: { ...receipt.policy, verdict: 'BLOCKED' } }, proof);
    const run = await runRecipe(recipe(), dir);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('checkpoint signed: true\n');
    expect(run.stdout).toMatch(/included: false\n$/);
  });

  it('prints checkpoint signed: false under another key', async () => {
    write(receipt, proof);
    const pem = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' });
    writeFileSync(join(dir, 'server.pem'), pem);
    try {
      const run = await runRecipe(recipe(), dir);
      expect(run.stdout).toContain('checkpoint signed: false\n');
    } finally {
      writeFileSync(join(dir, 'server.pem'), live.t.serverKey.publicKeyPem);
    }
  });
});
