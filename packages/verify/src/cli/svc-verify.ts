#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { isVerifyError } from '../errors.js';
import {
  attestationKeyIds,
  decisionOf,
  keyFromHistory,
  offlineInclusionEvidence,
  parentEvidenceOf,
  parseExpectations,
  parseTrustedCheckpoint,
  verifyOffline,
  type Decision,
} from '../offline-verify.js';
import {
  parseFingerprint,
  parsePublicKeyPem,
  publicKeyFromRaw,
  serverKeyUrl,
  type PublicKey,
} from '../public-key.js';
import { parseReceiptInput } from '../receipt-input.js';
import type { Submitter } from '../receipt-contract.js';
import {
  followKeyTransitions,
  followServedHistory,
  keyHistoryUrl,
  parseKeyHistory,
  parseRevocation,
  signedRevocationsOf,
  type KeyRevocation,
  type TrustedKey,
} from '../key-history.js';
import { parseStrictJson } from '../strict-json.js';
import { parseInclusionProof, type InclusionEvidence } from '../tlog/receipt-inclusion.js';
import { isTlogProofText, parseTlogProof, tlogProofAsInclusion } from '../tlog/tlog-proof.js';
import { formatTlogPolicy, type TlogPolicy, type WitnessVerdict } from '../tlog/tlog-policy.js';
import { parseWitnessVerifierKey } from '../tlog/witness-key.js';
import { verifySignedCheckpoint } from '../tlog/witness.js';
import { judgeNow, readPolicyFile, witnessLines } from './policy-file.js';
import { submitterLabel, type ParentEvidence, type VerifyResult } from '../verify.js';
import type { LogKey } from '../tlog/witness.js';
import {
  auditSource,
  fetchCheckpoint,
  UnusableError,
  witness,
  type LedgerResult,
} from './log-audit.js';
import { progressBar } from '../node/progress.js';
import { writeAtomically } from '../node/atomic-file.js';
import { canonicalize } from '../canonical.js';
import { checkAttestation, parseDsseEnvelope, type AttestationKey } from '../attestation.js';

// Imports @svc/verify only, so it starts fast, needs no store and runs where the service is not.

const HELP = `svc-verify — check an svc decision receipt offline, against a key you trust

Usage:
  svc-verify <file | -> --key <pem-file>
  svc-verify <file | -> --fingerprint sha256:<hex> --key-url <url>
  svc-verify <file | -> --key <pem-file> --proof <proof.json> [--checkpoint <file>]
  svc-verify <file | -> --proof <file.tlog-proof> --policy <tlog-policy> [--key ...]
  svc-verify policy init --url <svc> [--fingerprint ...] [--witness <vkey> ...] [--out <file>]
  svc-verify witness --state <file> --url <svc> (--key ... | --fingerprint ... [--key-url ...])
  svc-verify ledger (--url <svc> | --dir <dir>) (--key ... | --fingerprint ... --key-url ...)
                    [--key-history <file>]
  svc-verify attestation <envelope> --receipt <file> (--key ... | --fingerprint ... --key-url ...)

  witness and ledger check the ledger as a transparency log: "svc-verify witness --help" and
  "svc-verify ledger --help" describe them. attestation checks a receipt's in-toto attestation
  (GET /v1/receipts/<id>/attestation): "svc-verify attestation --help".

  <file | ->                  a receipt, or a whole evaluate response (its .receipt is checked);
                              "-" reads standard input
  --key <pem-file>            the issuer's Ed25519 public key (SPKI PEM)
  --fingerprint sha256:<hex>  pin the key: the SHA-256 of its DER SubjectPublicKeyInfo, the
                              form of attestations[].key_id; with --key it must match too.
                              Repeat it to pin several keys of one history
  --key-url <url>             fetch the PEM from an svc base URL or from the key URL itself;
                              refused unless its fingerprint equals --fingerprint
  --key-history <file>        the issuer's key history (the body of GET /v1/keys): with the
                              pinned key (--fingerprint or --key), a receipt of a later key
                              verifies by following the transition statements each key
                              signed for the next; a broken chain is refused. Trust runs
                              forward only: a key before the pin counts only when pinned
                              too. --key-url fetches the history itself (<base>/v1/keys)
  --known-history <file>      a key history seen before (an earlier GET /v1/keys body): a
                              history followed now that lacks one of its signed revocations
                              is refused
  --proof <proof.json>        check that the receipt is in the ledger: an inclusion proof as
                              GET /v1/receipts/<id>/proof answers it. The inclusion check runs
                              as POST /v1/verify's: the checkpoint is signed under the pinned
                              key (or a key of the followed history, current at its size), of
                              the receipt's log (position.log), the proof's leaf is
                              chain.sequence - 1 and leads to the checkpoint's root. Without
                              --proof the inclusion check is SKIPPED
                              A C2SP tlog-proof file (GET /v1/receipts/<id>/proof?format=
                              tlog-proof, or <id>.tlog-proof from "svc log export
                              --receipts") is read the same way: its index, proof lines and
                              checkpoint
  --policy <file>             a C2SP tlog-policy (see "svc-verify policy init"): the proof's
                              checkpoint must be signed by one of its logs (when it lists
                              any) and cosigned by its quorum of witnesses (Ed25519
                              cosignature/v1 or ML-DSA-44 subtree/v1); cosignatures of other
                              witnesses are ignored, one of a policy witness that does not
                              verify is refused. Without --key and --fingerprint, the
                              policy's log key of the receipt's log is the trusted key: a
                              receipt, its .tlog-proof and the policy verify offline
  --parent <file>             for a disposition (the human decision on an ESCALATED receipt):
                              the parent receipt (or its evaluate response). It is verified
                              under the same trusted key(s), and parent_link checks that its
                              receipt_id and recomputed receipt hash are the ones the
                              disposition signs. Without --parent, parent_link is UNVERIFIED
  --checkpoint <file>         a checkpoint you already trust (a witness's --state file, an
                              exported checkpoint): the proof's checkpoint must be that one
                              (same origin, size and root), else inclusion FAILs
  --expect-policy <name>      require the signed policy.name (receipt-core-v2)
  --expect-config-hash <h>    require the signed policy.config_hash
  --expect-submitter <id>     require the signed submitter: kid_<ULID> or
                              github_app:<app_id>:<installation_id>. For a disposition this
                              is who recorded the decision: the reviewer key, or the GitHub
                              App's installation
  --expect-reviewer <id>      for a disposition: require the signed reviewer.id (a GitHub
                              login, or the person a reviewer key named). Pin the recorder
                              with --expect-submitter as well: a reviewer key names whom it
                              likes
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
No ledger is consulted, so hash_integrity is SKIPPED; ledger membership needs --proof (or the
ledger), and the order of receipt-core-v1 receipts an independently kept ledger head. With
--proof, an inclusion FAIL makes the receipt not valid. Without a key nothing is called
valid: one of --key or --fingerprint with --key-url is required.

Exit codes: 0 valid, 1 not valid, 2 wrong usage or unusable input (unreadable file, not
JSON, duplicate keys, unsafe integers, bad key, key fetch refused, a proof or checkpoint
file of the wrong shape, a policy file that breaks the tlog-policy format). With --policy, a
quorum not met or a witness cosignature that does not verify is not valid (1). With
--require-proceed,
0 only when valid, ALLOWED and ACCEPTED; 1 otherwise, with the reason on standard error.`;

