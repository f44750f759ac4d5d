import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import request from 'supertest';
import { listen } from '../../support/browser.js';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import { evaluate, newKey } from '../../support/api.js';
import { validClaim } from '../../support/claims.js';
import { freePort } from '../../support/server-process.js';

// The served OpenAPI document as the tools of its ecosystem read it: Stoplight Spectral with
// every rule of its OpenAPI ruleset, and Stoplight Prism as a validating proxy in front of the
// service, through which an OpenAPI client reaches the tile routes.

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);

// Prism starts in seconds on a shared two-core machine.
jest.setTimeout(120_000);

describe('the OpenAPI document in Spectral and Prism', () => {
  let t: TestApp;
  let base: string;
  let stop: () => Promise<void>;
  let dir: string;
  let file: string;

  beforeAll(async () => {
    const listening = await listen();
    base = listening.url;
    stop = listening.close;
    t = buildTestApp({ config: { baseUrl: base, contactEmail: 'operator@example.org' } });
    listening.server.on('request', t.app);
    const key = await newKey(t);
    for (let i = 0; i < 3; i++) expect((await evaluate(t, key, validClaim())).status).toBe(200);
    dir = mkdtempSync(join(tmpdir(), 'svc-openapi-'));
    file = join(dir, 'openapi.json');
    const doc = await request(t.app).get('/v1/openapi.json').expect(200);
    writeFileSync(file, JSON.stringify(doc.body, null, 2));
  });
  afterAll(async () => {
    await stop?.();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('Spectral with every rule of spectral:oas reports nothing', () => {
    const run = spawnSync(
      bin('spectral'),
      ['lint', '--ruleset', join(ROOT, '.spectral.yaml'), '--format', 'json', '--quiet', file],
      { encoding: 'utf8' },
    );
    const findings = JSON.parse(run.stdout || '[]') as { code: string; path: string[] }[];
    expect(findings.map((f) => `${f.code} at ${f.path.join('.')}`)).toEqual([]);
    expect(run.status).toBe(0);
  });

  it('Spectral reports what it should: the check is not blind', () => {
    // The same document without its contact.
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { info: Record<string, unknown> };
    delete doc.info.contact;
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, JSON.stringify(doc));
    const run = spawnSync(
      bin('spectral'),
      ['lint', '--ruleset', join(ROOT, '.spectral.yaml'), '--format', 'json', '--quiet', broken],
      { encoding: 'utf8' },
    );
    const codes = (JSON.parse(run.stdout) as { code: string }[]).map((f) => f.code);
    expect(codes).toContain('info-contact');
  });

  describe('Prism as a validating proxy', () => {
    let prism: ChildProcess;
    let proxy: string;
    let output = '';

    beforeAll(async () => {
      const port = await freePort();
      proxy = `http://127.0.0.1:${port}`;
      prism = spawn(
        bin('prism'),
        ['proxy', file, base, '--host', '127.0.0.1', '--port', String(port), '--errors'],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      prism.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      prism.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      const deadline = performance.now() + 90_000;
      while (!/Prism is listening/.test(output)) {
        if (performance.now() > deadline || prism.exitCode !== null)
          throw new Error(`Prism did not start:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    });
    afterAll(() => {
      prism?.kill();
    });

    /** A GET through Prism: the status, the headers (sl-violations: what Prism found) and the body. */
    async function throughPrism(path: string) {
      const res = await fetch(`${proxy}${path}`);
      const body = Buffer.from(await res.arrayBuffer());
      return { status: res.status, headers: res.headers, body };
    }

    it('reaches the hash tiles and entry bundles, which answer as declared', async () => {
      for (const path of [
        '/v1/log/tile/0/000.p/3',
        '/v1/log/tile/entries/000.p/3',
        '/v1/log/checkpoint',
      ]) {
        const res = await throughPrism(path);
        expect({ path, status: res.status }).toEqual({ path, status: 200 });
        // The service answered (its headers came through), and Prism found the request and
        // the answer as the document declares them.
        expect(res.headers.get('x-svc-version')).toBeTruthy();
        expect(res.headers.get('x-request-id')).toBeTruthy();
        expect(res.headers.get('cache-control')).toBeTruthy();
        expect(res.headers.get('sl-violations')).toBeNull();
      }
      const tile = await throughPrism('/v1/log/tile/0/000.p/3');
      expect(tile.headers.get('content-type')).toBe('application/octet-stream');
      // A tile the tree does not hold yet is the service's declared 404.
      const missing = await throughPrism('/v1/log/tile/0/000.p/4');
      expect(missing.status).toBe(404);
      expect(missing.headers.get('sl-violations')).toBeNull();
      expect(JSON.parse(missing.body.toString('utf8'))).toMatchObject({ code: 'not_found' });
    });

    it('refuses, from the document alone, a path that is no tile', async () => {
      const res = await throughPrism('/v1/log/tile/0/0000');
      expect(res.status).toBe(422);
      expect(res.body.toString('utf8')).toContain('must match pattern');
    });

    it('finds every other response it forwards as declared, headers included', async () => {
      const key = await newKey(t);
      const answers = [
        await fetch(`${proxy}/v1/status`),
        await fetch(`${proxy}/v1/receipts/dr-none`),
        await fetch(`${proxy}/v1/evaluate`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
          body: JSON.stringify(validClaim()),
        }),
      ];
      expect(answers.map((a) => a.status)).toEqual([200, 404, 200]);
      for (const a of answers) expect(a.headers.get('sl-violations')).toBeNull();
    });
  });
});
