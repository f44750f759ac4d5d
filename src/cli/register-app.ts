#!/usr/bin/env node
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { SERVICE_VERSION } from '../core/version.js';

export const HELP = `register-app — create svc's GitHub App from app.yml through GitHub's manifest flow

Usage:
  npm run register-app -- [options]

Example:
  npm run register-app -- --webhook-url https://svc.example.com/v1/webhook/scm \\
    --name svc-acme --out .env

Starts a page on http://127.0.0.1:<port>/ that sends the manifest in app.yml to GitHub.
Confirm the App's name there; GitHub sends your browser back to that page, which exchanges
GitHub's one-time code for the App's credentials and writes them to the env file:
APP_ID, PRIVATE_KEY, WEBHOOK_SECRET, GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET.

Options:
  --webhook-url <url>   where GitHub delivers events (default: $SVC_BASE_URL/v1/webhook/scm;
                        for local development, a https://smee.io/<channel> URL)
  --org <login>         register the App under this organization, not your personal account
  --name <name>         the App's name (default: name in app.yml); unique across GitHub,
                        at most 34 characters; it can still be edited on GitHub's page
  --out <path>          the env file the credentials go to (default: .env); created with
                        mode 0600, other lines kept. (Not --env-file: Node takes that flag
                        for itself and stops when the file does not exist yet.)
  --force               replace App settings already in the env file
  --team-approvals      also ask for the organization permission Members: read, which
                        policies whose rules name teams (or team code owners) need to see
                        approvers' team memberships; app.yml leaves it out
  --port <n>            local port (default: 3001; 0 picks a free one)
  --manifest <path>     the manifest (default: app.yml)
  --api-url <url>       GitHub's REST API (default: https://api.github.com, or
                        $GHE_PROTOCOL://$GHE_HOST/api/v3 for GitHub Enterprise Server)
  --timeout <minutes>   give up when GitHub has not redirected back by then (default: 60,
                        the lifetime of GitHub's code)
  -h, --help            this text
  --version             print the version and exit

Environment: SVC_BASE_URL; GHE_HOST and GHE_PROTOCOL (default https) for GitHub
Enterprise Server.

Exit codes: 0 App created and env file written, 1 failed, 2 wrong usage.`;

/** Wrong invocation: exit code 2. */
export class UsageError extends Error {}
/** The registration could not be completed: exit code 1. */
export class RegistrationError extends Error {}

/** Env-file keys that belong to one App registration. */
export const APP_SETTING_KEYS = [
  'APP_ID',
  'PRIVATE_KEY',
  'PRIVATE_KEY_PATH',
  'WEBHOOK_SECRET',
  'GITHUB_CLIENT_ID',
  'GITHUB_CLIENT_SECRET',
] as const;

const DEFAULT_PORT = 3001;
const DEFAULT_TIMEOUT_MINUTES = 60;
const WEBHOOK_PATH = '/v1/webhook/scm';
// GitHub's limit for an App's name.
const MAX_APP_NAME = 34;

// ---------------------------------------------------------------------------------------------
// The manifest
// ---------------------------------------------------------------------------------------------

const access = z.enum(['read', 'write', 'admin']);

/**
 * What app.yml must hold to be registrable. Other manifest members (setup_url, callback_urls …)
 * pass through untouched: GitHub validates them, and we should not silently drop them.
 */
const manifestFileSchema = z.looseObject({
  name: z.string().min(1).max(MAX_APP_NAME),
  url: z.url({ protocol: /^https?$/ }),
  description: z.string().optional(),
  public: z.boolean().optional(),
  hook_attributes: z.looseObject({ active: z.boolean().optional() }).optional(),
  default_permissions: z.record(z.string(), access),
  default_events: z.array(z.string().min(1)),
});

export type AppManifest = z.infer<typeof manifestFileSchema> & {
  hook_attributes: { url: string; active?: boolean };
  redirect_url: string;
  public: boolean;
};

export interface ManifestOptions {
  /** Where GitHub delivers webhooks: the service's /v1/webhook/scm or a proxy channel. */
  webhookUrl: string;
  /** Where GitHub sends the browser back with ?code=… (the local server). */
  redirectUrl: string;
  /** Overrides app.yml's name. */
  name?: string;
  /**
   * Adds the organization permission Members: read (team memberships of approvers), which
   * only policies whose rules name teams need: app.yml stays least-privilege without it.
   */
  teamApprovals?: boolean;
}

