import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runNodeWithInput } from '../fixtures/run-node.js';
import { ledgerState, signupAccount } from '../support/api.js';
import { expectInstalled, expectPackageFiles, packAndInstall } from '../support/packed-package.js';
import { childEnvBase } from '../support/child-env.js';
import { buildTestApp, type TestApp } from '../support/harness.js';
import { fixtureText } from '../unit/hook/fixtures.js';
import { PRE_TOOL_OUTPUT } from '../unit/hook/output-schemas.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PACKAGE = join(ROOT, 'packages/hook');

// Where an agent runs, svc-hook is installed alone: @svc/hook as `npm pack` makes it, installed
// into an empty directory with `npm install --offline`. It has no dependency, so the install
// needs nothing but the tarball; then the installed command gates calls against svc itself.
describe('the packed @svc/hook, installed alone', () => {
  let dir: string;
  let agent: string;
  let packed: Json;
  let app: TestApp;
  let server: Server;
  let url: string;
  let key: string;
  const svcHook = (args: string[], stdin = '', env: Record<string, string> = {}) =>
    runNodeWithInput(join(agent, 'node_modules/.bin/svc-hook'), args, stdin, {
      ...childEnvBase(),
      ...env,
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-hook-package-'));
    const result = await packAndInstall({ packageDir: 'packages/hook', dir, name: 'agent' });
    packed = result.packed;
    agent = result.installed;
    expectInstalled(result.install);

    app = buildTestApp();
    key = (await signupAccount(app)).apiKey;
    server = createServer(app.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 300_000);

  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds the build, README.md, LICENSE and package.json, and no source', () => {
    expectPackageFiles(packed.files as { path: string }[], 'svc-hook', [
      'dist/index.js',
      'dist/index.d.ts',
      'dist/cli/svc-hook.js',
    ]);
  });

  it('installs with nothing beside it', () => {
    expect(readdirSync(join(agent, 'node_modules')).filter((n) => !n.startsWith('.'))).toEqual([
      '@svc',
    ]);
    expect(readdirSync(join(agent, 'node_modules/@svc'))).toEqual(['hook']);
  });

  it('runs svc-hook --version and --help', async () => {
    const version = (JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as Json)
      .version as string;
    expect(await svcHook(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    const help = await svcHook(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: svc-hook <harness> \[options\]/);
  });

  it('has a call decided and receipted by svc, and denies when svc cannot be reached', async () => {
    const event = (command: string, id: string) =>
      JSON.stringify({
        ...(JSON.parse(fixtureText('claude-code', 'pre-tool-use.bash')) as object),
        tool_input: { command },
        tool_use_id: id,
      });
    const env = { SVC_URL: url, SVC_API_KEY: key };
    const allowed = await svcHook(['claude-code'], event('npm test', 'toolu_pkg_1'), env);
    expect(allowed.code).toBe(0);
    expect(PRE_TOOL_OUTPUT['claude-code'].parse(JSON.parse(allowed.stdout))).toMatchObject({
      hookSpecificOutput: { permissionDecision: 'allow' },
    });
    const { entries } = await ledgerState(app);
    expect(entries.map((e) => e.receipt.policy.verdict)).toEqual(['ALLOWED']);
    expect(allowed.stdout).toContain(entries[0]!.receipt.receipt_id);

    // A port nothing listens on: fail closed, the problem named.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const unreachable = await svcHook(['claude-code'], event('npm test', 'toolu_pkg_2'), {
      SVC_URL: `http://127.0.0.1:${port}`,
      SVC_API_KEY: key,
    });
    expect(unreachable.code).toBe(2);
    const reached = new RegExp(`svc cannot be reached at http://127.0.0.1:${port}: ECONNREFUSED`);
    expect(unreachable.stderr).toMatch(reached);
    expect(PRE_TOOL_OUTPUT['claude-code'].parse(JSON.parse(unreachable.stdout))).toMatchObject({
      hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: reached },
    });
    expect((await ledgerState(app)).entries).toHaveLength(1);
  });
});
