import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a scripted server answers, by request path (with its query); 404 for anything else. */
export type ScriptedRoutes = Record<string, { status?: number; body: string }>;

export interface ScriptedServer {
  /** Base URL, http://127.0.0.1:<port>. */
  readonly url: string;
  /** Replace to change what the next requests get. */
  routes: ScriptedRoutes;
  close(): Promise<void>;
}

/**
 * An HTTP server on 127.0.0.1 that serves whatever a test scripts: a log that lies (a forked
 * or rolled-back checkpoint, a forged key history) for the clients under test to catch.
 */
export async function startScriptedServer(): Promise<ScriptedServer> {
  const scripted = { routes: {} as ScriptedRoutes };
  const server = createServer((req, res) => {
    const route = scripted.routes[req.url ?? ''];
    res.writeHead(route?.status ?? (route ? 200 : 404));
    res.end(route?.body ?? 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(scripted, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
