import type { LedgerStore } from '../../ports/ledger-store.js';
import { TIER_LIMITS, type ApiKeyService } from '../../services/api-keys.js';
import type { RateLimiter } from '../../ports/rate-limiter.js';
import { limitSignups, type LimitDeps } from '../middleware/rate-limit.js';
import { defineRoute, type RouteDef } from '../route-table.js';
import {
  accountSchema,
  revokedSchema,
  signupRequestSchema,
  signupResponseSchema,
} from '../schemas/accounts.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const show = (n: number) => (n === Number.POSITIVE_INFINITY ? ('unlimited' as const) : n);

export function accountRoutes(
  deps: LimitDeps & {
    apiKeys: ApiKeyService;
    ledger: LedgerStore;
    limiter: RateLimiter;
  },
): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/signup',
      operationId: 'signup',
      tag: 'Accounts',
      summary: 'Get an API key',
      description:
        'Issues a free-tier key (sk_svc_<uuid>) and its public key_id. The key is shown only in this response. An address that already has a key, or whose account was revoked (compared trimmed and case-folded), is 409 email_registered: rotate the key with POST /v1/account/rotate, or ask the operator to replace a lost or revoked one. Limited per client address; not readable cross-origin.',
      access: 'public',
      crossOrigin: false,
      body: signupRequestSchema,
      before: [limitSignups(deps)],
      response: { status: 201, description: 'The API key.', schema: signupResponseSchema },
      errors: [409],
      async handle({ body }) {
        const { apiKey, record } = await deps.apiKeys.signup(body.email);
        return {
          api_key: apiKey,
          key_id: record.keyId,
          message:
            'API key created on the free tier (100 requests per hour). Send it as "X-API-Key: <key>". It is shown only now: store it.',
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/account',
      operationId: 'getAccount',
      tag: 'Accounts',
      summary: 'Key id, tier, lock, rate-limit status and usage of the calling key',
      description:
        "The calling key's id, email, tier, locked policy (if any), its rate limit with what is left of the one-hour sliding window and when it empties, requests counted in the window, receipts the account issued, and when the key was created.",
      access: 'key',
      response: { status: 200, description: 'The account of the key.', schema: accountSchema },
      async handle({ res }) {
        const key = res.locals.apiKey!;
        const limit = TIER_LIMITS[key.tier];
        const status = await deps.limiter.peek(`key:${key.id}`, limit);
        return {
          key_id: key.keyId,
          email: key.email,
          tier: key.tier,
          locked_policy: key.lockedPolicy,
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
    defineRoute({
      method: 'post',
      path: '/v1/account/rotate',
      operationId: 'rotateKey',
      tag: 'Accounts',
      summary: 'Replace the calling key with a new one',
      description:
        'Issues a new key (new key_id) for the same account — tier, lock, policies, rate-limit window and claim_id scope carry over — and revokes the calling key at once. No body.',
      access: 'key',
      response: { status: 201, description: 'The new key.', schema: signupResponseSchema },
      async handle({ res }) {
        const { apiKey, record } = await deps.apiKeys.rotate(res.locals.apiKey!);
        return {
          api_key: apiKey,
          key_id: record.keyId,
          message: `Key ${res.locals.apiKey!.keyId} is revoked; use this one from now on. It is shown only now: store it.`,
        };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/account',
      operationId: 'revokeKey',
      tag: 'Accounts',
      summary: 'Revoke the calling key',
      description:
        "The key answers 401 from now on, and the account's outbound webhook receivers are disabled. Receipts it obtained stay in the ledger and keep verifying. The e-mail address cannot sign up again (409 email_registered): only the operator issues it a new key. A key locked to a policy is 403 locked_key and stays valid: only the operator revokes it.",
      access: 'key',
      response: { status: 200, description: 'Revoked.', schema: revokedSchema },
      errors: [403],
      async handle({ res }) {
        const key = res.locals.apiKey!;
        // The key and the account's webhook receivers, in one transaction.
        await deps.apiKeys.revokeOwn(key);
        return { revoked: true as const, key_id: key.keyId };
      },
    }),
  ];
}