/** The version of the package this file belongs to: the nearest package.json named @svc/verify. */
function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: unknown;
        version?: unknown;
      };
      if (pkg.name === '@svc/verify' && typeof pkg.version === 'string') return pkg.version;
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
/** A verifier refusal (VerifyError) becomes an input error carrying its reason. */
function attempt<T>(what: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (isVerifyError(error)) return fail(`${what}: ${error.message}`);
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
async function trustedHistory(
  values: KeyValues,
  kept: readonly KeyRevocation[] = [],
): Promise<TrustedKey[] | null> {
  let body: unknown;
  let served = false;
  if (values['key-history'] !== undefined) {
    const text = await readText(values['key-history'], 'key history');
    body = attempt(`--key-history ${values['key-history']}`, () => parseStrictJson(text));
  } else if (values['key-url'] !== undefined && values.fingerprint !== undefined) {
    const keysUrl = attempt('--key-url', () => keyHistoryUrl(values['key-url']!));
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
    served = true;
  } else return null;
  const pins = pinsOf(values);
  if (values.key !== undefined)
    pins.push(
      attempt(`--key ${values.key}`, () => parsePublicKeyPem(readFileSync(values.key!, 'utf8')))
        .keyId,
    );
  if (pins.length === 0) return fail('--key-history needs the pinned key: --fingerprint or --key');
  const seen = [...kept, ...(await knownRevocations(values['known-history']))];
  // A service that has recorded no key yet publishes an empty history: its server key holds.
  if (served) return attempt('key history', () => followServedHistory(body, pins, { seen }));
  const history = attempt('key history', () => parseKeyHistory(body));
  return attempt('key history', () => followKeyTransitions(history, pins, { seen }));
}

/** The key options every command takes. */
interface KeyValues {
  key?: string;
  fingerprint?: string[];
  'key-url'?: string;
  'key-history'?: string;
  'known-history'?: string;
}

/** Every --fingerprint, parsed (several pin several keys: an earlier key is trusted only so). */
const pinsOf = (values: { fingerprint?: string[] }): string[] =>
  (values.fingerprint ?? []).map((f) => attempt('--fingerprint', () => parseFingerprint(f)));

/**
 * The signed revocations of --known-history (a key history seen before: the body of an earlier
 * GET /v1/keys): a history followed now that no longer holds one of them is refused.
 */
async function knownRevocations(path: string | undefined): Promise<KeyRevocation[]> {
  if (path === undefined) return [];
  const text = await readText(path, 'known key history');
  const body = attempt(`--known-history ${path}`, () => parseStrictJson(text));
  return signedRevocationsOf(attempt(`--known-history ${path}`, () => parseKeyHistory(body)));
}

/**
 * The inclusion evidence of --proof (and --checkpoint), or undefined without --proof. A file of
 * the wrong shape is unusable input (exit 2), as POST /v1/verify answers it 400; a proof of the
 * right shape that does not prove inclusion is an inclusion FAIL.
 */
async function inclusionEvidence(
  receipt: unknown,
  values: { proof?: string; checkpoint?: string },
  keys: readonly (PublicKey | TrustedKey)[],
): Promise<InclusionEvidence | undefined> {
  if (values.proof === undefined) return undefined;
  const path = values.proof;
  const text = await readText(path, 'proof file');
  let proof: unknown;
  // A C2SP tlog-proof file (GET /v1/receipts/<id>/proof?format=tlog-proof) or the JSON proof.
  if (isTlogProofText(text)) {
    const parsed = parseTlogProof(text);
    if ('problem' in parsed)
      return fail(`--proof ${path}: malformed tlog-proof: ${parsed.problem}`);
    proof = tlogProofAsInclusion(parsed.proof);
  } else proof = attempt(`--proof ${path}`, () => parseStrictJson(text));
  const shape = parseInclusionProof(proof);
  if ('problem' in shape) return fail(`--proof ${path}: malformed proof: ${shape.problem}`);
  let trusted;
  if (values.checkpoint !== undefined) {
    const checkpointText = await readText(values.checkpoint, 'checkpoint file');
    trusted = attempt(`--checkpoint ${values.checkpoint}`, () =>
      parseTrustedCheckpoint(checkpointText),
    );
  }
  return offlineInclusionEvidence(receipt, proof, keys, trusted);
}

/** Whether any option names the key to trust (else a --policy's log keys are the trust). */
const keyOptionGiven = (values: KeyValues): boolean =>
  values.key !== undefined ||
  values.fingerprint !== undefined ||
  values['key-url'] !== undefined ||
  values['key-history'] !== undefined;

/**
 * The receipt's keys from a policy's `log` lines of its log (position.log): the log key is the
 * server key, which signs receipts and checkpoints alike. The receipt is checked under the one
 * its attestation names; a receipt naming none of them fails its signature check.
 */
function keysFromPolicy(
  receipt: Record<string, unknown>,
  policy: TlogPolicy,
  path: string,
): { keys: PublicKey[]; key: PublicKey; keyRefusal?: string } {
  const position = receipt.position as { log?: unknown } | undefined;
  const origin = typeof position?.log === 'string' ? position.log : null;
  if (origin === null)
    return fail(
      `--policy ${path} without --key: the receipt has no position.log, so no log key of the policy is its own`,
    );
  const keys = policy.logs
    .filter((l) => l.key.name === origin)
    .map((l) => attempt(`--policy ${path}`, () => publicKeyFromRaw(l.key.publicKey)));
  if (keys.length === 0)
    return fail(
      `--policy ${path} lists no log key named ${JSON.stringify(origin)} (the receipt's log); give --key or a policy of this log`,
    );
  const named = attestationKeyIds(receipt);
  const key = keys.find((k) => named.includes(k.keyId));
  return key
    ? { keys, key }
    : {
        keys,
        key: keys[0]!,
        keyRefusal: `the receipt is signed by ${named.join(', ') || 'no key_id'}, not by a log key of the policy ${path}`,
      };
}

async function trustedKey(values: KeyValues): Promise<PublicKey> {
  const pins = pinsOf(values);
  // Without a history one key is used: the one of the pins that the key given matches.
  const pin = pins.length === 0 ? undefined : pins.join(' or ');
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
  if (pin !== undefined && !pins.includes(key.keyId))
    return fail(`key fingerprint ${key.keyId} differs from the pinned ${pin}; refusing the key`);
  return key;
}

/**
 * The parent of a disposition from --parent, verified under the same trust: undefined
 * without --parent. A parent file that is not JSON or has duplicate keys is unusable input.
 */
async function parentEvidence(
  path: string | undefined,
  history: TrustedKey[] | null,
  pinned: PublicKey | undefined,
): Promise<ParentEvidence | undefined> {
  if (path === undefined) return undefined;
  const text = await readText(path, 'parent file');
  const { receipt: parent } = attempt(`--parent ${path}`, () => parseReceiptInput(text));
  const { key, keyRefusal } = history ? keyFromHistory(parent, history) : { key: pinned! };
  return parentEvidenceOf(parent, verifyOffline(parent, key, {}, keyRefusal));
}

/** `approve of dr-… by user "sam"`: what a verified disposition signs, in one line. */
function dispositionLine(
  receipt: Record<string, unknown>,
  recorder: Submitter | null,
): string | null {
  const d = receipt.disposition as
    | {
        decision?: unknown;
        parent_receipt_id?: unknown;
        reviewer?: { kind?: unknown; id?: unknown };
      }
    | undefined;
  if (typeof d !== 'object' || d === null) return null;
  const recorded = recorder ? submitterLabel(recorder) : '(no signed submitter)';
  return `${String(d.decision)} of ${String(d.parent_receipt_id)} by ${String(d.reviewer?.kind)} ${JSON.stringify(d.reviewer?.id)}, recorded by ${recorded}`;
}

function table(
  result: VerifyResult,
  decision: Decision,
  key: PublicKey,
  signers: string[],
  receipt: Record<string, unknown>,
  witnesses?: WitnessVerdict,
): string {
  const included = result.checks.some((c) => c.name === 'inclusion' && c.status === 'PASS');
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
    const disposition = dispositionLine(receipt, signed.submitter);
    if (disposition) lines.push(`disposition   ${disposition}`);
  }
  lines.push('');
  const width = Math.max(...result.checks.map((c) => c.name.length));
  for (const c of result.checks)
    lines.push(`${c.status.padEnd(10)} ${c.name.padEnd(width)}  ${c.detail ?? ''}`.trimEnd());
  lines.push('');
  if (witnesses) lines.push(...witnessLines(witnesses), '');
  if (!result.valid) lines.push('NOT VALID');
  else if (decision.proceed)
    lines.push(
      `VALID: the signature verifies under the trusted key and no check failed (${included ? `included in the log: the inclusion proof leads to a trusted checkpoint${witnesses ? ", the policy's witness quorum met" : ''}` : 'ledger not consulted'}); the signed verdict is ALLOWED and ACCEPTED`,
    );
  else
    lines.push(
      `VALID BUT NOT A GO-AHEAD: the receipt is authentic and its signed verdict is ${decision.verdict ?? 'missing'} / ${decision.admissibility ?? 'missing'}: do not proceed on it`,
    );
  return lines.join('\n');
}

