import cluster from 'node:cluster';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { appPrivateKey } from '../github/app-private-key.js';
import { systemClock } from '../ports/clock.js';
import type { RateLimiter } from '../ports/rate-limiter.js';
import type { ReceiptSealer } from '../ports/receipt-sealer.js';
import type { Store } from '../ports/store.js';
import { createAesGcmBox, loadKeyEncryptionSecret } from '../secrets/key-encryption.js';
import { loadServerKey } from '../secrets/server-key.js';
import { establishLogOrigin, logOriginFor } from '../services/log-origin.js';
import { createStore } from '../storage/create-store.js';
import { secureDataDir } from '../storage/data-dir.js';
import { createLedgerRuntime, type LedgerRuntime } from './ledger-runtime.js';
import { startStep } from './startup-error.js';

/**
 * Opens the ledger as the service runs it: the data directory, the signing key and the
 * key-encryption secret, the store, the ledger's origin, the shared request budgets, then the
 * runtime over them, with the signing key made the history's current one (contract §9: a
 * retired or revoked key is refused here). Any failure is a StartupError saying why.
 *
 * `sealer`: a worker of several passes the one writer's (src/cluster); `workers`: with more
 * than one process, a key's hourly window is kept where every process sees it.
 */
export async function openLedgerRuntime(
  config: Config,
  logger: Logger,
  options: { sealer?: ReceiptSealer } = {},
): Promise<LedgerRuntime> {
  const opened = await startStep(async () => {
    secureDataDir(config.dataDir);
    const signing = loadServerKey({ pem: config.signingKeyPem, dataDir: config.dataDir });
    logger.info(
      { key_id: signing.key.keyId, source: signing.source, path: signing.path },
      'signing key ready',
    );
    const encryption = loadKeyEncryptionSecret({
      secret: config.keyEncryptionSecret,
      file: config.keyEncryptionSecretFile,
      dataDir: config.dataDir,
    });
    if (encryption.source === 'data-dir' && !cluster.isWorker) {
      logger.warn(
        { path: encryption.path },
        'encryption secret kept in the data directory: every backup of the directory contains it; set SVC_KEY_ENCRYPTION_SECRET_FILE (a mounted secret) or SVC_KEY_ENCRYPTION_SECRET in production',
      );
    }
    const store = await createStore(config, {
      // With private reads, a receiver learns only its own account's receipts.
      webhookScope: config.publicReads ? 'all' : 'owner',
      onJobQueueError: (error) => logger.error({ err: error }, 'job queue error'),
    });
    const logOrigin = await establishLogOrigin(store.tree, {
      setting: config.logOriginSetting,
      candidate: logOriginFor(config.logOrigin, signing.key.keyId),
    });
    const limiter = await openSharedLimiter(config, store);
    const privateKey = appPrivateKey(config.github);
    return {
      key: signing.key,
      box: createAesGcmBox(encryption.secret),
      store,
      logOrigin,
      limiter,
      privateKey,
    };
  });
  const { key, store, logOrigin, privateKey } = opened;
  const github = { ...config.github, privateKey };
  if (github.appId !== undefined && privateKey !== undefined) {
    logger.info({ app_id: github.appId, api: github.apiBaseUrl }, 'GitHub App enabled');
  } else if (config.webhookSecret) {
    logger.warn(
      'WEBHOOK_SECRET is set but APP_ID or PRIVATE_KEY is not: GitHub deliveries are acknowledged and not processed',
    );
  }
  const runtime = createLedgerRuntime({
    config: { ...config, github },
    store,
    serverKey: key,
    box: opened.box,
    clock: systemClock,
    logger,
    jobs: store.openJobQueue({ clock: systemClock, retentionMs: config.jobRetentionMs }),
    limiter: opened.limiter,
    logOrigin,
    sealer: options.sealer,
  });
  // An empty history adopts the ledger's receipts and takes this key.
  const history = await startStep(() => runtime.signingKeys.register(key));
  logger.info({ key_id: key.keyId, keys: history.length }, 'signing key is current');
  const head = await store.ledger.head();
  logger.info(
    { store: store.kind, data_dir: config.dataDir, sequence: head.sequence, origin: logOrigin },
    'ledger opened',
  );
  return runtime;
}

/**
 * A key's hourly window is one window however many processes serve it: in MongoDB for every
 * instance on it; on the embedded store with several workers, in one file they share
 * (imported only then, like the stores: storage/create-store.ts). Otherwise undefined: this
 * process's memory.
 */
async function openSharedLimiter(
  config: Config,
  store: Store,
): Promise<(RateLimiter & { close(): void }) | undefined> {
  if (store.openSharedRateLimiter) return store.openSharedRateLimiter(systemClock);
  if (config.workers <= 1) return undefined;
  const { SqliteWindowLimiter } = await import('../storage/sqlite/sqlite-rate-limiter.js');
  return new SqliteWindowLimiter(join(config.dataDir, 'limits.db'), systemClock);
}
