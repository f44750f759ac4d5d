import type { Worker } from 'node:cluster';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { isObject } from '@svc/verify';

/** The supervisor hands a worker an accepted connection (the socket is the message's handle). */
export const CONNECTION = 'svc:connection';
/** A worker is ready for connections: its app is built and its sealer set up. */
export const READY = 'svc:ready';

export const isReady = (message: unknown): boolean => isObject(message) && message.type === READY;

/**
 * Who serves the next connection: the supervisor itself and every ready worker in turn, as
 * node:cluster's round robin does among its workers. With `SVC_WORKERS=N` the supervisor is
 * one of the N: N processes serve HTTP, and the one that writes the ledger needs no IPC for
 * its own requests.
 */
export class RoundRobin<W> {
  private readonly members: W[] = [];
  private turn = 0;

  add(member: W): void {
    if (!this.members.includes(member)) this.members.push(member);
  }

  remove(member: W): void {
    const at = this.members.indexOf(member);
    if (at >= 0) this.members.splice(at, 1);
  }

  get size(): number {
    return this.members.length + 1;
  }

  /** The next worker, or `'self'` for the supervisor. */
  next(): W | 'self' {
    this.turn = (this.turn + 1) % this.size;
    return this.turn === 0 ? 'self' : this.members[this.turn - 1]!;
  }
}

/**
 * Serves a connection the supervisor accepted (paused, nothing read from it yet) on its own
 * HTTP server, or hands it to a worker; a connection that cannot be handed over (the worker
 * just died) is served here instead of being dropped.
 */
export function dispatchConnection(
  socket: Socket,
  to: Worker | 'self',
  local: Server,
  workers: RoundRobin<Worker>,
): void {
  const serveHere = () => {
    local.emit('connection', socket);
    socket.resume();
  };
  if (to === 'self' || !to.isConnected()) return serveHere();
  to.send({ type: CONNECTION }, socket, { keepOpen: false }, (error) => {
    if (!error) return;
    workers.remove(to);
    if (!socket.destroyed) serveHere();
  });
}

/** The IPC channel of a worker: `process`. */
export interface WorkerChannel {
  send?(message: unknown): boolean;
  on(event: 'message', listener: (message: unknown, handle?: unknown) => void): unknown;
}

/**
 * A worker's HTTP server takes the connections the supervisor hands it, and tells the
 * supervisor it is ready for them. The server does not listen itself (the supervisor holds
 * the port), so it is marked listening here: node's request and headers timeouts are checked
 * only on a listening server.
 */
export function serveHandedConnections(channel: WorkerChannel, server: Server): void {
  channel.on('message', (message, handle) => {
    if (!isObject(message) || message.type !== CONNECTION || !handle) return;
    const socket = handle as Socket;
    server.emit('connection', socket);
    socket.resume();
  });
  server.emit('listening');
  channel.send?.({ type: READY });
}
