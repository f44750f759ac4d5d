import cluster, { type Worker } from 'node:cluster';
import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import {
  createServer as createNetServer,
  type AddressInfo,
  type Server as NetServer,
  type Socket,
} from 'node:net';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { createApp } from './app.js';
import { appPrivateKey } from './github/app-private-key.js';
import { ConfigError, loadConfig, type Config } from './config/config.js';
import { SERVICE_VERSION } from './core/version.js';
import { createLogger } from './logger.js';
import { systemClock } from './ports/clock.js';
import { createAesGcmBox, loadKeyEncryptionSecret } from './secrets/key-encryption.js';
import { loadServerKey } from './secrets/server-key.js';
import { establishLogOrigin, logOriginFor } from './services/log-origin.js';
import { IpcSealer } from './cluster/ipc-sealer.js';
import { serveSeals } from './cluster/writer.js';
import {
  dispatchConnection,
  isReady,
  RoundRobin,
  serveHandedConnections,
} from './cluster/connections.js';
import type { SecretBox } from './ports/secret-box.js';
import type { ServerKey } from './ports/signer.js';
import type { Store } from './ports/store.js';
import { nativeHashBytes, nativeSha256Hex } from '@svc/verify/node';
import { LedgerSealer } from './services/receipt-sealer.js';
import { SigningKeyService } from './services/signing-keys.js';
import { TransparencyLog } from './services/transparency-log.js';
import { WitnessCosigning } from './services/witness-cosigning.js';
import { secureDataDir } from './storage/data-dir.js';
import type { RateLimiter } from './ports/rate-limiter.js';
import { createStore } from './storage/create-store.js';

// Request counts shared by the workers of one data directory.
const limitsFile = (config: Config) => join(config.dataDir, 'limits.db');

/** `host:port`, bracketing an IPv6 address. */
const hostPort = (host: string, port: number) =>
  host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;

/** Why listening failed, in words an operator can act on. */
function listenFailure(error: NodeJS.ErrnoException, host: string, port: number): string {
  const where = `cannot listen on ${hostPort(host, port)}`;
  switch (error.code) {
    case 'EADDRINUSE':
      return `${where}: the port is in use by another process (stop it, or set PORT)`;
    case 'EACCES':
      return `${where}: permission denied (ports below 1024 need privileges; set PORT)`;
    case 'EADDRNOTAVAIL':
      return `${where}: the address is not one of this machine's (set HOST)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${where}: HOST does not resolve`;
    default:
      return `${where}: ${error.message}`;
  }
}

/**
 * What every log line names: the process, and with several workers which one (the
 * supervisor is worker 0; workers count from 1 as node:cluster numbers them).
 */
function logBindings(config: Config): Record<string, number> {
  if (config.workers <= 1) return { pid: process.pid };
  return { pid: process.pid, worker: cluster.isPrimary ? 0 : cluster.worker!.id };
}

function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`svc: ${error.message}\n`);
    process.exit(1);
  }
}

interface OpenedLedger {
  store: Store;
  key: ServerKey;
  box: SecretBox;
  logOrigin: string;
}

/**
 * The data directory, the keys and the store, with the ledger's origin kept and the signing
 * key made the history's current one (contract §9: a retired or revoked key is refused here).
 * Exits with a message an operator can act on when any of it fails.
 */
