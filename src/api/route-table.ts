import cors from 'cors';
import type { Request, RequestHandler, Response, Router } from 'express';
import { SvcError } from '../core/errors.js';
import { JsonText } from '../services/json-text.js';
import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { requireKey } from './middleware/rate-limit.js';
import { retryAfterHeaders } from './schemas/common.js';
import type { DocumentedPath } from './schemas/log.js';
import { validate, validateQuery } from './validate.js';

/**
 * Who may call a route: anyone, key holders, or — for ledger reads — anyone unless the
 * operator sets SVC_PUBLIC_READS=false.
 */
export type Access = 'public' | 'key' | 'read';

type AnyObject = z.ZodObject<z.ZodRawShape>;

/**
 * The closed set of tags an operation may carry, each with the description the OpenAPI
 * document declares for it (in this order).
 */
export const API_TAGS = {
  Claims:
    'Evaluate a claim against its policy and issue a signed, ledgered receipt, or simulate one.',
  Verification: 'Check a receipt (structure, signature, ledger hash) and fetch the signing key.',
  Ledger:
    'Read the hash-chained ledger: pages in sequence order, single receipts, search, timeline, comparison and pull-request history.',
  Analytics: 'Summaries per repository and per agent, and an overview of the whole ledger.',
  Policies: 'Built-in, shared and account policies, and claim templates.',
  Webhooks: 'Outbound receivers of receipt.created events and their deliveries.',
  Accounts: 'API keys: signup, the calling key’s account, rotation, revocation and tiers.',
  'Transparency log':
    'The ledger as a Merkle-tree transparency log: signed checkpoints, tiles, inclusion and consistency proofs.',
  'GitHub App': 'Deliveries of the GitHub App, which evaluates pull requests into check runs.',
  AuthZEN:
    'svc as an OpenID AuthZEN Authorization API 1.0 Policy Decision Point: every decision a receipt.',
  System: 'Health, status, metrics and this document.',
} as const;

export type ApiTag = keyof typeof API_TAGS;

interface JsonResponse<R extends z.ZodType> {
  status: number;
  description: string;
  schema: R;
  /**
   * Another representation the handler sends itself when the client asks for it (content
   * negotiation): documented beside the JSON one.
   */
  alternative?: { contentType: string; text: z.ZodType };
}
interface EmptyResponse {
  status: 204;
  description: string;
  empty: true;
}
interface TextResponse {
  status: number;
  description: string;
  text: z.ZodType;
  contentType: string;
}

export interface RouteInput<Q extends AnyObject, P extends AnyObject, B extends z.ZodType> {
  query: z.infer<Q>;
  params: z.infer<P>;
  body: z.infer<B>;
  req: Request;
  res: Response;
}

/**
 * One route: its transport (method, path, access), the zod schemas its handler validates
 * with, and its documentation. The same object mounts the Express route and registers the
 * OpenAPI path, so the document cannot drift from what is served.
 */
export interface RouteDef<
  Q extends AnyObject = AnyObject,
  P extends AnyObject = AnyObject,
  B extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
> {
  method: 'get' | 'post' | 'delete';
  /** Express syntax: /v1/receipts/:id */
  path: string;
  operationId: string;
  tag: ApiTag;
  summary: string;
  description: string;
  access: Access;
  /**
   * Whether browsers on other origins may read the answer. Default: only routes that need no
   * key (public, or reads while they are public). Signup sets false: a page must not be able
   * to obtain keys through its visitors' browsers.
   */
  crossOrigin?: boolean;
  query?: Q;
  params?: P;
  body?: B;
  /** A JSON response checked against `schema` at compile time, or a text response written by the handler. */
  response: JsonResponse<R> | TextResponse | EmptyResponse;
  /**
   * Other success statuses the handler answers itself (`res.status(...).json(...)`), with the
   * same schema, by status: their descriptions.
   */
  otherSuccess?: Record<number, string>;
  /** Error statuses beyond the ones every route can answer (429, 500). */
  errors?: number[];
  /**
   * Headers the handler sets on a response, by status, beyond the ones every answer carries
   * (the rate-limit headers, and Retry-After on 429).
   */
  headers?: Record<number, AnyObject>;
  /**
   * The OpenAPI paths of a wildcard route, one operation each (OpenAPI path parameters never
   * span a "/"); without it, the route's own path with its parameters.
   */
  documentedPaths?: DocumentedPath[];
  /** Extra middleware run before validation (after authentication). */
  before?: RequestHandler[];
  /** A JsonText result is sent as it is: its shape is the handler's to keep to `schema`. */
  handle(
    input: RouteInput<Q, P, B>,
  ): Promise<z.input<R> | JsonText | void> | z.input<R> | JsonText | void;
}

/** Keeps the generic parameters of a route literal (TypeScript infers them from the schemas). */
export const defineRoute = <
  Q extends AnyObject,
  P extends AnyObject,
  B extends z.ZodType,
  R extends z.ZodType,
