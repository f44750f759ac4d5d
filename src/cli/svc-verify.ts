#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { isSvcError } from '../core/errors.js';
import {
  attestationKeyIds,
  decisionOf,
  keyFromHistory,
  parseExpectations,
  verifyOffline,
  type Decision,
} from '../core/offline-verify.js';
import {
  parseFingerprint,
  parsePublicKeyPem,
  serverKeyUrl,
  type PublicKey,
} from '../core/public-key.js';
import { parseReceiptInput } from '../core/receipt-input.js';
import { followKeyTransitions, parseKeyHistory, type TrustedKey } from '../core/key-history.js';
import { parseStrictJson } from '../core/strict-json.js';
import { submitterLabel, type VerifyResult } from '../core/verify.js';

// Imports the core only, so it starts fast, needs no store and runs where the service is not.

const HELP = `svc-verify — check an svc decision receipt offline, against a key you trust

Usage:
  svc-verify <file | -> --key <pem-file>
  svc-verify <file | -> --fingerprint sha256:<hex> --key-url <url>

  <file | ->                  a receipt, or a whole evaluate response (its .receipt is checked);
                              "-" reads standard input
  --key <pem-file>            the issuer's Ed25519 public key (SPKI PEM)
  --fingerprint sha256:<hex>  pin the key: the SHA-256 of its DER SubjectPublicKeyInfo, the
                              form of attestations[].key_id; with --key it must match too
  --key-url <url>             fetch the PEM from an svc base URL or from the key URL itself;
                              refused unless its fingerprint equals --fingerprint
  --key-history <file>        the issuer's key history (the body of GET /v1/keys): with the
                              pinned key (--fingerprint or --key), a receipt of a later key
                              verifies by following the transition statements each key
                              signed for the next; a broken chain is refused. --key-url
                              fetches the history itself (from <base>/v1/keys)
  --expect-policy <name>      require the signed policy.name (receipt-core-v2)
  --expect-config-hash <h>    require the signed policy.config_hash
  --expect-submitter <id>     require the signed submitter: kid_<ULID> or
                              github_app:<app_id>:<installation_id>
  --require-proceed           exit 1 unless the receipt is valid AND its signed verdict is
                              ALLOWED and admissibility ACCEPTED: use this to gate a step
  --json                      print the result as JSON, the shape of POST /v1/verify, and
                              nothing else on standard output
  --version                   the package version
  --help                      this text

"valid" means: no check failed and the Ed25519 signature verified under the trusted key.
A valid receipt is authentic, not a go-ahead: a BLOCKED or ESCALATED receipt is as valid as
an ALLOWED one. To gate on it, use --require-proceed:
  svc-verify receipt.json --key svc.pem --require-proceed && ./deploy.sh
No ledger is consulted, so hash_integrity is SKIPPED; ledger membership and the order of
receipt-core-v1 receipts need the ledger or an independently kept ledger head. Without a key
nothing is called valid: one of --key or --fingerprint with --key-url is required.

Exit codes: 0 valid, 1 not valid, 2 wrong usage or unusable input (unreadable file, not
JSON, duplicate keys, unsafe integers, bad key, key fetch refused). With --require-proceed,
0 only when valid, ALLOWED and ACCEPTED; 1 otherwise, with the reason on standard error.`;

/** The version of the package this file belongs to: the nearest package.json named svc. */
function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: unknown;
        version?: unknown;
      };
      if (pkg.name === 'svc' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // No package.json here, or not ours: look further up.
    }
    const parent = dirname(dir);
    if (parent === dir) return 'unknown';
    dir = parent;
  }
}

class InputError extends Error {}
const fail = (message: string): never => {
  throw new InputError(message);
};
/** A core refusal (SvcError) becomes an input error carrying its reason. */
function attempt<T>(what: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (isSvcError(error)) return fail(`${what}: ${error.message}`);
    throw error;
  }
}

const readStdin = async (): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

async function readText(path: string, what: string): Promise<string> {
  try {
    return path === '-' ? await readStdin() : await readFile(path, 'utf8');
  } catch (error) {
    return fail(`cannot read ${what} ${path}: ${(error as Error).message}`);
  }
}

