import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { z } from 'zod';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const boolean = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const hourlyLimit = z
  .string()
  .regex(/^(\d+|unlimited)$/, { error: 'must be a whole number or "unlimited"' })
  .transform((v) => (v === 'unlimited' ? Number.POSITIVE_INFINITY : Number(v)))
  .refine((n) => n >= 1, { error: 'must be at least 1' });

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

// An entry express would refuse only when the app is built, long after configuration passed.
function isProxyEntry(entry: string): boolean {
  if (PROXY_NAMES.has(entry)) return true;
  const [address = '', range, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (range === undefined) return true;
  // A /0 (or a 0.0.0.0 mask) trusts every address: the same as `true`.
  if (/^\d{1,3}$/.test(range))
    return Number(range) >= 1 && Number(range) <= (family === 4 ? 32 : 128);
  if (range === '0.0.0.0') return false;
  return isIP(range) === family;
}

// express's "trust proxy", less `true`: trusting every hop makes the client address whatever
// the client writes leftmost in X-Forwarded-For, and every per-address limit falls with it.
const trustProxy = z
  .string()
  .refine((v) => v !== 'true', {
    error:
      'true would trust any X-Forwarded-For a client sends; set the number of proxies in front of svc (e.g. 1) or their addresses (e.g. loopback or 10.0.0.0/8)',
  })
  .transform((v): false | number | string[] => {
    if (v === 'false') return false;
    if (/^\d+$/.test(v)) return Number(v);
    return v
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean);
  })
  .refine((v) => !Array.isArray(v) || v.every(isProxyEntry), {
    error:
      'must be false, a hop count, or a comma list of IP addresses, subnets, loopback, linklocal or uniquelocal',
  });

/** Seconds before the 2nd, 3rd, ... webhook delivery attempt, unless configured. */
export const DEFAULT_WEBHOOK_RETRY_DELAYS = [60, 300, 1800, 7200, 21600];

// Seconds between delivery attempts; at most a week each, so a typo cannot park a delivery
// for years.
const retryDelays = z
  .string()
  .transform((v) => v.split(',').map((part) => part.trim()))
  .refine(
    (parts) =>
      parts.length <= 20 &&
      parts.every((p) => /^\d{1,6}$/.test(p) && Number(p) >= 1 && Number(p) <= 604_800),
    { error: 'must be a comma list of at most 20 delays in whole seconds, each 1 to 604800' },
  )
  .transform((parts) => parts.map(Number));

// Days a finished job is kept; fractions allowed (0.5 is 12 hours). The upper bound only
// catches typos: the result must stay a safe number of milliseconds.
const retentionDays = z
  .string()
  .regex(/^\d+(\.\d+)?$/, { error: 'must be a positive number of days, e.g. 7 or 0.5' })
  .transform(Number)
  .refine((n) => n > 0 && n <= 36_500, { error: 'must be more than 0 and at most 36500 days' });

// Whole seconds as milliseconds, at most a week: how long an approval of one tool call lasts.
const approvalSeconds = z
  .string()
  .regex(/^\d{1,6}$/, { error: 'must be a whole number of seconds, e.g. 3600' })
  .transform(Number)
  .refine((n) => n >= 1 && n <= 604_800, { error: 'must be 1 to 604800 seconds' })
  .transform((n) => n * 1000);

// Seconds, fractions allowed (0.5), as milliseconds; at most an hour, which for the HTTP
// timeouts is already far longer than any honest client takes to send a request of 1 MiB.
const timeoutSeconds = z
  .string()
  .regex(/^\d+(\.\d+)?$/, { error: 'must be a number of seconds, e.g. 10 or 0.5' })
  .transform(Number)
  .refine((n) => n >= 0.1 && n <= 3600, { error: 'must be at least 0.1 and at most 3600 seconds' })
  .transform((n) => Math.round(n * 1000));

