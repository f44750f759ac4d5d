import { EventEmitter } from 'node:events';
import type { Worker } from 'node:cluster';
import { describe, expect, it } from '@jest/globals';
import pino from 'pino';
import { IpcSealer } from '../../../src/cluster/ipc-sealer.js';
import { serveSeals } from '../../../src/cluster/writer.js';
import { SvcError } from '../../../src/core/errors.js';
import type { AppendResult } from '../../../src/ports/ledger-store.js';
import type { ReceiptSealer, SealRequest } from '../../../src/ports/receipt-sealer.js';
import { buildDispositionParts } from '../../../src/core/disposition.js';
import { LedgerSealer } from '../../../src/services/receipt-sealer.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { newServerKey } from '../../support/harness.js';
import { until } from '../../support/server-process.js';
import { appendRequest, makeClaim, signClaim } from '../../contract/ledger-fixtures.js';
import { portableSha256Hex } from '@svc/verify';

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
  // A JSON round trip, as the cluster's channel does (serialization 'json'): no object is shared.
  child.send = (message, callback) => {
    setImmediate(() => {
      parent.emit('message', JSON.parse(JSON.stringify(message)));
      callback?.(null);
    });
    return true;
  };
  parent.send = (message) => {
    setImmediate(() => child.emit('message', JSON.parse(JSON.stringify(message))));
    return true;
  };
  parent.isConnected = () => child.connected;
  parent.process = { pid: 4242 };
  return { child, parent };
}

const request = (claimId: string) => ({ scope: 'key:a', claimId }) as unknown as SealRequest;
// A receipt the writer's answer carries whole (no receipt-core-v2 seal to shorten it to).
const appended = (claimId: string) =>
  ({
    status: 'appended',
    entry: { claimId, receipt: { attestations: [] } },
  }) as unknown as AppendResult;

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

  it("keeps the code of a store's refusal, so the worker answers it as the writer would", async () => {
    const { child, parent } = channelPair();
    const writer: ReceiptSealer = {
      seal: async () => {
        throw new SvcError('approval_refused', 'approval dr-x was used already, by dr-y');
      },
    };
    serveSeals(parent as unknown as Worker, writer, silent);
    const error = await new IpcSealer(child).seal(request('again')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SvcError);
    expect(error).toMatchObject({
      code: 'approval_refused',
      message: 'approval dr-x was used already, by dr-y',
    });
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

  it("carries a disposition's parent to the writer, which keeps one disposition per parent", async () => {
    const { child, parent } = channelPair();
    const store = openSqliteStore(':memory:');
    const serverKey = newServerKey();
    try {
      const escalated = signClaim(makeClaim({ kind: 'escalated' }), serverKey);
      const stored = await store.ledger.append(appendRequest(escalated));
      const writer = new LedgerSealer({
        ledger: store.ledger,
        serverKey,
        logOrigin: 'svc/test',
        sha256Hex: portableSha256Hex,
      });
      serveSeals(parent as unknown as Worker, writer, silent);
      const sealer = new IpcSealer(child);
      const seal = (scope: string, decision: 'approve' | 'reject') => {
        const parts = buildDispositionParts({
          receiptId: `dr-${scope === 'key:a' ? '0' : '1'}1ARZ3NDEKTSV4RRFFQ69G5FAV`,
          issuedAt: '2026-01-15T10:00:00.000Z',
          parent: {
            receipt: stored.entry.receipt,
            claim: stored.entry.claim,
            config: stored.entry.evaluation.config,
          },
          decision,
          reviewer: { kind: 'user', id: 'lead' },
          reason: 'checked',
          submitter: { kind: 'api_key', key_id: `kid_${'0'.repeat(26)}` },
        });
        return sealer.seal({
          scope,
          claimId: parts.claim.claim_id,
          parentReceiptId: stored.entry.receipt.receipt_id,
          draft: parts.draft,
          claim: parts.claim,
          evaluation: parts.evaluation,
          apiKeyId: null,
        });
      };
      const first = await seal('key:a', 'approve');
      expect(first.status).toBe('appended');
      const second = await seal('key:b', 'reject');
      expect(second).toEqual({ status: 'exists', entry: first.entry });
      expect((await store.ledger.head()).sequence).toBe(2);
    } finally {
      await store.close();
    }
  });
});

describe('the writer serving a worker that dies', () => {
  it('survives an answer to a worker that exited after the connected check (EPIPE)', async () => {
    // Node's Worker.send: with a callback a failed write goes to it; without one the Worker
    // emits 'error', which nothing handles, and the writer process would die of it.
    const worker = new EventEmitter() as EventEmitter & {
      send: (m: unknown, h?: unknown, cb?: (e: Error | null) => void) => boolean;
      isConnected: () => boolean;
      process: { pid: number };
    };
    worker.isConnected = () => true;
    worker.process = { pid: 4242 };
    const epipe = Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
    const sent: unknown[] = [];
    worker.send = (message, _handle, callback) => {
      sent.push(message);
      setImmediate(() => (callback ? callback(epipe) : worker.emit('error', epipe)));
      return false;
    };
    const lines: Array<{ msg: string; err_code?: string }> = [];
    const logger = pino(
      { level: 'info' },
      { write: (line: string) => void lines.push(JSON.parse(line)) },
    );
    const sealer: ReceiptSealer = { seal: () => Promise.reject(new Error('store closed')) };
    serveSeals(worker as unknown as Worker, sealer, logger);

    worker.emit('message', { type: 'svc:seal', asks: [{ id: 1, request: {} }] });
    // Until the failed write is logged, however busy the machine (not a fixed pause).
    await until('the failed answer to be logged', () => lines.find((l) => l.err_code) ?? null);

    expect(sent).toEqual([{ type: 'svc:sealed', answers: [{ id: 1, error: 'store closed' }] }]);
    expect(lines.map((l) => l.msg)).toContain('a worker exited before its answers were sent');
    expect(lines.find((l) => l.err_code)?.err_code).toBe('EPIPE');
  });
});
