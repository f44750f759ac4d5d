import { readFileSync } from 'node:fs';
import { z } from 'zod';

// The gateway's config file is the one MCP clients already use for their servers (Claude
// Code's .mcp.json, Cursor's mcp.json, Claude Desktop's claude_desktop_config.json):
// { "mcpServers": { "<name>": { command, args, env } | { url, headers } } }. Fields other
// clients add (type, disabled, timeout, …) are ignored, not refused, so a client's file can
// be pointed at as it is; a server this gateway cannot run is refused by name.

/** A server name becomes the prefix of its tools, `<server>__<tool>`: no `__` inside it. */
const SERVER_NAME = /^(?!.*__)[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

const stringMap = z
  .record(z.string(), z.string().max(8192))
  .refine((m) => Object.keys(m).length <= 256, {
    error: 'at most 256 entries',
  });

const stdioServer = z.object({
  type: z.literal('stdio').optional(),
  command: z.string().min(1).max(4096),
  args: z.array(z.string().max(8192)).max(256).default([]),
  env: stringMap.default({}),
  cwd: z.string().min(1).max(4096).optional(),
});

const httpServer = z.object({
  type: z.enum(['http', 'streamable-http', 'streamableHttp']).optional(),
  url: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }),
  headers: stringMap.default({}),
});

const serverSchema = z.union([stdioServer, httpServer], {
  error: 'must have "command" (a stdio server) or "url" (a streamable HTTP server)',
});

const configSchema = z.object({
  mcpServers: z
    .record(z.string(), serverSchema)
    .refine((servers) => Object.keys(servers).length > 0, { error: 'names no server' })
    .refine((servers) => Object.keys(servers).length <= 64, { error: 'at most 64 servers' }),
});

export type StdioServerSpec = { kind: 'stdio' } & Omit<z.infer<typeof stdioServer>, 'type'>;
export type HttpServerSpec = { kind: 'http' } & Omit<z.infer<typeof httpServer>, 'type'>;
export type UpstreamSpec = StdioServerSpec | HttpServerSpec;

export interface GatewayConfig {
  servers: Map<string, UpstreamSpec>;
}

/** A config file that cannot be used, with what is wrong in it. */
export class GatewayConfigError extends Error {
  override name = 'GatewayConfigError';
}

const MAX_CONFIG_BYTES = 1 << 20;

/** Reads and checks a config's text; throws GatewayConfigError naming the field. */
export function parseGatewayConfig(text: string, source = 'the config'): GatewayConfig {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new GatewayConfigError(`${source} is not JSON: ${(error as Error).message}`);
  }
  const parsed = configSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`);
    throw new GatewayConfigError(`${source}: ${issues.slice(0, 5).join('; ')}`);
  }
  const servers = new Map<string, UpstreamSpec>();
  for (const [name, spec] of Object.entries(parsed.data.mcpServers)) {
    // Checked here, not by the record's key schema, whose error does not say what is wrong.
    if (!SERVER_NAME.test(name)) {
      throw new GatewayConfigError(
        `${source}: mcpServers.${name.slice(0, 80)}: a server name is 1-64 letters, digits, - and _, without "__"`,
      );
    }
    servers.set(
      name,
      'command' in spec
        ? {
            kind: 'stdio',
            command: spec.command,
            args: spec.args,
            env: spec.env,
            ...(spec.cwd !== undefined && { cwd: spec.cwd }),
          }
        : { kind: 'http', url: spec.url, headers: spec.headers },
    );
  }
  return { servers };
}

/** Reads the config file at `path`. */
export function loadGatewayConfig(path: string): GatewayConfig {
  let text: string;
  try {
    const bytes = readFileSync(path);
    if (bytes.length > MAX_CONFIG_BYTES) {
      throw new GatewayConfigError(`${path} is larger than ${MAX_CONFIG_BYTES} bytes`);
    }
    text = bytes.toString('utf8');
  } catch (error) {
    if (error instanceof GatewayConfigError) throw error;
    throw new GatewayConfigError(`cannot read ${path}: ${(error as Error).message}`);
  }
  return parseGatewayConfig(text, path);
}