async function fetchKey(url: string): Promise<string> {
  const keyUrl = attempt('--key-url', () => serverKeyUrl(url));
  let res: Response;
  try {
    res = await fetch(keyUrl, { redirect: 'error', signal: AbortSignal.timeout(15_000) });
  } catch (error) {
    return fail(`cannot fetch ${keyUrl}: ${(error as Error).message}`);
  }
  if (!res.ok) return fail(`fetching ${keyUrl} answered HTTP ${res.status}`);
  return res.text();
}

/**
 * The keys the pin trusts through the history (the pinned one first), or null when no
 * history is to be followed: only --key, or a service that publishes none.
 */
async function trustedHistory(values: {
  key?: string;
  fingerprint?: string;
  'key-url'?: string;
  'key-history'?: string;
}): Promise<TrustedKey[] | null> {
  let body: unknown;
  if (values['key-history'] !== undefined) {
    const text = await readText(values['key-history'], 'key history');
    body = attempt(`--key-history ${values['key-history']}`, () => parseStrictJson(text));
  } else if (values['key-url'] !== undefined && values.fingerprint !== undefined) {
    const keysUrl = attempt('--key-url', () => serverKeyUrl(values['key-url']!)).replace(
      /\/server$/,
      '',
    );
    let res: Response;
    try {
      res = await fetch(keysUrl, { redirect: 'error', signal: AbortSignal.timeout(15_000) });
    } catch (error) {
      return fail(`cannot fetch ${keysUrl}: ${(error as Error).message}`);
    }
    // A service from before the history: the single key of /v1/keys/server.
    if (res.status === 404) return null;
    if (!res.ok) return fail(`fetching ${keysUrl} answered HTTP ${res.status}`);
    const text = await res.text();
    body = attempt(`key history from ${keysUrl}`, () => parseStrictJson(text));
    // A service that has recorded no key yet publishes an empty history: its server key holds.
    const listed = (body as { keys?: unknown } | null)?.keys;
    if (Array.isArray(listed) && listed.length === 0) return null;
  } else return null;
  const pin =
    values.fingerprint !== undefined
      ? attempt('--fingerprint', () => parseFingerprint(values.fingerprint!))
      : values.key !== undefined
        ? attempt(`--key ${values.key}`, () => parsePublicKeyPem(readFileSync(values.key!, 'utf8')))
            .keyId
        : fail('--key-history needs the pinned key: --fingerprint or --key');
  const history = attempt('key history', () => parseKeyHistory(body));
  return attempt('key history', () => followKeyTransitions(history, pin));
}

async function trustedKey(values: {
  key?: string;
  fingerprint?: string;
  'key-url'?: string;
}): Promise<PublicKey> {
  const pin =
    values.fingerprint === undefined
      ? undefined
      : attempt('--fingerprint', () => parseFingerprint(values.fingerprint!));
  if (values.key !== undefined && values['key-url'] !== undefined)
    return fail('give --key or --key-url, not both');
  let key: PublicKey;
  if (values.key !== undefined) {
    const pem = await readText(values.key, 'key file');
    key = attempt(`--key ${values.key}`, () => parsePublicKeyPem(pem));
  } else if (values['key-url'] !== undefined) {
    // A key fetched from a URL is only as trustworthy as the fingerprint it is checked with.
    if (pin === undefined) return fail('--key-url needs --fingerprint to pin the fetched key');
    const pem = await fetchKey(values['key-url']);
    key = attempt(`key from ${values['key-url']}`, () => parsePublicKeyPem(pem));
  } else {
    return fail(
      pin === undefined
        ? 'no key given: pass --key <pem-file>, or --fingerprint with --key-url; without a key nothing can be called valid'
        : '--fingerprint needs --key-url (or --key) to obtain the key it pins',
    );
  }
  if (pin !== undefined && key.keyId !== pin)
    return fail(`key fingerprint ${key.keyId} differs from the pinned ${pin}; refusing the key`);
  return key;
}