async function openLedger(config: Config, logger: Logger): Promise<OpenedLedger> {
  try {
    secureDataDir(config.dataDir);
    const signing = loadServerKey({ pem: config.signingKeyPem, dataDir: config.dataDir });
    const key = signing.key;
    logger.info(
      { key_id: key.keyId, source: signing.source, path: signing.path },
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
    const box = createAesGcmBox(encryption.secret);
    const store = await createStore(config, {
      // With private reads, a receiver learns only its own account's receipts.
      webhookScope: config.publicReads ? 'all' : 'owner',
      onJobQueueError: (error) => logger.error({ err: error }, 'job queue error'),
    });
    const logOrigin = await establishLogOrigin(store.tree, {
      setting: config.logOriginSetting,
      candidate: logOriginFor(config.logOrigin, key.keyId),
    });
    // An empty history adopts the ledger's receipts and takes this key.
    const history = await new SigningKeyService({
      store: store.signingKeys,
      clock: systemClock,
      origin: logOrigin,
    }).register(key);
    logger.info({ key_id: key.keyId, keys: history.length }, 'signing key is current');
    return { store, key, box, logOrigin };
  } catch (error) {
    process.stderr.write(`svc: cannot start: ${(error as Error).message}\n`);
    process.exit(1);
  }
}

/**
 * The writer's duties besides appending: a checkpoint whenever the tree grew since the last
 * one, sent to the configured witnesses for a cosignature in the background (a witness that
 * fails is logged and tried again with the next checkpoint). Returns the stop function.
 */
function startCheckpoints(config: Config, logger: Logger, opened: OpenedLedger): () => void {
  const { store, key, logOrigin } = opened;
  const transparencyLog = new TransparencyLog({
    tree: store.tree,
    ledger: store.ledger,
    hash: nativeHashBytes,
    serverKey: key,
    clock: systemClock,
    origin: logOrigin,
    signingKeys: new SigningKeyService({
      store: store.signingKeys,
      clock: systemClock,
      origin: logOrigin,
    }),
  });
  const cosigning = new WitnessCosigning({
    log: transparencyLog,
    tree: store.tree,
    witnesses: config.witnesses,
    clock: systemClock,
  });
  const cosign = () =>
    cosigning.cosignLatest().then((outcomes) => {
      for (const o of outcomes) {
        if (o.outcome === 'failed') {
          logger.warn(
            { witness: o.witness, size: o.size, reason: o.reason },
            'witness did not cosign',
          );
        } else if (o.outcome === 'cosigned') {
          logger.debug({ witness: o.witness, size: o.size }, 'checkpoint cosigned');
        }
      }
    });
  const timer = setInterval(() => {
    transparencyLog.makeCheckpoint().then(
      () =>
        cosign().catch((error: unknown) =>
          logger.error({ err: error }, 'cannot ask the witnesses to cosign'),
        ),
      (error: unknown) => logger.error({ err: error }, 'cannot make a checkpoint'),
    );
  }, config.checkpointIntervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** Opens the shared window file once, so that the processes do not race to create it. */
async function createSharedLimits(config: Config, opened: OpenedLedger): Promise<void> {
  try {
    if (!opened.store.openSharedRateLimiter) {
      const { SqliteWindowLimiter } = await import('./storage/sqlite/sqlite-rate-limiter.js');
      new SqliteWindowLimiter(limitsFile(config), systemClock).close();
    }
  } catch (error) {
    process.stderr.write(`svc: cannot start: ${(error as Error).message}\n`);
    process.exit(1);
  }
}

/**
 * With SVC_WORKERS=N above 1 this process is the ledger's one writer, serves HTTP as one of
 * the N, and supervises the N - 1 others. It holds the port and hands each connection in turn
 * to itself or to a worker. A worker does everything a request needs (parsing,
 * authentication, rate limits, evaluation, replay, reads); each evaluated draft comes here to
 * be signed at the ledger's head and appended, so the appends of every process meet in one
 * group commit. It also makes the checkpoints, replaces a worker that dies, and on SIGTERM or
 * SIGINT stops listening and stops them all, serving their appends until the last request in
 * flight is answered. Returns the start of the workers (once the port is held), their stop,
 * and the hand-out of a connection.
 */
function supervise(
  config: Config,
  logger: Logger,
  opened: OpenedLedger,
  local: Server,
): { start: () => void; stopWorkers: () => Promise<void>; dispatch: (socket: Socket) => void } {
  const sealer = new LedgerSealer({
    ledger: opened.store.ledger,
    serverKey: opened.key,
    logOrigin: opened.logOrigin,
    sha256Hex: nativeSha256Hex,
  });
  // JSON for the drafts crossing to the writer: half the CPU of structured clone for these
  // plain objects (docs/BENCHMARKS.md, "One writer for several workers").
  cluster.setupPrimary({ serialization: 'json' });
  const turns = new RoundRobin<Worker>();
  let stopping = false;
  const fork = () => {
    const started = Date.now();
    const worker = cluster.fork();
    serveSeals(worker, sealer, logger);
    worker.on('message', (message: unknown) => {
      if (isReady(message) && !stopping) turns.add(worker);
    });
    worker.once('exit', (code, signal) => {
      turns.remove(worker);
      if (stopping) return;
      // A worker that cannot even start would otherwise be restarted in a tight loop.
      const delay = Date.now() - started < 5_000 ? 1_000 : 0;
      logger.error(
        { worker_pid: worker.process.pid, code, signal },
        'worker died; starting another',
      );
      setTimeout(fork, delay);
    });
  };
  const start = () => {
    for (let i = 1; i < config.workers; i++) fork();
  };
  const stopWorkers = () => {
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((w) => w !== undefined);
    for (const worker of workers) turns.remove(worker);
    // Each worker drains as a single process does: requests in flight finish (their appends
    // are still served here), then it exits.
    return Promise.all(
      workers.map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.isDead()) return resolve();
            worker.once('exit', () => resolve());
            worker.process.kill('SIGTERM');
          }),
      ),
    ).then(() => undefined);
  };
  return {
    start,
    stopWorkers,
    dispatch: (socket) => dispatchConnection(socket, turns.next(), local, turns),
  };
}

