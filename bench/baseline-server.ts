import { createServer } from 'node:http';
import express from 'express';

// The floor every scenario is compared with: the same process model, loopback and load
// generator, and no work beyond answering a small fixed JSON.
const PAYLOAD = { ok: true, service: 'baseline', version: '0.0.0' };

const kind = process.argv[2];
const port = Number(process.env.PORT);
const host = process.env.HOST ?? '127.0.0.1';

function listen(server: ReturnType<typeof createServer>): void {
  server.listen(port, host);
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (kind === 'http') {
  listen(
    createServer((_req, res) => {
      const body = JSON.stringify(PAYLOAD);
      res.writeHead(200, {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(body),
      });
      res.end(body);
    }),
  );
} else if (kind === 'express') {
  const app = express();
  app.get('/', (_req, res) => {
    res.json(PAYLOAD);
  });
  listen(createServer(app));
} else {
  process.stderr.write('usage: baseline-server.js http|express\n');
  process.exit(2);
}