const KEY_HELP = `  --key <pem-file>            the log's Ed25519 public key (SPKI PEM): the server key, which
                              signs checkpoints (key name = the checkpoint's origin)
  --fingerprint sha256:<hex>  pin the key by the SHA-256 of its DER SubjectPublicKeyInfo
  --key-url <url>             an svc base URL: its key history (GET /v1/keys) is followed from
                              the pin; a service without one serves the PEM, refused unless
                              its fingerprint equals --fingerprint. Without --key-url and
                              --key, a --fingerprint reads the history from --url
  --key-history <file>        the key history as a file (the body of GET /v1/keys), followed
                              from the pin (--fingerprint or --key)
  --known-history <file>      an earlier key history: its signed revocations must still be
                              in the history followed

  With a history, every key after the pin linked to it by signed transition statements is
  trusted (a key before the pin only when it is pinned too, with another --fingerprint),
  each only for the sequences it signed and not after a revocation, and a checkpoint only
  under the key current at its size. A history that is refused (a transition or revocation
  not signed by a trusted key, a pin it does not list, a known revocation dropped) exits 2. With --key alone, that one key.`;

const WITNESS_HELP = `svc-verify witness — keep the log honest: accept a new checkpoint only if it extends the last

Usage:
  svc-verify witness --state <file> --url <svc> --key <pem-file> [--json]
  svc-verify witness --state <file> --url <svc> --fingerprint sha256:<hex> [--key-url <url>]
  svc-verify witness --state <file> --url <svc> --fingerprint sha256:<hex> --key-history <file>

Fetches <svc>/v1/log/checkpoint and verifies its signature under the pinned key, or a key of
the history the pin reaches that was current at the checkpoint's size: a witness pinned to an
old key keeps accepting checkpoints after a signed rotation. The state
file holds the last checkpoint this witness accepted (a signed note). Without one, the
checkpoint is trusted on first use and written there. With one, the new checkpoint must be
of the same origin and no smaller; a larger one must come with a consistency proof
(<svc>/v1/log/consistency?from=<kept size>&to=<new size>) that verifies. Then the state file
is replaced atomically; on any refusal it is left as it was. Following a history, the signed
key revocations of every history it accepted are kept in <state>.revocations: a later history
that drops one of them (for a key the pin trusts) is refused, exit 2.

  --state <file>              the witness's state: the last accepted checkpoint
  --url <svc>                 the svc base URL
  --policy <file>             a C2SP tlog-policy: also report which of its witnesses cosigned
                              the checkpoint and whether its quorum is met (exit 1 when not;
                              the state still advances, the log having proved itself
                              consistent)
${KEY_HELP}
  --json                      print the outcome as one JSON object on standard output

Run it from cron, say every minute, and alert on a non-zero exit: a refusal is signed
evidence (printed with --json) that the log showed two histories.

Exit codes: 0 accepted (first use, unchanged or consistent), 1 refused (fork: same size with
another root or a consistency proof that does not verify; rollback: a smaller size; a bad
signature; another origin) or, with --policy, the quorum not met or a policy witness's
cosignature that does not verify, 2 wrong usage, unreachable service or a bad policy file.`;

