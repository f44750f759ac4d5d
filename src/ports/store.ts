import type { ApiKeyStore } from './api-key-store.js';
import type { LedgerQueries } from './ledger-queries.js';
import type { LedgerStore } from './ledger-store.js';
import type { PolicyStore } from './policy-store.js';

/** Everything persistent, behind one handle so the composition root can open and close it. */
export interface Store {
  readonly kind: 'sqlite' | 'mongodb';
  readonly ledger: LedgerStore;
  readonly queries: LedgerQueries;
  readonly apiKeys: ApiKeyStore;
  readonly policies: PolicyStore;
  /** Resolves when the backend answers a trivial query; rejects otherwise. */
  ping(): Promise<void>;
  /** Resolves when the backend accepts a write (made and undone outside the ledger). */
  probeWrite(): Promise<void>;
  close(): Promise<void>;
}
