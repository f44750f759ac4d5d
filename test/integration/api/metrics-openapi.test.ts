import { spawnSync } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { Express } from 'express';
import request from 'supertest';
import { ApiKeyService } from '../../../src/services/api-keys.js';
import { MCP_PATH } from '../../../src/mcp/in-process.js';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import {
  expectCommonHeaders,
  expectError,
  idOf,
  issue,
  type Json,
  newKey,
  postRaw,
} from '../../support/api.js';
import { validClaim } from '../../support/claims.js';

/** The value of the sample `name{labels}` (labels in any order), or undefined. */
function sample(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[3]);
  }
  return undefined;
}

async function scrape(t: TestApp, key?: string): Promise<string> {
  const req = request(t.app).get('/v1/metrics');
  if (key) req.set('X-API-Key', key);
  const res = await req;
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text;
}

/** `# TYPE` of every metric family in an exposition, by name. */
function metricTypes(text: string): Map<string, string> {
  const types = new Map<string, string>();
  for (const match of text.matchAll(/^# TYPE ([a-zA-Z_:][\w:]*) (\w+)$/gm)) {
    types.set(match[1]!, match[2]!);
  }
  return types;
}

// promtool (Debian's prometheus package) lints an exposition as Prometheus would read it.
const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' }).status === 0;

interface ServedRoute {
  method: string;
  path: string;
}

/** Every route the Express app serves, walking nested routers. */
function servedRoutes(app: Express): ServedRoute[] {
  interface Layer {
    route?: { path: string; methods: Record<string, boolean> };
    handle?: { stack?: Layer[] };
  }
  const routes: ServedRoute[] = [];
  const walk = (stack: Layer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const [method, on] of Object.entries(layer.route.methods)) {
          if (on && method !== '_all') routes.push({ method, path: layer.route.path });
        }
      } else if (layer.handle?.stack) {
        walk(layer.handle.stack);
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack);
  return routes;
}

/**
 * The OpenAPI paths of a served route in `doc`: its own path with {parameters}, or for a tile
 * wildcard (whose path elements OpenAPI cannot template as one parameter) every template of
 * its tiles.
 */
const openApiPaths = (doc: { paths: object }, path: string): string[] => {
  if (!path.endsWith('/*path')) return [path.replace(/:(\w+)/g, '{$1}')];
  const prefix = path.slice(0, -'*path'.length);
  return Object.keys(doc.paths).filter(
    (p) =>
      p.startsWith(prefix) && (prefix.endsWith('/entries/') || !p.startsWith(`${prefix}entries/`)),
  );
};
const KEY_SECURITY = [{ ApiKeyHeader: [] }, { BearerAuth: [] }];

/** Served GET routes that stay public whatever SVC_PUBLIC_READS says. */
/**
 * Pages for people, not API operations: the docs page and the ledger explorer (whose pages
 * need no key to load; with private reads they read the API with the reader's key).
 */
const isWebPage = (path: string) =>
  path === '/' || path.startsWith('/docs') || path.startsWith('/explorer');

// svc's MCP server speaks JSON-RPC, not REST: docs/MCP.md documents it, OpenAPI does not.
const isMcp = (path: string) => path === MCP_PATH;

const ALWAYS_PUBLIC_GETS = [
  '/health',
  '/v1/status',
  '/v1/keys/server',
  // The signing-key history: public keys and signed transitions, no receipt.
  '/v1/keys',
  '/v1/openapi.json',
  // The log's checkpoints, hash tiles and consistency proofs reveal no receipt.
  '/v1/log/checkpoint',
  '/v1/log/consistency',
  '/v1/log/tile/*path',
  // The AuthZEN PDP's metadata names its endpoints (AuthZEN §9), no receipt.
  '/.well-known/authzen-configuration',
];
const READS = [
  '/v1/ledger',
  '/v1/ledger/stats',
  '/v1/receipts/search',
  '/v1/receipts/timeline',
  '/v1/receipts/compare',
  '/v1/receipts/diff',
  '/v1/receipts/:id',
  '/v1/receipts/:id/proof',
  '/v1/receipts/:id/attestation',
  '/v1/receipts/:id/disposition',
  '/v1/log/tile/entries/*path',
  '/v1/repos',
  '/v1/agents',
  '/v1/overview',
  '/v1/sessions',
  '/v1/sessions/:id',
  '/v1/policies',
  '/v1/policies/:name',
  '/v1/templates',
  '/v1/metrics',
];