const LEDGER_HELP = `svc-verify ledger — audit the whole ledger against its newest checkpoint

Usage:
  svc-verify ledger --url <svc> --key <pem-file> [--json]
  svc-verify ledger --dir <dir> --key <pem-file> [--json]
  svc-verify ledger (--url <svc> | --dir <dir>) --fingerprint sha256:<hex> --key-url <url>
  svc-verify ledger (--url <svc> | --dir <dir>) --fingerprint sha256:<hex> --key-history <file>
  svc-verify ledger --url <svc> --fingerprint sha256:<hex>

Reads the checkpoint (from <svc>/v1/log/checkpoint, or <dir>/checkpoint as "svc log export"
writes it) and verifies its signature; then reads every entry bundle and hash tile of its
size, bundle by bundle, rebuilds the Merkle tree from the entries and compares the root with
the checkpoint and every hash tile with the entries. For each receipt-core-v2 leaf it checks
the Ed25519 signature over the signed core under the pinned key (with a history: under the
key its attestation names, which must have signed that sequence and not be revoked at or
before it), position.log = the origin,
position.sequence = leaf index + 1, and position.previous_receipt_hash = the hash of the
previous leaf (null for the first). receipt-core-v1 leaves do not carry the signed core, so
their signatures cannot be checked from the log: they are counted and reported as such.
It prints counts by signed verdict and admissibility.

  --url <svc>                 the svc base URL; entry bundles are a read of receipts, so when
                              the service has SVC_PUBLIC_READS=false, put an API key in the
                              SVC_API_KEY environment variable
  --dir <dir>                 a directory written by "svc log export" (or a copy of one)
  --policy <file>             a C2SP tlog-policy: also report which of its witnesses cosigned
                              the checkpoint and whether its quorum is met (exit 1 when not)
${KEY_HELP}
  --json                      print the report as one JSON object on standard output

A progress bar is drawn on standard error when it is a terminal.

Exit codes: 0 every check passed, 1 a check failed (the first failing leaves are named) or,
with --policy, the quorum is not met, 2 wrong usage, unreachable source or a bad policy file.`;

