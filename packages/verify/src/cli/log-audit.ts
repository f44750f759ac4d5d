import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseStrictJson } from '../strict-json.js';
import { auditLedger, type LedgerAuditReport } from '../tlog/ledger-audit.js';
import { rootHex } from '../tlog/note.js';
import { tilePath, type Tile } from '../tlog/tiles.js';
import {
  verifySignedCheckpoint,
  witnessLog,
  type LogKey,
  type WitnessReport,
} from '../tlog/witness.js';
import { createNativeStrictVerify } from '../node/native-ed25519.js';
import { nativeHashBytes } from '../node/native-hash.js';
import { writeAtomically } from '../node/atomic-file.js';

// The log commands of svc-verify: `witness` and `ledger`. The checks are the portable ones
// of tlog/; here are only the reading of URLs and files and the printing. Node's own Ed25519
// and SHA-256 are injected for speed, made to answer exactly as the portable strict verifier
// (node/native-ed25519.ts).

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

/** The newest signed checkpoint an svc serves, as text (unverified). */
export const fetchCheckpoint = (url: string): Promise<string> => readCheckpoint({ url });

export type WitnessResult = WitnessReport;

/** One witness run: read the state, fetch, verify, prove, replace the state. */
export async function witness(options: {
  state: string;
  url: string;
  /** The pinned key, or the keys of the history followed from the pin. */
  keys: LogKey[];
}): Promise<WitnessResult & { note: string }> {
  let kept: string | null = null;
  try {
    kept = await readFile(options.state, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      return unusable(`cannot read the state ${options.state}: ${(error as Error).message}`);
  }
  const latest = await readCheckpoint({ url: options.url });
  let result: WitnessResult;
  try {
    result = await witnessLog({
      kept,
      latest,
      keys: options.keys,
      stateName: options.state,
      verify: createNativeStrictVerify(),
      hash: nativeHashBytes,
      async consistency(from, to) {
        const body = await get({ url: options.url }, `consistency?from=${from}&to=${to}`);
        try {
          return body ? parseStrictJson(text(body)) : null;
        } catch {
          return null;
        }
      },
    });
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return unusable(
      `the state ${options.state} does not hold a checkpoint; move it away to start over`,
    );
  }
  if (result.ok && result.outcome !== 'unchanged') await writeAtomically(options.state, latest);
  // The note fetched, cosignatures included, for a caller that judges its witnesses.
  return { ...result, note: latest };
}

export interface LedgerResult extends LedgerAuditReport {
  root: string;
  receipts_per_second: number;
}

/** The whole-ledger audit of the newest checkpoint of a source. */
export async function auditSource(options: {
  source: LogSource;
  /** The pinned key, or the keys of the history followed from the pin. */
  keys: LogKey[];
  onProgress?: (done: number, total: number) => void;
}): Promise<
  | (LedgerResult & { note: string })
  | { ok: false; outcome: 'bad_signature' | 'malformed'; reason: string }
> {
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
    note,
    root: rootHex(verified.checkpoint.root),
    receipts_per_second: seconds > 0 ? Math.round(report.size / seconds) : report.size,
  };
}
