import cors from 'cors';
import express, { type Express } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from 'pino';
import './api/locals.js';
import { errorHandler, notFound } from './api/middleware/errors.js';
import { jsonBody } from './api/middleware/json-body.js';
import { authenticateAndLimit } from './api/middleware/rate-limit.js';
import { assignRequestId } from './api/middleware/request-id.js';
import { accountsRouter } from './api/routes/accounts.js';
import { claimsRouter } from './api/routes/claims.js';
import { healthRouter } from './api/routes/health.js';
import { keysRouter } from './api/routes/keys.js';
import { verifyRouter } from './api/routes/verify.js';
import type { Config } from './config/config.js';
import { SERVICE_VERSION, SPEC_VERSION } from './core/version.js';
import type { Clock } from './ports/clock.js';
import type { SecretBox } from './ports/secret-box.js';
import type { ServerKey } from './ports/signer.js';
import type { Store } from './ports/store.js';
import { ApiKeyService } from './services/api-keys.js';
import { ClaimService } from './services/claims.js';
import { HealthService } from './services/health.js';
import { SlidingWindowLimiter } from './services/rate-limiter.js';

export interface AppDeps {
  config: Pick<Config, 'anonLimitPerHour' | 'signupLimitPerHour' | 'trustProxy'>;
  store: Store;
  serverKey: ServerKey;
  box: SecretBox;
  clock: Clock;
  logger: Logger;
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
  const { store, serverKey, clock } = deps;
  const apiKeys = new ApiKeyService({ keys: store.apiKeys, box: deps.box, clock });
  const limits = {
    apiKeys,
    limiter: new SlidingWindowLimiter(clock),
    anonLimitPerHour: deps.config.anonLimitPerHour,
    signupLimitPerHour: deps.config.signupLimitPerHour,
  };

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.config.trustProxy);

  app.use((_req, res, next) => {
    res.setHeader('X-Svc-Version', SERVICE_VERSION);
    res.setHeader('X-Svc-Spec', SPEC_VERSION);
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
      methods: ['GET', 'POST', 'OPTIONS'],
      allowedHeaders: ['Content-Type', 'X-API-Key', 'Authorization', 'X-Request-Id'],
      exposedHeaders: EXPOSED_HEADERS,
      optionsSuccessStatus: 204,
      preflightContinue: false,
    }),
  );
  app.use(authenticateAndLimit(limits));
  app.use(jsonBody());

  app.use(healthRouter(new HealthService({ store, serverKey, clock })));
  app.use(accountsRouter({ ...limits, ledger: store.ledger }));
  app.use(claimsRouter(new ClaimService({ ledger: store.ledger, serverKey, clock })));
  app.use(verifyRouter({ ledger: store.ledger, serverKey }));
  app.use(keysRouter(serverKey));

  app.use(notFound);
  app.use(errorHandler);
  return app;
}