const keyOptions = {
  key: { type: 'string' },
  fingerprint: { type: 'string', multiple: true },
  'key-url': { type: 'string' },
  'key-history': { type: 'string' },
  'known-history': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

/**
 * The keys a log command trusts: those the pin reaches through the signing-key history
 * (--key-history, or GET /v1/keys of --key-url), else the single pinned key. A --fingerprint
 * without --key-url or --key reads the key history from the log's own --url.
 */
async function logKeys(
  values: KeyValues,
  url: string | undefined,
  kept: readonly KeyRevocation[] = [],
): Promise<LogKey[]> {
  const keyValues =
    values.fingerprint !== undefined &&
    values.key === undefined &&
    values['key-url'] === undefined &&
    url !== undefined
      ? { ...values, 'key-url': url }
      : values;
  const history = await trustedHistory(keyValues, kept);
  return history ?? [(await trustedKey(keyValues)).raw];
}

/** The revocations a witness kept (`<state>.revocations`, a JSON array); none before the first. */
async function keptRevocations(path: string): Promise<KeyRevocation[]> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    return fail(`cannot read ${path}: ${(error as Error).message}`);
  }
  const list = attempt(path, () => parseStrictJson(text));
  if (!Array.isArray(list)) return fail(`${path}: expected a JSON array of key revocations`);
  return list.map((entry, i) => attempt(path, () => parseRevocation(entry, `revocation ${i}`)!));
}

async function witnessCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      ...keyOptions,
      state: { type: 'string' },
      url: { type: 'string' },
      policy: { type: 'string' },
    },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) {
    console.log(WITNESS_HELP);
    return 0;
  }
  if (positionals.length > 0) return fail(`witness: unexpected argument ${positionals[0]}`);
  if (!values.state) return fail('witness needs --state <file>');
  if (!values.url) return fail('witness needs --url <svc base URL>');
  // The signed revocations of the histories this witness accepted, kept beside its state: a
  // later history that drops one is refused.
  const revocationsFile = `${values.state}.revocations`;
  const kept = await keptRevocations(revocationsFile);
  const policy = values.policy === undefined ? undefined : await readPolicyFile(values.policy);
  const keys = await logKeys(values, values.url, kept);
  const { note, ...report } = await witness({ state: values.state, url: values.url, keys });
  // The quorum of the policy over the checkpoint fetched; only an accepted one is judged.
  const witnesses = policy && report.ok ? judgeNow(note, policy) : undefined;
  const result = witnesses ? { ...report, witnesses } : report;
  if (result.ok) {
    const seen = new Map(kept.map((r) => [canonicalize(r), r]));
    for (const key of keys)
      if (!ArrayBuffer.isView(key) && key.record.revocation)
        seen.set(canonicalize(key.record.revocation), key.record.revocation);
    if (seen.size > kept.length)
      await writeAtomically(revocationsFile, `${JSON.stringify([...seen.values()], null, 2)}\n`);
  }
  if (values.json) console.log(JSON.stringify(result, null, 2));
  else if (result.ok)
    console.log([result.reason, ...(witnesses ? witnessLines(witnesses) : [])].join('\n'));
  if (!result.ok) {
    console.error(`svc-verify witness: REFUSED (${result.outcome}): ${result.reason}`);
    return 1;
  }
  if (witnesses && !witnesses.ok) {
    console.error(`svc-verify witness: QUORUM NOT MET: ${witnesses.reason}`);
    return 1;
  }
  return 0;
}

function ledgerTable(result: LedgerResult, followed: boolean): string {
  const counts = (table: Record<string, number>) =>
    Object.entries(table)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || '(none)';
  const lines = [
    `origin        ${result.origin}`,
    `size          ${result.size}`,
    `root          ${result.root}  ${result.root_matches ? 'rebuilt from the entries: equal' : 'NOT the root of the entries'}`,
    `leaves        ${result.leaves.v2} receipt-core-v2, ${result.leaves.v1} receipt-core-v1${result.leaves.unreadable ? `, ${result.leaves.unreadable} unreadable` : ''}`,
    `signatures    ${result.signatures_verified} of ${result.leaves.v2} receipt-core-v2 leaves verified under ${followed ? 'the key history followed from the pin, each under the key that signed its sequence' : 'the pinned key'}`,
  ];
  if (result.leaves.v1 > 0)
    lines.push(
      `              ${result.leaves.v1} receipt-core-v1 leaves carry no signed core: their signatures cannot be checked from the log`,
    );
  lines.push(
    `verdicts      ${counts(result.by_verdict)}`,
    `admissibility ${counts(result.by_admissibility)}${result.leaves.v1 > 0 ? ' (receipt-core-v2 only)' : ''}`,
    `speed         ${result.receipts_per_second} receipts/s`,
    '',
  );
  if (result.ok) lines.push("LEDGER OK: every leaf checked and the tree is the checkpoint's");
  else {
    for (const f of result.failures)
      lines.push(
        `FAIL  ${f.index < 0 ? 'tree' : `leaf ${f.index} (sequence ${f.index + 1})`}: ${f.reason}`,
      );
    if (result.failure_count > result.failures.length)
      lines.push(`… and ${result.failure_count - result.failures.length} more`);
    lines.push(`LEDGER NOT OK: ${result.failure_count} failure(s)`);
  }
  return lines.join('\n');
}