/** Milliseconds, unless configured: see docs/OPERATIONS.md, "Slow clients". */
export const DEFAULT_HTTP_TIMEOUTS = { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 5_000 };

const secret32 = z
  .string()
  .transform((v) =>
    /^[0-9a-fA-F]{64}$/.test(v) ? Buffer.from(v, 'hex') : Buffer.from(v, 'base64'),
  )
  .refine((b) => b.length === 32, { error: 'must be 32 bytes, as 64 hex characters or base64' });

/** A transparency-log witness svc asks to cosign its checkpoints (C2SP tlog-witness). */
export interface WitnessConfig {
  /** The key name of the witness's cosignature key. */
  name: string;
  /** Its C2SP verifier key, of type 0x04 (timestamped Ed25519 cosignatures). */
  verifierKey: string;
  /** The submission prefix: svc POSTs to `<url>/add-checkpoint`. */
  url: string;
}

// The signed-note vkey of a tlog-cosignature Ed25519 key: `<name>+<hex key ID>+<base64(0x04 ‖
// key)>`, key ID = SHA-256(name ‖ \n ‖ 0x04 ‖ key)[:4]. Checked here (config imports nothing
// of the core) so that a wrong key stops the start rather than every cosignature failing.
function cosignerKeyProblem(vkey: string): string | null {
  // The key's base64 may hold '+' itself: only the first two separate the parts.
  const match = /^([^+]*)\+([^+]*)\+(.*)$/su.exec(vkey);
  if (!match) return 'is not a verifier key <name>+<key ID>+<key>';
  const [, name, idHex, encoded] = match as unknown as [string, string, string, string];
  if (name.length === 0 || /\s/u.test(name)) return 'has no key name, or one with spaces';
  if (!/^[0-9a-f]{8}$/.test(idHex)) return 'has no 8-digit hex key ID';
  const bytes = Buffer.from(encoded, 'base64');
  if (bytes.toString('base64') !== encoded || bytes.length !== 33) {
    return 'does not hold a 32-byte Ed25519 key in base64';
  }
  if (bytes[0] !== 0x04) {
    return `is of signature type 0x${bytes[0]!.toString(16).padStart(2, '0')}, not 0x04 (a timestamped Ed25519 cosignature key, C2SP tlog-cosignature)`;
  }
  const id = createHash('sha256').update(`${name}\n`).update(bytes).digest().subarray(0, 4);
  return id.toString('hex') === idHex ? null : 'has a key ID that does not match its name and key';
}

const MAX_WITNESSES = 15;
const WITNESS_FORMAT =
  'must be a JSON array of {"vkey": "<name>+<key ID>+<key>", "url": "https://…"}';

const witnesses = z.string().transform((text, ctx): WitnessConfig[] => {
  const fail = (message: string) => {
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return fail(`${WITNESS_FORMAT} (not JSON)`);
  }
  if (!Array.isArray(parsed)) return fail(WITNESS_FORMAT);
  // A served checkpoint carries the log's signature and one line per witness; C2SP verifiers
  // need accept only 16 signatures.
  if (parsed.length > MAX_WITNESSES) return fail(`at most ${MAX_WITNESSES} witnesses`);
  const out: WitnessConfig[] = [];
  for (const [i, entry] of parsed.entries()) {
    const { vkey, url, ...rest } = (entry ?? {}) as Record<string, unknown>;
    if (typeof entry !== 'object' || typeof vkey !== 'string' || typeof url !== 'string') {
      return fail(`witness ${i + 1}: ${WITNESS_FORMAT}`);
    }
    const extra = Object.keys(rest);
    if (extra.length > 0) return fail(`witness ${i + 1}: unknown member ${extra[0]}`);
    const problem = cosignerKeyProblem(vkey);
    if (problem) return fail(`witness ${i + 1}: vkey ${problem}`);
    let parsedUrl: URL;
    try {
      parsedUrl = new URL(url);
    } catch {
      return fail(`witness ${i + 1}: url is not a URL`);
    }
    if (!/^https?:$/.test(parsedUrl.protocol) || parsedUrl.search || parsedUrl.hash) {
      return fail(`witness ${i + 1}: url must be an http(s) URL without query or fragment`);
    }
    const name = vkey.split('+')[0]!;
    if (out.some((w) => w.name === name)) return fail(`witness ${i + 1}: ${name} is listed twice`);
    out.push({ name, verifierKey: vkey, url: url.replace(/\/+$/, '') });
  }
  return out;
});

