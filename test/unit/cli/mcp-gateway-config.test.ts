import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { GatewayConfigError, parseGatewayConfig } from '../../../src/cli/mcp-gateway/config.js';
import { splitName } from '../../../src/cli/mcp-gateway/gateway.js';

// svc mcp-gateway reads the config format MCP clients use for their servers.

describe('the gateway config', () => {
  it('reads stdio and streamable HTTP servers, ignoring the fields other clients add', () => {
    const config = parseGatewayConfig(
      JSON.stringify({
        mcpServers: {
          files: {
            type: 'stdio',
            command: 'npx',
            args: ['-y', 'x'],
            env: { A: '1' },
            disabled: false,
          },
          remote: {
            type: 'http',
            url: 'https://mcp.example/mcp',
            headers: { Authorization: 'Bearer t' },
          },
          bare: { command: 'server' },
        },
      }),
    );
    expect([...config.servers]).toEqual([
      ['files', { kind: 'stdio', command: 'npx', args: ['-y', 'x'], env: { A: '1' } }],
      [
        'remote',
        { kind: 'http', url: 'https://mcp.example/mcp', headers: { Authorization: 'Bearer t' } },
      ],
      ['bare', { kind: 'stdio', command: 'server', args: [], env: {} }],
    ]);
  });

  it.each<[string, unknown, string]>([
    ['no servers', { mcpServers: {} }, 'mcpServers: names no server'],
    ['no mcpServers', { servers: {} }, 'mcpServers:'],
    ['a server name with __', { mcpServers: { a__b: { command: 'x' } } }, 'without "__"'],
    ['neither command nor url', { mcpServers: { a: { args: [] } } }, 'must have "command"'],
    [
      'a file: URL',
      { mcpServers: { a: { url: 'file:///etc/passwd' } } },
      'a.url: must be an http or https URL',
    ],
    [
      'args that are not strings',
      { mcpServers: { a: { command: 'x', args: [1] } } },
      'must have "command"',
    ],
  ])('refuses %s, naming the problem', (_what, json, message) => {
    expect(() => parseGatewayConfig(JSON.stringify(json), 'mcp.json')).toThrow(GatewayConfigError);
    expect(() => parseGatewayConfig(JSON.stringify(json), 'mcp.json')).toThrow(message);
  });

  it('refuses a file that is not JSON', () => {
    expect(() => parseGatewayConfig('{mcpServers', 'mcp.json')).toThrow('mcp.json is not JSON');
  });

  it('reads every mcpServers config of docs/MCP.md', () => {
    const doc = readFileSync(new URL('../../../docs/MCP.md', import.meta.url), 'utf8');
    const blocks = [...doc.matchAll(/```json\n([\s\S]*?)\n```/g)].map((m) => m[1]!);
    const configs = blocks.filter((b) => b.includes('"mcpServers"'));
    expect(configs.length).toBeGreaterThanOrEqual(2);
    for (const block of configs) expect(parseGatewayConfig(block).servers.size).toBeGreaterThan(0);
    const setup = /cat > ~\/\.config\/svc\/mcp-gateway\.json <<'EOF'\n([\s\S]*?)\nEOF/.exec(doc);
    expect(parseGatewayConfig(setup![1]!).servers.get('everything')).toMatchObject({
      kind: 'stdio',
      command: 'npx',
    });
  });
});

describe('tool names', () => {
  it('split at the first __, since a server name holds none', () => {
    expect(splitName('everything__get-sum')).toEqual({ server: 'everything', inner: 'get-sum' });
    expect(splitName('fs__read__file')).toEqual({ server: 'fs', inner: 'read__file' });
    expect(splitName('__x')).toBeNull();
    expect(splitName('fs__')).toBeNull();
    expect(splitName('plain')).toBeNull();
  });
});
