import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import { appPrivateKey } from './github/github-app.js';
import { ConfigError, loadConfig, type Config } from './config/config.js';
import { SERVICE_VERSION } from './core/version.js';
import { createLogger } from './logger.js';
import { systemClock } from './ports/clock.js';
import { createAesGcmBox, loadKeyEncryptionSecret } from './secrets/key-encryption.js';
import { loadServerKey } from './secrets/server-key.js';
import { secureDataDir } from './storage/data-dir.js';
import { createStore } from './storage/create-store.js';

function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`svc: ${error.message}\n`);
    process.exit(1);
  }
}

async function main(): Promise<void> {
  const config = configOrExit();
  const logger = createLogger(config.logLevel);
  let store, key, box;
  try {
    secureDataDir(config.dataDir);
    const signing = loadServerKey({ pem: config.signingKeyPem, dataDir: config.dataDir });
    key = signing.key;
    logger.info(
      { key_id: key.keyId, source: signing.source, path: signing.path },
      'signing key ready',
    );
    const encryption = loadKeyEncryptionSecret({
      secret: config.keyEncryptionSecret,
      file: config.keyEncryptionSecretFile,
      dataDir: config.dataDir,
    });
    if (encryption.source === 'data-dir') {
      logger.warn(
        { path: encryption.path },
        'encryption secret kept in the data directory: every backup of the directory contains it; set SVC_KEY_ENCRYPTION_SECRET_FILE (a mounted secret) or SVC_KEY_ENCRYPTION_SECRET in production',
      );
    }
    box = createAesGcmBox(encryption.secret);
    store = await createStore(config, {
      // With private reads, a receiver learns only its own account's receipts.
      webhookScope: config.publicReads ? 'all' : 'owner',
      onJobQueueError: (error) => logger.error({ err: error }, 'job queue error'),
    });
  } catch (error) {
    process.stderr.write(`svc: cannot start: ${(error as Error).message}\n`);
    process.exit(1);
  }
  const head = await store.ledger.head();
  logger.info(
    { store: store.kind, data_dir: config.dataDir, sequence: head.sequence },
    'ledger opened',
  );

  let privateKey: string | undefined;
  try {
    privateKey = appPrivateKey(config.github);
  } catch (error) {
    process.stderr.write(`svc: cannot start: ${(error as Error).message}\n`);
    process.exit(1);
  }
  const github = { ...config.github, privateKey };
  if (github.appId !== undefined && privateKey !== undefined) {
    logger.info({ app_id: github.appId, api: github.apiBaseUrl }, 'GitHub App enabled');
  } else if (config.webhookSecret) {
    logger.warn(
      'WEBHOOK_SECRET is set but APP_ID or PRIVATE_KEY is not: GitHub deliveries are acknowledged and not processed',
    );
  }
  const jobs = store.openJobQueue({ clock: systemClock });
  const app = createApp({
    config: { ...config, github },
    store,
    serverKey: key,
    box,
    clock: systemClock,
    logger,
    jobs,
  });
  const server = app.listen(config.port, config.host, () => {
    // The bound port, which differs from the configured one for PORT=0.
    const { port } = server.address() as AddressInfo;
    logger.info(
      { url: config.baseUrl, host: config.host, port, version: SERVICE_VERSION },
      'svc listening',
    );
    // Deliveries left pending by an earlier run (or another process) are picked up here.
    jobs.start();
  });
  server.on('error', (error) => {
    logger.fatal({ err: error }, 'cannot listen');
    process.exit(1);
  });

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // Requests in flight finish (and their receipts commit), and deliveries being sent
    // finish, before the store closes.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    void Promise.all([closed, jobs.stop()])
      .then(() => store.close())
      .then(() => process.exit(0));
    server.closeIdleConnections();
    setTimeout(() => process.exit(1), 10_000).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

void main();
