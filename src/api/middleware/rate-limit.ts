import type { Request, RequestHandler, Response } from 'express';
import { SvcError } from '../../core/errors.js';
import { clientAddress } from '../client-address.js';
import { TIER_LIMITS, type ApiKeyService } from '../../services/api-keys.js';
import type { LimitStatus, RateLimiter } from '../../ports/rate-limiter.js';

export interface LimitDeps {
  apiKeys: ApiKeyService;
  limiter: RateLimiter;
  anonLimitPerHour: number;
  signupLimitPerHour: number;
  /** Told of every refusal, by the limit that refused: key, address or signup. */
  onRefused?: (scope: Scope) => void;
}

const show = (n: number) => (n === Number.POSITIVE_INFINITY ? 'unlimited' : String(n));

function setLimitHeaders(res: Response, status: LimitStatus): void {
  res.setHeader('X-RateLimit-Limit', show(status.limit));
  res.setHeader('X-RateLimit-Remaining', show(status.remaining));
  if (status.resetAt !== null)
    res.setHeader('X-RateLimit-Reset', String(Math.ceil(status.resetAt / 1000)));
}

type Scope = 'key' | 'address' | 'signup';

/** The 429 of a refused request; the refusal is also reported to `onRefused` (metrics). */
function refuse(deps: LimitDeps, status: LimitStatus, scope: Scope): SvcError {
  deps.onRefused?.(scope);
  const seconds = status.retryAfterSeconds ?? 1;
  const what = scope === 'signup' ? 'signups' : 'requests';
  return new SvcError(
    'rate_limited',
    `Rate limit of ${show(status.limit)} ${what} per hour exceeded; retry in ${seconds} s`,
    { headers: { 'Retry-After': String(seconds) } },
  );
}

/**
 * The API key of a request: X-API-Key, or Authorization: Bearer. Undefined when neither;
 * null when Authorization uses another scheme.
 */
function presentedKey(req: Request): string | null | undefined {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string') return header.trim();
  const authorization = req.headers.authorization;
  if (authorization === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return match ? match[1]! : null;
}

// Load balancers poll health; it does not spend the budget.
const isFree = (req: Request) => req.path === '/health';

/**
 * Authenticates the key when one is sent (an invalid key is a 401 everywhere, so a caller
 * learns of it at once) and counts the request against the key's tier, or, without a key,
 * against the client address. Every response carries the X-RateLimit headers.
 */
export function authenticateAndLimit(deps: LimitDeps): RequestHandler {
  // Reporting a budget without spending it never fails the request: a liveness probe or a
  // preflight must not depend on the store that keeps the windows (MongoDB), and an error
  // being answered must stay that error.
  const report = async (res: Response, client: string, limit: number) => {
    try {
      setLimitHeaders(res, await deps.limiter.peek(client, limit));
    } catch {
      // No headers then.
    }
  };
  return async (req, res, next) => {
    const anonymous = `ip:${clientAddress(req.ip)}`;
    if (req.method === 'OPTIONS') {
      // Preflights carry no credentials and spend nothing; they still report the budget.
      await report(res, anonymous, deps.anonLimitPerHour);
      return next();
    }
    const raw = presentedKey(req);
    if (raw !== undefined) {
      let record;
      try {
        record = raw === null ? null : await deps.apiKeys.authenticate(raw);
      } catch (error) {
        // The key's tier is unknown; the error response still reports the address budget.
        await report(res, anonymous, deps.anonLimitPerHour);
        throw error;
      }
      if (!record) {
        // Failed guesses spend the address's budget, which bounds key guessing.
        const status = await deps.limiter.consume(anonymous, deps.anonLimitPerHour);
        setLimitHeaders(res, status);
        if (!status.allowed) throw refuse(deps, status, 'address');
        throw new SvcError(
          'unauthorized',
          raw === null ? 'Authorization must be "Bearer <API key>"' : 'Invalid API key',
        );
      }
      res.locals.apiKey = record;
    }
    const key = res.locals.apiKey;
    const client = key ? `key:${key.id}` : anonymous;
    const limit = key ? TIER_LIMITS[key.tier] : deps.anonLimitPerHour;
    if (isFree(req)) {
      await report(res, client, limit);
      return next();
    }
    const status = await deps.limiter.consume(client, limit);
    setLimitHeaders(res, status);
    if (!status.allowed) throw refuse(deps, status, key ? 'key' : 'address');
    next();
  };
}

/** Signups per client address, on top of the general limit. */
export function limitSignups(deps: LimitDeps): RequestHandler {
  return async (req, res, next) => {
    const status = await deps.limiter.consume(
      `signup:${clientAddress(req.ip)}`,
      deps.signupLimitPerHour,
    );
    setLimitHeaders(res, status);
    if (!status.allowed) throw refuse(deps, status, 'signup');
    next();
  };
}

export const requireKey: RequestHandler = (_req, res, next) => {
  if (!res.locals.apiKey) {
    throw new SvcError(
      'unauthorized',
      'API key required: send "X-API-Key: <key>" or "Authorization: Bearer <key>"',
    );
  }
  next();
};