async function main(): Promise<void> {
  const config = configOrExit();
  const logger = createLogger(config.logLevel, logBindings(config));
  const supervising = config.workers > 1 && cluster.isPrimary;
  const opened = await openLedger(config, logger);
  if (supervising) await createSharedLimits(config, opened);
  const { store, key, box, logOrigin } = opened;
  let limiter: (RateLimiter & { close(): void }) | undefined;
  try {
    // A key's hourly window is one window however many processes serve it: in MongoDB for
    // every instance on it; on the embedded store, in one file the workers share (imported only
    // then, like the stores: storage/create-store.ts).
    if (store.openSharedRateLimiter) {
      limiter = store.openSharedRateLimiter(systemClock);
    } else if (config.workers > 1) {
      const { SqliteWindowLimiter } = await import('./storage/sqlite/sqlite-rate-limiter.js');
      limiter = new SqliteWindowLimiter(limitsFile(config), systemClock);
    }
  } catch (error) {
    process.stderr.write(`svc: cannot start: ${(error as Error).message}\n`);
    process.exit(1);
  }
  const head = await store.ledger.head();
  logger.info(
    { store: store.kind, data_dir: config.dataDir, sequence: head.sequence, origin: logOrigin },
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
  const jobs = store.openJobQueue({ clock: systemClock, retentionMs: config.jobRetentionMs });
  const app = createApp({
    config: { ...config, github },
    store,
    serverKey: key,
    box,
    clock: systemClock,
    logger,
    jobs,
    limiter,
    logOrigin,
    // A worker of several hands its drafts to the one writer (supervise above).
    sealer: cluster.isWorker ? new IpcSealer(process) : undefined,
  });
  // The writer makes the checkpoints: this process, or with several workers the supervisor.
  const stopCheckpoints = cluster.isWorker ? () => {} : startCheckpoints(config, logger, opened);
  // Answers started before a shutdown, until they are sent (see shutdown below).
  const answering = new Set<ServerResponse>();
  // Open connections, however they came: a worker's were accepted by the supervisor.
  const connections = new Set<Socket>();
  let stopping = false;
  const server = createHttpServer(config, (req, res) => {
    // During a shutdown every answer closes its connection, so that the drain ends with the
    // last answer instead of waiting for kept-alive connections to time out.
    if (stopping) res.setHeader('Connection', 'close');
    else {
      answering.add(res);
      res.once('close', () => answering.delete(res));
    }
    app(req, res);
  });
  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  const started = () => {
    logger.info(
      { url: config.baseUrl, host: config.host, port: boundPort, version: SERVICE_VERSION },
      'svc listening',
    );
    // Deliveries left pending by an earlier run (or another process) are picked up here.
    jobs.start();
  };
  let boundPort = config.port;
  let supervisor: ReturnType<typeof supervise> | undefined;
  // The socket that accepts: the HTTP server's own, or with several workers the supervisor's,
  // which hands connections out; a worker has none.
  let listener: NetServer | undefined;
  if (cluster.isWorker) {
    serveHandedConnections(process, server);
    started();
  } else {
    if (supervising) {
      supervisor = supervise(config, logger, opened, server);
      logger.info(
        { workers: config.workers, sequence: head.sequence, role: 'ledger writer' },
        'svc workers starting',
      );
      listener = createNetServer({ pauseOnConnect: true }, supervisor.dispatch);
    } else listener = server;
    listener.on('error', (error: NodeJS.ErrnoException) => {
      process.stderr.write(`svc: ${listenFailure(error, config.host, config.port)}\n`);
      process.exit(1);
    });
    listener.listen(config.port, config.host, () => {
      // The bound port, which differs from the configured one for PORT=0.
      boundPort = (listener!.address() as AddressInfo).port;
      if (listener !== server) server.emit('listening');
      started();
      // The workers once the port is held: a port that cannot be had starts none.
      supervisor?.start();
    });
  }

  const drained = () =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (connections.size === 0) resolve();
        else setTimeout(check, 20);
      };
      check();
    });
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    stopCheckpoints();
    logger.info({ signal }, supervisor ? 'stopping workers' : 'shutting down');
    for (const res of answering) if (!res.headersSent) res.setHeader('Connection', 'close');
    // Requests in flight finish (and their receipts commit), and deliveries being sent
    // finish, before the store closes. Closing stops accepting at once and closes the
    // connections that are idle (no request begun on them); the others end with their answer.
    listener?.close();
    server.close();
    // A client still sending its request is given the request timeout once more, then cut
    // off, so that a slow client cannot hold the drain open.
    const cutOff = setTimeout(() => server.closeAllConnections(), config.httpTimeouts.requestMs);
    // The workers' appends are served here until the last of them has exited.
    void Promise.all([drained(), jobs.stop(), supervisor?.stopWorkers()])
      .then(() => clearTimeout(cutOff))
      .then(() => store.close())
      .then(() => limiter?.close())
      .then(() => process.exit(0));
    // Longer for the supervisor than a worker's own limit, so that no worker is cut off
    // mid-drain.
    const limitMs = config.httpTimeouts.requestMs + (supervisor ? 15_000 : 10_000);
    setTimeout(() => process.exit(1), limitMs).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/**
 * The HTTP server, with timeouts that cut off clients sending their request slowly
 * (slowloris: headers or a body trickled a byte at a time) within seconds; node's defaults
 * allow 60 s for headers and 5 minutes for a request, checked every 30 s.
 */
function createHttpServer(config: Config, listener: RequestListener): Server {
  const { headersMs, requestMs, keepAliveMs } = config.httpTimeouts;
  return createServer(
    {
      headersTimeout: headersMs,
      requestTimeout: requestMs,
      keepAliveTimeout: keepAliveMs,
      // How often the two limits above are checked; their precision.
      connectionsCheckingInterval: Math.min(1_000, Math.ceil(headersMs / 4)),
    },
    listener,
  );
}

void main();