function table(
  result: VerifyResult,
  decision: Decision,
  key: PublicKey,
  signers: string[],
): string {
  // The decision first: a script author reading this must not mistake VALID for "go ahead".
  const unsigned = 'unknown: the signature did not verify under the trusted key';
  const lines = [
    `verdict       ${decision.verdict ?? (result.signed ? '(none)' : unsigned)}`,
    `admissibility ${decision.admissibility ?? (result.signed ? '(none)' : unsigned)}`,
    `proceed       ${decision.proceed ? 'yes' : 'no'}: ${decision.reason}`,
    '',
    `receipt       ${result.receipt_id ?? '(none)'}`,
    `key           ${key.keyId}`,
  ];
  if (!signers.includes(key.keyId))
    lines.push(`signed by     ${signers.length ? signers.join(', ') : '(no key_id)'}`);
  const signed = result.signed;
  if (signed) {
    lines.push(`contract      ${signed.contract}`);
    if (signed.policy)
      lines.push(
        `policy        ${signed.policy.name}  ${signed.policy.config_hash}${signed.policy.overrides ? '  (overridden by the claim)' : ''}`,
      );
    if (signed.submitter) lines.push(`submitter     ${submitterLabel(signed.submitter)}`);
    if (signed.position)
      lines.push(`position      ${signed.position.log} #${signed.position.sequence}`);
  }
  lines.push('');
  const width = Math.max(...result.checks.map((c) => c.name.length));
  for (const c of result.checks)
    lines.push(`${c.status.padEnd(10)} ${c.name.padEnd(width)}  ${c.detail ?? ''}`.trimEnd());
  lines.push('');
  if (!result.valid) lines.push('NOT VALID');
  else if (decision.proceed)
    lines.push(
      'VALID: the signature verifies under the trusted key and no check failed (ledger not consulted); the signed verdict is ALLOWED and ACCEPTED',
    );
  else
    lines.push(
      `VALID BUT NOT A GO-AHEAD: the receipt is authentic and its signed verdict is ${decision.verdict ?? 'missing'} / ${decision.admissibility ?? 'missing'}: do not proceed on it`,
    );
  return lines.join('\n');
}

async function main(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      key: { type: 'string' },
      fingerprint: { type: 'string' },
      'key-url': { type: 'string' },
      'key-history': { type: 'string' },
      'expect-policy': { type: 'string' },
      'expect-config-hash': { type: 'string' },
      'expect-submitter': { type: 'string' },
      'require-proceed': { type: 'boolean' },
      json: { type: 'boolean' },
      version: { type: 'boolean' },
      help: { type: 'boolean' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  if (values.version) {
    console.log(packageVersion());
    return 0;
  }
  if (positionals.length !== 1)
    return fail('give exactly one receipt file, or "-" for standard input');
  const expect = attempt('expectation', () =>
    parseExpectations({
      policy: values['expect-policy'],
      configHash: values['expect-config-hash'],
      submitter: values['expect-submitter'],
    }),
  );
  const history = await trustedHistory(values);
  const pinned = history === null ? await trustedKey(values) : undefined;
  const text = await readText(positionals[0]!, 'receipt file');
  const { receipt } = attempt('receipt', () => parseReceiptInput(text));
  // With a history, the key the receipt names among those the pin reaches by signed transitions.
  const { key, keyRefusal } = history ? keyFromHistory(receipt, history) : { key: pinned! };
  const result = verifyOffline(receipt, key, expect, keyRefusal);
  const decision = decisionOf(receipt, result);
  // In --json mode standard output is the JSON document and nothing else; notes go to stderr.
  console.log(
    values.json
      ? JSON.stringify(result, null, 2)
      : table(result, decision, key, attestationKeyIds(receipt)),
  );
  if (!result.valid) return 1;
  if (values['require-proceed'] && !decision.proceed) {
    console.error(`svc-verify: --require-proceed: not proceeding: ${decision.reason}`);
    return 1;
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    // parseArgs reports unknown or malformed options with a TypeError carrying a code.
    const isUsage =
      error instanceof InputError ||
      (error instanceof TypeError &&
        'code' in error &&
        String(error.code).startsWith('ERR_PARSE_ARGS'));
    if (!isUsage) {
      console.error(`svc-verify: unexpected error: ${(error as Error).stack ?? String(error)}`);
      process.exitCode = 2;
      return;
    }
    console.error(`svc-verify: ${(error as Error).message}\nRun "svc-verify --help" for usage.`);
    process.exitCode = 2;
  },
);
