import express, { type Express } from 'express';
import './api/locals.js';
import { docsRouter } from './api/docs-page.js';
import { errorHandler, notFound } from './api/middleware/errors.js';
import { jsonBody } from './api/middleware/json-body.js';
import { authenticateAndLimit, requireKey } from './api/middleware/rate-limit.js';
import { requestLogging } from './api/middleware/request-log.js';
import { securityHeaders } from './api/middleware/security-headers.js';
import { buildOpenApiDocument } from './api/openapi.js';
import { crossOriginHeaders, mountRoutes, type RouteDef } from './api/route-table.js';
import { accountRoutes } from './api/routes/accounts.js';
import { attestationRoutes } from './api/routes/attestation.js';
import { authzenRoutes, echoAuthzenRequestId, isAuthzenRequest } from './api/routes/authzen.js';
import { claimRoutes } from './api/routes/claims.js';
import { dispositionRoutes } from './api/routes/dispositions.js';
import { hookRoutes } from './api/routes/hooks.js';
import { ledgerRoutes } from './api/routes/ledger.js';
import { logRoutes } from './api/routes/log.js';
import { policyRoutes } from './api/routes/policies.js';
import { sessionRoutes } from './api/routes/sessions.js';
import { systemRoutes } from './api/routes/system.js';
import { verifyRoutes } from './api/routes/verify.js';
import { webhookRoutes } from './api/routes/webhooks.js';
import { SvcError } from './core/errors.js';
import { SERVICE_VERSION, SPEC_VERSION } from './core/version.js';
import { explorerRouter } from './explorer/router.js';
import { WEBHOOK_PATH, webhookRoute } from './github/webhook-route.js';
import { MCP_PATH, mcpHandler } from './mcp/in-process.js';
import type { LedgerRuntime } from './runtime/ledger-runtime.js';

export interface HttpOptions {
  /** The explorer's built browser script (default: where npm run build writes it). */
  explorerScript?: string;
}

/**
 * The API's routes over the runtime's services: a new transport (a hook endpoint, a gateway)
 * adds its routes here and reaches the ledger only through the runtime's services.
 */
function apiRoutes(
  runtime: LedgerRuntime,
  limits: Parameters<typeof accountRoutes>[0],
): RouteDef[] {
  const { config, store, metrics } = runtime;
  let openapi: object | undefined;
  const routes: RouteDef[] = [
    ...systemRoutes({
      health: runtime.health,
      metrics,
      openapi: () => (openapi ??= buildOpenApiDocument(routes, config)),
    }),
    ...accountRoutes(limits),
    ...claimRoutes(runtime.claims, metrics),
    ...hookRoutes(runtime.agentHooks),
    ...dispositionRoutes(runtime.dispositions, metrics, config),
    ...verifyRoutes({
      ledger: store.ledger,
      serverKey: runtime.serverKey,
      logOrigin: runtime.logOrigin,
      sha256Hex: runtime.sha256Hex,
      hashBytes: runtime.hashBytes,
      keys: runtime.signingKeys,
      log: runtime.transparencyLog,
    }),
    ...logRoutes(runtime.transparencyLog, {
      publicReads: config.publicReads,
      holds: async (receiptId, scope) =>
        (await store.queries.getMany([receiptId], scope)).length > 0,
    }),
    ...ledgerRoutes(runtime.reads, config),
    ...sessionRoutes(runtime.sessions, config),
    ...policyRoutes(runtime.policies),
    ...webhookRoutes(runtime.webhooks),
    ...authzenRoutes(runtime.authzen, runtime.baseUrl),
    ...attestationRoutes({
      reads: runtime.reads,
      signer: runtime.serverKey,
      baseUrl: runtime.baseUrl,
      publicReads: config.publicReads,
    }),
  ];
  return routes;
}

/** HTTP over the ledger runtime: middleware, the API, the docs and the explorer. Never listens. */
export function createApp(runtime: LedgerRuntime, options: HttpOptions = {}): Express {
  const { config, metrics } = runtime;
  const limits = {
    apiKeys: runtime.apiKeys,
    limiter: runtime.limiter,
    anonLimitPerHour: config.anonLimitPerHour,
    signupLimitPerHour: config.signupLimitPerHour,
    onRefused: (scope: string) => metrics.rateLimited.inc({ scope }),
    ledger: runtime.store.ledger,
  };
  const routes = apiRoutes(runtime, limits);

  const app = express();
  app.disable('x-powered-by');
  // No ETag: hashing every body (a search page is ~140 KiB) costs more than API clients,
  // which do not revalidate, ever save.
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy);

  const setSecurityHeaders = securityHeaders();
  app.use(
    requestLogging(runtime.logger, {
      leadingHeaders: (res) => {
        res.setHeader('X-Svc-Version', SERVICE_VERSION);
        res.setHeader('X-Svc-Spec', SPEC_VERSION);
      },
      trailingHeaders: setSecurityHeaders,
      finished: (req, res, seconds) =>
        metrics.httpDuration.observe(
          {
            method: req.method!,
            route: (res as express.Response).locals.route ?? 'unmatched',
            status: String(res.statusCode),
          },
          seconds,
        ),
    }),
  );
  // Before the rate limiter: GitHub's deliveries are authenticated by their signature and
  // come from a few addresses that an address budget would soon refuse.
  app.post(
    WEBHOOK_PATH,
    ...webhookRoute({
      secret: config.webhookSecret,
      queue: runtime.githubReady ? runtime.jobs : null,
      log: runtime.logger,
    }),
  );
  app.use(WEBHOOK_PATH, (req, _res, next) => {
    if (req.method === 'OPTIONS' || req.path !== '/') return next();
    throw new SvcError(
      'method_not_allowed',
      `${req.method} is not allowed on ${WEBHOOK_PATH}; use POST`,
      { headers: { Allow: 'POST, OPTIONS' } },
    );
  });
  app.use(crossOriginHeaders(routes, config));
  app.use(echoAuthzenRequestId);
  app.use(authenticateAndLimit(limits));
  // Preflights end here, once the limiter has set its headers.
  app.use((req, res, next) => (req.method === 'OPTIONS' ? void res.status(204).end() : next()));
  // AuthZEN §10.1: a request that is not application/json is a 400 there, not a 415.
  app.use(jsonBody({ badMediaTypeIs400: (req) => isAuthzenRequest(req.path) }));

  // svc's own MCP server, stateless streamable HTTP: its tools run the routes below under
  // this request's key, so authentication, rate limits and read scope are the API's.
  const label: express.RequestHandler = (_req, res, next) => {
    res.locals.route = MCP_PATH;
    next();
  };
  app.post(MCP_PATH, label, requireKey, mcpHandler(routes));
  app.all(MCP_PATH, label, (req) => {
    throw new SvcError(
      'method_not_allowed',
      `${req.method} is not allowed on ${MCP_PATH}: svc's MCP server is stateless; use POST`,
      { headers: { Allow: 'POST, OPTIONS' } },
    );
  });

  const api = express.Router();
  mountRoutes(api, routes, config);
  app.use(api);
  app.use(docsRouter());
  app.use(
    explorerRouter({
      reads: runtime.reads,
      sessions: runtime.sessions,
      dispositions: runtime.dispositions,
      log: runtime.transparencyLog,
      keys: runtime.signingKeys,
      logOrigin: runtime.logOrigin,
      witnesses: (config.witnesses ?? []).map((w) => ({
        name: w.name,
        verifierKey: w.verifierKey,
      })),
      publicReads: config.publicReads,
      clientScript: options.explorerScript,
    }),
  );

  app.use(notFound);
  app.use(errorHandler);
  return app;
}
