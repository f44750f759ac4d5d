export const MCP_HELP = `svc mcp — svc's MCP server over stdio, for MCP clients (docs/MCP.md)

Usage:
  SVC_URL=<url> SVC_API_KEY=<key> svc mcp

Every tool call is a request to the REST API of the svc at SVC_URL, with SVC_API_KEY as its
X-API-Key. Tools: evaluate_claim, simulate_claim, verify_receipt, get_receipt,
search_receipts, request_disposition.`;

/**
 * Serves MCP on stdin/stdout until the client closes it. Nothing but JSON-RPC goes to
 * stdout; diagnostics go to stderr.
 */
export async function mcpCommand(
  env: NodeJS.ProcessEnv,
  usage: (message: string) => never,
): Promise<number> {
  const url = env.SVC_URL;
  const apiKey = env.SVC_API_KEY;
  if (!url) return usage('svc mcp needs SVC_URL, the base URL of a running svc');
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
    return usage(`SVC_URL is not an http(s) URL: ${url}`);
  if (!apiKey) return usage('svc mcp needs SVC_API_KEY, an API key of that svc');
  // Loaded here, not at the CLI's start: every other svc command would pay for the MCP SDK.
  const [{ StdioServerTransport }, { httpCaller }, { createMcpServer }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    import('../mcp/http-caller.js'),
    import('../mcp/mcp-server.js'),
  ]);
  const server = createMcpServer(httpCaller({ url, apiKey }));
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
    process.stdin.on('end', resolve);
  });
  await server.connect(transport);
  await closed;
  return 0;
}
