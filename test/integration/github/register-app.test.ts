import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { getPrivateKey } from '@probot/get-private-key';
import { execFileSync, spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';
import nock from 'nock';
import {
  exchangeManifestCode,
  RegistrationError,
  runRegisterApp,
  type RegisterIo,
} from '../../../src/cli/register-app.js';
import { runNode } from '../../fixtures/run-node.js';
import { transpileTree, type TranspiledTree } from '../../fixtures/transpile-tree.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const APP_YML = join(ROOT, 'app.yml');
const PEM = generateKeyPairSync('rsa', { modulusLength: 1024 })
  .privateKey.export({ type: 'pkcs1', format: 'pem' })
  .toString();
const SECRET = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4';
const CLIENT_SECRET = '0123456789abcdef0123456789abcdef01234567';

// GitHub's 201 answer to POST /app-manifests/{code}/conversions, trimmed to typical members.
const conversion = {
  id: 424242,
  slug: 'svc-acme',
  node_id: 'A_kwDOAAAAAc4ABnjS',
  owner: { login: 'acme', id: 1, type: 'Organization' },
  name: 'svc-acme',
  description: 'Verifiable gate for autonomous agents',
  external_url: 'https://github.com/apps/svc',
  html_url: 'https://github.com/apps/svc-acme',
  created_at: '2026-11-23T10:00:00Z',
  updated_at: '2026-11-23T10:00:00Z',
  permissions: { checks: 'write', metadata: 'read' },
  events: ['pull_request'],
  client_id: 'Iv23liAbCdEf012345',
  client_secret: CLIENT_SECRET,
  webhook_secret: SECRET,
  pem: PEM,
};

const decodeHtml = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** Reads the form the local page posts to GitHub. */
function readForm(page: string) {
  const action = decodeHtml(/<form id="register" method="post" action="([^"]*)"/.exec(page)![1]!);
  const manifest = JSON.parse(decodeHtml(/name="manifest" value="([^"]*)"/.exec(page)![1]!));
  const state = new URL(action).searchParams.get('state')!;
  return { action, manifest, state };
}

/** An in-process run of the command whose output the test can wait on. */
function startInProcess(args: string[], cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  let announce: (url: string) => void;
  const opened = new Promise<string>((resolve) => (announce = resolve));
  const io: RegisterIo = {
    env: { SVC_BASE_URL: 'https://svc.acme.test/' },
    cwd,
    out: (line) => {
      out.push(line);
      const url = /^Open (http:\/\/127\.0\.0\.1:\d+\/) /.exec(line)?.[1];
      if (url) announce(url);
    },
    err: (line) => void err.push(line),
  };
  // --timeout: the server stops by itself should a test fail halfway.
  const done = runRegisterApp(['--port', '0', '--timeout', '0.5', ...args], io);
  return { out, err, opened, done };
}

describe('exchangeManifestCode against GitHub (nock)', () => {
  beforeAll(() => {
    nock.disableNetConnect();
    nock.enableNetConnect('127.0.0.1');
  });
  afterEach(() => nock.cleanAll());
  afterAll(() => nock.enableNetConnect());

  it('posts the code, unauthenticated, and returns the App registration', async () => {
    const scope = nock('https://api.github.com', {
      reqheaders: {
        accept: 'application/vnd.github+json',
        'x-github-api-version': '2022-11-28',
      },
      badheaders: ['authorization'],
    })
      .post('/app-manifests/abc123/conversions')
      .reply(201, conversion);
    const app = await exchangeManifestCode('abc123', { apiUrl: 'https://api.github.com' });
    expect(app).toMatchObject({ id: 424242, html_url: 'https://github.com/apps/svc-acme' });
    expect(app.pem).toBe(PEM);
    scope.done();
  });

  it('explains a 404 (used or expired code) and a 422 (refused manifest)', async () => {
    nock('https://api.github.com')
      .post('/app-manifests/used/conversions')
      .reply(404, { message: 'Not Found', documentation_url: 'https://docs.github.com' });
    await expect(
      exchangeManifestCode('used', { apiUrl: 'https://api.github.com' }),
    ).rejects.toThrow(
      new RegistrationError(
        'GitHub does not know this code (404: Not Found). A code works once and for one hour: run npm run register-app again',
      ),
    );
    nock('https://ghe.acme.test')
      .post('/api/v3/app-manifests/bad/conversions')
      .reply(422, { message: 'Validation Failed: Name is already in use' });
    await expect(
      exchangeManifestCode('bad', { apiUrl: 'https://ghe.acme.test/api/v3' }),
    ).rejects.toThrow(/422: Validation Failed: Name is already in use\)/);
  });

  it('refuses an answer that would inject lines into the env file', async () => {
    nock('https://api.github.com')
      .post('/app-manifests/abc/conversions')
      .reply(201, { ...conversion, webhook_secret: 'x\nAPP_ID=1' });
    await expect(exchangeManifestCode('abc', { apiUrl: 'https://api.github.com' })).rejects.toThrow(
      /not an App registration \(webhook_secret\)/,
    );
  });

  it('never puts a malformed code into the request path', async () => {
    await expect(
      exchangeManifestCode('../../user', { apiUrl: 'https://api.github.com' }),
    ).rejects.toThrow(/malformed/);
  });
});

