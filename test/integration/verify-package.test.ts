import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NodeRun } from '../fixtures/run-node.js';
import { withRepositoryBuild } from '../support/build-lock.js';
import { loadFixture } from '../support/fixtures.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PACKAGE = join(ROOT, 'packages/verify');
const DEPENDENCIES = [
  '@noble/ed25519',
  '@noble/hashes',
  '@noble/post-quantum',
  'safe-stable-stringify',
];

function run(command: string, args: string[], cwd: string, timeoutMs = 120_000): Promise<NodeRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const vectors = loadFixture<Json>('receipt-vectors.json');

// An auditor installs svc-verify alone: @svc/verify as `npm pack` makes it, installed into an
// empty directory with `npm install --offline`. Its dependencies are packed from this
// checkout's node_modules, so the install needs no registry (from a registry, `npm install
// @svc/verify` fetches the same three).
describe('the packed @svc/verify, installed alone', () => {
  let dir: string;
  let audit: string;
  let packed: Json;
  const svcVerify = (...args: string[]) =>
    run(process.execPath, [join(audit, 'node_modules/.bin/svc-verify'), ...args], audit, 20_000);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-verify-package-'));
    const tarballs = join(dir, 'tarballs');
    mkdirSync(tarballs);
    // prepack builds the package first, as `npm publish` would (into packages/verify/dist,
    // which other test files build and run too).
    const pack = await withRepositoryBuild(() =>
      run('npm', ['pack', '--json', '--pack-destination', tarballs], PACKAGE),
    );
    expect(pack.code).toBe(0);
    packed = (JSON.parse(pack.stdout) as Json[])[0]!;
    for (const dependency of DEPENDENCIES) {
      const dependencyPack = await run(
        'npm',
        [
          'pack',
          '--ignore-scripts',
          '--pack-destination',
          tarballs,
          join(ROOT, 'node_modules', dependency),
        ],
        dir,
      );
      expect(dependencyPack.code).toBe(0);
    }
    audit = join(dir, 'audit');
    mkdirSync(audit);
    writeFileSync(join(audit, 'package.json'), '{ "name": "audit", "private": true }\n');
    const install = await run(
      'npm',
      [
        'install',
        '--offline',
        '--no-audit',
        '--no-fund',
        ...readdirSync(tarballs).map((file) => join(tarballs, file)),
      ],
      audit,
    );
    expect(install).toMatchObject({ code: 0 });
  }, 300_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('holds the build, README.md, LICENSE and package.json, and no source', () => {
    const files = (packed.files as { path: string }[]).map((f) => f.path);
    expect(files).toEqual(
      expect.arrayContaining([
        'README.md',
        'LICENSE',
        'package.json',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/node/index.js',
        'dist/cli/svc-verify.js',
        'bin/svc-verify.js',
      ]),
    );
    expect(
      files.filter(
        (f) =>
          !/^(dist\/.*\.(js|d\.ts)|bin\/svc-verify\.js|README\.md|LICENSE|package\.json)$/.test(f),
      ),
    ).toEqual([]);
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
    const library = await run(process.execPath, ['--input-type=module', '-e', program], audit);
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
