import express, { type Express } from 'express';
import type { Logger } from 'pino';
import './api/locals.js';
import { docsRouter } from './api/docs-page.js';
import { errorHandler, notFound } from './api/middleware/errors.js';
import { jsonBody } from './api/middleware/json-body.js';
import { authenticateAndLimit } from './api/middleware/rate-limit.js';
import { requestLogging } from './api/middleware/request-log.js';
import { securityHeaders } from './api/middleware/security-headers.js';
import { buildOpenApiDocument } from './api/openapi.js';
import { crossOriginHeaders, mountRoutes, type RouteDef } from './api/route-table.js';
import { accountRoutes } from './api/routes/accounts.js';
import { claimRoutes } from './api/routes/claims.js';
import { dispositionRoutes } from './api/routes/dispositions.js';
import { ledgerRoutes } from './api/routes/ledger.js';
import { logRoutes } from './api/routes/log.js';
import { policyRoutes } from './api/routes/policies.js';
import { systemRoutes } from './api/routes/system.js';
import { verifyRoutes } from './api/routes/verify.js';
import { webhookRoutes } from './api/routes/webhooks.js';
import { DEFAULT_WEBHOOK_RETRY_DELAYS, type Config } from './config/config.js';
import { SvcError } from './core/errors.js';
import { explorerRouter } from './explorer/router.js';
import { SERVICE_VERSION, SPEC_VERSION } from './core/version.js';
import type { ProbotOctokit } from 'probot';
import {
  DELIVERY_JOB as GITHUB_DELIVERY_JOB,
  WEBHOOK_PATH,
  webhookRoute,
} from './github/webhook-route.js';
import { DELIVERY_TIMEOUT_MS, webhookDeliveryHandler } from './jobs/webhook-delivery.js';
import { newWebhookSecret } from './jobs/webhook-signing.js';
import type { Clock } from './ports/clock.js';
import type { JobQueue } from './ports/job-queue.js';
import type { RateLimiter } from './ports/rate-limiter.js';
import type { SecretBox } from './ports/secret-box.js';
import type { ServerKey } from './ports/signer.js';
import type { Store } from './ports/store.js';
import { DELIVERY_JOB } from './ports/webhook-store.js';
import { ApiKeyService } from './services/api-keys.js';
import type { ReceiptSealer } from './ports/receipt-sealer.js';
import { ClaimService } from './services/claims.js';
import { DispositionService } from './services/dispositions.js';
import { SessionService } from './services/sessions.js';
import { sessionRoutes } from './api/routes/sessions.js';
import { HealthService } from './services/health.js';
import { LedgerReadService } from './services/ledger-reads.js';
import { logOriginFor } from './services/log-origin.js';
import { Metrics } from './services/metrics.js';
import { nativeHashBytes, nativeSha256Hex } from '@svc/verify/node';
import { PolicyService } from './services/policies.js';
import { SlidingWindowLimiter } from './services/rate-limiter.js';
import { SigningKeyService } from './services/signing-keys.js';
import { systemResolver, type ResolveHost } from './services/webhook-url-guard.js';
import { TransparencyLog } from './services/transparency-log.js';
import { WebhookService } from './services/webhooks.js';

