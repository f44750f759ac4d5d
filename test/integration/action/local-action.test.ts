import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nobleVerifies, serverPublicKey } from '../../support/receipts.js';
import { startLiveService, type LiveService } from '../../support/live-service.js';

// The committed bundle under @github/local-action, as action/README.md ("Run it on your
// machine") runs it: local-action imports action/dist/index.js and calls its exported run(),
// which reads INPUT_* and GITHUB_* from the dotenv file (examples/action/local.env).

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const LOCAL_ACTION = join(ROOT, 'node_modules/@github/local-action/bin/local-action.js');

type Json = Record<string, unknown>;

function localAction(envFile: string) {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env))
    if (!/^(INPUT_|GITHUB_|RUNNER_|npm_)/.test(name)) env[name] = value;
  env.PATH = `${dirname(process.execPath)}:${process.env.PATH ?? ''}`;
  return new Promise<{ code: number | null; stdout: string }>((resolve) => {
    const child = spawn(process.execPath, [LOCAL_ACTION, 'action', 'dist/index.js', envFile], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

const outputsOf = (stdout: string) =>
  Object.fromEntries(
    [...stdout.matchAll(/^::set-output name=([a-z-]+)::(.*)$/gm)].map((m) => [m[1]!, m[2]!]),
  );

describe('the Action under @github/local-action', () => {
  let live: LiveService;
  let dir: string;
  let apiKey: string;

  beforeAll(async () => {
    live = await startLiveService();
    ({ apiKey } = await live.signup());
    dir = mkdtempSync(join(tmpdir(), 'svc-local-action-'));
  });
  afterAll(async () => {
    await live.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** examples/action/local.env with the service, the key, the pin and a workspace of its own. */
  function envFile(name: string, extra: string[] = []): { path: string; workspace: string } {
    const workspace = mkdtempSync(join(dir, `${name}-`));
    const path = join(dir, `${name}.env`);
    writeFileSync(
      path,
      [
        readFileSync(join(ROOT, 'examples/action/local.env'), 'utf8'),
        `INPUT_API-URL=${live.url}`,
        `INPUT_API-KEY=${apiKey}`,
        `INPUT_KEY-FINGERPRINT=${live.t.serverKey.keyId}`,
        `GITHUB_WORKSPACE=${workspace}`,
        ...extra,
        '',
      ].join('\n'),
    );
    return { path, workspace };
  }

  it('runs the bundle: the example claim is ALLOWED, verified and written', async () => {
    const { path, workspace } = envFile('allowed', [
      `INPUT_CLAIM-FILE=${join(ROOT, 'examples/merge-claim.json')}`,
    ]);
    const run = await localAction(path);
    expect({ code: run.code, errors: run.stdout.match(/^::error::.*$/gm) }).toEqual({
      code: 0,
      errors: null,
    });
    const outputs = outputsOf(run.stdout);
    expect(outputs).toMatchObject({ verdict: 'ALLOWED', admissibility: 'ACCEPTED', valid: 'true' });
    // The receipt it wrote is the one svc signed, checked with another Ed25519 implementation.
    const [file] = readdirSync(join(workspace, 'svc-receipts'));
    const receipt = JSON.parse(
      readFileSync(join(workspace, 'svc-receipts', file!), 'utf8'),
    ) as Json;
    expect(receipt.receipt_id).toBe(outputs['receipt-id']);
    expect(receipt.claim_id).toBe('acme-web-pr-42-local');
    expect(await nobleVerifies(receipt, await serverPublicKey(live.t))).toBe(true);
  }, 90_000);

  it('fails the run when the gate does not pass (an escalated deployment)', async () => {
    const { path } = envFile('escalated', [
      `INPUT_CLAIM-FILE=${join(ROOT, 'examples/escalated-claim.json')}`,
    ]);
    const run = await localAction(path);
    expect(run.code).not.toBe(0);
    expect(outputsOf(run.stdout)).toMatchObject({ verdict: 'ESCALATED', valid: 'true' });
    expect(run.stdout).toMatch(/^::error::svc gate: verdict ESCALATED/m);
  }, 90_000);
});
