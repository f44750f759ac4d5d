import { describe, expect, it } from '@jest/globals';
import { Http1Error, parseResponse, requestBytes } from '../../../packages/hook/src/http1.js';

// svc-hook's own HTTP/1.1: what it sends, and how it reads an answer that svc (or whatever
// answers in its place) sends back.
const answer = (text: string) => Buffer.from(text, 'latin1');

describe('requestBytes', () => {
  it('writes one POST with the headers, the length and connection: close', () => {
    const bytes = requestBytes({
      url: new URL('http://127.0.0.1:8080/v1/hooks/codex?event=PreToolUse'),
      headers: { 'x-api-key': 'svc_k' },
      body: '{"a":"é"}',
      maxBodyBytes: 100,
    }).toString('utf8');
    expect(bytes).toBe(
      'POST /v1/hooks/codex?event=PreToolUse HTTP/1.1\r\nhost: 127.0.0.1:8080\r\n' +
        'x-api-key: svc_k\r\ncontent-length: 10\r\nconnection: close\r\n\r\n{"a":"é"}',
    );
  });

  it('refuses a header value that would forge another header', () => {
    expect(() =>
      requestBytes({
        url: new URL('http://svc.example/'),
        headers: { 'x-api-key': 'k\r\nx-admin: 1' },
        body: '{}',
        maxBodyBytes: 100,
      }),
    ).toThrow(new Http1Error('the x-api-key header holds characters a header cannot carry'));
  });
});

describe('parseResponse', () => {
  it('reads the status, the headers in lower case and a content-length body', () => {
    const response = parseResponse(
      answer('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Svc-Hook-Exit: 0\r\n\r\n{}'),
      100,
    );
    expect(response.status).toBe(200);
    expect(response.headers['x-svc-hook-exit']).toBe('0');
    expect(response.body.toString()).toBe('{}');
  });

  it('decodes a chunked body', () => {
    const response = parseResponse(
      answer(
        'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\n{"a\r\n4\r\n":1}\r\n0\r\n\r\n',
      ),
      100,
    );
    expect(response.body.toString()).toBe('{"a":1}');
  });

  it.each([
    ['no end of headers', 'HTTP/1.1 200 OK\r\nContent-Length: 2', 'without a complete HTTP answer'],
    ['not HTTP', 'SSH-2.0-OpenSSH\r\n\r\n', 'something other than HTTP/1.1'],
    [
      'a short body',
      'HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{}',
      'shorter than its content-length',
    ],
    [
      'a broken chunk',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
      'chunked answer is malformed',
    ],
    ['a header without a colon', 'HTTP/1.1 200 OK\r\nbroken\r\n\r\n', 'malformed HTTP header'],
    ['a body over the bound', `HTTP/1.1 200 OK\r\n\r\n${'x'.repeat(101)}`, 'larger than 100 bytes'],
  ])('refuses %s', (_what, text, message) => {
    expect(() => parseResponse(answer(text), 100)).toThrow(message);
  });
});
