import type { Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { ReceiptSealer } from '../ports/receipt-sealer.js';
import { isSealAsk, sealAnswer, type SealAnswer } from './seal-messages.js';

/**
 * Serves a worker's seal requests with the writer's own sealer. Requests from every worker
 * meet in one store queue, so they commit in groups as large as the load makes them.
 */
export function serveSeals(worker: Worker, sealer: ReceiptSealer, logger: Logger): void {
  const answer = (message: SealAnswer) => {
    // A worker that died meanwhile gets no answer; its client saw the connection drop.
    if (worker.isConnected()) worker.send(message);
  };
  worker.on('message', (message: unknown) => {
    if (!isSealAsk(message)) return;
    sealer
      .seal(message.request)
      .then((result) => sealAnswer(message.id, result))
      .then(answer, (error: unknown) => {
        logger.error({ err: error, worker_pid: worker.process.pid }, 'cannot append a receipt');
        answer({ type: 'svc:sealed', id: message.id, error: (error as Error).message });
      });
  });
}