async function ledgerCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      ...keyOptions,
      url: { type: 'string' },
      dir: { type: 'string' },
      policy: { type: 'string' },
    },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) {
    console.log(LEDGER_HELP);
    return 0;
  }
  if (positionals.length > 0) return fail(`ledger: unexpected argument ${positionals[0]}`);
  if ((values.url === undefined) === (values.dir === undefined))
    return fail('ledger needs one of --url <svc> or --dir <exported dir>');
  const policy = values.policy === undefined ? undefined : await readPolicyFile(values.policy);
  const keys = await logKeys(values, values.url);
  const apiKey = process.env.SVC_API_KEY || undefined;
  const bar = progressBar('auditing');
  const result = await auditSource({
    source: values.url !== undefined ? { url: values.url, apiKey } : { dir: values.dir! },
    keys,
    onProgress: bar.update,
  });
  bar.done();
  if (!('size' in result)) {
    if (values.json) console.log(JSON.stringify(result, null, 2));
    console.error(`svc-verify ledger: REFUSED (${result.outcome}): ${result.reason}`);
    return 1;
  }
  const followed = keys.some((key) => !ArrayBuffer.isView(key));
  const { note, ...audit } = result;
  const witnesses = policy ? judgeNow(note, policy) : undefined;
  console.log(
    values.json
      ? JSON.stringify(witnesses ? { ...audit, witnesses } : audit, null, 2)
      : [ledgerTable(audit, followed), ...(witnesses ? witnessLines(witnesses) : [])].join('\n'),
  );
  if (witnesses && !witnesses.ok)
    console.error(`svc-verify ledger: QUORUM NOT MET: ${witnesses.reason}`);
  if (!result.ok) {
    const first = result.failures[0];
    console.error(
      `svc-verify ledger: NOT OK: ${result.failure_count} failure(s)${first ? `; first: ${first.index < 0 ? 'tree' : `leaf ${first.index}`}: ${first.reason}` : ''}`,
    );
    return 1;
  }
  return witnesses && !witnesses.ok ? 1 : 0;
}

const ATTESTATION_HELP = `svc-verify attestation — check a receipt's in-toto attestation offline

Usage:
  svc-verify attestation <envelope | -> --receipt <file> --key <pem-file>
  svc-verify attestation <envelope | -> --receipt <file> --fingerprint sha256:<hex> --key-url <url>
  svc-verify attestation <envelope | -> --receipt <file> --fingerprint sha256:<hex> --key-history <file>

The envelope is the DSSE envelope of GET /v1/receipts/<id>/attestation; --receipt the receipt it
speaks for (the "receipt" member of GET /v1/receipts/<id>, or a receipt file). Both are checked
under the key you trust (the options of "svc-verify --help"): the receipt as svc-verify checks
any receipt, and the envelope's DSSE signature over PAE under the key its keyid names; then the
statement's shape (in-toto Statement v1, SLSA VSA v1), that its input attestation is this
receipt (the SHA-256 of chain.receipt_hash), and that verificationResult is PASSED exactly when
the receipt says proceed.

Options:
  --receipt <file>  the receipt the attestation is of (required)
  --json            the checks as JSON on standard output

Exit codes: 0 the attestation and the receipt are valid, 1 either is not, 2 wrong usage or
unusable input (unreadable file, not JSON, not a DSSE envelope, bad key).`;

async function attestationCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { ...keyOptions, receipt: { type: 'string' } },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) {
    console.log(ATTESTATION_HELP);
    return 0;
  }
  if (positionals.length !== 1) return fail('attestation: give exactly one envelope file, or "-"');
  if (values.receipt === undefined) return fail('attestation needs --receipt <file>');
  const history = await trustedHistory(values);
  const pinned = history === null ? await trustedKey(values) : undefined;
  const envelopeText = await readText(positionals[0]!, 'envelope file');
  const envelope = attempt('envelope', () => parseDsseEnvelope(envelopeText));
  const receiptText = await readText(values.receipt, 'receipt file');
  const { receipt } = attempt('receipt', () => parseReceiptInput(receiptText));
  const { key, keyRefusal } = history ? keyFromHistory(receipt, history) : { key: pinned! };
  const receiptResult = verifyOffline(receipt, key, {}, keyRefusal);
  const keys: AttestationKey[] = history ?? [{ keyId: pinned!.keyId, raw: pinned!.raw }];
  const result = checkAttestation(
    envelope,
    receipt as Parameters<typeof checkAttestation>[1],
    keys,
  );
  const valid = receiptResult.valid && result.valid;
  if (values.json) {
    console.log(JSON.stringify({ ...result, valid, receipt_valid: receiptResult.valid }, null, 2));
  } else {
    console.log(
      [
        `receipt             ${receiptResult.valid ? 'valid' : 'NOT valid'}`,
        ...result.checks.map(
          (c) => `${c.name.padEnd(19)} ${c.passed ? 'PASS' : 'FAIL'}  ${c.detail}`,
        ),
        valid ? 'ATTESTATION OK' : 'ATTESTATION NOT OK',
      ].join('\n'),
    );
  }
  if (!valid) {
    const first = result.checks.find((c) => !c.passed);
    console.error(
      `svc-verify attestation: NOT valid: ${first ? `${first.name}: ${first.detail}` : 'the receipt does not verify'}`,
    );
    return 1;
  }
  return 0;
}

