import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { SERVICE_NAME, SERVICE_VERSION } from '../core/version.js';
import { MCP_TOOLS, toolListing, type ToolCaller, type ToolOutcome } from './tools.js';

// The MCP SDK's side of svc's MCP server, apart from the tool table (tools.ts): the app and the
// CLI load it only when MCP is spoken, the SDK being about a third of the service's modules.

export function toolResult(outcome: ToolOutcome): CallToolResult {
  const text = JSON.stringify(outcome.body);
  if (!outcome.ok) return { isError: true, content: [{ type: 'text', text }] };
  const structured =
    typeof outcome.body === 'object' && outcome.body !== null && !Array.isArray(outcome.body)
      ? { structuredContent: outcome.body as Record<string, unknown> }
      : {};
  return { content: [{ type: 'text', text }], ...structured };
}

/** svc's MCP server with the tools of MCP_TOOLS, each run by `call`. */
export function createMcpServer(call: ToolCaller): Server {
  const server = new Server(
    { name: SERVICE_NAME, version: SERVICE_VERSION },
    { capabilities: { tools: {} } },
  );
  const listing = MCP_TOOLS.map(toolListing);
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listing }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = MCP_TOOLS.find((t) => t.name === request.params.name);
    if (!tool) {
      return toolResult({
        ok: false,
        body: { error: `No tool named ${request.params.name}`, code: 'not_found' },
      });
    }
    return toolResult(await call(tool, request.params.arguments ?? {}));
  });
  return server;
}