/**
 * Builds the manifest GitHub receives from the text of app.yml. Pure: the same text and options
 * give the same manifest. Throws RegistrationError for a file that is not a usable manifest.
 */
export function buildManifest(appYml: string, options: ManifestOptions): AppManifest {
  let parsed: unknown;
  try {
    parsed = parseYaml(appYml);
  } catch (error) {
    throw new RegistrationError(`the manifest is not valid YAML: ${(error as Error).message}`);
  }
  const file = manifestFileSchema.safeParse(parsed);
  if (!file.success) {
    const detail = file.error.issues
      .map((i) => `${i.path.join('.') || '(file)'}: ${i.message}`)
      .join('; ');
    throw new RegistrationError(`the manifest is not a GitHub App manifest: ${detail}`);
  }
  return {
    ...file.data,
    name: options.name ?? file.data.name,
    hook_attributes: { ...file.data.hook_attributes, url: options.webhookUrl },
    ...(options.teamApprovals
      ? { default_permissions: { ...file.data.default_permissions, members: 'read' as const } }
      : {}),
    redirect_url: options.redirectUrl,
    // An App is private unless app.yml says otherwise: svc Apps are per operator.
    public: file.data.public ?? false,
  };
}

export interface GitHubUrls {
  /** The form target that starts the manifest flow. */
  createAppUrl: string;
  /** The REST API base, without a trailing slash. */
  apiUrl: string;
}

/**
 * github.com, or GitHub Enterprise Server from GHE_HOST / GHE_PROTOCOL as Probot reads them.
 * Throws UsageError for values that would build a wrong address.
 */
