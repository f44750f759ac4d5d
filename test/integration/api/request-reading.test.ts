import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../support/harness.js';

// Failures while reading a request are the client's: a 4xx with the error envelope, never a 500.
describe('request reading failures', () => {
  let t: TestApp;
  beforeEach(() => {
    t = buildTestApp();
  });
  afterEach(() => t.close());

  const expectClientError = (res: request.Response, status: number, code: string) => {
    expect(res.status).toBe(status);
    expect(res.body).toEqual({
      error: expect.any(String),
      code,
      request_id: res.headers['x-request-id'],
    });
    expect(res.headers['x-svc-version']).toBe('0.1.0');
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
  };

  it('answers a body that is not what its Content-Encoding says with 400 malformed_json', async () => {
    for (const [encoding, body] of [
      ['gzip', Buffer.from('notgzip')],
      ['gzip', gzipSync(Buffer.from(JSON.stringify({ receipt_id: 'dr-x' }))).subarray(0, 15)],
      ['deflate', Buffer.from('not deflate')],
    ] as const) {
      const res = await request(t.app)
        .post('/v1/verify')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', encoding)
        .send(body);
      expectClientError(res, 400, 'malformed_json');
    }
    expect((await t.store.ledger.head()).sequence).toBe(0);
  });

  it('still reads a well-formed gzip body', async () => {
    // A raw request: the body must reach the server exactly as compressed here.
    const server = t.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const body = gzipSync(Buffer.from(JSON.stringify({ receipt_id: 'dr-x' })));
      const { port } = server.address() as AddressInfo;
      const { status, text } = await new Promise<{ status: number; text: string }>(
        (resolve, reject) => {
          const req = httpRequest(
            {
              host: '127.0.0.1',
              port,
              method: 'POST',
              path: '/v1/verify',
              headers: {
                'Content-Type': 'application/json',
                'Content-Encoding': 'gzip',
                'Content-Length': body.length,
              },
            },
            (res) => {
              let data = '';
              res.setEncoding('utf8').on('data', (chunk: string) => (data += chunk));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, text: data }));
            },
          );
          req.on('error', reject);
          req.end(body);
        },
      );
      expect(status).toBe(200);
      expect(JSON.parse(text)).toMatchObject({ valid: false, receipt_id: 'dr-x' });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('answers malformed percent-encoding in a path parameter with 400 validation_failed', async () => {
    for (const path of ['/v1/receipts/%ZZ', '/v1/receipts/%E0%A4%A']) {
      expectClientError(await request(t.app).get(path), 400, 'validation_failed');
    }
  });

  it('treats control characters in q as word separators, never as FTS syntax', async () => {
    for (const q of ['a\u0000b', '\u0000a', 'merge\u0000']) {
      const res = await request(t.app).get('/v1/receipts/search').query({ q });
      expect(res.status).toBe(200);
      expect(res.body.receipts).toEqual([]);
    }
  });

  it('refuses timeline days before 1970, which would not format as dates', async () => {
    const res = await request(t.app).get('/v1/receipts/timeline').query({ until: '0000-01-01' });
    expectClientError(res, 400, 'validation_failed');
    expect(res.body.error).toBe('until: must be a date YYYY-MM-DD, 1970 or later');
  });
});
