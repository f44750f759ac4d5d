import cluster from 'node:cluster';
import { createServer as createNetServer, type AddressInfo, type Server } from 'node:net';
import { createApp } from './app.js';
import { createHttpServer, listenFailure } from './api/http-server.js';
import { IpcSealer } from './cluster/ipc-sealer.js';
import { serveHandedConnections } from './cluster/connections.js';
import { supervise, type Supervisor } from './cluster/supervisor.js';
import { ConfigError, loadConfig, type Config } from './config/config.js';
import { SERVICE_VERSION } from './core/version.js';
import { createLogger } from './logger.js';
import { openLedgerRuntime } from './runtime/open-ledger.js';
import { StartupError } from './runtime/startup-error.js';

/**
 * What every log line names: the process, and with several workers which one (the
 * supervisor is worker 0; workers count from 1 as node:cluster numbers them).
 */
function logBindings(config: Config): Record<string, number> {
  if (config.workers <= 1) return { pid: process.pid };
  return { pid: process.pid, worker: cluster.isPrimary ? 0 : cluster.worker!.id };
}

/** The process: config → ledger runtime → HTTP → listen, and a drain on SIGTERM or SIGINT. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, logBindings(config));
  const supervising = config.workers > 1 && cluster.isPrimary;
  // A worker of several hands its drafts to the one writer (the supervisor).
  const runtime = await openLedgerRuntime(config, logger, {
    sealer: cluster.isWorker ? new IpcSealer(process) : undefined,
  });
  const http = createHttpServer(config.httpTimeouts, createApp(runtime));
  let boundPort = config.port;
  const started = () => {
    logger.info(
      { url: config.baseUrl, host: config.host, port: boundPort, version: SERVICE_VERSION },
      'svc listening',
    );
    // The writer (this process, or with several workers the supervisor) runs its duties.
    runtime.start({ writer: !cluster.isWorker });
  };
  let supervisor: Supervisor | undefined;
  // The socket that accepts: the HTTP server's own, or with several workers the supervisor's,
  // which hands connections out; a worker has none.
  let listener: Server | undefined;
  if (cluster.isWorker) {
    serveHandedConnections(process, http.server);
    started();
  } else {
    if (supervising) {
      supervisor = supervise({
        workers: config.workers,
        sealer: runtime.sealer,
        logger,
        clock: runtime.clock,
        local: http.server,
      });
      const { sequence } = await runtime.store.ledger.head();
      logger.info(
        { workers: config.workers, sequence, role: 'ledger writer' },
        'svc workers starting',
      );
      listener = createNetServer({ pauseOnConnect: true }, supervisor.dispatch);
    } else listener = http.server;
    listener.on('error', (error: NodeJS.ErrnoException) => {
      exitCannotStart(new StartupError(listenFailure(error, config.host, config.port)));
    });
    listener.listen(config.port, config.host, () => {
      // The bound port, which differs from the configured one for PORT=0.
      boundPort = (listener!.address() as AddressInfo).port;
      if (listener !== http.server) http.server.emit('listening');
      started();
      supervisor?.start();
    });
  }

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, supervisor ? 'stopping workers' : 'shutting down');
    // Requests in flight finish (and their receipts commit), and the workers' appends are
    // served here until the last of them has exited; then the jobs being run finish and the
    // store closes.
    if (listener !== http.server) listener?.close();
    void Promise.all([http.drain(), supervisor?.stopWorkers()])
      .then(() => runtime.close())
      .then(() => process.exit(0));
    // Longer for the supervisor than a worker's own limit, so that no worker is cut off
    // mid-drain.
    const limitMs = config.httpTimeouts.requestMs + (supervisor ? 15_000 : 10_000);
    setTimeout(() => process.exit(1), limitMs).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/** The one place that says why svc cannot start: a line an operator can act on, exit 1. */
function exitCannotStart(error: unknown): never {
  if (!(error instanceof ConfigError || error instanceof StartupError)) throw error;
  process.stderr.write(`svc: ${error.message}\n`);
  process.exit(1);
}

main().catch(exitCannotStart);
