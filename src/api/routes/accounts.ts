import type { LedgerStore } from '../../ports/ledger-store.js';
import { TIER_LIMITS, type ApiKeyService } from '../../services/api-keys.js';
import type { SlidingWindowLimiter } from '../../services/rate-limiter.js';
import { limitSignups, type LimitDeps } from '../middleware/rate-limit.js';
import { defineRoute, type RouteDef } from '../route-table.js';
import { accountSchema, signupRequestSchema, signupResponseSchema } from '../schemas/accounts.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const show = (n: number) => (n === Number.POSITIVE_INFINITY ? ('unlimited' as const) : n);

export function accountRoutes(
  deps: LimitDeps & { apiKeys: ApiKeyService; ledger: LedgerStore; limiter: SlidingWindowLimiter },
): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/signup',
      operationId: 'signup',
      tag: 'Accounts',
      summary: 'Get an API key',
      description:
        'Issues a free-tier key (sk_svc_<uuid>). An address that already has a key receives the same key again, also with 201. Limited per client address.',
      access: 'public',
      body: signupRequestSchema,
      before: [limitSignups(deps)],
      response: { status: 201, description: 'The API key.', schema: signupResponseSchema },
      async handle({ body }) {
        const { apiKey, created } = await deps.apiKeys.signup(body.email);
        return {
          api_key: apiKey,
          message: created
            ? 'API key created on the free tier (100 requests per hour). Send it as "X-API-Key: <key>".'
            : 'This e-mail address already has an API key; here it is again.',
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/account',
      operationId: 'getAccount',
      tag: 'Accounts',
      summary: 'Tier, rate-limit status and usage of the calling key',
      access: 'key',
      response: { status: 200, description: 'The account of the key.', schema: accountSchema },
      async handle({ res }) {
        const key = res.locals.apiKey!;
        const limit = TIER_LIMITS[key.tier];
        const status = deps.limiter.peek(`key:${key.id}`, limit);
        return {
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
        };
      },
    }),
  ];
}
