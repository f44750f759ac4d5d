import { SvcError } from '../core/errors.js';
import type { AppendResult } from '../ports/ledger-store.js';
import type { ReceiptSealer, SealRequest } from '../ports/receipt-sealer.js';
import { isSealAnswers, perTurn, resultOfAnswer, type SealAsk } from './seal-messages.js';

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
 * evaluation, replay) happened in the worker. The drafts of one turn of the event loop go in
 * one message.
 */
export class IpcSealer implements ReceiptSealer {
  private nextId = 0;
  private readonly waiting = new Map<number, Waiting>();
  private readonly ask: (ask: SealAsk['asks'][number]) => void;

  constructor(private readonly channel: ParentChannel) {
    channel.on('message', (message) => {
      if (!isSealAnswers(message)) return;
      for (const answer of message.answers) {
        const waiter = this.waiting.get(answer.id);
        if (!waiter) continue;
        this.waiting.delete(answer.id);
        if ('error' in answer)
          waiter.reject(
            answer.code === undefined
              ? new Error(`ledger writer: ${answer.error}`)
              : new SvcError(answer.code, answer.error),
          );
        else waiter.resolve(resultOfAnswer(answer, waiter.request));
      }
    });
    // The writer is gone: nothing in flight will be answered (and nothing was appended that
    // the chain cannot account for: the writer appends whole receipts or none).
    channel.on('disconnect', () => this.failAll([...this.waiting.keys()]));
    this.ask = perTurn((asks) => {
      const ids = asks.map((ask) => ask.id);
      if (!this.channel.send || this.channel.connected === false) return this.failAll(ids);
      const message: SealAsk = { type: 'svc:seal', asks };
      this.channel.send(message, (error) => {
        if (error) this.failAll(ids);
      });
    });
  }

  seal(request: SealRequest): Promise<AppendResult> {
    if (!this.channel.send || this.channel.connected === false) {
      return Promise.reject(writerGone());
    }
    const id = ++this.nextId;
    return new Promise<AppendResult>((resolve, reject) => {
      this.waiting.set(id, { request, resolve, reject });
      this.ask({ id, request });
    });
  }

  /** Fails the requests still waiting among `ids` with 503 `unavailable`. */
  private failAll(ids: number[]): void {
    for (const id of ids) {
      const waiter = this.waiting.get(id);
      if (!waiter) continue;
      this.waiting.delete(id);
      waiter.reject(writerGone());
    }
  }
}
