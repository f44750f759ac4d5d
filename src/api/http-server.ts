import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface HttpTimeouts {
  headersMs: number;
  requestMs: number;
  keepAliveMs: number;
}

/** An HTTP server over the app, which can drain: answer what it began, then close. */
export interface DrainingServer {
  server: Server;
  /**
   * Stops taking requests: every answer from now on closes its connection, so that the drain
   * ends with the last answer instead of waiting for kept-alive connections to time out.
   * Closing stops accepting at once and closes the idle connections (no request begun); a
   * client still sending its request is given the request timeout once more, then cut off,
   * so that a slow client cannot hold the drain open. Resolves when no connection is left.
   */
  drain(): Promise<void>;
}

/**
 * The HTTP server, with timeouts that cut off clients sending their request slowly
 * (slowloris: headers or a body trickled a byte at a time) within seconds; node's defaults
 * allow 60 s for headers and 5 minutes for a request, checked every 30 s.
 */
export function createHttpServer(timeouts: HttpTimeouts, app: RequestListener): DrainingServer {
  const { headersMs, requestMs, keepAliveMs } = timeouts;
  // Answers started before a drain, until they are sent.
  const answering = new Set<ServerResponse>();
  // Open connections, however they came: a worker's were accepted by the supervisor.
  const connections = new Set<Socket>();
  let draining = false;
  const server = createServer(
    {
      headersTimeout: headersMs,
      requestTimeout: requestMs,
      keepAliveTimeout: keepAliveMs,
      // How often the two limits above are checked; their precision.
      connectionsCheckingInterval: Math.min(1_000, Math.ceil(headersMs / 4)),
    },
    (req, res) => {
      if (draining) res.setHeader('Connection', 'close');
      else {
        answering.add(res);
        res.once('close', () => answering.delete(res));
      }
      app(req, res);
    },
  );
  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  const drain = () => {
    draining = true;
    for (const res of answering) if (!res.headersSent) res.setHeader('Connection', 'close');
    server.close();
    const cutOff = setTimeout(() => server.closeAllConnections(), requestMs);
    return new Promise<void>((resolve) => {
      const check = () => {
        if (connections.size > 0) return void setTimeout(check, 20);
        clearTimeout(cutOff);
        resolve();
      };
      check();
    });
  };
  return { server, drain };
}

/** `host:port`, bracketing an IPv6 address. */
const hostPort = (host: string, port: number) =>
  host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;

/** Why listening failed, in words an operator can act on. */
export function listenFailure(error: NodeJS.ErrnoException, host: string, port: number): string {
  const where = `cannot listen on ${hostPort(host, port)}`;
  switch (error.code) {
    case 'EADDRINUSE':
      return `${where}: the port is in use by another process (stop it, or set PORT)`;
    case 'EACCES':
      return `${where}: permission denied (ports below 1024 need privileges; set PORT)`;
    case 'EADDRNOTAVAIL':
      return `${where}: the address is not one of this machine's (set HOST)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${where}: HOST does not resolve`;
    default:
      return `${where}: ${error.message}`;
  }
}