describe('npm run register-app, in process with GitHub intercepted', () => {
  let dir: string;
  beforeAll(() => {
    nock.disableNetConnect();
    nock.enableNetConnect('127.0.0.1');
  });
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-register-'));
  });
  afterEach(() => {
    nock.cleanAll();
    rmSync(dir, { recursive: true, force: true });
  });
  afterAll(() => nock.enableNetConnect());

  const args = () => ['--manifest', APP_YML, '--out', join(dir, '.env')];

  it('serves the manifest form, exchanges the code of the redirect and writes the env file', async () => {
    const scope = nock('https://api.github.com')
      .post('/app-manifests/abc/conversions')
      .reply(201, conversion);
    const run = startInProcess([...args(), '--org', 'acme'], dir);
    const url = await run.opened;

    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'nonce-/);
    const { action, manifest, state } = readForm(await page.text());
    expect(action).toBe(
      `https://github.com/organizations/acme/settings/apps/new?state=${encodeURIComponent(state)}`,
    );
    expect(state.length).toBeGreaterThanOrEqual(32);
    expect(manifest.hook_attributes.url).toBe('https://svc.acme.test/v1/webhook/scm');
    expect(manifest.redirect_url).toBe(url);
    expect(manifest.default_events).toContain('merge_group');

    // GitHub's redirect after the App was created.
    const back = await fetch(`${url}?code=abc&state=${state}`, { redirect: 'manual' });
    expect(back.status).toBe(302);
    expect(back.headers.get('location')).toBe('https://github.com/apps/svc-acme/installations/new');
    expect(await run.done).toBe(0);
    scope.done();

    const envPath = join(dir, '.env');
    expect(statSync(envPath).mode & 0o777).toBe(0o600);
    const env = parseEnv(readFileSync(envPath, 'utf8'));
    expect(env).toMatchObject({
      APP_ID: '424242',
      WEBHOOK_SECRET: SECRET,
      GITHUB_CLIENT_ID: 'Iv23liAbCdEf012345',
      GITHUB_CLIENT_SECRET: CLIENT_SECRET,
    });
    expect(getPrivateKey({ env: { PRIVATE_KEY: env.PRIVATE_KEY } })).toBe(PEM);

    const printed = [...run.out, ...run.err].join('\n');
    expect(run.out).toContain(
      'Created the GitHub App "svc-acme" (App ID 424242): https://github.com/apps/svc-acme',
    );
    expect(printed).toContain(
      'Install it on the repositories to gate: https://github.com/apps/svc-acme/installations/new',
    );
    // Secrets go to the file only.
    for (const secret of [SECRET, CLIENT_SECRET, 'PRIVATE KEY-----']) {
      expect(printed).not.toContain(secret);
    }
    // The server has stopped.
    await expect(fetch(url)).rejects.toThrow();
  });

  it.each([
    [404, { message: 'Not Found' }, /GitHub does not know this code \(404: Not Found\)/],
    [422, { message: 'Validation Failed' }, /GitHub refused to create the App \(422/],
  ])(
    'a %i from GitHub is a clear error, exit code 1 and no env file',
    async (status, body, text) => {
      const scope = nock('https://api.github.com')
        .post('/app-manifests/abc/conversions')
        .reply(status, body);
      const run = startInProcess(args(), dir);
      const url = await run.opened;
      const { state } = readForm(await (await fetch(url)).text());
      const back = await fetch(`${url}?code=abc&state=${state}`, { redirect: 'manual' });
      expect(back.status).toBe(502);
      expect(await back.text()).toMatch(text);
      expect(await run.done).toBe(1);
      expect(run.err.join('\n')).toMatch(text);
      expect(existsSync(join(dir, '.env'))).toBe(false);
      scope.done();
    },
  );

  it('ignores a redirect without this session’s state and still completes the real one', async () => {
    const scope = nock('https://api.github.com')
      .post('/app-manifests/good/conversions')
      .reply(201, conversion);
    const run = startInProcess(args(), dir);
    const url = await run.opened;
    const { state } = readForm(await (await fetch(url)).text());

    for (const forged of [`${url}?code=evil`, `${url}?code=evil&state=${state.slice(1)}x`]) {
      expect((await fetch(forged, { redirect: 'manual' })).status).toBe(403);
    }
    expect(run.err).toContain(
      'register-app: ignored a redirect whose state does not match this session',
    );
    expect(existsSync(join(dir, '.env'))).toBe(false);

    const back = await fetch(`${url}?code=good&state=${state}`, { redirect: 'manual' });
    expect(back.status).toBe(302);
    expect(await run.done).toBe(0);
    scope.done();
  });

  it('reports a broken manifest or a busy port with exit code 1, leaving nothing running', async () => {
    writeFileSync(join(dir, 'app.yml'), 'name: svc\nurl: https://example.com\n');
    const broken = startInProcess(['--manifest', join(dir, 'app.yml')], dir);
    expect(await broken.done).toBe(1);
    expect(broken.err).toEqual([
      'register-app: the manifest is not a GitHub App manifest: default_permissions: Invalid input: expected record, received undefined; default_events: Invalid input: expected array, received undefined',
    ]);
    expect(broken.out).toEqual([]);

    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = String((busy.address() as AddressInfo).port);
    try {
      const run = startInProcess([...args(), '--port', port], dir);
      expect(await run.done).toBe(1);
      expect(run.err).toEqual([
        `register-app: port ${port} is in use; pass --port <n> (0 picks a free one)`,
      ]);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });

  it('answers only requests addressed to the loopback names, and gives up in time', async () => {
    // A later --timeout wins: about one second.
    const run = startInProcess(
      [...args(), '--timeout', '0.02', '--webhook-url', 'http://localhost:3000/v1/webhook/scm'],
      dir,
    );
    const url = new URL(await run.opened);
    const status = await new Promise<number>((resolve, reject) => {
      httpRequest(
        { host: '127.0.0.1', port: url.port, path: '/', headers: { host: 'evil.test' } },
        (res: IncomingMessage) => {
          res.resume();
          resolve(res.statusCode!);
        },
      )
        .on('error', reject)
        .end();
    });
    expect(status).toBe(421);
    expect(run.err[0]).toBe(
      'register-app: warning: GitHub cannot deliver events to http://localhost:3000/v1/webhook/scm; for local development use a https://smee.io channel as --webhook-url (docs/GITHUB_APP.md)',
    );
    expect((await fetch(new URL('/other', url))).status).toBe(404);
    // The timeout ends this run: nothing was written.
    expect(await run.done).toBe(1);
    expect(run.err.at(-1)).toBe(
      'register-app: GitHub did not redirect back within 0.02 minutes; run the command again',
    );
    expect(existsSync(join(dir, '.env'))).toBe(false);
  });
});

