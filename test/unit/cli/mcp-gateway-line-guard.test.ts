import { describe, expect, it } from '@jest/globals';
import { PassThrough } from 'node:stream';
import { guardLines } from '../../../src/cli/mcp-gateway/line-guard.js';

// The guard in front of the SDK's stdio transport: whole, well-formed JSON-RPC lines pass in
// order however the bytes are chunked; the others are answered on the output, never passed.

function run(chunks: Array<string | Buffer>, max = 64) {
  const input = new PassThrough();
  const output = new PassThrough();
  const logged: string[] = [];
  const passed = guardLines(input, output, max, (line) => logged.push(line));
  let through = '';
  let answered = '';
  passed.setEncoding('utf8').on('data', (c: string) => (through += c));
  output.setEncoding('utf8').on('data', (c: string) => (answered += c));
  for (const chunk of chunks) input.write(chunk);
  input.end();
  return new Promise<{ through: string[]; answered: unknown[]; logged: string[] }>((resolve) =>
    passed.on('end', () =>
      resolve({
        through: through.split('\n').filter(Boolean),
        answered: answered
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as unknown),
        logged,
      }),
    ),
  );
}

const ping = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}`;

describe('guardLines', () => {
  it('passes messages split across chunks and several in one chunk, in order', async () => {
    const text = `${ping(1)}\n${ping(2)}\r\n${ping(3)}\n`;
    const bytes = Buffer.from(text);
    const chunks = [bytes.subarray(0, 5), bytes.subarray(5, 40), bytes.subarray(40)];
    const out = await run(chunks, 1024);
    expect(out.through).toEqual([ping(1), ping(2), ping(3)]);
    expect(out.answered).toEqual([]);
  });

  it('keeps a multi-byte character split between chunks whole', async () => {
    const line = '{"jsonrpc":"2.0","method":"notifications/x","params":{"s":"é€"}}\n';
    const bytes = Buffer.from(line);
    const at = bytes.indexOf(0xe2) + 1;
    const out = await run([bytes.subarray(0, at), bytes.subarray(at)], 1024);
    expect(out.through).toEqual([line.trimEnd()]);
  });

  it('answers a line that is not JSON with -32700 and one that is not JSON-RPC with -32600, naming its id', async () => {
    const out = await run(
      [
        'nope\n',
        '{"jsonrpc":"1.0","id":"a","method":"ping"}\n',
        '{"jsonrpc":"2.0","id":3}\n',
        `${ping(4)}\n`,
      ],
      1024,
    );
    expect(out.through).toEqual([ping(4)]);
    expect(out.answered).toEqual([
      {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: expect.stringMatching(/^Parse error/) },
      },
      {
        jsonrpc: '2.0',
        id: 'a',
        error: { code: -32600, message: 'Invalid Request: jsonrpc must be "2.0"' },
      },
      {
        jsonrpc: '2.0',
        id: 3,
        error: { code: -32600, message: expect.stringContaining('a method') },
      },
    ]);
    expect(out.logged).toHaveLength(3);
  });

  it('discards a line over the limit as it arrives and answers it, then goes on', async () => {
    const big = `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"p":"${'x'.repeat(200)}"}}`;
    const out = await run([
      big.slice(0, 50),
      big.slice(50, 120),
      `${big.slice(120)}\n${ping(5)}\n`,
    ]);
    expect(out.through).toEqual([ping(5)]);
    expect(out.answered).toEqual([
      {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'Invalid Request: the message is larger than 64 bytes' },
      },
    ]);
  });
});
