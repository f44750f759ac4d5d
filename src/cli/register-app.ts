#!/usr/bin/env node
// The register-app command: wires the manifest (register-app/app-manifest.ts), the local pages
// (pages.ts), the code exchange with GitHub (manifest-conversion.ts) and the env file
// (env-file.ts), as the options (options.ts) say.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { SERVICE_VERSION } from '../core/version.js';
import { buildManifest } from './register-app/app-manifest.js';
import {
  credentialsEnv,
  mergeEnvFile,
  readOptional,
  updateEnvFile,
} from './register-app/env-file.js';
import { RegistrationError, UsageError } from './register-app/errors.js';
import { exchangeManifestCode, type AppConversion } from './register-app/manifest-conversion.js';
import { HELP, LOOPBACK, parseOptions, type Options } from './register-app/options.js';
import { renderSetupPage, resultPage } from './register-app/pages.js';

export {
  buildManifest,
  type AppManifest,
  type ManifestOptions,
} from './register-app/app-manifest.js';
export {
  APP_SETTING_KEYS,
  credentialsEnv,
  EnvConflictError,
  mergeEnvFile,
  type EnvMerge,
} from './register-app/env-file.js';
export { RegistrationError, UsageError } from './register-app/errors.js';
export {
  exchangeManifestCode,
  type AppConversion,
  type ExchangeOptions,
} from './register-app/manifest-conversion.js';
export { githubUrls, HELP, OPTIONS, type GitHubUrls } from './register-app/options.js';
export { renderSetupPage } from './register-app/pages.js';

