import type { Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { isSvcError } from '../core/errors.js';
import type { ReceiptSealer } from '../ports/receipt-sealer.js';
import { isSealAsk, perTurn, sealAnswer, type SealAnswer } from './seal-messages.js';

/**
 * Serves a worker's seal requests with the writer's own sealer. Requests from every worker
 * meet in one store queue, so they commit in groups as large as the load makes them; the
 * answers of one group go back to each worker in one message.
 */
export function serveSeals(worker: Worker, sealer: ReceiptSealer, logger: Logger): void {
  const answer = perTurn<SealAnswer>((answers) => {
    // A worker that died meanwhile gets no answer; its client saw the connection drop. It
    // can die after the check, so the send's callback takes the EPIPE: without a callback the
    // Worker emits it as an 'error' event, which would end the writer.
    if (!worker.isConnected()) return;
    worker.send({ type: 'svc:sealed', answers }, undefined, (error: Error | null) => {
      if (error)
        logger.info(
          { worker_pid: worker.process.pid, err_code: (error as NodeJS.ErrnoException).code },
          'a worker exited before its answers were sent',
        );
    });
  });
  worker.on('message', (message: unknown) => {
    if (!isSealAsk(message)) return;
    for (const { id, request } of message.asks) {
      sealer
        .seal(request)
        .then((result) => sealAnswer(id, result))
        .then(answer, (error: unknown) => {
          logger.error({ err: error, worker_pid: worker.process.pid }, 'cannot append a receipt');
          // A store's refusal keeps its code, so the worker answers it as this process would.
          answer(
            isSvcError(error)
              ? { id, error: error.message, code: error.code }
              : { id, error: (error as Error).message },
          );
        });
    }
  });
}
