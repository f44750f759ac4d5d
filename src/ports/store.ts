import type { ApiKeyStore } from './api-key-store.js';
import type { JobQueue, JobQueueOptions } from './job-queue.js';
import type { LedgerQueries } from './ledger-queries.js';
import type { LedgerStore } from './ledger-store.js';
import type { LogTreeStore } from './log-tree.js';
import type { PolicyStore } from './policy-store.js';
import type { SigningKeyStore } from './signing-key-store.js';
import type { Clock } from './clock.js';
import type { RateLimiter } from './rate-limiter.js';
import type { SessionStore } from './session-store.js';
import type { WebhookStore } from './webhook-store.js';

/** Everything persistent, behind one handle so the composition root can open and close it. */
export interface Store {
  readonly kind: 'sqlite' | 'mongodb';
  readonly ledger: LedgerStore;
  readonly queries: LedgerQueries;
  /** The ledger's Merkle tree, kept by the ledger's appends. */
  readonly tree: LogTreeStore;
  /** The ledger's signing-key history; appends refuse a receipt signed by a key not current. */
  readonly signingKeys: SigningKeyStore;
  readonly apiKeys: ApiKeyStore;
  readonly policies: PolicyStore;
  /** Agent sessions (contract §12), kept by the ledger's appends. */
  readonly sessions: SessionStore;
  readonly webhooks: WebhookStore;
  /**
   * The store's durable job queue. Open one per process (or test); receipts' webhook
   * deliveries land in it in the append transaction.
   */
  openJobQueue(options: JobQueueOptions): JobQueue;
  /**
   * Rate-limit windows kept in the store, one window per client for every process and instance
   * on it. Absent on the embedded store, whose windows are per process (or, with several
   * workers, in a file of their own beside the ledger: runtime/open-ledger.ts).
   */
  openSharedRateLimiter?(clock: Clock): RateLimiter & { close(): void };
  /** Resolves when the backend answers a trivial query; rejects otherwise. */
  ping(): Promise<void>;
  /**
   * Resolves when the backend commits a write: `at`, the time of this probe (ISO 8601, from the
   * caller's clock), upserted into one record outside the ledger. Committed, not rolled back,
   * so a full or read-only disk fails it.
   */
  probeWrite(at: string): Promise<void>;
  close(): Promise<void>;
}
