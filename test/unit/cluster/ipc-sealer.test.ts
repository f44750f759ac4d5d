import { EventEmitter } from 'node:events';
import type { Worker } from 'node:cluster';
import { describe, expect, it } from '@jest/globals';
import pino from 'pino';
import { IpcSealer } from '../../../src/cluster/ipc-sealer.js';
import { serveSeals } from '../../../src/cluster/writer.js';
import { SvcError } from '../../../src/core/errors.js';
import type { AppendResult } from '../../../src/ports/ledger-store.js';
import type { ReceiptSealer, SealRequest } from '../../../src/ports/receipt-sealer.js';

const silent = pino({ level: 'silent' });

/** Two ends of an IPC channel, as a worker's `process` and the primary's `Worker` see it. */
function channelPair() {
  const child = new EventEmitter() as EventEmitter & {
    send?: (message: unknown, callback?: (error: Error | null) => void) => boolean;
    connected: boolean;
  };
  const parent = new EventEmitter() as EventEmitter & {
    send: (message: unknown) => boolean;
    isConnected: () => boolean;
    process: { pid: number };
  };
  child.connected = true;
  // Structured clone, as cluster's advanced serialization does: no object is shared.
  child.send = (message, callback) => {
    setImmediate(() => {
      parent.emit('message', structuredClone(message));
      callback?.(null);
    });
    return true;
  };
  parent.send = (message) => {
    setImmediate(() => child.emit('message', structuredClone(message)));
    return true;
  };
  parent.isConnected = () => child.connected;
  parent.process = { pid: 4242 };
  return { child, parent };
}

const request = (claimId: string) => ({ scope: 'key:a', claimId }) as unknown as SealRequest;
const appended = (claimId: string) =>
  ({ status: 'appended', entry: { claimId } }) as unknown as AppendResult;

describe('a worker seals through the writing process', () => {
  it('answers each request with its own result, whatever the order the writer finishes in', async () => {
    const { child, parent } = channelPair();
    const seen: string[] = [];
    const writer: ReceiptSealer = {
      seal: async (r) => {
        seen.push(r.claimId);
        // The first request finishes last.
        await new Promise((resolve) => setTimeout(resolve, r.claimId === 'a' ? 20 : 1));
        return appended(r.claimId);
      },
    };
    serveSeals(parent as unknown as Worker, writer, silent);
    const sealer = new IpcSealer(child);
    const results = await Promise.all(['a', 'b', 'c'].map((id) => sealer.seal(request(id))));
    expect(seen).toEqual(['a', 'b', 'c']);
    expect(results).toEqual([appended('a'), appended('b'), appended('c')]);
  });

  it("rejects with the writer's failure, and goes on serving", async () => {
    const { child, parent } = channelPair();
    const writer: ReceiptSealer = {
      seal: async (r) => {
        if (r.claimId === 'bad') throw new Error('SQLITE_FULL: database or disk is full');
        return appended(r.claimId);
      },
    };
    serveSeals(parent as unknown as Worker, writer, silent);
    const sealer = new IpcSealer(child);
    await expect(sealer.seal(request('bad'))).rejects.toHaveProperty(
      'message',
      'ledger writer: SQLITE_FULL: database or disk is full',
    );
    await expect(sealer.seal(request('good'))).resolves.toEqual(appended('good'));
  });

  it('fails what is in flight with 503 unavailable when the writer goes away', async () => {
    const { child, parent } = channelPair();
    // A writer that never answers, then disconnects.
    parent.on('message', () => undefined);
    const sealer = new IpcSealer(child);
    const pending = sealer.seal(request('a'));
    await new Promise((resolve) => setImmediate(resolve));
    child.connected = false;
    child.emit('disconnect');
    const error = await pending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SvcError);
    expect(error).toMatchObject({ code: 'unavailable' });
    // And every later request at once, without waiting.
    await expect(sealer.seal(request('b'))).rejects.toMatchObject({ code: 'unavailable' });
  });

  it('fails a request whose message cannot be sent with 503 unavailable', async () => {
    const { child } = channelPair();
    child.send = (_message, callback) => {
      setImmediate(() => callback?.(new Error('channel closed')));
      return false;
    };
    const sealer = new IpcSealer(child);
    await expect(sealer.seal(request('a'))).rejects.toMatchObject({ code: 'unavailable' });
  });

  it('ignores messages that are not answers to its requests', async () => {
    const { child, parent } = channelPair();
    serveSeals(parent as unknown as Worker, { seal: async (r) => appended(r.claimId) }, silent);
    const sealer = new IpcSealer(child);
    child.emit('message', { type: 'svc:sealed', id: 999, result: appended('forged') });
    child.emit('message', 'not an object');
    await expect(sealer.seal(request('a'))).resolves.toEqual(appended('a'));
  });
});