const envSchema = z.object({
  PORT: z
    .string()
    .regex(/^\d{1,5}$/, { error: 'must be a port number' })
    .transform(Number)
    .refine((n) => n <= 65535, { error: 'must be at most 65535' })
    .default(3000),
  HOST: z.string().default('0.0.0.0'),
  SVC_DATA_DIR: z.string().default('./data'),
  // Environments that cannot hold newlines may pass the PEM with literal "\n".
  SVC_SIGNING_KEY: z
    .string()
    .transform((v) => v.replace(/\\n/g, '\n'))
    .refine((v) => v.includes('-----BEGIN PRIVATE KEY-----'), {
      error: 'must be a PKCS#8 PEM ("BEGIN PRIVATE KEY")',
    })
    .optional(),
  SVC_BASE_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  WEBHOOK_SECRET: z.string().optional(),
  // The GitHub App, configured the way Probot apps are.
  APP_ID: z
    .string()
    .regex(/^\d+$/, { error: 'must be the numeric App ID' })
    .transform(Number)
    .optional(),
  PRIVATE_KEY: z
    .string()
    .transform((v) => v.replace(/\\n/g, '\n'))
    .refine((v) => v.includes('-----BEGIN'), { error: 'must be a PEM private key' })
    .optional(),
  PRIVATE_KEY_PATH: z.string().optional(),
  GHE_HOST: z
    .string()
    .regex(/^[A-Za-z0-9.-]+(:\d+)?$/, { error: 'must be a host name, without scheme or path' })
    .optional(),
  GHE_PROTOCOL: z.enum(['https', 'http']).default('https'),
  SVC_ALLOW_PRIVATE_WEBHOOK_URLS: boolean.default(false),
  SVC_WEBHOOK_RETRY_DELAYS: retryDelays.default(DEFAULT_WEBHOOK_RETRY_DELAYS),
  SVC_JOB_RETENTION_DAYS: retentionDays.default(7),
  SVC_CHECKPOINT_INTERVAL: timeoutSeconds.default(1000),
  SVC_WITNESSES: witnesses.default([]),
  SVC_WITNESS_MIN_INTERVAL: timeoutSeconds.default(60_000),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  SVC_KEY_ENCRYPTION_SECRET: secret32.optional(),
  SVC_KEY_ENCRYPTION_SECRET_FILE: z.string().optional(),
  SVC_LOG_ORIGIN: z
    .string()
    .max(256)
    .regex(/^[\x21-\x7e]+$/, { error: 'must be printable ASCII without spaces' })
    .optional(),
  SVC_ANON_LIMIT_PER_HOUR: hourlyLimit.default(1000),
  SVC_SIGNUP_LIMIT_PER_HOUR: hourlyLimit.default(20),
  SVC_TRUST_PROXY: trustProxy.default(false),
  SVC_PUBLIC_READS: boolean.default(true),
  // A default is the parsed value (milliseconds).
  SVC_AGENT_APPROVAL_TTL: approvalSeconds.default(3_600_000),
  SVC_AGENT_STORE_INPUTS: boolean.default(false),
  SVC_CONTACT_EMAIL: z.email({ error: 'must be an e-mail address' }).max(254).optional(),
  // A default is the parsed value (milliseconds), not an input to parse.
  SVC_HEADERS_TIMEOUT: timeoutSeconds.default(DEFAULT_HTTP_TIMEOUTS.headersMs),
  SVC_REQUEST_TIMEOUT: timeoutSeconds.default(DEFAULT_HTTP_TIMEOUTS.requestMs),
  SVC_KEEP_ALIVE_TIMEOUT: timeoutSeconds.default(DEFAULT_HTTP_TIMEOUTS.keepAliveMs),
  SVC_WORKERS: z
    .string()
    .regex(/^(auto|[1-9]\d{0,2})$/, { error: 'must be "auto" or a number of processes, 1-999' })
    .transform((v) => (v === 'auto' ? availableParallelism() : Number(v)))
    .default(1),
  // The production store; the embedded SQLite store when unset.
  MONGODB_URI: z
    .string()
    .regex(/^mongodb(\+srv)?:\/\/\S+$/, { error: 'must be a mongodb:// or mongodb+srv:// URI' })
    .optional(),
  MONGODB_DATABASE: z
    .string()
    .regex(/^[^/\\. "$*<>:|?]{1,63}$/, { error: 'must be a MongoDB database name' })
    .optional(),
});

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  signingKeyPem?: string;
  baseUrl: string;
  webhookSecret?: string;
  /** The GitHub App; `appId` and `privateKey` absent when it is not configured. */
  github: {
    appId?: number;
    privateKey?: string;
    privateKeyPath?: string;
    /** REST API base URL: api.github.com, or `<GHE_PROTOCOL>://<GHE_HOST>/api/v3`. */
    apiBaseUrl: string;
    /** The web host, e.g. github.com. */
    host: string;
  };
  allowPrivateWebhookUrls: boolean;
  /** Seconds before the 2nd, 3rd, ... delivery attempt (jittered ±20 %). */
  webhookRetryDelays: number[];
  /** How long a finished job (a delivery, a GitHub event) is kept before it is purged. */
  jobRetentionMs: number;
  /** How often, at most, a new checkpoint is signed while the ledger grows. */
  checkpointIntervalMs: number;
  /** The witnesses each new checkpoint is sent to for a cosignature. */
  witnesses: WitnessConfig[];
  /** The least time between two checkpoints sent to one witness (public witnesses admit ~1/min). */
  witnessMinIntervalMs: number;
  /** SVC_LOG_ORIGIN as set: an existing ledger's origin must equal it. */
  logOriginSetting?: string;
  logLevel: (typeof LOG_LEVELS)[number];
  keyEncryptionSecret?: Buffer;
  /** A file holding the encryption secret (a mounted secret); read at start. */
  keyEncryptionSecretFile?: string;
  /**
   * The ledger's origin signed into receipts: SVC_LOG_ORIGIN, else the host of SVC_BASE_URL
   * followed by /ledger; undefined when neither is set (then derived from the signing key).
   */
  logOrigin?: string;
  anonLimitPerHour: number;
  signupLimitPerHour: number;
  trustProxy: false | number | string[];
  /** Whether ledger reads (search, analytics, metrics, ...) need no API key. */
  publicReads: boolean;
  /**
   * How long, in milliseconds, a disposition approving an escalated tool call lets that exact
   * input run (once, in that session): contract §12.
   */
  agentApprovalTtlMs: number;
  /**
   * Whether a tool call's raw input is kept in its claim (and so hashed into the receipt and
   * stored): off by default, since the raw input is not redacted (contract §12).
   */
  agentStoreInputs: boolean;
  /** Whom API users write to: the OpenAPI document's contact e-mail (SVC_CONTACT_EMAIL). */
  contactEmail?: string;
  /**
   * How long a client may take, in milliseconds, to send a request's headers, to send the whole
   * request (headers and body), and to start its next request on a kept-alive connection.
   */
  httpTimeouts: { headersMs: number; requestMs: number; keepAliveMs: number };
  /** HTTP worker processes sharing the port (node:cluster); 1 serves from this process. */
  workers: number;
  /** The MongoDB deployment (a replica set) to store everything in; unset: embedded SQLite. */
  mongodbUri?: string;
  /** The database; default: the URI's, else `svc`. */
  mongodbDatabase?: string;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads and validates the environment; throws one ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // An empty variable (common in compose files) means "not set".
  const present = Object.fromEntries(
    Object.entries(env).filter(([, v]) => v !== undefined && v !== ''),
  );
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${problems}`);
  }
  const e = parsed.data;
  if (e.SVC_KEY_ENCRYPTION_SECRET && e.SVC_KEY_ENCRYPTION_SECRET_FILE) {
    throw new ConfigError(
      'invalid configuration: set SVC_KEY_ENCRYPTION_SECRET or SVC_KEY_ENCRYPTION_SECRET_FILE, not both',
    );
  }
  if (e.SVC_HEADERS_TIMEOUT > e.SVC_REQUEST_TIMEOUT) {
    throw new ConfigError(
      'invalid configuration: SVC_HEADERS_TIMEOUT must not exceed SVC_REQUEST_TIMEOUT (the headers are part of the request)',
    );
  }
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: e.SVC_DATA_DIR,
    signingKeyPem: e.SVC_SIGNING_KEY,
    baseUrl: (e.SVC_BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    webhookSecret: e.WEBHOOK_SECRET,
    github: {
      appId: e.APP_ID,
      privateKey: e.PRIVATE_KEY,
      privateKeyPath: e.PRIVATE_KEY_PATH,
      apiBaseUrl: e.GHE_HOST
        ? `${e.GHE_PROTOCOL}://${e.GHE_HOST}/api/v3`
        : 'https://api.github.com',
      host: e.GHE_HOST ?? 'github.com',
    },
    allowPrivateWebhookUrls: e.SVC_ALLOW_PRIVATE_WEBHOOK_URLS,
    webhookRetryDelays: e.SVC_WEBHOOK_RETRY_DELAYS,
    jobRetentionMs: Math.round(e.SVC_JOB_RETENTION_DAYS * 24 * 60 * 60 * 1000),
    checkpointIntervalMs: e.SVC_CHECKPOINT_INTERVAL,
    witnesses: e.SVC_WITNESSES,
    witnessMinIntervalMs: e.SVC_WITNESS_MIN_INTERVAL,
    logOriginSetting: e.SVC_LOG_ORIGIN,
    logLevel: e.LOG_LEVEL,
    keyEncryptionSecret: e.SVC_KEY_ENCRYPTION_SECRET,
    keyEncryptionSecretFile: e.SVC_KEY_ENCRYPTION_SECRET_FILE,
    logOrigin:
      e.SVC_LOG_ORIGIN ??
      (e.SVC_BASE_URL === undefined ? undefined : `${new URL(e.SVC_BASE_URL).host}/ledger`),
    anonLimitPerHour: e.SVC_ANON_LIMIT_PER_HOUR,
    signupLimitPerHour: e.SVC_SIGNUP_LIMIT_PER_HOUR,
    trustProxy: e.SVC_TRUST_PROXY,
    publicReads: e.SVC_PUBLIC_READS,
    agentApprovalTtlMs: e.SVC_AGENT_APPROVAL_TTL,
    agentStoreInputs: e.SVC_AGENT_STORE_INPUTS,
    contactEmail: e.SVC_CONTACT_EMAIL,
    httpTimeouts: {
      headersMs: e.SVC_HEADERS_TIMEOUT,
      requestMs: e.SVC_REQUEST_TIMEOUT,
      keepAliveMs: e.SVC_KEEP_ALIVE_TIMEOUT,
    },
    workers: e.SVC_WORKERS,
    mongodbUri: e.MONGODB_URI,
    mongodbDatabase: e.MONGODB_DATABASE,
  };
}
