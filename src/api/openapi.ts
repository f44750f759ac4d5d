import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { SERVICE_VERSION, SPEC_VERSION } from '../core/version.js';
import {
  API_TAGS,
  registerRoutes,
  SERVICE_HEADERS,
  type ApiTag,
  type RouteDef,
} from './route-table.js';
import { z } from 'zod';
import { errorSchema } from './schemas/common.js';

/** The OpenAPI 3.1 document of the served routes, generated from their zod schemas. */
export function buildOpenApiDocument(
  routes: RouteDef[],
  options: { publicReads: boolean; baseUrl?: string; contactEmail?: string },
) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'ApiKeyHeader', {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: 'An API key (sk_svc_<uuid>) from POST /v1/signup.',
  });
  registry.registerComponent('securitySchemes', 'BearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'The same API key as "Authorization: Bearer <key>".',
  });
  registerRoutes(registry, routes, { publicReads: options.publicReads, errorSchema });
  // The GitHub App's webhook reads raw bytes (the signature covers them), so it is mounted
  // outside the route table and documented here.
  registry.registerPath({
    method: 'post',
    path: '/v1/webhook/scm',
    operationId: 'receiveScmWebhook',
    tags: ['GitHub App' satisfies ApiTag],
    summary: 'Deliveries of the GitHub App (signed with X-Hub-Signature-256)',
    description:
      "Checked over the raw body with the App's WEBHOOK_SECRET (401 when missing or wrong, or when no secret is configured), recorded durably keyed by X-GitHub-Delivery, and answered 202 at once; pull requests are evaluated from the job queue and reported as check runs. Not rate limited: the signature authenticates it.",
    security: [],
    request: {
      headers: z.object({
        'X-Hub-Signature-256': z
          .string()
          .meta({ description: 'sha256=<hex HMAC-SHA256 of the raw body>' }),
        'X-GitHub-Event': z
          .string()
          .meta({ description: 'The event name, e.g. pull_request or check_suite.' }),
        'X-GitHub-Delivery': z
          .string()
          .meta({ description: 'The delivery id: a redelivery is recognised by it.' }),
      }),
      body: {
        required: true,
        content: {
          'application/json': {
            schema: z.looseObject({}).meta({ description: 'The event payload.' }),
          },
        },
      },
    },
    responses: {
      202: {
        description:
          'Accepted: queued, a duplicate of a delivery already recorded, or acknowledged only (App not configured).',
        headers: SERVICE_HEADERS,
        content: {
          'application/json': {
            schema: z.object({
              accepted: z.literal(true),
              delivery: z.string(),
              status: z.enum(['queued', 'duplicate', 'not_configured']),
            }),
          },
        },
      },
      ...Object.fromEntries(
        [
          [
            400,
            'Malformed JSON (`malformed_json`) or missing delivery headers (`validation_failed`).',
          ],
          [401, 'Missing or invalid signature (`unauthorized`).'],
          [413, 'Body over 1 MiB (`payload_too_large`).'],
          [500, 'Internal error (`internal`).'],
        ].map(([status, description]) => [
          status,
          {
            description,
            headers: SERVICE_HEADERS,
            content: { 'application/json': { schema: errorSchema } },
          },
        ]),
      ),
    },
  });
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'svc',
      version: SERVICE_VERSION,
      description:
        `A verifiable gate for autonomous agents: claims evaluated against policy, Ed25519-signed decision receipts on a hash-chained, append-only ledger. Specification ${SPEC_VERSION}; new receipts follow the receipt-core-v2 contract (receipt-core-v1 receipts stay verifiable). ` +
        'Every response carries X-Svc-Version, X-Svc-Spec and X-Request-Id; every counted request also X-RateLimit-Limit and X-RateLimit-Remaining; errors are {error, code, request_id}.',
      // Whom to write to is the operator's: this service's address and SVC_CONTACT_EMAIL.
      contact: {
        name: 'The operator of this svc',
        ...(options.baseUrl ? { url: `${options.baseUrl}/docs` } : {}),
        ...(options.contactEmail ? { email: options.contactEmail } : {}),
      },
      license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
    },
    servers: options.baseUrl ? [{ url: options.baseUrl }] : [],
    tags: Object.entries(API_TAGS)
      .map(([name, description]) => ({ name, description }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
  });
}
