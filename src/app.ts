import cors from 'cors';
import express, { type Express } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from 'pino';
import './api/locals.js';
import { docsRouter } from './api/docs-page.js';
import { errorHandler, notFound } from './api/middleware/errors.js';
import { jsonBody } from './api/middleware/json-body.js';
import { authenticateAndLimit } from './api/middleware/rate-limit.js';
import { assignRequestId } from './api/middleware/request-id.js';
import { buildOpenApiDocument } from './api/openapi.js';
import { mountRoutes, type RouteDef } from './api/route-table.js';
import { accountRoutes } from './api/routes/accounts.js';
import { claimRoutes } from './api/routes/claims.js';
import { ledgerRoutes } from './api/routes/ledger.js';
import { policyRoutes } from './api/routes/policies.js';
import { systemRoutes } from './api/routes/system.js';
import { verifyRoutes } from './api/routes/verify.js';
import { webhookRoutes } from './api/routes/webhooks.js';
import { DEFAULT_WEBHOOK_RETRY_DELAYS, type Config } from './config/config.js';
import { SERVICE_VERSION, SPEC_VERSION } from './core/version.js';
import { DELIVERY_TIMEOUT_MS, webhookDeliveryHandler } from './jobs/webhook-delivery.js';
import { newWebhookSecret } from './jobs/webhook-signing.js';
import type { Clock } from './ports/clock.js';
import type { JobQueue } from './ports/job-queue.js';
import type { SecretBox } from './ports/secret-box.js';
import type { ServerKey } from './ports/signer.js';
import type { Store } from './ports/store.js';
import { DELIVERY_JOB } from './ports/webhook-store.js';
import { ApiKeyService } from './services/api-keys.js';
import { ClaimService } from './services/claims.js';
import { HealthService } from './services/health.js';
import { LedgerReadService } from './services/ledger-reads.js';
import { Metrics } from './services/metrics.js';
import { PolicyService } from './services/policies.js';
import { SlidingWindowLimiter } from './services/rate-limiter.js';
import { systemResolver, type ResolveHost } from './services/webhook-url-guard.js';
import { WebhookService } from './services/webhooks.js';

export interface AppDeps {
  config: Pick<Config, 'anonLimitPerHour' | 'signupLimitPerHour' | 'trustProxy' | 'publicReads'> &
    Partial<Pick<Config, 'baseUrl' | 'allowPrivateWebhookUrls' | 'webhookRetryDelays'>>;
  store: Store;
  serverKey: ServerKey;
  box: SecretBox;
  clock: Clock;
  logger: Logger;
  /**
   * The queue that runs webhook deliveries; createApp registers its handler, the process
   * entry starts and stops it. Default: a queue of the store, never started.
   */
  jobs?: JobQueue;
  /** Overrides for tests: DNS answers, the per-attempt timeout, the jitter. */
  webhookDelivery?: { resolve?: ResolveHost; timeoutMs?: number; random?: () => number };
}

const EXPOSED_HEADERS = [
  'X-Request-Id',
  'X-Svc-Version',
  'X-Svc-Spec',
  'X-Svc-Key-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'Idempotent-Replay',
];

/** The composition root: wires every part into an Express app. Never listens. */
export function createApp(deps: AppDeps): Express {
  const { store, serverKey, clock, config } = deps;
  const jobs = deps.jobs ?? store.openJobQueue({ clock });
  const metrics = new Metrics({ ledger: store.ledger, queries: store.queries, jobs });
  const allowPrivate = config.allowPrivateWebhookUrls ?? false;
  const resolve = deps.webhookDelivery?.resolve ?? systemResolver;
  jobs.handle(
    DELIVERY_JOB,
    webhookDeliveryHandler({
      webhooks: store.webhooks,
      box: deps.box,
      clock,
      logger: deps.logger,
      retryDelaysMs: (config.webhookRetryDelays ?? DEFAULT_WEBHOOK_RETRY_DELAYS).map(
        (s) => s * 1000,
      ),
      timeoutMs: deps.webhookDelivery?.timeoutMs ?? DELIVERY_TIMEOUT_MS,
      allowPrivate,
      resolve,
      random: deps.webhookDelivery?.random,
      onOutcome: (outcome) => metrics.webhookDeliveries.inc({ outcome }),
    }),
  );
  const apiKeys = new ApiKeyService({ keys: store.apiKeys, box: deps.box, clock });
  const limits = {
    apiKeys,
    limiter: new SlidingWindowLimiter(clock),
    anonLimitPerHour: config.anonLimitPerHour,
    signupLimitPerHour: config.signupLimitPerHour,
    onRefused: (scope: string) => metrics.rateLimited.inc({ scope }),
  };
  const health = new HealthService({ store, serverKey, clock, jobs });
  let openapi: object | undefined;
  const routes: RouteDef[] = [
    ...systemRoutes({
      health,
      metrics,
      openapi: () => (openapi ??= buildOpenApiDocument(routes, config)),
    }),
    ...accountRoutes({ ...limits, ledger: store.ledger }),
    ...claimRoutes(
      new ClaimService({ ledger: store.ledger, policies: store.policies, serverKey, clock }),
      metrics,
    ),
    ...verifyRoutes({ ledger: store.ledger, serverKey }),
    ...ledgerRoutes(new LedgerReadService({ ledger: store.ledger, queries: store.queries, clock })),
    ...policyRoutes(new PolicyService({ policies: store.policies, clock })),
    ...webhookRoutes(
      new WebhookService({
        webhooks: store.webhooks,
        box: deps.box,
        clock,
        allowPrivate,
        resolve,
        newSecret: newWebhookSecret,
      }),
    ),
  ];

  const app = express();
  app.disable('x-powered-by');
  // No ETag: hashing every body (a search page is ~140 KiB) costs more than API clients,
  // which do not revalidate, ever save.
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy);

  app.use((req, res, next) => {
    res.setHeader('X-Svc-Version', SERVICE_VERSION);
    res.setHeader('X-Svc-Spec', SPEC_VERSION);
    const end = metrics.httpDuration.startTimer({ method: req.method });
    res.on('finish', () =>
      end({ route: res.locals.route ?? 'unmatched', status: String(res.statusCode) }),
    );
    next();
  });
  app.use(
    pinoHttp({
      logger: deps.logger,
      genReqId: assignRequestId,
      customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
      // Only what an operator needs: never headers, which carry API keys.
      serializers: {
        req: (req) => ({ id: req.id, method: req.method, url: req.url, remote: req.remoteAddress }),
        res: (res) => ({ status: res.statusCode }),
      },
      customProps: (_req, res) => {
        const key = (res as express.Response).locals?.apiKey;
        return key ? { key_id: key.id } : {};
      },
    }),
  );
  app.use(
    cors({
      origin: '*',
      methods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
      allowedHeaders: ['Content-Type', 'X-API-Key', 'Authorization', 'X-Request-Id'],
      exposedHeaders: EXPOSED_HEADERS,
      optionsSuccessStatus: 204,
      preflightContinue: true,
    }),
  );
  app.use(authenticateAndLimit(limits));
  // Preflights end here, once the limiter has set its headers.
  app.use((req, res, next) => (req.method === 'OPTIONS' ? void res.status(204).end() : next()));
  app.use(jsonBody());

  const api = express.Router();
  mountRoutes(api, routes, config);
  app.use(api);
  app.use(docsRouter());

  app.use(notFound);
  app.use(errorHandler);
  return app;
}
