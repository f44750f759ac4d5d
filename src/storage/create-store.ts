import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/config.js';
import type { Store } from '../ports/store.js';
import { MissingLedgerError } from './missing-ledger.js';

export type StoreConfig = Pick<Config, 'dataDir' | 'mongodbUri' | 'mongodbDatabase'> &
  Partial<Pick<Config, 'agentApprovalTtlMs'>>;

/**
 * Opens the configured store: MongoDB when MONGODB_URI is set, else the embedded SQLite file
 * in the data directory. Each backend is imported only when chosen, so the embedded mode
 * never loads the MongoDB driver or agenda, and the MongoDB mode never loads better-sqlite3.
 */
export async function createStore(
  config: StoreConfig,
  options: {
    /** Which receivers get a receipt: every one ('all', default) or its account's ('owner'). */
    webhookScope?: 'all' | 'owner';
    onJobQueueError?: (error: unknown) => void;
    /**
     * Open only a store that already holds a ledger (one the service has started on), else
     * throw MissingLedgerError and create nothing. The service itself creates its store.
     */
    mustExist?: boolean;
  } = {},
): Promise<Store> {
  if (config.mongodbUri !== undefined) {
    const { openMongoStore } = await import('./mongo/mongo-store.js');
    return openMongoStore(config.mongodbUri, {
      database: config.mongodbDatabase,
      webhookScope: options.webhookScope,
      onJobQueueError: options.onJobQueueError,
      mustExist: options.mustExist,
      approvalTtlMs: config.agentApprovalTtlMs,
    });
  }
  const file = join(config.dataDir, 'ledger.db');
  if (options.mustExist && !existsSync(file)) {
    throw new MissingLedgerError(
      `no ledger in ${config.dataDir} (it has no ledger.db): the service creates it when it first starts; set SVC_DATA_DIR (or MONGODB_URI) to the store the service uses`,
    );
  }
  const { openSqliteStore } = await import('./sqlite/sqlite-store.js');
  return openSqliteStore(file, {
    webhookScope: options.webhookScope,
    approvalTtlMs: config.agentApprovalTtlMs,
  });
}
