import { SvcError } from '../core/errors.js';
import type { AppendResult } from '../ports/ledger-store.js';
import type { ReceiptSealer, SealRequest } from '../ports/receipt-sealer.js';
import { isSealAnswer, resultOfAnswer, type SealAsk } from './seal-messages.js';

/** The IPC channel of a forked process: `process` in a worker. */
export interface ParentChannel {
  send?(message: unknown, callback?: (error: Error | null) => void): boolean;
  connected?: boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  on(event: 'disconnect', listener: () => void): unknown;
}

interface Waiting {
  request: SealRequest;
  resolve: (result: AppendResult) => void;
  reject: (error: Error) => void;
}

const writerGone = () =>
  new SvcError('unavailable', 'the ledger writer is not available; try again shortly');

/**
 * A worker's sealer: the draft goes to the writing process, which signs it at the ledger's
 * head and appends it in its group commit. Everything before (parsing, authentication,
 * evaluation, replay) happened in the worker.
 */
export class IpcSealer implements ReceiptSealer {
  private nextId = 0;
  private readonly waiting = new Map<number, Waiting>();

  constructor(private readonly channel: ParentChannel) {
    channel.on('message', (message) => {
      if (!isSealAnswer(message)) return;
      const waiter = this.waiting.get(message.id);
      if (!waiter) return;
      this.waiting.delete(message.id);
      if ('error' in message) waiter.reject(new Error(`ledger writer: ${message.error}`));
      else waiter.resolve(resultOfAnswer(message, waiter.request));
    });
    // The writer is gone: nothing in flight will be answered (and nothing was appended that
    // the chain cannot account for: the writer appends whole receipts or none).
    channel.on('disconnect', () => {
      for (const waiter of this.waiting.values()) waiter.reject(writerGone());
      this.waiting.clear();
    });
  }

  seal(request: SealRequest): Promise<AppendResult> {
    if (!this.channel.send || this.channel.connected === false) {
      return Promise.reject(writerGone());
    }
    const id = ++this.nextId;
    const ask: SealAsk = { type: 'svc:seal', id, request };
    return new Promise<AppendResult>((resolve, reject) => {
      this.waiting.set(id, { request, resolve, reject });
      this.channel.send!(ask, (error) => {
        if (!error) return;
        this.waiting.delete(id);
        reject(writerGone());
      });
    });
  }
}
