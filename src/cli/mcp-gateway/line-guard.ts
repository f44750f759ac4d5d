import { PassThrough, type Readable, type Writable } from 'node:stream';

// The stdio protocol is one JSON-RPC message per line. The SDK's stdio transport buffers a
// line however long it grows and drops a line it cannot parse without a word to the client.
// This guard stands before it: a line larger than the limit is discarded as it arrives (never
// held), and a line that is not JSON, or not a JSON-RPC 2.0 message, is answered with the
// JSON-RPC error the specification names (-32700 Parse error, -32600 Invalid Request). Only
// well-formed messages reach the SDK.

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

type Id = string | number | null;

/** What is wrong with a parsed message, or undefined when it is a JSON-RPC 2.0 message. */
function problemOf(message: unknown): string | undefined {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    return Array.isArray(message)
      ? 'batches are not part of MCP: send one JSON-RPC message per line'
      : 'a JSON-RPC message is a JSON object';
  }
  const m = message as Record<string, unknown>;
  if (m['jsonrpc'] !== '2.0') return 'jsonrpc must be "2.0"';
  const id = m['id'];
  const idOk =
    id === undefined || typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id));
  if (!idOk) return 'id must be a string or an integer';
  if ('method' in m) {
    if (typeof m['method'] !== 'string' || m['method'].length === 0) {
      return 'method must be a non-empty string';
    }
    const params = m['params'];
    if (
      params !== undefined &&
      (typeof params !== 'object' || params === null || Array.isArray(params))
    ) {
      return 'params must be an object';
    }
    return undefined;
  }
  if (id !== undefined && ('result' in m || 'error' in m)) return undefined;
  return 'a JSON-RPC message has a method (a request or notification) or an id with a result or error';
}

function idOf(message: unknown): Id {
  const id = (message as Record<string, unknown> | null)?.['id'];
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/**
 * The stream the SDK's transport reads instead of `input`: the well-formed lines of `input`.
 * Errors for the others are written to `output` as whole lines, so they never interleave with
 * the transport's own writes.
 */
export function guardLines(
  input: Readable,
  output: Writable,
  maxLineBytes: number,
  log: (line: string) => void,
): Readable {
  const passed = new PassThrough();
  let parts: Buffer[] = [];
  let size = 0;
  let discarding = false;

  const reply = (id: Id, code: number, message: string) => {
    log(`refused a message: ${message}`);
    output.write(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })}\n`);
  };

  const append = (part: Buffer) => {
    if (discarding || part.length === 0) return;
    if (size + part.length > maxLineBytes) {
      discarding = true;
      parts = [];
      size = 0;
      return;
    }
    parts.push(part);
    size += part.length;
  };

  const finish = () => {
    if (discarding) {
      discarding = false;
      reply(
        null,
        INVALID_REQUEST,
        `Invalid Request: the message is larger than ${maxLineBytes} bytes`,
      );
      return;
    }
    const text = Buffer.concat(parts).toString('utf8').replace(/\r$/, '');
    parts = [];
    size = 0;
    if (text.trim() === '') return;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch (error) {
      reply(null, PARSE_ERROR, `Parse error: ${(error as Error).message}`);
      return;
    }
    const problem = problemOf(message);
    if (problem) {
      reply(idOf(message), INVALID_REQUEST, `Invalid Request: ${problem}`);
      return;
    }
    passed.write(`${text}\n`);
  };

  input.on('data', (chunk: Buffer) => {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(10, start);
      if (newline === -1) {
        append(chunk.subarray(start));
        return;
      }
      append(chunk.subarray(start, newline));
      finish();
      start = newline + 1;
    }
  });
  input.on('end', () => passed.end());
  input.on('error', (error) => passed.destroy(error));
  return passed;
}