export function githubUrls(
  env: Record<string, string | undefined>,
  org?: string,
  apiUrl?: string,
): GitHubUrls {
  // The organization becomes a path segment: a slash or dot-dot would aim the form elsewhere.
  if (org !== undefined && !/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/.test(org)) {
    throw new UsageError(`--org must be an organization login; got "${org}"`);
  }
  const protocol = env.GHE_PROTOCOL || 'https';
  if (protocol !== 'https' && protocol !== 'http') {
    throw new UsageError(`GHE_PROTOCOL must be https or http; got "${protocol}"`);
  }
  const gheHost = env.GHE_HOST || undefined;
  if (gheHost !== undefined && !/^[A-Za-z0-9.-]+(?::\d{1,5})?$/.test(gheHost)) {
    throw new UsageError(`GHE_HOST must be a host name (with an optional port); got "${gheHost}"`);
  }
  const web = gheHost ? `${protocol}://${gheHost}` : 'https://github.com';
  const createAppUrl = `${web}${org ? `/organizations/${org}` : ''}/settings/apps/new`;
  const api = apiUrl ?? (gheHost ? `${web}/api/v3` : 'https://api.github.com');
  return { createAppUrl, apiUrl: checkApiUrl(api, protocol === 'http') };
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

// The conversion answer carries the App's private key: plain http is accepted only on this
// machine, or when the operator chose it for GitHub Enterprise Server with GHE_PROTOCOL.
function checkApiUrl(value: string, httpAllowed: boolean): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--api-url must be an http(s) URL; got "${value}"`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UsageError(`--api-url must be an http(s) URL; got "${value}"`);
  }
  if (url.protocol === 'http:' && !httpAllowed && !LOOPBACK.has(url.hostname)) {
    throw new UsageError(
      `--api-url must use https: GitHub's answer holds the App's private key; got "${value}"`,
    );
  }
  return url.href.replace(/\/+$/, '');
}

// ---------------------------------------------------------------------------------------------
// The env file
// ---------------------------------------------------------------------------------------------

/** The conversion answer of POST /app-manifests/{code}/conversions, as far as svc needs it. */
export interface AppConversion {
  id: number;
  slug: string;
  name: string;
  html_url: string;
  pem: string;
  webhook_secret: string | null;
  client_id: string;
  client_secret: string;
}

// Every value lands on one line of the env file: a newline, quote or space inside one would
// let the answer add lines of its own, so anything outside these shapes is refused.
const token = z.string().regex(/^[A-Za-z0-9._~+/=-]{1,512}$/, 'must be a plain token');
const pem = z
  .string()
  .regex(
    /^-----BEGIN [A-Z ]{1,40}-----\r?\n[A-Za-z0-9+/=\r\n]+-----END [A-Z ]{1,40}-----\r?\n?$/,
    'must be a PEM private key',
  );

const conversionSchema = z.object({
  id: z.number().int().positive(),
  slug: z.string().min(1),
  name: z.string().min(1),
  html_url: z.url({ protocol: /^https?$/ }),
  pem,
  webhook_secret: token.nullable(),
  client_id: token,
  client_secret: token,
});

/**
 * The env-file lines of a created App. The PEM becomes one double-quoted line with its newlines
 * written as `\n`, the form Probot's setup writes and its private-key loader reads back.
 */
export function credentialsEnv(app: AppConversion): Record<string, string> {
  const values: Record<string, string> = {
    APP_ID: String(app.id),
    PRIVATE_KEY: `"${app.pem.replace(/\r?\n/g, '\\n')}"`,
  };
  if (app.webhook_secret !== null) values.WEBHOOK_SECRET = app.webhook_secret;
  values.GITHUB_CLIENT_ID = app.client_id;
  values.GITHUB_CLIENT_SECRET = app.client_secret;
  return values;
}

/** The env file already holds another App's settings and --force was not given. */
export class EnvConflictError extends RegistrationError {
  constructor(
    readonly path: string,
    readonly keys: string[],
  ) {
    super(
      `${path} already has App settings (${keys.join(', ')}); pass --force to replace them, or --out <other file>`,
    );
  }
}

interface EnvEntry {
  key: string | null;
  value: string;
  lines: string[];
}

const ASSIGNMENT = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s?(.*)$/;

// Splits an env file into entries, keeping a quoted value that spans lines (a PEM pasted with
// real newlines) in one entry, so replacing it cannot leave half a key behind.
function splitEnv(text: string): EnvEntry[] {
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  const entries: EnvEntry[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const match = ASSIGNMENT.exec(line);
    if (!match) {
      entries.push({ key: null, value: '', lines: [line] });
      continue;
    }
    const value = match[2]!.trim();
    const entry: EnvEntry = { key: match[1]!, value, lines: [line] };
    const quote = value[0];
    if ((quote === '"' || quote === "'") && value.indexOf(quote, 1) === -1) {
      while (i + 1 < lines.length) {
        const next = lines[++i]!;
        entry.lines.push(next);
        entry.value += `\n${next}`;
        if (next.includes(quote)) break;
      }
    }
    entries.push(entry);
  }
  return entries;
}

const isEmptyValue = (value: string) => value === '' || value === '""' || value === "''";

export interface EnvMerge {
  content: string;
  /** Keys whose earlier value was replaced. */
  replaced: string[];
  /** App settings dropped because the new App does not use them (PRIVATE_KEY_PATH). */
  removed: string[];
}

/**
 * Merges new settings into the text of an env file (null: no file yet). Unrelated lines and
 * comments stay as they are; existing App settings are replaced only with `force`, else an
 * EnvConflictError names them. Pure: the caller reads and writes the file.
 */
export function mergeEnvFile(
  existing: string | null,
  values: Record<string, string>,
  options: { force: boolean; path?: string },
): EnvMerge {
  const entries = existing === null ? [] : splitEnv(existing);
  const appKeys = new Set<string>(APP_SETTING_KEYS);
  const conflicts = [
    ...new Set(
      entries
        .filter((e) => e.key !== null && appKeys.has(e.key) && !isEmptyValue(e.value))
        .map((e) => e.key!),
    ),
  ];
  if (conflicts.length > 0 && !options.force) {
    throw new EnvConflictError(options.path ?? 'the env file', conflicts);
  }
  const out: string[] = [];
  const written = new Set<string>();
  const replaced = new Set<string>();
  const removed = new Set<string>();
  for (const entry of entries) {
    const key = entry.key;
    if (key !== null && key in values) {
      if (!isEmptyValue(entry.value)) replaced.add(key);
      // A key listed twice would let the later, stale line win in some loaders: write it once.
      if (!written.has(key)) out.push(`${key}=${values[key]}`);
      written.add(key);
    } else if (key !== null && appKeys.has(key)) {
      // PRIVATE_KEY_PATH of the previous App would point at the wrong key.
      if (!isEmptyValue(entry.value)) removed.add(key);
    } else {
      out.push(...entry.lines);
    }
  }
  for (const [key, value] of Object.entries(values)) {
    if (!written.has(key)) out.push(`${key}=${value}`);
  }
  return { content: `${out.join('\n')}\n`, replaced: [...replaced], removed: [...removed] };
}

function readOptional(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new RegistrationError(`cannot read ${path}: ${(error as Error).message}`);
  }
}

// The file holds a private key: owner-only from the first byte, and tightened if it was shared.
function writeEnvFile(path: string, content: string, existed: boolean): void {
  try {
    writeFileSync(path, content, existed ? {} : { mode: 0o600, flag: 'wx' });
    chmodSync(path, 0o600);
  } catch (error) {
    throw new RegistrationError(`cannot write ${path}: ${(error as Error).message}`);
  }
}

// ---------------------------------------------------------------------------------------------
// The code exchange
// ---------------------------------------------------------------------------------------------

export interface ExchangeOptions {
  /** REST API base: https://api.github.com, <GHE>/api/v3, or a test double. */
  apiUrl: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

// GitHub's message is shown to the operator: one short line, no control characters.
const shorten = (text: string) =>
  text
    .replace(/\p{Cc}+/gu, ' ')
    .trim()
    .slice(0, 300);

/**
 * Exchanges the one-time code of GitHub's redirect for the new App's ID, private key, webhook
 * secret and OAuth client credentials (POST /app-manifests/{code}/conversions, no
 * authentication: the code is the credential). Throws RegistrationError with the reason.
 */
export async function exchangeManifestCode(
  code: string,
  options: ExchangeOptions,
): Promise<AppConversion> {
  // The code comes from a query string: it goes into a URL path only if it is a plain token.
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(code)) {
    throw new RegistrationError('the code in GitHub’s redirect is malformed');
  }
  const fetcher = options.fetch ?? fetch;
  const url = `${options.apiUrl.replace(/\/+$/, '')}/app-manifests/${code}/conversions`;
  let response: Response;
  try {
    response = await fetcher(url, {
      method: 'POST',
      headers: {
        accept: 'application/vnd.github+json',
        'x-github-api-version': '2022-11-28',
        'user-agent': 'svc-register-app',
      },
      signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
    });
  } catch (error) {
    const cause = (error as Error & { cause?: Error }).cause?.message ?? (error as Error).message;
    throw new RegistrationError(`could not reach ${new URL(url).origin}: ${shorten(cause)}`);
  }
  const text = await response.text().catch(() => '');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (response.status !== 201 && response.status !== 200) {
    const message = (body as { message?: unknown } | undefined)?.message;
    const detail = typeof message === 'string' && message ? `: ${shorten(message)}` : '';
    if (response.status === 404) {
      throw new RegistrationError(
        `GitHub does not know this code (404${detail}). A code works once and for one hour: run npm run register-app again`,
      );
    }
    if (response.status === 422) {
      throw new RegistrationError(
        `GitHub refused to create the App (422${detail}). Check the manifest and run npm run register-app again`,
      );
    }
    throw new RegistrationError(`GitHub answered ${response.status}${detail} to the code exchange`);
  }
  const parsed = conversionSchema.safeParse(body);
  if (!parsed.success) {
    const members = [...new Set(parsed.error.issues.map((i) => i.path.join('.') || 'body'))];
    throw new RegistrationError(
      `GitHub's answer to the code exchange is not an App registration (${members.join(', ')})`,
    );
  }
  return parsed.data;
}

