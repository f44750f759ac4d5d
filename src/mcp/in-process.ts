import { isVerifyError } from '@svc/verify';
import type { Request, RequestHandler, Response } from 'express';
import { isSvcError, SvcError } from '../core/errors.js';
import type { RouteDef } from '../api/route-table.js';
import { JsonText } from '../services/json-text.js';
import { MCP_TOOLS, validateArguments, type McpTool, type ToolCaller } from './tools.js';

export const MCP_PATH = '/mcp';

/**
 * The response a route handler writes to when a tool runs it: the calling request's locals
 * (its key, its read scope), and whatever the handler sends kept as the tool's answer.
 */
function capturingResponse(res: Response): { res: Response; sent: () => unknown } {
  let sent: unknown;
  let wasSent = false;
  const capture = {
    locals: res.locals,
    headersSent: false,
    setHeader: () => capture,
    set: () => capture,
    type: () => capture,
    status: () => capture,
    json: (value: unknown) => {
      sent = value;
      wasSent = true;
      return capture;
    },
    send: (value: unknown) => {
      sent = value;
      wasSent = true;
      return capture;
    },
  };
  return { res: capture as unknown as Response, sent: () => (wasSent ? sent : undefined) };
}

/**
 * Runs a tool through the route of the same method and path: the same schemas, the same
 * handler and so the same services, under the key and read scope of the /mcp request.
 */
export function inProcessCaller(
  routes: ReadonlyMap<McpTool, RouteDef>,
  req: Request,
  res: Response,
): ToolCaller {
  return async (tool: McpTool, args: unknown) => {
    try {
      const route = routes.get(tool);
      if (!route) throw new SvcError('not_found', `No route for ${tool.method} ${tool.path}`);
      const input = validateArguments(tool, args);
      const captured = capturingResponse(res);
      const result = await route.handle({ ...input, req, res: captured.res });
      const body = captured.sent() ?? result;
      return {
        ok: true,
        body: body instanceof JsonText ? JSON.parse(body.bytes.toString('utf8')) : body,
      };
    } catch (error) {
      const known =
        (isSvcError(error) && error) ||
        (isVerifyError(error) && new SvcError(error.code, error.message)) ||
        null;
      if (!known) req.log?.error({ err: error }, 'mcp tool failed');
      const failure = known || new SvcError('internal', 'Internal server error');
      return {
        ok: false,
        body: { error: failure.message, code: failure.code, request_id: req.id },
      };
    }
  };
}

/**
 * Each tool's route, found once. A tool whose route is gone, or whose schemas are not the
 * route's own objects, stops the app from being built: the tools cannot drift from the API.
 */
export function routesOfTools(routes: RouteDef[]): Map<McpTool, RouteDef> {
  return new Map(
    MCP_TOOLS.map((tool) => {
      const route = routes.find((r) => r.method === tool.method && r.path === tool.path);
      if (
        !route ||
        route.params !== tool.params ||
        route.query !== tool.query ||
        route.body !== tool.body
      ) {
        throw new Error(
          `MCP tool ${tool.name} does not match the route ${tool.method.toUpperCase()} ${tool.path}`,
        );
      }
      return [tool, route];
    }),
  );
}

/** The MCP SDK's server and transport, loaded on the first /mcp request, once. */
const loadSdk = (() => {
  let loaded: ReturnType<typeof load> | undefined;
  const load = () =>
    Promise.all([
      import('./mcp-server.js'),
      import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    ]);
  return () => (loaded ??= load());
})();

/**
 * Stateless streamable HTTP: each POST gets a server and a transport of its own, so a tool
 * call is one HTTP request, authenticated and rate limited as any other key route. The tools
 * are matched to their routes when the app is built; the SDK is loaded on the first request
 * (it is about a third of the service's modules, and most services are never asked over MCP).
 */
export function mcpHandler(routes: RouteDef[]): RequestHandler {
  const byTool = routesOfTools(routes);
  return async (req, res) => {
    const [{ createMcpServer }, { StreamableHTTPServerTransport }] = await loadSdk();
    const server = createMcpServer(inProcessCaller(byTool, req, res));
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  };
}