describe('npm run register-app as a child process', () => {
  let tree: TranspiledTree;
  let dir: string;
  let github: ReturnType<typeof createServer>;
  let githubUrl: string;
  const seen: { method: string; url: string; authorization?: string }[] = [];

  // A fake GitHub API on loopback: the child process cannot be intercepted by nock.
  beforeAll(async () => {
    tree = transpileTree(['src/cli/register-app.ts']);
    github = createServer((req, res) => {
      seen.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization });
      if (req.method === 'POST' && req.url === '/api/v3/app-manifests/abc/conversions') {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify(conversion));
      } else {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: 'Not Found' }));
      }
    });
    await new Promise<void>((resolve) => github.listen(0, '127.0.0.1', resolve));
    githubUrl = `http://127.0.0.1:${(github.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    tree.cleanup();
    await new Promise((resolve) => github.close(resolve));
  });
  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'svc-register-cli-')));
    seen.length = 0;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const script = () => fileURLToPath(tree.url('src/cli/register-app.ts'));
  const env = (extra: Record<string, string> = {}) => {
    const base: NodeJS.ProcessEnv = { ...process.env };
    delete base.SVC_BASE_URL;
    delete base.GHE_HOST;
    delete base.GHE_PROTOCOL;
    return { ...base, ...extra };
  };

  it('prints its usage with --help', async () => {
    const run = await runNode(script(), ['--help'], 20_000, env());
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('npm run register-app -- [options]');
    expect(run.stdout).toContain('--webhook-url <url>');
    expect(run.stdout).toContain('Exit codes: 0 App created and env file written, 1 failed');
  });

  it('prints the package version with --version', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const run = await runNode(script(), ['--version'], 20_000, env());
    expect(run).toEqual({ code: 0, stdout: `register-app (svc) ${version}\n`, stderr: '' });
  });

  it('refuses --env-file, which Node reads for itself, pointing to --out', async () => {
    // The file must exist, or Node stops before register-app runs ("node: …: not found").
    writeFileSync(join(dir, 'other.env'), 'PORT=3000\n');
    for (const args of [
      ['--env-file', join(dir, 'other.env')],
      [`--env-file=${join(dir, 'other.env')}`],
    ]) {
      const run = await runNode(
        script(),
        ['--webhook-url', 'https://x.test', ...args],
        20_000,
        env(),
      );
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(
        /^register-app: --env-file is an option of Node itself.*--out <path>\n/,
      );
    }
    expect(readFileSync(join(dir, 'other.env'), 'utf8')).toBe('PORT=3000\n');
  });

  // Every `npm run register-app -- …` line of a bash block in the README and the App guide.
  const documented = () =>
    ['README.md', 'docs/GITHUB_APP.md'].flatMap((file) =>
      [...readFileSync(join(ROOT, file), 'utf8').matchAll(/```bash\n([\s\S]*?)```/g)]
        .flatMap((block) => block[1]!.split('\n'))
        .map((line) => line.trim())
        .filter((line) => line.includes('npm run register-app -- ') && !line.includes('--help'))
        .map((line) => ({ file, line })),
    );

  it('the package script passes its arguments to the built CLI after the script', () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    // npm appends the arguments after `--` to the script's last command.
    expect(scripts['register-app']).toMatch(/&& node dist\/src\/cli\/register-app\.js$/);
    expect(documented().map((d) => d.file)).toEqual(
      expect.arrayContaining(['README.md', 'docs/GITHUB_APP.md']),
    );
  });

  it('the documented command lines run, with --name and --out, up to the page for GitHub', async () => {
    for (const { file, line } of documented()) {
      const [assignments, rest] = line.split('npm run register-app -- ') as [string, string];
      const vars = Object.fromEntries(
        assignments
          .split(/\s+/)
          .filter(Boolean)
          .map((a) => a.split('=', 2) as [string, string]),
      );
      const args = rest.split(/\s+/);
      expect({ file, args }).toEqual({ file, args: expect.arrayContaining(['--name', '--out']) });
      const name = args[args.indexOf('--name') + 1]!;
      const out = args[args.indexOf('--out') + 1]!;
      writeFileSync(join(dir, 'app.yml'), readFileSync(APP_YML));
      rmSync(join(dir, out), { force: true });
      // As `npm run register-app -- <args>` starts it (package.json): node <script> <args>,
      // the documented line first; a free port, so that parallel runs do not collide.
      const child = spawn(process.execPath, [script(), ...args, '--port', '0', '--timeout', '1'], {
        cwd: dir,
        env: env(vars),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          stdout += chunk;
          const found = /Open (http:\/\/127\.0\.0\.1:\d+\/) in your browser/.exec(stdout);
          if (found) resolve(found[1]!);
        });
        child.on('close', (code) =>
          reject(new Error(`${file}: "${line}" exited with ${code}: ${stderr}`)),
        );
      });
      try {
        expect(stdout).toContain(`to create the GitHub App "${name}"`);
        const { action, manifest } = readForm(await (await fetch(url)).text());
        expect(action).toMatch(/^https:\/\/github\.com\/settings\/apps\/new\?state=/);
        expect(manifest.name).toBe(name);
        expect(manifest.hook_attributes.url).toMatch(/^https:\/\/.+/);
        // Nothing is written before GitHub has created the App.
        expect(existsSync(join(dir, out))).toBe(false);
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
    }
  });

  it('refuses wrong usage with exit code 2 and a hint', async () => {
    for (const [args, message] of [
      [[], /say where GitHub delivers events/],
      [['--webhook-url', 'ftp://x'], /must be an http\(s\) URL/],
      [['--webhook-url', 'https://x.test', '--port', 'abc'], /--port must be a port number/],
      [['--webhook-url', 'https://x.test', '--org', 'a/b'], /--org must be an organization/],
      [['--nope'], /Unknown option '--nope'/],
      [['extra'], /Unexpected argument 'extra'/],
    ] as const) {
      const run = await runNode(script(), [...args], 20_000, env());
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(message);
      expect(run.stderr).toMatch(
        /^register-app: .+\nRun "npm run register-app -- --help" for usage\.\n$/,
      );
    }
  });

  it('refuses an env file that already holds App settings before starting, with exit code 1', async () => {
    writeFileSync(join(dir, '.env'), 'APP_ID=7\nPORT=3000\n');
    const run = await runNode(
      script(),
      ['--manifest', APP_YML, '--out', join(dir, '.env'), '--port', '0'],
      20_000,
      env({ SVC_BASE_URL: 'https://svc.acme.test' }),
    );
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `register-app: ${join(dir, '.env')} already has App settings (APP_ID); pass --force to replace them, or --out <other file>\n`,
    );
    expect(readFileSync(join(dir, '.env'), 'utf8')).toBe('APP_ID=7\nPORT=3000\n');
  });

  it('runs the whole flow against a GitHub Enterprise Server double and writes the env file', async () => {
    writeFileSync(join(dir, '.env'), '# local\nPORT=3000\nAPP_ID=7\n', { mode: 0o644 });
    // The manifest in ./app.yml and ./.env are found from the working directory.
    writeFileSync(join(dir, 'app.yml'), readFileSync(APP_YML));
    const child = spawn(
      process.execPath,
      [
        script(),
        '--port',
        '0',
        '--force',
        '--name',
        'svc-acme',
        '--webhook-url',
        'https://smee.io/abcDEF123',
        '--api-url',
        `${githubUrl}/api/v3`,
        '--timeout',
        '0.5',
      ],
      { cwd: dir, env: env({ GHE_HOST: 'ghe.acme.test' }), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        const found = /Open (http:\/\/127\.0\.0\.1:\d+\/) in your browser/.exec(stdout);
        if (found) resolve(found[1]!);
      });
      child.on('close', () => reject(new Error(`exited early: ${stderr}`)));
    });

    const page = await (await fetch(url)).text();
    const { action, manifest, state } = readForm(page);
    expect(action).toBe(`https://ghe.acme.test/settings/apps/new?state=${state}`);
    expect(manifest).toMatchObject({
      name: 'svc-acme',
      public: false,
      redirect_url: url,
      hook_attributes: { url: 'https://smee.io/abcDEF123', active: true },
      default_permissions: {
        checks: 'write',
        pull_requests: 'read',
        contents: 'read',
        statuses: 'read',
        metadata: 'read',
        merge_queues: 'read',
      },
    });

    const back = await fetch(`${url}?code=abc&state=${state}`, { redirect: 'manual' });
    expect(back.status).toBe(302);
    expect(await exited).toBe(0);
    expect(seen).toEqual([
      { method: 'POST', url: '/api/v3/app-manifests/abc/conversions', authorization: undefined },
    ]);

    const text = readFileSync(join(dir, '.env'), 'utf8');
    expect(text.startsWith('# local\nPORT=3000\nAPP_ID=424242\nPRIVATE_KEY="-----BEGIN')).toBe(
      true,
    );
    // The existing file held no secret before; now it does, so it is owner-only.
    expect(statSync(join(dir, '.env')).mode & 0o777).toBe(0o600);
    expect(getPrivateKey({ env: { PRIVATE_KEY: parseEnv(text).PRIVATE_KEY } })).toBe(PEM);
    // As the docs start svc: node --env-file, whose value svc's config un-escapes (\n).
    const loaded = execFileSync(
      process.execPath,
      [`--env-file=${join(dir, '.env')}`, '-e', 'process.stdout.write(process.env.PRIVATE_KEY)'],
      { encoding: 'utf8', env: env() },
    );
    expect(loaded.replace(/\\n/g, '\n')).toBe(PEM);
    expect(stderr).toContain(
      `register-app: wrote APP_ID, PRIVATE_KEY, WEBHOOK_SECRET, GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET to ${join(dir, '.env')} (mode 0600); replaced APP_ID`,
    );
    expect(stdout).toContain('Next steps:');
    expect(stdout + stderr).not.toContain(SECRET);
    expect(stdout + stderr).not.toContain('PRIVATE KEY-----');
  });
});