// ---------------------------------------------------------------------------------------------
// The local page
// ---------------------------------------------------------------------------------------------

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

/** The page that posts the manifest to GitHub: a form that submits itself, with a fallback button. */
export function renderSetupPage(
  manifest: AppManifest,
  formAction: string,
  scriptNonce: string,
): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Register ${escapeHtml(manifest.name)} on GitHub</title>
</head>
<body>
<h1>Register the GitHub App “${escapeHtml(manifest.name)}”</h1>
<p>Sending the manifest to GitHub. Confirm the App’s name there; GitHub then sends you back here
and the credentials are written to your env file.</p>
<form id="register" method="post" action="${escapeHtml(formAction)}">
<input type="hidden" name="manifest" value="${escapeHtml(JSON.stringify(manifest))}">
<button type="submit">Continue on GitHub</button>
</form>
<script nonce="${scriptNonce}">document.getElementById('register').submit();</script>
</body>
</html>
`;
}

const resultPage = (title: string, text: string) => `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body>
</html>
`;

// Constant time: the state is what tells GitHub's redirect from a forged one.
function sameState(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

// ---------------------------------------------------------------------------------------------
// The command
// ---------------------------------------------------------------------------------------------

export interface RegisterIo {
  env: Record<string, string | undefined>;
  cwd: string;
  /** Results: the URL to open, the created App, the next steps. */
  out(line: string): void;
  /** Progress and errors. */
  err(line: string): void;
  fetch?: typeof fetch;
}

interface Options {
  port: number;
  webhookUrl: string;
  org: string | undefined;
  name: string | undefined;
  envFile: string;
  manifestPath: string;
  force: boolean;
  teamApprovals: boolean;
  timeoutMs: number;
  urls: GitHubUrls;
}

/** Every option the command takes; HELP documents each one. */
export const OPTIONS = {
  'webhook-url': { type: 'string' },
  org: { type: 'string' },
  name: { type: 'string' },
  out: { type: 'string' },
  force: { type: 'boolean' },
  'team-approvals': { type: 'boolean' },
  port: { type: 'string' },
  manifest: { type: 'string' },
  'api-url': { type: 'string' },
  timeout: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

function parseOptions(argv: string[], io: RegisterIo): Options | 'help' | 'version' {
  // Node 20 reads --env-file wherever it stands, also after the script: it has loaded that
  // file into the environment (or stopped, when there is none) before this code runs. Say so,
  // rather than let the flag mean two things.
  if (argv.some((arg) => arg === '--env-file' || arg.startsWith('--env-file='))) {
    throw new UsageError(
      '--env-file is an option of Node itself, which reads that file before register-app starts; write the credentials with --out <path>',
    );
  }
  const { values } = parseArgs({
    args: argv,
    options: OPTIONS,
    allowPositionals: false,
    strict: true,
  });
  if (values.help) return 'help';
  if (values.version) return 'version';

  const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
  if (!/^\d+$/.test(values.port ?? '0') || !Number.isInteger(port) || port > 65535) {
    throw new UsageError(
      `--port must be a port number (0 for any free port); got "${values.port}"`,
    );
  }
  const timeout = values.timeout === undefined ? DEFAULT_TIMEOUT_MINUTES : Number(values.timeout);
  if (!Number.isFinite(timeout) || timeout <= 0) {
    throw new UsageError(`--timeout must be a positive number of minutes; got "${values.timeout}"`);
  }

  const base = io.env.SVC_BASE_URL?.replace(/\/+$/, '');
  const webhookUrl = values['webhook-url'] ?? (base ? `${base}${WEBHOOK_PATH}` : undefined);
  if (webhookUrl === undefined) {
    throw new UsageError(
      'say where GitHub delivers events: --webhook-url <url>, or set SVC_BASE_URL (the webhook is then $SVC_BASE_URL/v1/webhook/scm)',
    );
  }
  let hook: URL;
  try {
    hook = new URL(webhookUrl);
  } catch {
    throw new UsageError(`the webhook URL must be an http(s) URL; got "${webhookUrl}"`);
  }
  if (hook.protocol !== 'https:' && hook.protocol !== 'http:') {
    throw new UsageError(`the webhook URL must be an http(s) URL; got "${webhookUrl}"`);
  }
  if (
    values.name !== undefined &&
    (values.name.trim() === '' || values.name.length > MAX_APP_NAME)
  ) {
    throw new UsageError(`--name must have 1 to ${MAX_APP_NAME} characters`);
  }

  return {
    port,
    webhookUrl: hook.href,
    org: values.org,
    name: values.name,
    envFile: resolve(io.cwd, values.out ?? '.env'),
    manifestPath: resolve(io.cwd, values.manifest ?? 'app.yml'),
    force: values.force ?? false,
    teamApprovals: values['team-approvals'] ?? false,
    timeoutMs: timeout * 60_000,
    urls: githubUrls(io.env, values.org, values['api-url']),
  };
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
      teamApprovals: options.teamApprovals,
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
        const existing = readOptional(options.envFile);
        const merged = mergeEnvFile(existing, values, {
          force: options.force,
          path: options.envFile,
        });
        writeEnvFile(options.envFile, merged.content, existing !== null);
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
