import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { MAX_APP_NAME, type Access } from './app-manifest.js';
import { UsageError } from './errors.js';

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

const DEFAULT_PORT = 3001;
const DEFAULT_TIMEOUT_MINUTES = 60;
const WEBHOOK_PATH = '/v1/webhook/scm';

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

/** The host names of this machine: plain http to them stays on it. */
export const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

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

export interface Options {
  port: number;
  webhookUrl: string;
  org: string | undefined;
  name: string | undefined;
  envFile: string;
  manifestPath: string;
  force: boolean;
  timeoutMs: number;
  urls: GitHubUrls;
  /** Permissions the chosen options need besides app.yml's. */
  extraPermissions: Record<string, Access>;
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

/**
 * Reads the command line (and SVC_BASE_URL, GHE_HOST, GHE_PROTOCOL from `io.env`) into the
 * command's options. Throws UsageError, or node:util's ERR_PARSE_ARGS_* errors, for wrong usage.
 */
export function parseOptions(
  argv: string[],
  io: { env: Record<string, string | undefined>; cwd: string },
): Options | 'help' | 'version' {
  // Node (22 and 24 alike) reads --env-file wherever it stands, also after the script: it has
  // loaded that file into the environment (or stopped, when there is none) before this code
  // runs. Say so, rather than let the flag mean two things.
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
    timeoutMs: timeout * 60_000,
    urls: githubUrls(io.env, values.org, values['api-url']),
    // Team memberships of approvers: only policies whose rules name teams need them.
    extraPermissions: values['team-approvals'] ? { members: 'read' } : {},
  };
}