describe('GET /v1/metrics', () => {
  let t: TestApp;
  let key: string;
  beforeEach(async () => {
    t = buildTestApp();
    key = await newKey(t, 'pilot');
  });
  afterEach(() => t.close());

  it('reports ledger height and receipts by verdict and admissibility from the store', async () => {
    const empty = await scrape(t);
    expect(sample(empty, 'svc_ledger_height')).toBe(0);
    expect(sample(empty, 'svc_ledger_receipts_by_verdict', { verdict: 'ALLOWED' })).toBe(0);

    await issue(t, key);
    await issue(t, key);
    await issue(t, key, { kind: 'blocked' });
    await issue(t, key, { kind: 'non_deterministic' });
    await issue(t, key, { kind: 'escalated' });
    const text = await scrape(t);
    expect(text).toContain('# TYPE svc_ledger_height gauge');
    expect(sample(text, 'svc_ledger_height')).toBe(5);
    expect(sample(text, 'svc_ledger_receipts_by_verdict', { verdict: 'ALLOWED' })).toBe(3);
    expect(sample(text, 'svc_ledger_receipts_by_verdict', { verdict: 'BLOCKED' })).toBe(1);
    expect(sample(text, 'svc_ledger_receipts_by_verdict', { verdict: 'ESCALATED' })).toBe(1);
    const byAdmissibility = (admissibility: string) =>
      sample(text, 'svc_ledger_receipts_by_admissibility', { admissibility });
    expect(byAdmissibility('ACCEPTED')).toBe(2);
    expect(byAdmissibility('NON_DETERMINISTIC')).toBe(1);
    expect(byAdmissibility('REJECTED')).toBe(2);
    expect(
      sample(text, 'svc_receipts_issued_total', { verdict: 'ALLOWED', admissibility: 'ACCEPTED' }),
    ).toBe(2);
  });

  it('counts an idempotent replay as no new receipt', async () => {
    const claim = validClaim();
    for (let i = 0; i < 3; i++) {
      const res = await request(t.app).post('/v1/evaluate').set('X-API-Key', key).send(claim);
      expect(res.status).toBe(200);
    }
    const text = await scrape(t);
    expect(sample(text, 'svc_ledger_height')).toBe(1);
    expect(
      sample(text, 'svc_receipts_issued_total', { verdict: 'ALLOWED', admissibility: 'ACCEPTED' }),
    ).toBe(1);
  });

  it('reads the ledger figures at scrape time: another app over the same store agrees', async () => {
    await issue(t, key);
    await issue(t, key);
    const other = buildTestApp({ store: t.store });
    const text = await scrape(other);
    expect(sample(text, 'svc_ledger_height')).toBe(2);
    // Per-process counters start at zero in the other instance.
    expect(
      sample(text, 'svc_receipts_issued_total', { verdict: 'ALLOWED', admissibility: 'ACCEPTED' }),
    ).toBeUndefined();
  });

  it('has a request duration histogram by method, route template and status', async () => {
    await issue(t, key);
    await issue(t, key);
    await request(t.app).post('/v1/evaluate').send(validClaim()); // 401
    await request(t.app).get(`/v1/receipts/dr-nothing`); // 404 on a template route
    await request(t.app).get('/v1/no-such-route');
    const text = await scrape(t);
    expect(text).toContain('# TYPE svc_http_request_duration_seconds histogram');
    const evaluated = { method: 'POST', route: '/v1/evaluate', status: '200' };
    expect(sample(text, 'svc_http_request_duration_seconds_count', evaluated)).toBe(2);
    expect(
      sample(text, 'svc_http_request_duration_seconds_bucket', { ...evaluated, le: '+Inf' }),
    ).toBe(2);
    expect(text).toMatch(
      /^svc_http_request_duration_seconds_bucket\{le="0\.001",method="POST",route="\/v1\/evaluate",status="200"\} \d+$/m,
    );
    expect(
      sample(text, 'svc_http_request_duration_seconds_count', {
        route: '/v1/evaluate',
        status: '401',
      }),
    ).toBe(1);
    // The template, not the id: one series whatever the id.
    expect(
      sample(text, 'svc_http_request_duration_seconds_count', {
        route: '/v1/receipts/:id',
        status: '404',
      }),
    ).toBe(1);
    expect(text).not.toContain('dr-nothing');
    expect(
      sample(text, 'svc_http_request_duration_seconds_count', {
        route: 'unmatched',
        status: '404',
      }),
    ).toBe(1);
    expect(text).not.toContain('no-such-route');
  });

  it('has process metrics', async () => {
    const text = await scrape(t);
    for (const name of [
      'svc_process_cpu_user_seconds_total',
      'svc_process_cpu_system_seconds_total',
      'svc_process_start_time_seconds',
      'svc_nodejs_heap_size_total_bytes',
    ]) {
      expect({ name, value: sample(text, name) }).toEqual({ name, value: expect.any(Number) });
    }
  });

  it('names counters, and only counters, with _total', async () => {
    await issue(t, key);
    await request(t.app).get('/v1/no-such-route');
    const types = metricTypes(await scrape(t));
    expect(types.size).toBeGreaterThan(20);
    const misnamed = [...types].filter(([name, type]) =>
      type === 'counter' ? !name.endsWith('_total') : name.endsWith('_total'),
    );
    expect(misnamed).toEqual([]);
    expect([...types].filter(([, type]) => type === 'counter').map(([name]) => name)).toEqual(
      expect.arrayContaining([
        'svc_receipts_issued_total',
        'svc_rate_limit_rejections_total',
        'svc_webhook_delivery_attempts_total',
        'svc_process_cpu_seconds_total',
      ]),
    );
  });

  it('serves prom-client’s _total gauges as _all_types, each the sum of its by-type gauge', async () => {
    const text = await scrape(t);
    const types = metricTypes(text);
    for (const name of ['handles', 'requests', 'resources']) {
      const base = `svc_nodejs_active_${name}`;
      expect(types.has(`${base}_total`)).toBe(false);
      expect(types.get(`${base}_all_types`)).toBe('gauge');
      const byType = [...text.matchAll(new RegExp(`^${base}\\{type="[^"]*"\\} (\\S+)$`, 'gm'))];
      const sum = byType.reduce((total, m) => total + Number(m[1]), 0);
      expect({ name, all: sample(text, `${base}_all_types`) }).toEqual({ name, all: sum });
    }
    // The process holds handles and resources while it serves: the sums are not all zero.
    expect(sample(text, 'svc_nodejs_active_resources_all_types')).toBeGreaterThan(0);
  });

  (promtool ? it : it.skip)(
    promtool
      ? 'passes promtool check metrics'
      : 'passes promtool check metrics (skipped: promtool is not on PATH)',
    async () => {
      await issue(t, key);
      await issue(t, key, { kind: 'blocked' });
      await request(t.app).get('/v1/receipts/dr-nothing');
      await request(t.app).post('/v1/evaluate').send(validClaim());
      const text = await scrape(t);
      const checked = spawnSync('promtool', ['check', 'metrics'], {
        input: text,
        encoding: 'utf8',
      });
      expect({ status: checked.status, stdout: checked.stdout, stderr: checked.stderr }).toEqual({
        status: 0,
        stdout: '',
        stderr: '',
      });
    },
  );

  it('counts rate-limit rejections by scope', async () => {
    const limited = buildTestApp({ config: { anonLimitPerHour: 2 } });
    try {
      const limitedKey = await newKey(limited); // the first anonymous request
      expect((await request(limited.app).get('/v1/status')).status).toBe(200);
      expectError(await request(limited.app).get('/v1/status'), 429, 'rate_limited');
      expectError(await request(limited.app).get('/v1/overview'), 429, 'rate_limited');
      const text = await scrape(limited, limitedKey);
      expect(text).toContain('# TYPE svc_rate_limit_rejections_total counter');
      expect(sample(text, 'svc_rate_limit_rejections_total', { scope: 'address' })).toBe(2);
      expect(sample(text, 'svc_rate_limit_rejections_total', { scope: 'key' })).toBeUndefined();
    } finally {
      await limited.close();
    }
  });
});

