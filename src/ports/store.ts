import type { ApiKeyStore } from './api-key-store.js';
import type { LedgerStore } from './ledger-store.js';

/** Everything persistent, behind one handle so the composition root can open and close it. */
export interface Store {
  readonly kind: 'sqlite' | 'mongodb';
  readonly ledger: LedgerStore;
  readonly apiKeys: ApiKeyStore;
  /** Resolves when the backend answers a trivial query; rejects otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
