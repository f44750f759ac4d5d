import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { SERVICE_VERSION, SPEC_VERSION } from '../core/version.js';
import { registerRoutes, type RouteDef } from './route-table.js';
import { errorSchema } from './schemas/common.js';

/** The OpenAPI 3.1 document of the served routes, generated from their zod schemas. */
export function buildOpenApiDocument(
  routes: RouteDef[],
  options: { publicReads: boolean; baseUrl?: string },
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
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'svc',
      version: SERVICE_VERSION,
      description:
        `A verifiable gate for autonomous agents: claims evaluated against policy, Ed25519-signed decision receipts on a hash-chained, append-only ledger. Specification ${SPEC_VERSION}; receipts follow the receipt-core-v1 contract. ` +
        'Every response carries X-Svc-Version, X-Svc-Spec, X-Request-Id, X-RateLimit-Limit and X-RateLimit-Remaining; errors are {error, code, request_id}.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: options.baseUrl ? [{ url: options.baseUrl }] : [],
  });
}