// Constant time: the state is what tells GitHub's redirect from a forged one.
function sameState(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface RegisterIo {
  env: Record<string, string | undefined>;
  cwd: string;
  /** Results: the URL to open, the created App, the next steps. */
  out(line: string): void;
  /** Progress and errors. */
  err(line: string): void;
  fetch?: typeof fetch;
}

function nextSteps(app: AppConversion, envFile: string, io: RegisterIo): void {
  io.out(`Created the GitHub App "${app.name}" (App ID ${app.id}): ${app.html_url}`);
  io.out('');
  io.out('Next steps:');
  io.out(
    `  1. Install it on the repositories to gate: ${app.html_url.replace(/\/+$/, '')}/installations/new`,
  );
  io.out(
    `  2. Run svc with these settings and SVC_BASE_URL: npm run build && node --env-file=${envFile} dist/src/server.js`,
  );
  io.out(
    `  3. Require the check "svc / admissibility" with App ID ${app.id} as its source (docs/GITHUB_APP.md).`,
  );
}

/**
 * Runs the manifest flow and resolves with the exit code once the local server has stopped:
 * after the credentials are written (0), on a failed exchange or timeout (1), or at once for
 * wrong usage (2).
 */
export async function runRegisterApp(argv: string[], io: RegisterIo): Promise<number> {
  let options: Options | 'help' | 'version';
  try {
    options = parseOptions(argv, io);
  } catch (error) {
    const parseError = (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    if (error instanceof UsageError || parseError) {
      io.err(`register-app: ${(error as Error).message}`);
      io.err('Run "npm run register-app -- --help" for usage.');
      return 2;
    }
    throw error;
  }
  if (options === 'help') {
    io.out(HELP);
    return 0;
  }
  if (options === 'version') {
    io.out(`register-app (svc) ${SERVICE_VERSION}`);
    return 0;
  }
  try {
    return await register(options, io);
  } catch (error) {
    if (error instanceof RegistrationError) {
      io.err(`register-app: ${error.message}`);
      return 1;
    }
    throw error;
  }
}

async function register(options: Options, io: RegisterIo): Promise<number> {
  const appYml = readOptional(options.manifestPath);
  if (appYml === null) throw new RegistrationError(`no manifest at ${options.manifestPath}`);
  const manifestFor = (origin: string) =>
    buildManifest(appYml, {
      webhookUrl: options.webhookUrl,
      redirectUrl: `${origin}/`,
      ...(options.name === undefined ? {} : { name: options.name }),
      extraPermissions: options.extraPermissions,
    });
  // A broken manifest is reported before anything listens; the real port is known only later.
  manifestFor(`http://127.0.0.1:${options.port}`);

  // Refuse before anything is created on GitHub: a private key GitHub has issued cannot be
  // fetched again, so finding the conflict after the exchange would be too late.
  mergeEnvFile(readOptional(options.envFile), {}, { force: options.force, path: options.envFile });

  const state = randomBytes(24).toString('base64url');
  const server = createServer();
  await new Promise<void>((done, fail) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      fail(
        new RegistrationError(
          error.code === 'EADDRINUSE'
            ? `port ${options.port} is in use; pass --port <n> (0 picks a free one)`
            : `cannot listen on 127.0.0.1:${options.port}: ${error.message}`,
        ),
      ),
    );
    // Loopback only: the page and the redirect carry the flow's state and code.
    server.listen(options.port, '127.0.0.1', done);
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  const manifest = manifestFor(origin);
  const formAction = `${options.urls.createAppUrl}?state=${state}`;
  const hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);

  return await new Promise<number>((finish) => {
    let busy = false;
    let finished = false;
    const stop = (code: number) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      server.close(() => finish(code));
      server.closeAllConnections();
    };
    const timer = setTimeout(() => {
      io.err(
        `register-app: GitHub did not redirect back within ${options.timeoutMs / 60_000} minutes; run the command again`,
      );
      stop(1);
    }, options.timeoutMs);

    const send = (
      res: ServerResponse,
      status: number,
      body: string,
      headers: Record<string, string> = {},
    ) =>
      res
        .writeHead(status, {
          'content-type': 'text/html; charset=utf-8',
          'cache-control': 'no-store',
          'referrer-policy': 'no-referrer',
          'x-frame-options': 'DENY',
          connection: 'close',
          ...headers,
        })
        .end(body);

    const handle = async (req: IncomingMessage, res: ServerResponse) => {
      // A page elsewhere could rebind its own host name to 127.0.0.1 and read this page's
      // state: answer only requests addressed to the loopback names.
      if (!hosts.has(req.headers.host ?? '')) {
        return send(res, 421, resultPage('Wrong host', `Open ${origin}/ instead.`));
      }
      const url = new URL(req.url ?? '/', origin);
      if (req.method !== 'GET' || url.pathname !== '/') {
        return send(res, 404, resultPage('Not found', `Open ${origin}/ instead.`));
      }
      const code = url.searchParams.get('code');
      if (code === null) {
        const nonce = randomBytes(16).toString('base64');
        return send(res, 200, renderSetupPage(manifest, formAction, nonce), {
          'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; frame-ancestors 'none'`,
        });
      }
      // Without the state this page gave GitHub, the code could come from anyone's App: a
      // forged redirect would otherwise write a stranger's credentials. It is ignored, and the
      // real redirect can still arrive.
      if (!sameState(state, url.searchParams.get('state') ?? '')) {
        io.err('register-app: ignored a redirect whose state does not match this session');
        return send(
          res,
          403,
          resultPage('Not this session', 'This link does not belong to this registration.'),
        );
      }
      if (busy || finished) {
        return send(res, 409, resultPage('Already handled', 'This registration is complete.'));
      }
      busy = true;
      try {
        io.err(
          "register-app: GitHub created the App; exchanging the code for the App's credentials",
        );
        const app = await exchangeManifestCode(code, {
          apiUrl: options.urls.apiUrl,
          ...(io.fetch ? { fetch: io.fetch } : {}),
        });
        const values = credentialsEnv(app);
        const merged = updateEnvFile(options.envFile, values, { force: options.force });
        io.err(
          `register-app: wrote ${Object.keys(values).join(', ')} to ${options.envFile} (mode 0600)` +
            (merged.replaced.length ? `; replaced ${merged.replaced.join(', ')}` : '') +
            (merged.removed.length ? `; removed ${merged.removed.join(', ')}` : ''),
        );
        if (app.webhook_secret === null) {
          io.err(
            'register-app: GitHub returned no webhook secret: set one in the App settings and add it as WEBHOOK_SECRET, or svc refuses every delivery',
          );
        }
        nextSteps(app, options.envFile, io);
        // Straight on to installing the App, as Probot's setup does.
        const install = `${app.html_url.replace(/\/+$/, '')}/installations/new`;
        res.once('finish', () => stop(0));
        send(res, 302, resultPage('App created', `Continue at ${install}`), { location: install });
      } catch (error) {
        const message =
          error instanceof RegistrationError ? error.message : (error as Error).message;
        io.err(`register-app: ${message}`);
        res.once('finish', () => stop(1));
        send(res, 502, resultPage('Registration failed', message));
      }
    };

    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      void handle(req, res);
    });

    // Allowed, since a tunnel may forward it, but it is a common first mistake.
    if (LOOPBACK.has(new URL(options.webhookUrl).hostname)) {
      io.err(
        `register-app: warning: GitHub cannot deliver events to ${options.webhookUrl}; for local development use a https://smee.io channel as --webhook-url (docs/GITHUB_APP.md)`,
      );
    }
    io.err(`register-app: listening on ${origin}/ (Ctrl-C to stop)`);
    io.out(`Open ${origin}/ in your browser to create the GitHub App "${manifest.name}".`);
  });
}

// Runs only as a program, so tests can import the pieces above without starting anything.
const invokedDirectly = (() => {
  try {
    return realpathSync(process.argv[1] ?? '') === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
})();

if (invokedDirectly) {
  runRegisterApp(process.argv.slice(2), {
    env: process.env,
    cwd: process.cwd(),
    out: (line) => void process.stdout.write(`${line}\n`),
    err: (line) => void process.stderr.write(`${line}\n`),
  }).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`register-app: ${(error as Error).message}\n`);
      process.exit(1);
    },
  );
}
