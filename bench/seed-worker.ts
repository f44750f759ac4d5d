import { parentPort, workerData } from 'node:worker_threads';
import { monotonicFactory } from 'ulid';
import { receiptHash } from '@svc/verify';
import type { ClaimInput } from '../src/core/claim-schema.js';
import { evaluateClaim } from '../src/core/evaluation.js';
import { resolvePolicy } from '../src/core/policy-config.js';
import { buildReceiptCore, signReceipt, type UnchainedReceipt } from '../src/core/receipt.js';
import type { LedgerEntry } from '../src/ports/ledger-store.js';
import { loadServerKey } from '../src/secrets/server-key.js';
import { benchClaim } from './claims.js';

export interface SeedWorkerData {
  dataDir: string;
  /** issued_at of index i is `start + (i - from) * step` milliseconds. */
  from: number;
  start: number;
  step: number;
}

export interface SignedItem {
  claim: ClaimInput;
  evaluation: LedgerEntry['evaluation'];
  signed: UnchainedReceipt;
  hash: string;
}

export interface SeedChunk {
  items: SignedItem[];
  busy_ms: number;
}

// Evaluating and signing is the CPU half of seeding, the append (a synced commit) the I/O
// half: this thread does the first while the main thread waits on the second.
if (parentPort) {
  const port = parentPort;
  const data = workerData as SeedWorkerData;
  const { key } = loadServerKey({ dataDir: data.dataDir });
  const nextUlid = monotonicFactory();
  port.on('message', ({ from, to }: { from: number; to: number }) => {
    const started = performance.now();
    const items: SignedItem[] = [];
    for (let i = from; i < to; i++) {
      const claim = benchClaim(i, `seed-${i}`);
      const evaluation = evaluateClaim(claim, resolvePolicy(claim.policyConfig));
      const issuedAt = Math.floor(data.start + (i - data.from) * data.step);
      const signed = signReceipt(
        buildReceiptCore({
          receiptId: `dr-${nextUlid(issuedAt)}`,
          issuedAt: new Date(issuedAt).toISOString(),
          claim,
          evaluation,
        }),
        key,
      );
      items.push({
        claim,
        evaluation: {
          policy: evaluation.policy,
          replay: evaluation.replay,
          config: evaluation.config,
        },
        signed,
        hash: receiptHash(signed),
      });
    }
    const chunk: SeedChunk = { items, busy_ms: performance.now() - started };
    port.postMessage(chunk);
  });
}