const POLICY_HELP = `svc-verify policy init — write a C2SP tlog-policy file for an svc ledger

Usage:
  svc-verify policy init --url <svc> [--fingerprint sha256:<hex> ...] [--witness <vkey> ...]
                         [--quorum all|any|<k>|none] [--out <file>]
  svc-verify policy init --url <svc> --key <pem-file> [--witness <vkey> ...] [--out <file>]

Reads the service's newest checkpoint (<svc>/v1/log/checkpoint) for its log origin and writes
a policy (C2SP tlog-policy) with one "log" line per checkpoint key: the keys of the key
history followed from --fingerprint (or --key), each current or retired key once (a revoked
key is left out), or, with neither, the service's current key as it serves it (trust on first
use: the file then says so, and the key must be checked through another channel, such as the
operator or the fingerprint published where you found the service). Each --witness adds a
"witness" line (a cosigner vkey, type 0x04 Ed25519 or 0x06 ML-DSA-44, named by its key name,
as the witness publishes it), and the quorum is --quorum of them: all (the default), any, a
number k, or none; with no witness, quorum none. "svc-verify <receipt> --proof <file>
--policy <file>" then verifies offline.

Options:
  --url <svc>         the svc base URL
  --witness <vkey>    a witness's cosigner verifier key (repeatable)
  --quorum <q>        how many of the witnesses must cosign: all, any, k or none
  --out <file>        write the policy there (atomically) instead of standard output
${KEY_HELP}

Exit codes: 0 written, 2 wrong usage, an unreachable service, a checkpoint that does not
verify under the key, or a witness vkey that is not one.`;

