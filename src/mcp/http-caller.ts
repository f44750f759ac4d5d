import { isObjectSchema, type McpTool, type ToolCaller, type ToolOutcome } from './tools.js';

export interface SvcEndpoint {
  /** The service's base URL, e.g. http://127.0.0.1:3000 */
  url: string;
  apiKey: string;
}

/** The REST request a tool stands for: its path parameters in the path, the rest as query or body. */
function restRequest(tool: McpTool, args: Record<string, unknown>, base: string) {
  const used = new Set<string>();
  const path = tool.path.replace(/:(\w+)/g, (_match, name: string) => {
    used.add(name);
    return encodeURIComponent(String(args[name] ?? ''));
  });
  const url = new URL(path, base.endsWith('/') ? base : `${base}/`);
  for (const name of Object.keys(tool.query?.shape ?? {})) {
    used.add(name);
    const value = args[name];
    if (value !== undefined) url.searchParams.set(name, String(value));
  }
  let body: unknown;
  if (tool.body) {
    body = isObjectSchema(tool.body)
      ? Object.fromEntries(Object.entries(args).filter(([name]) => !used.has(name)))
      : args[tool.bodyField ?? 'body'];
  }
  return { url, body };
}

/** Runs each tool as a request to a running svc's REST API, with its API key. */
export function httpCaller(endpoint: SvcEndpoint, fetchImpl: typeof fetch = fetch): ToolCaller {
  return async (tool, args): Promise<ToolOutcome> => {
    const given = (typeof args === 'object' && args !== null ? args : {}) as Record<
      string,
      unknown
    >;
    const { url, body } = restRequest(tool, given, endpoint.url);
    try {
      const response = await fetchImpl(url, {
        method: tool.method.toUpperCase(),
        headers: {
          'X-API-Key': endpoint.apiKey,
          Accept: 'application/json',
          ...(tool.body ? { 'Content-Type': 'application/json' } : {}),
        },
        ...(tool.body ? { body: JSON.stringify(body ?? null) } : {}),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = {
          error: `svc answered ${response.status} with a body that is not JSON`,
          code: 'internal',
        };
        return { ok: false, body: parsed };
      }
      return { ok: response.ok, body: parsed };
    } catch (error) {
      return {
        ok: false,
        body: {
          error: `svc at ${endpoint.url} could not be reached: ${(error as Error).message}`,
          code: 'unavailable',
        },
      };
    }
  };
}
