import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadFixture } from '../support/fixtures.js';
import {
  expectInstalled,
  expectPackageFiles,
  packAndInstall,
  runIn,
} from '../support/packed-package.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PACKAGE = join(ROOT, 'packages/verify');
const DEPENDENCIES = [
  '@noble/ed25519',
  '@noble/hashes',
  '@noble/post-quantum',
  'safe-stable-stringify',
];
// @noble/post-quantum's own dependencies: packed too, or `npm install --offline` would need
// their registry metadata in the npm cache, which `npm ci` does not put there.
const THEIR_DEPENDENCIES = ['@noble/ciphers', '@noble/curves'];

const vectors = loadFixture<Json>('receipt-vectors.json');

// An auditor installs svc-verify alone: @svc/verify as `npm pack` makes it, installed into an
// empty directory with `npm install --offline`. Its dependencies are packed from this
// checkout's node_modules, so the install needs no registry (from a registry, `npm install
// @svc/verify` fetches the same ones).
describe('the packed @svc/verify, installed alone', () => {
  let dir: string;
  let audit: string;
  let packed: Json;
  const svcVerify = (...args: string[]) =>
    runIn(process.execPath, [join(audit, 'node_modules/.bin/svc-verify'), ...args], audit, 20_000);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-verify-package-'));
    const result = await packAndInstall({
      packageDir: 'packages/verify',
      dependencies: [...DEPENDENCIES, ...THEIR_DEPENDENCIES],
      dir,
      name: 'audit',
    });
    packed = result.packed;
    audit = result.installed;
    expectInstalled(result.install);
  }, 300_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('holds the build, README.md, LICENSE and package.json, and no source', () => {
    expectPackageFiles(packed.files as { path: string }[], 'svc-verify', [
      'dist/index.js',
      'dist/index.d.ts',
      'dist/node/index.js',
      'dist/cli/svc-verify.js',
    ]);
  });

  it('installs with its four dependencies (and theirs) and nothing else', () => {
    const installed = JSON.parse(
      readFileSync(join(audit, 'node_modules/@svc/verify/package.json'), 'utf8'),
    ) as Json;
    expect(Object.keys(installed.dependencies as Json).sort()).toEqual(DEPENDENCIES);
    expect(
      readdirSync(join(audit, 'node_modules'))
        .filter((n) => !n.startsWith('.'))
        .sort(),
    ).toEqual(['@noble', '@svc', 'safe-stable-stringify']);
  });

  it('runs svc-verify --version', async () => {
    const version = (JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as Json)
      .version as string;
    expect(await svcVerify('--version')).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('verifies a receipt against the pinned key, and refuses one whose signed verdict was changed', async () => {
    const receipt = vectors.receipts_v2[0].receipt as Json;
    writeFileSync(join(audit, 'key.pem'), vectors.signer.public_key_pem as string);
    writeFileSync(join(audit, 'receipt.json'), JSON.stringify(receipt));
    const good = await svcVerify('receipt.json', '--key', 'key.pem', '--json', '--require-proceed');
    expect(good.code).toBe(0);
    expect(JSON.parse(good.stdout)).toMatchObject({ valid: true, receipt_id: receipt.receipt_id });

    writeFileSync(
      join(audit, 'tampered.json'),
      JSON.stringify({ ...receipt, policy: { ...receipt.policy, verdict: 'BLOCKED' } }),
    );
    const bad = await svcVerify('tampered.json', '--key', 'key.pem', '--json');
    expect(bad.code).toBe(1);
    const result = JSON.parse(bad.stdout) as Json;
    expect(result.valid).toBe(false);
    expect(result.checks).toContainEqual(
      expect.objectContaining({ name: 'signature_valid', status: 'FAIL' }),
    );
  });

  it('is a library too: its main entry verifies in plain ESM, importing no node: module', async () => {
    const program = `
      import { decisionOf, parsePublicKeyPem, verifyOffline } from '@svc/verify';
      import { readFileSync } from 'node:fs';
      const receipt = JSON.parse(readFileSync('receipt.json', 'utf8'));
      const result = verifyOffline(receipt, parsePublicKeyPem(readFileSync('key.pem', 'utf8')));
      console.log(JSON.stringify({ valid: result.valid, proceed: decisionOf(receipt, result).proceed }));
    `;
    const library = await runIn(process.execPath, ['--input-type=module', '-e', program], audit);
    expect(library).toEqual({ code: 0, stdout: '{"valid":true,"proceed":true}\n', stderr: '' });

    const portable = (packed.files as { path: string }[])
      .map((f) => f.path)
      .filter((f) => f.endsWith('.js') && !/^dist\/(cli|node)\//.test(f));
    expect(portable.length).toBeGreaterThan(10);
    for (const file of portable)
      expect(readFileSync(join(audit, 'node_modules/@svc/verify', file), 'utf8')).not.toMatch(
        /from ['"](node:|fs|crypto|path)/,
      );
  });
});