describe('GET /v1/openapi.json', () => {
  let t: TestApp;
  let doc: Json & {
    paths: Record<string, Record<string, Json & { security?: unknown; responses: Json }>>;
    components: Json & { securitySchemes: Json; schemas: Json };
  };
  beforeEach(async () => {
    t = buildTestApp();
    const res = await request(t.app).get('/v1/openapi.json');
    expect(res.status).toBe(200);
    expectCommonHeaders(res);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    doc = res.body;
  });
  afterEach(() => t.close());

  it('validates as OpenAPI 3.1', async () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toMatchObject({ title: 'svc', version: '0.1.0' });
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('describes every route the app serves, and only those', () => {
    const served = servedRoutes(t.app).filter((r) => !isWebPage(r.path) && !isMcp(r.path));
    expect(served.length).toBeGreaterThanOrEqual(24);
    const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const servedKeys = served.flatMap((r) =>
      openApiPaths(doc, r.path).map((path) => `${r.method.toUpperCase()} ${path}`),
    );
    expect([...servedKeys].sort()).toEqual([...documented].sort());
    for (const path of ['/v1/receipts/{id}', '/v1/receipts/search', '/v1/checkout', '/health'])
      expect(doc.paths).toHaveProperty([path]);
  });

  it('declares the tile routes as templates an OpenAPI client fills, one path element each', () => {
    const tiles = Object.keys(doc.paths).filter((p) => p.startsWith('/v1/log/tile/'));
    for (const path of [
      '/v1/log/tile/{level}/{index}',
      '/v1/log/tile/{level}/{index}.p/{width}',
      '/v1/log/tile/{level}/x{group1}/{index}',
      '/v1/log/tile/entries/{index}',
      '/v1/log/tile/entries/{index}.p/{width}',
      '/v1/log/tile/entries/x{group2}/x{group1}/{index}.p/{width}',
    ])
      expect(tiles).toContain(path);
    type Param = { name: string; in: string; required: boolean; schema: Json };
    for (const path of tiles) {
      const op = doc.paths[path]!.get! as unknown as { parameters: Param[] };
      const named = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      expect(op.parameters.map((p) => p.name).sort()).toEqual([...named].sort());
      for (const p of op.parameters)
        expect({ path, p }).toMatchObject({
          path,
          p: {
            in: 'path',
            required: true,
            schema: { type: 'string', pattern: expect.any(String) },
          },
        });
    }
    // No path parameter anywhere is an array (which no client can put in a path).
    for (const item of Object.values(doc.paths))
      for (const op of Object.values(item) as { parameters?: Param[] }[])
        for (const p of op.parameters ?? [])
          if (p.in === 'path') expect(p.schema.type).toBe('string');
  });

  it('has unique operation ids, and every operation documents its errors with the Error schema', () => {
    const operations = Object.values(doc.paths).flatMap((item) => Object.values(item));
    const ids = operations.map((op) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const op of operations) {
      // The GitHub webhook is authenticated by its signature and never rate limited.
      if (op.operationId !== 'receiveScmWebhook') expect(op.responses).toHaveProperty(['429']);
      expect(op.responses).toHaveProperty(['500']);
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        expect({ op: op.operationId, status, response }).toMatchObject({
          response: {
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
          },
        });
      }
    }
  });

  it('declares both API-key schemes and requires them where a key is needed', () => {
    expect(doc.components.securitySchemes).toEqual({
      ApiKeyHeader: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
      BearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    for (const [path, method] of [
      ['/v1/evaluate', 'post'],
      ['/v1/simulate', 'post'],
      ['/v1/account', 'get'],
      ['/v1/policies', 'post'],
    ] as const) {
      const op = doc.paths[path]![method]!;
      expect({ path, security: op.security }).toEqual({ path, security: KEY_SECURITY });
      expect(op.responses).toHaveProperty(['401']);
    }
    for (const path of [...ALWAYS_PUBLIC_GETS, ...READS].flatMap((p) => openApiPaths(doc, p))) {
      const op = doc.paths[path]!.get!;
      expect({ path, security: op.security }).toEqual({ path, security: [] });
      expect(op.responses).not.toHaveProperty(['401']);
    }
    for (const path of ['/v1/verify', '/v1/signup', '/v1/checkout'])
      expect(doc.paths[path]!.post!.security).toEqual([]);
  });

  it('describes parameters, request bodies and responses from the handlers’ schemas', () => {
    const search = doc.paths['/v1/receipts/search']!.get! as {
      parameters: { name: string; in: string; schema: Json; required?: boolean }[];
      responses: Json;
    };
    const params = Object.fromEntries(search.parameters.map((p) => [p.name, p]));
    expect(Object.keys(params).sort()).toEqual(
      [
        'action_type',
        'after',
        'agent',
        'environment',
        'include',
        'limit',
        'order',
        'q',
        'repo',
        'since',
        'status',
        'until',
        'verdict',
      ].sort(),
    );
    for (const p of Object.values(params)) expect(p.in).toBe('query');
    expect(params.verdict!.schema).toMatchObject({ enum: ['ALLOWED', 'BLOCKED', 'ESCALATED'] });
    expect(params.status!.schema).toMatchObject({
      enum: ['ACCEPTED', 'NON_DETERMINISTIC', 'REJECTED'],
    });
    expect(params.limit!.schema).toMatchObject({ minimum: 1, maximum: 1000, default: 100 });
    expect(params.action_type!.schema).toMatchObject({ enum: ['deployment'] });
    expect(search.responses['200']).toMatchObject({
      content: { 'application/json': { schema: { $ref: '#/components/schemas/SearchPage' } } },
    });
    expect(search.responses).toHaveProperty(['400']);

    const receipt = doc.paths['/v1/receipts/{id}']!.get! as {
      parameters: { name: string; in: string; required: boolean }[];
      responses: Json;
    };
    expect(receipt.parameters).toEqual([
      expect.objectContaining({ name: 'id', in: 'path', required: true }),
    ]);
    expect(receipt.responses).toHaveProperty(['404']);

    const diff = doc.paths['/v1/receipts/diff']!.get! as unknown as {
      parameters: { name: string; required?: boolean }[];
    };
    expect(
      diff.parameters
        .filter((p) => p.required)
        .map((p) => p.name)
        .sort(),
    ).toEqual(['pr', 'repository']);

    const evaluate = doc.paths['/v1/evaluate']!.post!;
    expect(evaluate.requestBody).toMatchObject({
      required: true,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ClaimInput' } } },
    });
    expect(evaluate.responses).toHaveProperty(['409']);
    expect(evaluate.responses).toHaveProperty(['413']);
    const created = doc.paths['/v1/policies']!.post!;
    expect(created.responses).toHaveProperty(['201']);
    expect(created.responses).toHaveProperty(['409']);
    expect(doc.paths['/v1/checkout']!.post!.responses).toHaveProperty(['503']);
    expect(doc.paths['/v1/metrics']!.get!.responses['200']).toMatchObject({
      content: { 'text/plain; version=0.0.4': expect.any(Object) },
    });
    for (const name of [
      'ClaimInput',
      'Receipt',
      'EvaluateResponse',
      'LedgerPage',
      'Timeline',
      'Comparison',
      'PullRequestDiff',
      'Repositories',
      'Agents',
      'Overview',
      'PolicyList',
      'TemplateList',
      'Error',
    ])
      expect(doc.components.schemas).toHaveProperty([name]);
    const claimInput = doc.components.schemas.ClaimInput as {
      required: string[];
      properties: Json;
    };
    expect(claimInput.required.sort()).toEqual(['claim', 'claim_id', 'entity', 'sources']);
    expect(claimInput.properties).toHaveProperty(['policy']);
    expect(claimInput.properties).toHaveProperty(['policyConfig']);
  });

  it('gives every operation a description and tags the document declares and describes', () => {
    const tags = doc.tags as { name: string; description?: string }[];
    const declared = tags.map((tag) => tag.name);
    expect(new Set(declared).size).toBe(declared.length);
    for (const tag of tags) {
      expect({ tag: tag.name, description: tag.description }).toEqual({
        tag: tag.name,
        description: expect.stringMatching(/\S{3}/),
      });
    }
    const used = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const where = `${method.toUpperCase()} ${path}`;
        expect({ where, description: op.description }).toEqual({
          where,
          description: expect.stringMatching(/\S{3}/),
        });
        expect({ where, tags: op.tags }).toEqual({ where, tags: [expect.any(String)] });
        for (const tag of op.tags as string[]) {
          expect({ where, tag, declared: declared.includes(tag) }).toEqual({
            where,
            tag,
            declared: true,
          });
          used.add(tag);
        }
      }
    }
    // No declared tag is left without an operation.
    expect([...used].sort()).toEqual([...declared].sort());
  });

  it('declares Retry-After, Idempotent-Replay and X-Svc-Key-Id on the answers that send them', () => {
    type Header = { required?: boolean; description?: string; schema?: Json };
    const declaredOn = (name: string) =>
      Object.entries(doc.paths).flatMap(([path, item]) =>
        Object.entries(item).flatMap(([method, op]) =>
          Object.entries(op.responses as Record<string, { headers?: Record<string, Header> }>)
            .filter(([, response]) => response.headers?.[name])
            .map(([status, response]) => ({
              at: `${method.toUpperCase()} ${path} ${status}`,
              header: response.headers![name]!,
            })),
        ),
      );

    // Every 429 (the limiter's answer, on every rate-limited operation) and the 503 of a
    // failed deep health check; nothing else.
    const retryAfter = declaredOn('Retry-After');
    const tooMany = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, op]) => '429' in op.responses)
        .map(([method]) => `${method.toUpperCase()} ${path} 429`),
    );
    expect(tooMany.length).toBeGreaterThanOrEqual(24);
    expect(retryAfter.map((d) => d.at).sort()).toEqual([...tooMany, 'GET /health 503'].sort());
    for (const { at, header } of retryAfter) {
      expect({ at, header }).toMatchObject({
        at,
        header: { required: true, description: expect.stringContaining('Seconds') },
      });
    }
    const limited = doc.paths['/v1/evaluate']!.post!.responses['429'] as {
      headers: Record<string, Header>;
    };
    expect(Object.keys(limited.headers).sort()).toEqual(
      [
        'Retry-After',
        'X-RateLimit-Limit',
        'X-RateLimit-Remaining',
        'X-RateLimit-Reset',
        'X-Request-Id',
        'X-Svc-Spec',
        'X-Svc-Version',
      ].sort(),
    );

    // Only on a replay: declared, not required.
    expect(declaredOn('Idempotent-Replay')).toEqual([
      {
        at: 'POST /v1/evaluate 200',
        header: expect.objectContaining({
          required: false,
          schema: expect.objectContaining({ enum: ['true'] }),
          description: expect.stringContaining('claim_id'),
        }),
      },
      {
        at: 'POST /v1/receipts/{id}/disposition 200',
        header: expect.objectContaining({
          required: false,
          schema: expect.objectContaining({ enum: ['true'] }),
          description: expect.stringContaining('disposition'),
        }),
      },
    ]);
    expect(declaredOn('X-Svc-Key-Id')).toEqual([
      {
        at: 'GET /v1/keys/server 200',
        header: expect.objectContaining({
          required: true,
          description: expect.stringContaining('key_id'),
        }),
      },
    ]);
  });

  it('declares the service headers on every answer, the budget on errors and Cache-Control on the log', () => {
    type Header = { required?: boolean };
    type Answer = { headers?: Record<string, Header> };
    for (const [path, item] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(item))
        for (const [status, answer] of Object.entries(op.responses as Record<string, Answer>)) {
          const at = `${method.toUpperCase()} ${path} ${status}`;
          const headers = answer.headers ?? {};
          for (const name of ['X-Svc-Version', 'X-Svc-Spec', 'X-Request-Id'])
            expect({ at, name, required: headers[name]?.required }).toEqual({
              at,
              name,
              required: true,
            });
          // The webhook is never counted; every other error may carry the budget (it is
          // absent when the error came before the limiter counted the request).
          if (op.operationId === 'receiveScmWebhook' || Number(status) < 400) continue;
          for (const name of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'])
            expect({ at, name, declared: name in headers }).toEqual({ at, name, declared: true });
        }
    const logAnswers = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/v1/log/tile/') || path === '/v1/log/checkpoint')
      .map(([path, item]) => [path, item.get!.responses['200'] as Answer] as const);
    expect(logAnswers.length).toBeGreaterThanOrEqual(13);
    for (const [path, answer] of logAnswers)
      expect({ path, cache: answer.headers?.['Cache-Control']?.required }).toEqual({
        path,
        cache: true,
      });
  });

  it('sends the service headers on errors and Cache-Control on the log', async () => {
    const error = await request(t.app).get('/v1/receipts/dr-none');
    expect(error.status).toBe(404);
    expectCommonHeaders(error);
    expect(error.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
    const unsigned = await request(t.app)
      .post('/v1/webhook/scm')
      .set('Content-Type', 'application/json')
      .send('{}');
    expect(unsigned.status).toBe(401);
    expect(unsigned.headers['x-svc-version']).toBe((doc.info as { version: string }).version);
    expect(unsigned.headers['x-svc-spec']).toMatch(/\S/);
    expect(unsigned.headers['x-request-id']).toMatch(/\S/);
    await issue(t, await newKey(t));
    for (const path of [
      '/v1/log/checkpoint',
      '/v1/log/tile/0/000.p/1',
      '/v1/log/tile/entries/000.p/1',
    ])
      expect((await request(t.app).get(path)).headers['cache-control']).toMatch(/\S/);
  });

  it('sends the headers it declares', async () => {
    const key = await newKey(t, 'pilot');
    const claim = validClaim();
    const first = await request(t.app).post('/v1/evaluate').set('X-API-Key', key).send(claim);
    expect(first.status).toBe(200);
    expect(first.headers['idempotent-replay']).toBeUndefined();
    const replay = await request(t.app).post('/v1/evaluate').set('X-API-Key', key).send(claim);
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replay']).toBe('true');

    const pem = await request(t.app).get('/v1/keys/server');
    expect(pem.headers['x-svc-key-id']).toBe(t.serverKey.keyId);

    const stats = t.jobs.stats.bind(t.jobs);
    t.jobs.stats = () => Promise.reject(new Error('queue unreachable'));
    const down = await request(t.app).get('/health?deep=true');
    t.jobs.stats = stats;
    expect(down.status).toBe(503);
    expect(down.headers['retry-after']).toBe('5');
    const up = await request(t.app).get('/health?deep=true');
    expect(up.status).toBe(200);
    expect(up.headers['retry-after']).toBeUndefined();

    const limited = buildTestApp({ config: { anonLimitPerHour: 1 } });
    try {
      expect((await request(limited.app).get('/v1/status')).status).toBe(200);
      const refused = await request(limited.app).get('/v1/status');
      expectError(refused, 429, 'rate_limited');
      expect(refused.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    } finally {
      await limited.close();
    }
  });

  it('marks the reads as needing a key when reads are not public', async () => {
    const closed = buildTestApp({ config: { publicReads: false } });
    try {
      const res = await request(closed.app).get('/v1/openapi.json');
      expect(res.status).toBe(200);
      for (const path of READS.flatMap((p) => openApiPaths(res.body, p))) {
        const op = res.body.paths[path].get;
        expect({ path, security: op.security }).toEqual({ path, security: KEY_SECURITY });
        expect(op.responses).toHaveProperty(['401']);
      }
      for (const path of ALWAYS_PUBLIC_GETS.flatMap((p) => openApiPaths(res.body, p)))
        expect(res.body.paths[path].get.security).toEqual([]);
      expect((await new Validator().validate(res.body)).valid).toBe(true);
    } finally {
      await closed.close();
    }
  });
});

describe('GET /docs', () => {
  let t: TestApp;
  beforeEach(() => {
    t = buildTestApp();
  });
  afterEach(() => t.close());

  it('serves an HTML page that loads only same-origin assets', async () => {
    const res = await request(t.app).get('/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    const refs = [...res.text.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]*)"/g)].map(
      (m) => m[1]!,
    );
    expect(refs.sort()).toEqual([
      '/docs/svc-docs.js',
      '/docs/swagger-ui-bundle.js',
      '/docs/swagger-ui.css',
    ]);
    expect(res.text).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
    expect(res.text).not.toMatch(/<script>[^<]/);
  });

  it.each([
    ['/docs/swagger-ui-bundle.js', /^application\/javascript/, 'SwaggerUIBundle'],
    ['/docs/swagger-ui.css', /^text\/css/, '.swagger-ui'],
    ['/docs/svc-docs.js', /^application\/javascript/, "'/v1/openapi.json'"],
  ])('serves %s', async (path, type, content) => {
    const res = await request(t.app)
      .get(path)
      .buffer(true)
      .parse((response, done) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => done(null, text));
      });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(type);
    expect(res.body as string).toContain(content);
  });

  it('answers 404 for other files under /docs', async () => {
    expectError(await request(t.app).get('/docs/../package.json'), 404, 'not_found');
    expectError(await request(t.app).get('/docs/index.html'), 404, 'not_found');
    expectError(await request(t.app).get('/docs/swagger-ui.js'), 404, 'not_found');
  });
});

