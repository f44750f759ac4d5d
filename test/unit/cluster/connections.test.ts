import { EventEmitter } from 'node:events';
import type { Worker } from 'node:cluster';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import {
  CONNECTION,
  dispatchConnection,
  isReady,
  READY,
  RoundRobin,
  serveHandedConnections,
} from '../../../src/cluster/connections.js';

/** A socket as the supervisor accepts it: paused; records what is done with it. */
const fakeSocket = () =>
  Object.assign(new EventEmitter(), {
    destroyed: false,
    resumed: false,
    resume() {
      this.resumed = true;
    },
  });

const fakeWorker = (sendError: Error | null = null) =>
  Object.assign(new EventEmitter(), {
    sent: [] as { message: unknown; handle: unknown; options: unknown }[],
    isConnected: () => true,
    send(
      message: unknown,
      handle: unknown,
      options: unknown,
      callback: (error: Error | null) => void,
    ) {
      this.sent.push({ message, handle, options });
      setImmediate(() => callback(sendError));
      return true;
    },
  });

const localServer = () => {
  const served: unknown[] = [];
  const server = new EventEmitter() as unknown as Server;
  server.on('connection', (socket) => served.push(socket));
  return { server, served };
};

describe('the supervisor hands out connections', () => {
  it('serves one in N itself: with no worker ready, every one', () => {
    const turns = new RoundRobin<string>();
    expect([turns.next(), turns.next()]).toEqual(['self', 'self']);
    turns.add('a');
    turns.add('a');
    expect(turns.size).toBe(2);
    expect([turns.next(), turns.next(), turns.next(), turns.next()]).toEqual([
      'a',
      'self',
      'a',
      'self',
    ]);
    turns.add('b');
    expect(new Set([turns.next(), turns.next(), turns.next()])).toEqual(
      new Set(['self', 'a', 'b']),
    );
    turns.remove('a');
    turns.remove('b');
    expect([turns.next(), turns.next()]).toEqual(['self', 'self']);
  });

  it('serves its own turn on its own HTTP server, reading from the socket only then', () => {
    const { server, served } = localServer();
    const socket = fakeSocket();
    dispatchConnection(socket as unknown as Socket, 'self', server, new RoundRobin());
    expect(served).toEqual([socket]);
    expect(socket.resumed).toBe(true);
  });

  it("hands a worker's turn to the worker, closing its own copy", async () => {
    const { server, served } = localServer();
    const socket = fakeSocket();
    const worker = fakeWorker();
    dispatchConnection(
      socket as unknown as Socket,
      worker as unknown as Worker,
      server,
      new RoundRobin(),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(worker.sent).toEqual([
      { message: { type: CONNECTION }, handle: socket, options: { keepOpen: false } },
    ]);
    expect(served).toEqual([]);
    expect(socket.resumed).toBe(false);
  });

  it('serves a connection itself when the worker cannot take it, and skips that worker after', async () => {
    const { server, served } = localServer();
    const socket = fakeSocket();
    const worker = fakeWorker(new Error('channel closed'));
    const turns = new RoundRobin<Worker>();
    turns.add(worker as unknown as Worker);
    dispatchConnection(socket as unknown as Socket, worker as unknown as Worker, server, turns);
    await new Promise((resolve) => setImmediate(resolve));
    expect(served).toEqual([socket]);
    expect(socket.resumed).toBe(true);
    expect(turns.size).toBe(1);
  });
});

describe('a worker serves the connections it is handed', () => {
  it('says it is ready, and serves only connection messages that carry a socket', () => {
    const channel = Object.assign(new EventEmitter(), {
      sent: [] as unknown[],
      send(message: unknown) {
        this.sent.push(message);
        return true;
      },
    });
    const server = createServer();
    const served: unknown[] = [];
    // The HTTP server's own connection handling is not what is tested here.
    server.removeAllListeners('connection');
    server.on('connection', (socket) => served.push(socket));
    let listening = false;
    server.on('listening', () => (listening = true));
    serveHandedConnections(channel, server);
    expect(channel.sent).toEqual([{ type: READY }]);
    expect(isReady(channel.sent[0])).toBe(true);
    // Marked listening, so that node checks its headers and request timeouts.
    expect(listening).toBe(true);
    const socket = fakeSocket();
    channel.emit('message', { type: CONNECTION });
    channel.emit('message', { type: 'svc:other' }, socket);
    channel.emit('message', { type: CONNECTION }, socket);
    expect(served).toEqual([socket]);
    expect(socket.resumed).toBe(true);
    server.close();
  });
});
