import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { MAX_BODY_BYTES } from '../../core/limits.js';
import { SERVICE_VERSION } from '../../core/version.js';
import { GatewayConfigError, loadGatewayConfig } from './config.js';
import { McpGateway } from './gateway.js';
import { guardLines } from './line-guard.js';
import { SvcGate } from './svc-gate.js';

// `svc mcp-gateway --config <file>`: the process. Standard output is the MCP protocol and
// nothing else; every log line goes to standard error.

const DEFAULTS = { callTimeoutMs: 60_000, svcTimeoutMs: 8_000, upstreamTimeoutMs: 30_000 };
/** The hook event around the arguments (ids, names, paths) is bounded well below this. */
const EVENT_RESERVE_BYTES = 16 * 1024;
const MAX_ARGUMENT_BYTES = MAX_BODY_BYTES - EVENT_RESERVE_BYTES;
/** A line on stdin larger than this is discarded unread: a request is its arguments and a little. */
const MAX_MESSAGE_BYTES = 4 * MAX_BODY_BYTES;

export const MCP_GATEWAY_HELP = `Usage: svc mcp-gateway --config <file> [options]

Runs an MCP server on standard input and output in front of the MCP servers the config file
names, in the format MCP clients use:
  {"mcpServers": {"<name>": {"command": "...", "args": [...], "env": {...}}
                  | {"url": "https://...", "headers": {...}}}}
Tools are listed as <name>__<tool>, less those the policy blocks by name (svc's dry run,
POST SVC_URL/v1/simulate, of a call with no arguments is BLOCKED; listed all the same when
svc cannot be asked); resources and prompts pass through (prompts named like tools). Every tools/call is decided by svc first (POST SVC_URL/v1/hooks/mcp): an allowed
call is forwarded and its outcome recorded; a denied call returns a tool error with the
reason and the receipt; a call awaiting approval returns a tool error with the link where a
reviewer approves it, after which the same call succeeds once. When svc cannot be reached
the call is refused (fail closed).

Environment:
  SVC_URL        svc's base URL (required)
  SVC_API_KEY    the API key, sent as X-API-Key (required)
  SVC_POLICY     the policy to decide under (?policy=); a locked key keeps its own

Options:
  --config <file>          the servers to front (required)
  --call-timeout <ms>      how long an upstream tool call may take (default ${DEFAULTS.callTimeoutMs})
  --svc-timeout <ms>       how long svc may take to decide (default ${DEFAULTS.svcTimeoutMs})
  --upstream-timeout <ms>  how long starting or listing an upstream may take (default ${DEFAULTS.upstreamTimeoutMs})
  --session <id>           the session id the calls are recorded under (default: a new one)
  --show-all-tools         list every upstream tool, also those the policy blocks by name
  -h, --help               this text

Logs go to standard error; standard output carries the protocol only. docs/MCP.md
has configurations for Claude Code, Cursor and other clients.
`;

export class GatewayUsageError extends Error {
  override name = 'GatewayUsageError';
}

function millis(value: string | undefined, option: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d{1,7}$/.test(value) || Number(value) < 1) {
    throw new GatewayUsageError(`${option} must be a whole number of milliseconds, 1 to 9999999`);
  }
  return Number(value);
}

const log = (line: string) => void process.stderr.write(`svc mcp-gateway: ${line}\n`);

/** Runs the gateway until its input closes; resolves with the exit code. */
export async function runMcpGateway(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        config: { type: 'string' },
        'call-timeout': { type: 'string' },
        'svc-timeout': { type: 'string' },
        'upstream-timeout': { type: 'string' },
        session: { type: 'string' },
        'show-all-tools': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new GatewayUsageError((error as Error).message);
  }
  if (values.help) {
    process.stdout.write(MCP_GATEWAY_HELP);
    return 0;
  }
  if (!values.config) throw new GatewayUsageError('mcp-gateway needs --config <file>');
  const baseUrl = env['SVC_URL'];
  const apiKey = env['SVC_API_KEY'];
  if (!baseUrl) throw new GatewayUsageError("set SVC_URL to svc's base URL");
  if (!apiKey) throw new GatewayUsageError('set SVC_API_KEY to an API key of svc');
  const session = values.session ?? `mcp-gw-${randomUUID()}`;
  if (session.length > 200 || !/^[\x21-\x7e]+$/.test(session)) {
    throw new GatewayUsageError('--session must be 1-200 printable characters without spaces');
  }
  let config;
  try {
    config = loadGatewayConfig(values.config);
  } catch (error) {
    if (error instanceof GatewayConfigError) throw new GatewayUsageError(error.message);
    throw error;
  }
  let gate: SvcGate;
  try {
    gate = new SvcGate({
      baseUrl,
      apiKey,
      timeoutMs: millis(values['svc-timeout'], '--svc-timeout', DEFAULTS.svcTimeoutMs),
      ...(env['SVC_POLICY'] && { policy: env['SVC_POLICY'] }),
    });
  } catch (error) {
    throw new GatewayUsageError((error as Error).message);
  }
  const gateway = new McpGateway({
    config,
    gate,
    version: SERVICE_VERSION,
    sessionId: session,
    cwd: process.cwd(),
    callTimeoutMs: millis(values['call-timeout'], '--call-timeout', DEFAULTS.callTimeoutMs),
    upstreamTimeoutMs: millis(
      values['upstream-timeout'],
      '--upstream-timeout',
      DEFAULTS.upstreamTimeoutMs,
    ),
    maxArgumentBytes: MAX_ARGUMENT_BYTES,
    showAllTools: values['show-all-tools'] === true,
    log,
  });

  const input = guardLines(process.stdin, process.stdout, MAX_MESSAGE_BYTES, log);
  const transport = new StdioServerTransport(input, process.stdout);
  await gateway.server.connect(transport);
  // A broken message is answered by the guard; what the SDK still reports is only logged.
  gateway.server.onerror = (error) => log(`protocol: ${error.message}`);
  log(
    `serving ${[...config.servers.keys()].join(', ')} for session ${session}; decisions from ${baseUrl}`,
  );
  gateway.warmUp();

  await new Promise<void>((resolve) => {
    input.once('end', resolve);
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await gateway.close();
  return 0;
}
