import { Router } from 'express';
import { SERVICE_NAME, SERVICE_VERSION } from '../../core/version.js';
import type { HealthService } from '../../services/health.js';

export function healthRouter(health: HealthService): Router {
  const router = Router();
  router.get('/health', async (req, res) => {
    const base = { ok: true, service: SERVICE_NAME, version: SERVICE_VERSION };
    if (req.query.deep !== 'true') return void res.json(base);
    const checks = await health.deepChecks();
    const ok = Object.values(checks).every((c) => c.ok);
    res.status(ok ? 200 : 503).json({ ...base, ok, checks });
  });
  router.get('/v1/status', async (_req, res) => {
    res.json(await health.status());
  });
  router.get('/v1/ledger/stats', async (_req, res) => {
    res.json(await health.ledgerStats());
  });
  return router;
}
