import { SvcError } from '../../core/errors.js';
import type { HealthService } from '../../services/health.js';
import type { Metrics } from '../../services/metrics.js';
import { SERVICE_NAME, SERVICE_VERSION } from '../../core/version.js';
import { defineRoute, type RouteDef } from '../route-table.js';
import { retryAfterHeaders } from '../schemas/common.js';
import { healthQuery, healthSchema, statusSchema, textSchema } from '../schemas/system.js';
import { z } from 'zod';

/** What a failed deep health check suggests waiting before checking again. */
export const HEALTH_RETRY_AFTER_SECONDS = 5;

export function systemRoutes(deps: {
  health: HealthService;
  metrics: Metrics;
  openapi: () => object;
}): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/health',
      operationId: 'getHealth',
      tag: 'System',
      summary: 'Liveness, and with deep=true readiness',
      description:
        'Not rate limited. With deep=true: store, signing-key and job-queue checks, 503 with Retry-After when one fails.',
      access: 'public',
      query: healthQuery,
      response: { status: 200, description: 'Healthy.', schema: healthSchema },
      errors: [503],
      headers: {
        503: retryAfterHeaders(
          `Seconds after which to check again (${HEALTH_RETRY_AFTER_SECONDS}).`,
        ),
      },
      async handle({ query, res }) {
        const base = { ok: true, service: SERVICE_NAME, version: SERVICE_VERSION };
        if (query.deep !== 'true') return base;
        const checks = await deps.health.deepChecks();
        const ok = Object.values(checks).every((c) => c.ok);
        if (!ok) {
          // A failing check is expected to be transient (a lost lock, a store coming back).
          res.setHeader('Retry-After', String(HEALTH_RETRY_AFTER_SECONDS));
          res.status(503).json({ ...base, ok, checks });
        }
        return { ...base, ok, checks };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/status',
      operationId: 'getStatus',
      tag: 'System',
      summary: 'Uptime, receipt counts, memory and runtime',
      description:
        'Service and specification versions, start time and uptime, receipt totals by outcome, process memory, runtime and the store in use. Always public.',
      access: 'public',
      response: { status: 200, description: 'Status.', schema: statusSchema },
      handle: () => deps.health.status(),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/metrics',
      operationId: 'getMetrics',
      tag: 'System',
      summary: 'Prometheus metrics',
      description:
        "The Prometheus text exposition: ledger figures read from the store at scrape time, this process's receipt, rate-limit and webhook counters, request durations by route template, webhook queue depth and age, and process metrics. Only counters end in _total; it passes promtool check metrics.",
      access: 'read',
      response: {
        status: 200,
        description: 'Prometheus text exposition format.',
        text: textSchema,
        contentType: 'text/plain; version=0.0.4',
      },
      async handle({ res }) {
        const body = await deps.metrics.registry.metrics();
        res.type(deps.metrics.registry.contentType).send(body);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/openapi.json',
      operationId: 'getOpenApi',
      tag: 'System',
      summary: 'This OpenAPI document',
      description: 'Interactive documentation is served at /docs.',
      access: 'public',
      response: { status: 200, description: 'OpenAPI 3.1 document.', schema: z.looseObject({}) },
      handle: () => deps.openapi() as Record<string, unknown>,
    }),
    defineRoute({
      method: 'post',
      path: '/v1/checkout',
      operationId: 'checkout',
      tag: 'Accounts',
      summary: 'Obtain the pilot tier through a payment provider',
      description:
        'Answers 503 payment_not_configured while no payment provider is configured (docs/PAYMENTS.md); the operator can set a tier with "svc keys set-tier".',
      access: 'public',
      response: {
        status: 200,
        description: 'Never answered while payments are not configured.',
        schema: z.object({}),
      },
      errors: [503],
      handle() {
        throw new SvcError(
          'payment_not_configured',
          'Payments are not configured on this server; ask the operator for the pilot tier',
        );
      },
    }),
  ];
}
