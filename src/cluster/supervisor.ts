import cluster, { type Worker } from 'node:cluster';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { Clock } from '../ports/clock.js';
import type { ReceiptSealer } from '../ports/receipt-sealer.js';
import { dispatchConnection, isReady, RoundRobin } from './connections.js';
import { serveSeals } from './writer.js';

export interface Supervisor {
  /** Forks the workers; called once the port is held, so a port that cannot be had starts none. */
  start(): void;
  /** Stops every worker; each drains as a single process does. */
  stopWorkers(): Promise<void>;
  /** Hands an accepted connection to the next ready process (this one included). */
  dispatch(socket: Socket): void;
}

/**
 * With SVC_WORKERS=N above 1 this process is the ledger's one writer, serves HTTP as one of
 * the N, and supervises the N - 1 others. It holds the port and hands each connection in turn
 * to itself or to a worker. A worker does everything a request needs (parsing,
 * authentication, rate limits, evaluation, replay, reads); each evaluated draft comes here to
 * be signed at the ledger's head by `sealer` and appended, so the appends of every process
 * meet in one group commit. It also replaces a worker that dies, and on shutdown stops them
 * all, serving their appends until the last request in flight is answered.
 */
export function supervise(deps: {
  workers: number;
  sealer: ReceiptSealer;
  logger: Logger;
  clock: Clock;
  /** This process's own HTTP server, which serves its turns. */
  local: Server;
}): Supervisor {
  const { logger } = deps;
  // JSON for the drafts crossing to the writer: half the CPU of structured clone for these
  // plain objects (docs/BENCHMARKS.md, "One writer for several workers").
  cluster.setupPrimary({ serialization: 'json' });
  const turns = new RoundRobin<Worker>();
  let stopping = false;
  const fork = () => {
    const started = deps.clock.now();
    const worker = cluster.fork();
    serveSeals(worker, deps.sealer, logger);
    worker.on('message', (message: unknown) => {
      if (isReady(message) && !stopping) turns.add(worker);
    });
    worker.once('exit', (code, signal) => {
      turns.remove(worker);
      if (stopping) return;
      // A worker that cannot even start would otherwise be restarted in a tight loop.
      const delay = deps.clock.now() - started < 5_000 ? 1_000 : 0;
      logger.error(
        { worker_pid: worker.process.pid, code, signal },
        'worker died; starting another',
      );
      setTimeout(fork, delay);
    });
  };
  return {
    start: () => {
      for (let i = 1; i < deps.workers; i++) fork();
    },
    stopWorkers: () => {
      stopping = true;
      const workers = Object.values(cluster.workers ?? {}).filter((w) => w !== undefined);
      for (const worker of workers) turns.remove(worker);
      // Each worker drains as a single process does: requests in flight finish (their
      // appends are still served here), then it exits.
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
    },
    dispatch: (socket) => dispatchConnection(socket, turns.next(), deps.local, turns),
  };
}
