import { Router } from 'express';
import { z } from 'zod';
import { TIER_LIMITS, type ApiKeyService } from '../../services/api-keys.js';
import type { LedgerStore } from '../../ports/ledger-store.js';
import type { SlidingWindowLimiter } from '../../services/rate-limiter.js';
import { limitSignups, requireKey, type LimitDeps } from '../middleware/rate-limit.js';
import { validate } from '../validate.js';

export const signupSchema = z.strictObject({
  email: z.email({ error: 'must be an e-mail address' }).max(254),
});

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const show = (n: number) => (n === Number.POSITIVE_INFINITY ? 'unlimited' : n);

export function accountsRouter(
  deps: LimitDeps & { apiKeys: ApiKeyService; ledger: LedgerStore; limiter: SlidingWindowLimiter },
): Router {
  const router = Router();
  router.post('/v1/signup', limitSignups(deps), async (req, res) => {
    const { email } = validate(signupSchema, req.body);
    const { apiKey, created } = await deps.apiKeys.signup(email);
    res.status(201).json({
      api_key: apiKey,
      message: created
        ? 'API key created on the free tier (100 requests per hour). Send it as "X-API-Key: <key>".'
        : 'This e-mail address already has an API key; here it is again.',
    });
  });

  router.get('/v1/account', requireKey, async (_req, res) => {
    const key = res.locals.apiKey!;
    const limit = TIER_LIMITS[key.tier];
    const status = deps.limiter.peek(`key:${key.id}`, limit);
    res.json({
      email: key.email,
      tier: key.tier,
      limit: show(limit),
      remaining: show(status.remaining),
      window_seconds: 3600,
      reset_at: iso(status.resetAt),
      usage: {
        requests_in_window: status.used,
        receipts_issued: await deps.ledger.countByApiKey(key.id),
      },
      created_at: key.createdAt,
    });
  });
  return router;
}