async function policyCommand(args: string[]): Promise<number> {
  if (args[0] !== 'init' && args[0] !== '--help')
    return fail(`policy: unknown command ${JSON.stringify(args[0] ?? '')}: use "policy init"`);
  const { values, positionals } = parseArgs({
    args: args[0] === 'init' ? args.slice(1) : args,
    options: {
      ...keyOptions,
      url: { type: 'string' },
      witness: { type: 'string', multiple: true },
      quorum: { type: 'string' },
      out: { type: 'string' },
    },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) {
    console.log(POLICY_HELP);
    return 0;
  }
  if (positionals.length > 0) return fail(`policy init: unexpected argument ${positionals[0]}`);
  if (values.url === undefined) return fail('policy init needs --url <svc base URL>');
  const witnesses = (values.witness ?? []).map((vkey, i) => {
    const key = parseWitnessVerifierKey(vkey);
    if (!key)
      return fail(
        `--witness ${i + 1}: not a cosigner vkey <name>+<key ID>+<base64(0x04 or 0x06 ‖ key)> with a matching key ID`,
      );
    return { name: key.name, key, url: null };
  });
  const names = witnesses.map((w) => w.name);
  if (new Set(names).size !== names.length) return fail('--witness: a witness is named twice');
  const quorum = values.quorum ?? (witnesses.length === 0 ? 'none' : 'all');
  if (!/^(?:all|any|none|[1-9][0-9]{0,3})$/.test(quorum))
    return fail('--quorum is all, any, none or a number of witnesses');
  if (quorum !== 'none' && witnesses.length === 0)
    return fail(`--quorum ${quorum} needs witnesses: give --witness <vkey>`);
  if (/^[0-9]/.test(quorum) && Number(quorum) > witnesses.length)
    return fail(`--quorum ${quorum} is more than the ${witnesses.length} witness(es) given`);
  // The keys: followed from a pin, or (trust on first use) the one the service serves now.
  const pinnedByUser = keyOptionGiven(values);
  let served: PublicKey | undefined;
  let keys: LogKey[];
  if (pinnedByUser) keys = await logKeys(values, values.url);
  else {
    const pem = await fetchKey(values.url);
    served = attempt(`key from ${values.url}`, () => parsePublicKeyPem(pem));
    keys = [served.raw];
  }
  const note = await fetchCheckpoint(values.url);
  const checked = verifySignedCheckpoint(note, keys);
  if (!checked.ok)
    return fail(`the checkpoint of ${values.url} does not verify under the key: ${checked.reason}`);
  const origin = checked.checkpoint.origin;
  const logs: TlogPolicy['logs'] = [];
  for (const key of keys) {
    // A revoked key's checkpoints are not all trustworthy, and a policy cannot say which are.
    if (!ArrayBuffer.isView(key) && key.record.status === 'revoked') continue;
    const raw = ArrayBuffer.isView(key) ? key : key.raw;
    if (!logs.some((l) => l.key.publicKey.every((b, i) => b === raw[i])))
      logs.push({ key: { name: origin, publicKey: raw }, url: null });
  }
  const groups: TlogPolicy['groups'] = [];
  let quorumName = 'none';
  if (quorum !== 'none' && witnesses.length === 1) quorumName = witnesses[0]!.name;
  else if (quorum !== 'none') {
    quorumName = 'witnesses';
    if (names.includes(quorumName)) return fail('a witness is named "witnesses", the group name');
    const threshold = quorum === 'all' ? witnesses.length : quorum === 'any' ? 1 : Number(quorum);
    groups.push({ name: quorumName, threshold, members: names });
  }
  const comments = [
    `C2SP tlog-policy for ${origin}, written by svc-verify policy init from ${values.url}`,
    `on ${new Date().toISOString()}.`,
    ...(served
      ? [
          `The log key was fetched from ${values.url} and trusted on first use: CHECK ITS`,
          `FINGERPRINT ${served.keyId}`,
          'through another channel (the operator, where the service is documented) before',
          'relying on this policy, or write it again with --fingerprint.',
        ]
      : [`The log keys are those the pinned key reaches through ${origin}'s signed key history.`]),
    ...(witnesses.length > 0
      ? ['The witness keys were given on the command line: check each with its operator.']
      : []),
  ];
  const text = formatTlogPolicy({ logs, witnesses, groups, quorum: quorumName }, comments);
  if (values.out === undefined) process.stdout.write(text);
  else {
    await writeAtomically(values.out, text);
    console.error(`svc-verify policy init: wrote ${values.out}`);
  }
  if (served)
    console.error(
      `svc-verify policy init: the log key ${served.keyId} was trusted on first use: check this fingerprint through another channel before relying on the policy`,
    );
  return 0;
}

async function main(args: string[]): Promise<number> {
  if (args[0] === 'witness') return witnessCommand(args.slice(1));
  if (args[0] === 'attestation') return attestationCommand(args.slice(1));
  if (args[0] === 'ledger') return ledgerCommand(args.slice(1));
  if (args[0] === 'policy') return policyCommand(args.slice(1));
  const { values, positionals } = parseArgs({
    args,
    options: {
      key: { type: 'string' },
      fingerprint: { type: 'string', multiple: true },
      'key-url': { type: 'string' },
      'key-history': { type: 'string' },
      'known-history': { type: 'string' },
      proof: { type: 'string' },
      checkpoint: { type: 'string' },
      policy: { type: 'string' },
      parent: { type: 'string' },
      'expect-policy': { type: 'string' },
      'expect-config-hash': { type: 'string' },
      'expect-submitter': { type: 'string' },
      'expect-reviewer': { type: 'string' },
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
  if (values.checkpoint !== undefined && values.proof === undefined)
    return fail('--checkpoint needs --proof: it names the checkpoint the proof must be of');
  const expect = attempt('expectation', () =>
    parseExpectations({
      policy: values['expect-policy'],
      configHash: values['expect-config-hash'],
      submitter: values['expect-submitter'],
      reviewer: values['expect-reviewer'],
    }),
  );
  if (values.policy !== undefined && values.proof === undefined)
    return fail("--policy needs --proof: it judges the witnesses of the proof's checkpoint");
  const policy = values.policy === undefined ? undefined : await readPolicyFile(values.policy);
  const fromPolicy = policy !== undefined && !keyOptionGiven(values);
  const history = fromPolicy ? null : await trustedHistory(values);
  const text = await readText(positionals[0]!, 'receipt file');
  const { receipt } = attempt('receipt', () => parseReceiptInput(text));
  const policyKeys = fromPolicy ? keysFromPolicy(receipt, policy, values.policy!) : undefined;
  const pinned = history !== null ? undefined : (policyKeys?.key ?? (await trustedKey(values)));
  // With a history, the key the receipt names among those the pin reaches by signed transitions.
  const { key, keyRefusal } = history
    ? keyFromHistory(receipt, history)
    : { key: pinned!, keyRefusal: policyKeys?.keyRefusal };
  const inclusion = await inclusionEvidence(
    receipt,
    values,
    history ?? policyKeys?.keys ?? [pinned!],
  );
  const parent = await parentEvidence(values.parent, history, pinned);
  const verified = verifyOffline(receipt, key, expect, keyRefusal, inclusion, parent);
  // The witnesses of the proof's checkpoint, under the policy: part of validity when asked for.
  const witnesses: WitnessVerdict | undefined =
    policy &&
    inclusion &&
    typeof (inclusion.proof as { checkpoint?: unknown }).checkpoint === 'string'
      ? judgeNow((inclusion.proof as { checkpoint: string }).checkpoint, policy)
      : policy
        ? { ok: false, reason: 'the proof has no checkpoint to judge', report: null }
        : undefined;
  const result = witnesses
    ? { ...verified, valid: verified.valid && witnesses.ok, witnesses }
    : verified;
  const decision = decisionOf(receipt, result);
  // In --json mode standard output is the JSON document and nothing else; notes go to stderr.
  console.log(
    values.json
      ? JSON.stringify(result, null, 2)
      : table(result, decision, key, attestationKeyIds(receipt), receipt, witnesses),
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
      error instanceof UnusableError ||
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
