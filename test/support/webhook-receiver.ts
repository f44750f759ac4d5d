import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body exactly as it arrived. */
  body: string;
}

/** How to answer the n-th request (0-based): a status, or 'hang' to never answer. */
export type Responder = (n: number, req: ReceivedDelivery, res: ServerResponse) => number | 'hang';

export interface TestReceiver {
  url: string;
  port: number;
  received: ReceivedDelivery[];
  respondWith(responder: Responder): void;
  close(): Promise<void>;
}

/** A webhook receiver on 127.0.0.1 that records every request. */
export async function startReceiver(responder: Responder = () => 200): Promise<TestReceiver> {
  let respond = responder;
  const received: ReceivedDelivery[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const delivery: ReceivedDelivery = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      const n = received.length;
      received.push(delivery);
      const status = respond(n, delivery, res);
      if (status === 'hang') return;
      if (!res.headersSent) res.writeHead(status);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    respondWith(next) {
      respond = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
