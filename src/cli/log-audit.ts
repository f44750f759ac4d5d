import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseStrictJson } from '../core/strict-json.js';
import { auditLedger, type LedgerAuditReport } from '../core/tlog/ledger-audit.js';
import { rootHex } from '../core/tlog/note.js';
import { tilePath, type Tile } from '../core/tlog/tiles.js';
import {
  beginWitnessStep,
  completeWitnessStep,
  parseConsistencyAnswer,
  verifySignedCheckpoint,
} from '../core/tlog/witness.js';
import { createNativeStrictVerify } from '../secrets/native-ed25519.js';
import { nativeHashBytes } from '../storage/native-hash.js';
import { writeAtomically } from './atomic-file.js';

// The log commands of svc-verify: `witness` and `ledger`. The checks are the pure core's
// (core/tlog); here are only the reading of URLs and files and the printing. Node's own
// Ed25519 and SHA-256 are injected for speed, made to answer exactly as the core's strict
// verifier (secrets/native-ed25519.ts, which imports node:crypto and the core only).

/** Wrong usage, or a source that cannot be read: exit 2. */
export class UnusableError extends Error {}
const unusable = (message: string): never => {
  throw new UnusableError(message);
};

const TIMEOUT_MS = 30_000;

/** Where a log is read from: an svc base URL, or a directory `svc log export` wrote. */
export type LogSource = { url: string; apiKey?: string } | { dir: string };

function logUrl(base: string, path: string): string {
  let parsed: URL;
  try {
    parsed = new URL(base);
  } catch {
    return unusable(`--url: not a URL: ${JSON.stringify(base)}`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    return unusable(`--url must be http(s), got ${parsed.protocol}`);
  const [pathname, query] = path.split('?');
  parsed.pathname = `${parsed.pathname.replace(/\/+$/, '')}/v1/log/${pathname}`;
  parsed.search = query ?? '';
  parsed.hash = '';
  return parsed.href;
}

/** GET a log path; null on 404, bytes on 200; anything else is unusable. */
async function get(source: { url: string; apiKey?: string }, path: string) {
  const url = logUrl(source.url, path);
  let res: Response;
  try {
    res = await fetch(url, {
      redirect: 'error',
      signal: AbortSignal.timeout(TIMEOUT_MS),
      headers: source.apiKey ? { 'X-API-Key': source.apiKey } : {},
    });
  } catch (error) {
    return unusable(`cannot fetch ${url}: ${(error as Error).message}`);
  }
  if (res.status === 404) return null;
  if (!res.ok) {
    const hint =
      res.status === 401 || res.status === 403
        ? ' (entry bundles need SVC_API_KEY when reads are private)'
        : '';
    return unusable(`${url} answered HTTP ${res.status}${hint}`);
  }
  return new Uint8Array(await res.arrayBuffer());
}

async function readLocal(path: string): Promise<Uint8Array | null> {
  try {
    return new Uint8Array(await readFile(path));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    return unusable(`cannot read ${path}: ${(error as Error).message}`);
  }
}

const text = (bytes: Uint8Array) => new TextDecoder('utf-8', { fatal: false }).decode(bytes);

async function readCheckpoint(source: LogSource): Promise<string> {
  const bytes =
    'url' in source
      ? await get(source, 'checkpoint')
      : await readLocal(join(source.dir, 'checkpoint'));
  if (!bytes) {
    return unusable(
      'url' in source
        ? `${logUrl(source.url, 'checkpoint')} answered 404`
        : `no checkpoint in ${source.dir}`,
    );
  }
  return text(bytes);
}

const readTileFrom =
  (source: LogSource) =>
  (tile: Tile): Promise<Uint8Array | null> =>
    'url' in source ? get(source, tilePath(tile)) : readLocal(join(source.dir, tilePath(tile)));

export interface WitnessResult {
  ok: boolean;
  outcome: string;
  origin: string | null;
  previous_size: number | null;
  size: number | null;
  root: string | null;
  reason: string;
  /** The refused checkpoint and the kept one: signed evidence of a fork or a rollback. */
  checkpoint?: string;
  kept?: string;
}

/** One witness run: fetch, verify, prove, replace the state. */
export async function witness(options: {
  state: string;
  url: string;
  keys: Uint8Array[];
}): Promise<WitnessResult> {
  const verify = createNativeStrictVerify();
  let kept: string | null = null;
  try {
    kept = await readFile(options.state, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      return unusable(`cannot read the state ${options.state}: ${(error as Error).message}`);
  }
  const latest = await readCheckpoint({ url: options.url });
  let step;
  try {
    step = beginWitnessStep({ kept, latest, keys: options.keys, verify });
  } catch {
    return unusable(
      `the state ${options.state} does not hold a checkpoint; move it away to start over`,
    );
  }
  if (step.ok && step.prove) {
    const { from, to } = step.prove;
    const body = await get({ url: options.url }, `consistency?from=${from}&to=${to}`);
    let answer: unknown;
    try {
      answer = body ? parseStrictJson(text(body)) : null;
    } catch {
      answer = null;
    }
    step = completeWitnessStep(step, parseConsistencyAnswer(answer, from, to), nativeHashBytes);
  }
  if (!step.ok) {
    return {
      ok: false,
      outcome: step.failure,
      origin: null,
      previous_size: null,
      size: null,
      root: null,
      reason: step.reason,
      checkpoint: latest,
      ...(kept === null ? {} : { kept }),
    };
  }
  const { checkpoint, previous, outcome } = step;
  if (outcome !== 'unchanged') await writeAtomically(options.state, latest);
  const where = `${checkpoint.origin} at size ${checkpoint.size} (root ${rootHex(checkpoint.root)})`;
  const reason =
    outcome === 'first'
      ? `no state yet: trusting ${where} on first use; kept in ${options.state}`
      : outcome === 'unchanged'
        ? `unchanged: ${where}`
        : `consistent: ${checkpoint.origin} grew from ${previous!.size} to ${checkpoint.size} (root ${rootHex(checkpoint.root)}); kept in ${options.state}`;
  return {
    ok: true,
    outcome,
    origin: checkpoint.origin,
    previous_size: previous?.size ?? null,
    size: checkpoint.size,
    root: rootHex(checkpoint.root),
    reason,
  };
}

export interface LedgerResult extends LedgerAuditReport {
  root: string;
  receipts_per_second: number;
}

/** The whole-ledger audit of the newest checkpoint of a source. */
export async function auditSource(options: {
  source: LogSource;
  keys: Uint8Array[];
  onProgress?: (done: number, total: number) => void;
}): Promise<LedgerResult | { ok: false; outcome: 'bad_signature' | 'malformed'; reason: string }> {
  const note = await readCheckpoint(options.source);
  const verify = createNativeStrictVerify();
  const verified = verifySignedCheckpoint(note, options.keys, verify);
  if (!verified.ok)
    return { ok: false, outcome: verified.failure as 'bad_signature', reason: verified.reason };
  const started = performance.now();
  const report = await auditLedger({
    checkpoint: verified.checkpoint,
    keys: options.keys,
    readTile: readTileFrom(options.source),
    verify,
    hash: nativeHashBytes,
    onProgress: options.onProgress,
  });
  const seconds = (performance.now() - started) / 1000;
  return {
    ...report,
    root: rootHex(verified.checkpoint.root),
    receipts_per_second: seconds > 0 ? Math.round(report.size / seconds) : report.size,
  };
}