export interface AppDeps {
  config: Pick<Config, 'anonLimitPerHour' | 'signupLimitPerHour' | 'trustProxy' | 'publicReads'> &
    Partial<
      Pick<
        Config,
        | 'baseUrl'
        | 'contactEmail'
        | 'logOrigin'
        | 'webhookSecret'
        | 'github'
        | 'allowPrivateWebhookUrls'
        | 'webhookRetryDelays'
        | 'witnesses'
      >
    >;
  /** Octokit defaults for the GitHub App (tests turn retries and throttling off). */
  githubOctokit?: typeof ProbotOctokit;
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
  /**
   * Request budgets. Default: this process's memory; several worker processes pass one on a
   * shared file, so that a key's window is one window.
   */
  limiter?: RateLimiter;
  /** Overrides for tests: DNS answers, the per-attempt timeout, the jitter. */
  webhookDelivery?: { resolve?: ResolveHost; timeoutMs?: number; random?: () => number };
  /** The explorer's built browser script (default: where npm run build writes it). */
  explorerScript?: string;
  /**
   * The origin kept with the ledger (establishLogOrigin). Default: the one a new ledger would
   * take from the configuration.
   */
  logOrigin?: string;
  /**
   * Who signs and appends receipts. Default: this process; a worker of several passes the one
   * writing process's (src/cluster).
   */
  sealer?: ReceiptSealer;
}

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
  const apiKeys = new ApiKeyService({ keys: store.apiKeys, clock });
  const policies = new PolicyService({ policies: store.policies, clock });
  // The origin kept with the ledger (server.ts establishes it before the app is built).
  const logOrigin = deps.logOrigin ?? logOriginFor(config.logOrigin, serverKey.keyId);
  // The server hashes with node:crypto; the core defaults to @noble/hashes for the CLI,
  // the Action and browsers.
  const sha256Hex = nativeSha256Hex;
  const claims = new ClaimService({
    ledger: store.ledger,
    policies,
    serverKey,
    clock,
    logOrigin,
    sha256Hex,
    sealer: deps.sealer,
  });
  const dispositions = new DispositionService({
    ledger: store.ledger,
    queries: store.queries,
    serverKey,
    clock,
    logOrigin,
    sha256Hex,
    sealer: deps.sealer,
  });
  const github = config.github;
  const githubReady = github?.appId !== undefined && github.privateKey !== undefined;
  if (github && githubReady) {
    // Probot and Octokit (tens of MB) are loaded only for a configured App. The handler is
    // registered on the queue at once; every delivery waits for them to load.
    const handler = import('./github/github-app.js').then(({ githubDeliveryHandler }) =>
      githubDeliveryHandler({
        config: {
          ...github,
          appId: github.appId!,
          privateKey: github.privateKey!,
          webhookSecret: config.webhookSecret,
        },
        claims,
        dispositions,
        queries: store.queries,
        clock,
        baseUrl: config.baseUrl ?? 'http://localhost:3000',
        log: deps.logger,
        Octokit: deps.githubOctokit,
        onReceipt: (response, replayed) => {
          if (!replayed)
            metrics.receiptsIssued.inc({
              verdict: response.receipt.policy.verdict,
              admissibility: response.receipt.admissibility.status,
            });
        },
      }),
    );
    handler.catch((error: unknown) =>
      deps.logger.error({ err: error }, 'GitHub App failed to load'),
    );
    jobs.handle(GITHUB_DELIVERY_JOB, async (job) => (await handler)(job));
  }
  const limits = {
    apiKeys,
    limiter: deps.limiter ?? new SlidingWindowLimiter(clock),
    anonLimitPerHour: config.anonLimitPerHour,
    signupLimitPerHour: config.signupLimitPerHour,
    onRefused: (scope: string) => metrics.rateLimited.inc({ scope }),
  };
  let openapi: object | undefined;
  const signingKeys = new SigningKeyService({
    store: store.signingKeys,
    clock,
    origin: logOrigin,
    // Verify reads the history on every request; another process's change (a service
    // started with a new key) shows within seconds, as a revoked API key's does.
    cacheMs: 5_000,
  });
  const health = new HealthService({ store, serverKey, clock, jobs, signingKeys });
  const transparencyLog = new TransparencyLog({
    tree: store.tree,
    ledger: store.ledger,
    // node:crypto, as the store's appends hash the tree: proofs hash the leaf and nodes.
    hash: nativeHashBytes,
    serverKey,
    clock,
    origin: logOrigin,
    signingKeys,
    witnesses: (config.witnesses ?? []).map((w) => w.name),
  });
  const reads = new LedgerReadService({ ledger: store.ledger, queries: store.queries, clock });
  const routes: RouteDef[] = [
    ...systemRoutes({
      health,
      metrics,
      openapi: () => (openapi ??= buildOpenApiDocument(routes, config)),
    }),
    ...accountRoutes({ ...limits, ledger: store.ledger }),
    ...claimRoutes(claims, metrics),
    ...dispositionRoutes(dispositions, metrics, config),
    ...verifyRoutes({
      ledger: store.ledger,
      serverKey,
      logOrigin,
      sha256Hex,
      hashBytes: nativeHashBytes,
      keys: signingKeys,
      log: transparencyLog,
    }),
    ...logRoutes(transparencyLog, {
      publicReads: config.publicReads,
      holds: async (receiptId, scope) =>
        (await store.queries.getMany([receiptId], scope)).length > 0,
    }),
    ...ledgerRoutes(reads, config),
    ...sessionRoutes(new SessionService({ sessions: store.sessions }), config),
    ...policyRoutes(policies),
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

  const setSecurityHeaders = securityHeaders();
  app.use(
    requestLogging(deps.logger, {
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
      queue: githubReady ? jobs : null,
      log: deps.logger,
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
  app.use(authenticateAndLimit(limits));
  // Preflights end here, once the limiter has set its headers.
  app.use((req, res, next) => (req.method === 'OPTIONS' ? void res.status(204).end() : next()));
  app.use(jsonBody());

  const api = express.Router();
  mountRoutes(api, routes, config);
  app.use(api);
  app.use(docsRouter());
  app.use(
    explorerRouter({
      reads,
      dispositions,
      log: transparencyLog,
      keys: signingKeys,
      logOrigin,
      witnesses: (config.witnesses ?? []).map((w) => ({
        name: w.name,
        verifierKey: w.verifierKey,
      })),
      publicReads: config.publicReads,
      clientScript: deps.explorerScript,
    }),
  );

  app.use(notFound);
  app.use(errorHandler);
  return app;
}