>(
  route: RouteDef<Q, P, B, R>,
): RouteDef => route as unknown as RouteDef;

const ERROR_TEXT: Record<number, string> = {
  400: 'Malformed JSON (`malformed_json`), invalid input (`validation_failed`; the message names the field), a policyConfig the policy does not allow (`policy_override_refused`), or a claim whose own rules need more glob matching than one request may spend (`rule_budget_exceeded`).',
  401: 'Missing or invalid API key (`unauthorized`).',
  403: 'Refused to this key (`locked_key`: only the operator revokes a key locked to a policy; `forbidden`: while reads are private, only a reader of everything reads this, and only a key the operator made a reviewer records a disposition; `separation_of_duties`: the reviewer or the key took part in the escalated claim).',
  404: 'Not found (`not_found`).',
  409: 'Conflict (`claim_conflict`, `policy_conflict`, `email_registered`, `receiver_limit`, `not_escalated`, `already_disposed`, `approval_refused`).',
  413: 'Body over 1 MiB (`payload_too_large`).',
  415: 'Body not sent as application/json (`unsupported_media_type`).',
  429: 'Rate limit exceeded (`rate_limited`); see Retry-After.',
  500: 'Internal error (`internal`).',
  503: 'Unavailable (`unavailable`, `payment_not_configured`).',
};

const needsKeyFor = (route: RouteDef, publicReads: boolean) =>
  route.access === 'key' || (route.access === 'read' && !publicReads);

/** CORS for what anyone may read anyway; never for routes that take or issue a key. */
const crossOriginFor = (route: RouteDef, publicReads: boolean) =>
  route.crossOrigin ?? !needsKeyFor(route, publicReads);

// No X-API-Key or Authorization: a page on another origin cannot send a key through the
// browser, so it can never act with its visitor's key.
const corsFor = (methods: string[]) =>
  cors({
    origin: '*',
    methods: [...methods, 'OPTIONS'],
    allowedHeaders: ['Content-Type', 'X-Request-Id'],
    exposedHeaders: EXPOSED_HEADERS,
    preflightContinue: true,
  });

