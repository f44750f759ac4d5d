import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { chainReceipt } from '../src/core/receipt.js';
import { loadServerKey } from '../src/secrets/server-key.js';
import { openSqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import type { SeedChunk, SeedWorkerData } from './seed-worker.js';

export interface SeedResult {
  /** Receipts in the ledger before and after seeding. */
  from: number;
  to: number;
  appended: number;
  /** Wall time of the whole seeding. */
  seconds: number;
  /** CPU time evaluating and signing, in worker threads, overlapped with the appends. */
  sign_seconds: number;
  /** Time the main thread waited on LedgerStore.append, commits included. */
  append_seconds: number;
  per_second: number;
}

const DAY_MS = 86_400_000;
const HISTORY_MS = 30 * DAY_MS;
const CHUNK = 250;

/**
 * Grows the ledger in `dataDir` to `target` receipts the way the service writes them: real
 * claims evaluated by the core, signed with the data directory's server key (so /v1/verify
 * accepts them), chained and appended through the LedgerStore port.
 *
 * Seeded receipts are spread over the 30 days before the run (or from the head's time, when
 * the ledger already holds later receipts), keeping issued_at in chain order.
 */
export async function seedLedger(
  dataDir: string,
  target: number,
  onProgress?: (done: number, total: number) => void,
): Promise<SeedResult> {
  const started = performance.now();
  // Creates the key file when the service has not run in this directory yet, so the
  // service started afterwards signs with the same key.
  loadServerKey({ dataDir });
  const result = await appendUntil(dataDir, target, onProgress);
  const seconds = (performance.now() - started) / 1000;
  return {
    ...result,
    seconds: round(seconds),
    per_second: Math.round(result.appended / Math.max(seconds, 1e-9)),
  };
}

async function appendUntil(
  dataDir: string,
  target: number,
  onProgress?: (done: number, total: number) => void,
): Promise<Pick<SeedResult, 'from' | 'to' | 'appended' | 'sign_seconds' | 'append_seconds'>> {
  const store = openSqliteStore(join(dataDir, 'ledger.db'));
  const workers: Worker[] = [];
  try {
    const from = (await store.ledger.head()).sequence;
    if (from >= target) {
      return { from, to: from, appended: 0, sign_seconds: 0, append_seconds: 0 };
    }
    const end = Date.now();
    const [last] = from > 0 ? await store.ledger.list(from - 1, 1) : [];
    const start = Math.max(end - HISTORY_MS, last ? Date.parse(last.receipt.issued_at) + 1 : 0);
    const workerData: SeedWorkerData = {
      dataDir,
      from,
      start,
      step: (end - start) / (target - from),
    };
    // Each worker answers its requests in order; each waiting promise takes the next answer.
    const queues = Array.from(
      { length: Math.max(1, availableParallelism()) },
      () => [] as { resolve: (chunk: SeedChunk) => void; reject: (error: unknown) => void }[],
    );
    for (const queue of queues) {
      const worker = new Worker(new URL('./seed-worker.js', import.meta.url), { workerData });
      workers.push(worker);
      const failed = (error: unknown) => {
        for (const waiting of queue.splice(0)) waiting.reject(error);
      };
      worker.on('message', (chunk: SeedChunk) => queue.shift()?.resolve(chunk));
      worker.on('error', failed);
      worker.on('exit', (code) => failed(new Error(`seed worker exited with code ${code}`)));
    }
    const pending: Promise<SeedChunk>[] = [];
    let requested = 0;
    const request = (at: number) => {
      if (at >= target) return;
      const index = requested++ % workers.length;
      pending.push(new Promise((resolve, reject) => queues[index]!.push({ resolve, reject })));
      workers[index]!.postMessage({ from: at, to: Math.min(at + CHUNK, target) });
    };

    let signing = 0;
    let appending = 0;
    // Two chunks per worker in flight keep every worker busy while this thread appends.
    let next = from;
    for (; next < from + 2 * workers.length * CHUNK; next += CHUNK) request(next);
    for (let at = from; at < target; at += CHUNK) {
      const chunk = await pending.shift()!;
      request(next);
      next += CHUNK;
      signing += chunk.busy_ms;
      const t0 = performance.now();
      // A chunk's appends are issued together, as concurrent requests would be: a store that
      // commits in groups may then sync once per group. Each still goes through append().
      const results = await Promise.all(
        chunk.items.map((item) =>
          store.ledger.append({
            scope: 'bench',
            claimId: item.claim.claim_id,
            build: (head) => ({
              entry: {
                receipt: chainReceipt(item.signed, head, item.hash),
                claim: item.claim,
                evaluation: item.evaluation,
                apiKeyId: `bench-key-${head.sequence % 8}`,
              },
            }),
          }),
        ),
      );
      const existed = results.findIndex((result) => result.status !== 'appended');
      if (existed >= 0) {
        throw new Error(
          `seed claim ${chunk.items[existed]!.claim.claim_id} was already in the ledger`,
        );
      }
      appending += performance.now() - t0;
      const done = Math.min(at + CHUNK, target) - from;
      if (onProgress && done % 10_000 === 0) onProgress(done, target - from);
    }
    const to = (await store.ledger.head()).sequence;
    return {
      from,
      to,
      appended: to - from,
      sign_seconds: round(signing / 1000),
      append_seconds: round(appending / 1000),
    };
  } finally {
    await Promise.all(workers.map((worker) => worker.terminate()));
    await store.close();
  }
}

const round = (n: number) => Number(n.toFixed(2));