describe('POST /v1/checkout', () => {
  let t: TestApp;
  beforeEach(() => {
    t = buildTestApp();
  });
  afterEach(() => t.close());

  it('answers 503 payment_not_configured, with or without a key or body', async () => {
    const bare = await request(t.app).post('/v1/checkout');
    expectCommonHeaders(bare);
    expect(expectError(bare, 503, 'payment_not_configured')).toMatch(/not configured/);
    expectError(
      await request(t.app).post('/v1/checkout').send({ tier: 'pilot' }),
      503,
      'payment_not_configured',
    );
    const key = await newKey(t);
    expectError(
      await request(t.app).post('/v1/checkout').set('X-API-Key', key).send({}),
      503,
      'payment_not_configured',
    );
    expect((await request(t.app).get('/v1/account').set('X-API-Key', key)).body.tier).toBe('free');
  });

  it('answers malformed JSON with 400 like every POST', async () => {
    expectError(await postRaw(t, '/v1/checkout', null, '{"tier":'), 400, 'malformed_json');
  });

  it('is POST only', async () => {
    const res = await request(t.app).get('/v1/checkout');
    expectError(res, 405, 'method_not_allowed');
    expect(res.headers.allow).toBe('POST, OPTIONS');
  });
});

describe('SVC_PUBLIC_READS=false', () => {
  let t: TestApp;
  let key: string;
  let readerOfAll: string;
  let receiptId: string;
  let receipt: Json;
  beforeEach(async () => {
    t = buildTestApp({ config: { publicReads: false } });
    key = await newKey(t);
    readerOfAll = (
      await new ApiKeyService({ keys: t.store.apiKeys, clock: t.clock }).create({
        email: 'reader-of-all@example.com',
        tier: 'free',
        lockedPolicy: null,
        reader: 'all',
      })
    ).apiKey;
    const body = await issue(t, key);
    receiptId = idOf(body);
    receipt = body.receipt as Json;
  });
  afterEach(() => t.close());

  const QUERIES: Record<string, Record<string, string>> = {
    '/v1/receipts/compare': { ids: 'dr-x' },
    '/v1/receipts/diff': { repository: 'acme/web', pr: '42' },
    '/v1/log/consistency': { from: '0', to: '1' },
  };
  // The one receipt issued: leaf 0, so the partial tiles of width 1.
  const pathOf = (path: string) =>
    path.replace(':id', receiptId).replace(':name', 'strict').replace('*path', '000.p/1');

  it.each(READS)('%s needs a key (401 without, 200 with)', async (path) => {
    const query = QUERIES[path] ?? {};
    const without = await request(t.app).get(pathOf(path)).query(query);
    expect(expectError(without, 401, 'unauthorized')).toMatch(/API key required/);
    // Bad parameters do not reveal anything to a caller without a key either.
    expectError(await request(t.app).get(pathOf(path)).query({ bogus: 1 }), 401, 'unauthorized');
    // Entry bundles hold every account's receipts: a key that reads its own only is refused.
    const reader = path === '/v1/log/tile/entries/*path' ? readerOfAll : key;
    if (reader !== key) {
      const own = await request(t.app).get(pathOf(path)).query(query).set('X-API-Key', key);
      expectError(own, 403, 'forbidden');
    }
    // The one receipt has no disposition and is no tool call: past the key, those reads
    // answer 404.
    const ok = ['/v1/receipts/:id/disposition', '/v1/sessions/:id'].includes(path) ? 404 : 200;
    const withKey = await request(t.app).get(pathOf(path)).query(query).set('X-API-Key', reader);
    expect(withKey.status).toBe(ok);
    const bearer = await request(t.app)
      .get(pathOf(path))
      .query(query)
      .set('Authorization', `Bearer ${reader}`);
    expect(bearer.status).toBe(ok);
  });

  it('every served GET other than the always-public ones is a read that needs a key', async () => {
    const gets = servedRoutes(t.app)
      .filter((r) => r.method === 'get' && !isWebPage(r.path) && !isMcp(r.path))
      .map((r) => r.path);
    const keyOnly = [
      '/v1/account',
      '/v1/webhooks/outbound',
      '/v1/webhooks/outbound/:id/deliveries',
    ];
    expect(gets.filter((p) => ![...ALWAYS_PUBLIC_GETS, ...keyOnly].includes(p)).sort()).toEqual(
      [...READS].sort(),
    );
    expect(gets.filter((p) => ALWAYS_PUBLIC_GETS.includes(p)).sort()).toEqual(
      [...ALWAYS_PUBLIC_GETS].sort(),
    );
  });

  it('keeps health, status, verify, the server key, docs and signup public; ledger stats need a key', async () => {
    for (const path of [...ALWAYS_PUBLIC_GETS, '/docs', '/docs/svc-docs.js']) {
      const res = await request(t.app)
        .get(pathOf(path.replace('/tile/*path', '/tile/0/*path')))
        .query(QUERIES[path] ?? {});
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
    }
    const verified = await request(t.app).post('/v1/verify').send(receipt);
    expect(verified.status).toBe(200);
    expect(verified.body.valid).toBe(true);
    // Ledger stats name agents and repositories: a read like the others, the caller's own.
    expectError(await request(t.app).get('/v1/ledger/stats'), 401, 'unauthorized');
    // Status keeps its counts public: they are the ledger's height, which every receipt's
    // chain sequence shows anyway (docs/SECURITY.md).
    expect((await request(t.app).get('/v1/status')).body.receipts.total).toBe(1);
    expect((await request(t.app).post('/v1/signup').send({ email: 'x@example.com' })).status).toBe(
      201,
    );
    expectError(await request(t.app).post('/v1/checkout'), 503, 'payment_not_configured');
  });

  it('still refuses an invalid key with 401 on a public route', async () => {
    const res = await request(t.app)
      .get('/v1/status')
      .set('X-API-Key', 'sk_svc_00000000-0000-4000-8000-000000000000');
    expectError(res, 401, 'unauthorized');
  });
});