export const EXPOSED_HEADERS = [
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

const byPath = (routes: RouteDef[]) => {
  const paths = new Map<string, RouteDef[]>();
  for (const route of routes) paths.set(route.path, [...(paths.get(route.path) ?? []), route]);
  return paths;
};

// Express path syntax to a matcher of its own, so that nothing here decodes path parameters:
// a malformed escape must reach the routes, which answer it with a proper 400.
const pathMatcher = (path: string): RegExp =>
  new RegExp(
    `^${path
      .split('/')
      .map((part) =>
        part.startsWith(':')
          ? '[^/]+'
          : part.startsWith('*')
            ? '.+'
            : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
      )
      .join('/')}/?$`,
  );

/**
 * CORS headers for the routes browsers may read cross-origin, and for their preflights.
 * Runs before authentication, so the errors of those routes are readable too.
 */
export function crossOriginHeaders(
  routes: RouteDef[],
  options: { publicReads: boolean },
): RequestHandler {
  const open = [...byPath(routes)]
    .map(([path, defs]) => ({
      matches: pathMatcher(path),
      methods: defs
        .filter((route) => crossOriginFor(route, options.publicReads))
        .map((route) => route.method.toUpperCase()),
    }))
    .filter((entry) => entry.methods.length > 0)
    .map((entry) => ({ ...entry, handler: corsFor(entry.methods) }));
  return (req, res, next) => {
    const asked =
      req.method === 'OPTIONS'
        ? String(req.headers['access-control-request-method'] ?? '').toUpperCase()
        : req.method === 'HEAD'
          ? 'GET'
          : req.method;
    const entry = open.find((e) => e.matches.test(req.path) && e.methods.includes(asked));
    if (entry) entry.handler(req, res, next);
    else next();
  };
}

export function mountRoutes(
  router: Router,
  routes: RouteDef[],
  options: { publicReads: boolean },
): void {
  for (const route of routes) {
    const needsKey = needsKeyFor(route, options.publicReads);
    const handler: RequestHandler = async (req, res) => {
      const result = await route.handle({
        query: route.query ? validateQuery(route.query, req.query) : {},
        params: route.params ? validate(route.params, req.params) : {},
        body: route.body ? validate(route.body, req.body) : req.body,
        req,
        res,
      });
      if (res.headersSent) return;
      if (result instanceof JsonText) {
        // The headers res.json would set (send adds the charset to a string's type only).
        if (!res.get('Content-Type')) res.set('Content-Type', 'application/json; charset=utf-8');
        res.status(route.response.status).send(result.bytes);
      } else if ('schema' in route.response) res.status(route.response.status).json(result);
      else if ('empty' in route.response) res.status(route.response.status).end();
    };
    const label: RequestHandler = (_req, res, next) => {
      res.locals.route = route.path;
      next();
    };
    router[route.method](
      route.path,
      label,
      ...(needsKey ? [requireKey] : []),
      ...(route.before ?? []),
      handler,
    );
  }
  // A known path asked with a method it does not have: 405 naming the ones it has.
  for (const [path, defs] of byPath(routes)) {
    const methods = defs.map((route) => route.method.toUpperCase());
    if (methods.includes('GET')) methods.push('HEAD');
    const allow = [...methods, 'OPTIONS'].join(', ');
    router.all(path, (req, res) => {
      res.locals.route = path;
      throw new SvcError(
        'method_not_allowed',
        `${req.method} is not allowed on ${path}; use ${methods.join(' or ')}`,
        {
          headers: { Allow: allow },
        },
      );
    });
  }
}

/** The headers of every answer of the service, whatever the route and status. */
export const SERVICE_HEADERS = z.object({
  'X-Svc-Version': z.string().meta({ description: 'The version of the service (semver).' }),
  'X-Svc-Spec': z
    .string()
    .meta({ description: 'The version of the specification the service implements.' }),
  'X-Request-Id': z
    .string()
    .meta({ description: 'Trace id; the caller’s own X-Request-Id when it sent a plain one.' }),
});

const LIMIT_HEADERS = z.object({
  'X-RateLimit-Limit': z
    .string()
    .meta({ description: 'Hourly cap of the caller (tier or address), or "unlimited".' }),
  'X-RateLimit-Remaining': z
    .string()
    .meta({ description: 'Requests left in the current one-hour sliding window.' }),
  'X-RateLimit-Reset': z.string().optional().meta({
    description:
      'Unix time (seconds) when the oldest counted request leaves the window; absent while none is counted.',
  }),
});

/** A counted request's answer: the service's headers and the budget. */
const RATE_HEADERS = SERVICE_HEADERS.extend(LIMIT_HEADERS.shape);

// An error may come before the limiter has counted the request (or from the store that keeps
// the windows): the budget is then not reported.
const ERROR_HEADERS = SERVICE_HEADERS.extend(LIMIT_HEADERS.partial().shape);

const RATE_LIMITED_HEADERS = RATE_HEADERS.extend(
  retryAfterHeaders(
    'Seconds until the oldest counted request leaves the window, when a request is accepted again.',
  ).shape,
);

export function registerRoutes(
  registry: OpenAPIRegistry,
  routes: RouteDef[],
  options: { publicReads: boolean; errorSchema: z.ZodType },
): void {
  for (const route of routes) {
    const needsKey = needsKeyFor(route, options.publicReads);
    const errors = new Set([
      ...(route.errors ?? []),
      ...(needsKey ? [401] : []),
      ...(route.query || route.params || route.body ? [400] : []),
      ...(route.method === 'post' ? [400, 413, 415] : []),
      429,
      500,
    ]);
    const response = route.response;
    const headersOf = (status: number, base: AnyObject) => {
      const own = route.headers?.[status];
      return own ? base.extend(own.shape) : base;
    };
    const headers = headersOf(response.status, RATE_HEADERS);
    const success =
      'schema' in response
        ? {
            description: response.description,
            headers,
            content: {
              'application/json': { schema: response.schema },
              ...(response.alternative
                ? { [response.alternative.contentType]: { schema: response.alternative.text } }
                : {}),
            },
          }
        : 'text' in response
          ? {
              description: response.description,
              headers,
              content: { [response.contentType]: { schema: response.text } },
            }
          : { description: response.description, headers };
    const responses: RouteConfig['responses'] = { [response.status]: success };
    for (const [status, description] of Object.entries(route.otherSuccess ?? {}))
      responses[status] = {
        ...success,
        description,
        headers: headersOf(Number(status), RATE_HEADERS),
      };
    for (const status of [...errors].sort()) {
      responses[status] = {
        description: ERROR_TEXT[status] ?? 'Error',
        headers: headersOf(status, status === 429 ? RATE_LIMITED_HEADERS : ERROR_HEADERS),
        content: { 'application/json': { schema: options.errorSchema } },
      };
    }
    for (const status of Object.keys(route.headers ?? {})) {
      if (!(status in responses)) {
        throw new TypeError(`${route.operationId} declares headers for ${status}, not an answer`);
      }
    }
    const documented = route.documentedPaths ?? [
      {
        path: route.path.replace(/[:*](\w+)/g, '{$1}'),
        operationId: route.operationId,
        summary: route.summary,
        params: route.params,
      },
    ];
    for (const at of documented)
      registry.registerPath({
        method: route.method,
        path: at.path,
        operationId: at.operationId,
        tags: [route.tag],
        summary: at.summary,
        description: route.description,
        security: needsKey ? [{ ApiKeyHeader: [] }, { BearerAuth: [] }] : [],
        request: {
          query: route.query,
          params: at.params,
          body: route.body
            ? { required: true, content: { 'application/json': { schema: route.body } } }
            : undefined,
        },
        responses,
      });
  }
}
