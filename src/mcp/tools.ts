import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { SvcError } from '../core/errors.js';
import { claimInputDoc } from '../api/schemas/claims.js';
import { dispositionRequestSchema } from '../api/schemas/dispositions.js';
import { receiptParams, searchQuery } from '../api/schemas/ledger.js';
import { sessionParams, sessionRecordsQuery } from '../api/schemas/sessions.js';
import { verifyQuerySchema, verifyRequestSchema } from '../api/schemas/verify.js';
import { validate, validateQuery } from '../api/validate.js';

type AnyObject = z.ZodObject<z.ZodRawShape>;

/**
 * One tool of svc's MCP server: a REST route (method and path, as the route table has them)
 * and the very zod objects that route validates with. The tool's arguments are the route's
 * path parameters, query parameters and body fields side by side; a body that is not an
 * object (verify's receipt) is one argument, `bodyField`.
 */
export interface McpTool {
  name: string;
  title: string;
  description: string;
  method: 'get' | 'post';
  path: string;
  params?: AnyObject;
  query?: AnyObject;
  body?: z.ZodType;
  bodyField?: string;
}

export const MCP_TOOLS: readonly McpTool[] = [
  {
    name: 'evaluate_claim',
    title: 'Evaluate a claim',
    description:
      'Evaluates the claim against its policy and issues an Ed25519-signed receipt appended to the ledger (POST /v1/evaluate). The same claim_id with the same content answers the stored receipt.',
    method: 'post',
    path: '/v1/evaluate',
    body: claimInputDoc,
  },
  {
    name: 'simulate_claim',
    title: 'Simulate a claim',
    description:
      'The evaluation of evaluate_claim without signing or storing anything: the receipt is an unsigned preview (POST /v1/simulate).',
    method: 'post',
    path: '/v1/simulate',
    body: claimInputDoc,
  },
  {
    name: 'verify_receipt',
    title: 'Verify a receipt',
    description:
      'Checks a receipt: structure, signature, ledger hash and, optionally, the policy it was signed under (POST /v1/verify). Pass the receipt (as evaluate answers it under "receipt") as `receipt`.',
    method: 'post',
    path: '/v1/verify',
    query: verifyQuerySchema,
    body: verifyRequestSchema,
    bodyField: 'receipt',
  },
  {
    name: 'get_receipt',
    title: 'Fetch a receipt',
    description: 'One receipt by its id, with its claim (GET /v1/receipts/:id).',
    method: 'get',
    path: '/v1/receipts/:id',
    params: receiptParams,
  },
  {
    name: 'search_receipts',
    title: 'Search receipts',
    description:
      'Receipts by words, agent, repository, verdict, admissibility and time, newest first; `after` continues a page (GET /v1/receipts/search).',
    method: 'get',
    path: '/v1/receipts/search',
    query: searchQuery,
  },
  {
    name: 'request_disposition',
    title: 'Request a disposition',
    description:
      'Records a reviewer’s decision on an escalated receipt as a signed disposition receipt (POST /v1/receipts/:id/disposition). The key needs the reviewer capability.',
    method: 'post',
    path: '/v1/receipts/:id/disposition',
    params: receiptParams,
    body: dispositionRequestSchema,
  },
  {
    name: 'get_session',
    title: 'Get an agent session',
    description:
      "An agent session's decisions and outcomes in ledger order, its counts by verdict and whether it is covered (GET /v1/sessions/:id, contract §12).",
    method: 'get',
    path: '/v1/sessions/:id',
    params: sessionParams,
    query: sessionRecordsQuery,
  },
];

export const isObjectSchema = (schema: z.ZodType | undefined): schema is AnyObject =>
  schema instanceof z.ZodObject;

/** The tool's arguments as one zod object, built from the route's own schemas. */
export function toolInputSchema(tool: McpTool): AnyObject {
  const shape: z.ZodRawShape = {
    ...(tool.params?.shape ?? {}),
    ...(tool.query?.shape ?? {}),
    ...(isObjectSchema(tool.body)
      ? tool.body.shape
      : tool.body
        ? { [tool.bodyField ?? 'body']: tool.body }
        : {}),
  };
  return z.object(shape);
}

/** The MCP tools/list entry: the JSON schema z.toJSONSchema makes of the route's schemas. */
export function toolListing(tool: McpTool): Tool {
  const inputSchema = z.toJSONSchema(toolInputSchema(tool), {
    io: 'input',
    unrepresentable: 'any',
  }) as Tool['inputSchema'];
  delete (inputSchema as Record<string, unknown>).$schema;
  return { name: tool.name, title: tool.title, description: tool.description, inputSchema };
}

/** A tool's arguments split back into the route's parts, each validated as the route does. */
export interface RouteInput {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
}

export function splitArguments(tool: McpTool, args: unknown): RouteInput {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw new SvcError('validation_failed', 'arguments: expected an object');
  }
  const given = args as Record<string, unknown>;
  const pick = (schema: AnyObject | undefined) =>
    Object.fromEntries(
      Object.keys(schema?.shape ?? {})
        .filter((name) => given[name] !== undefined)
        .map((name) => [name, given[name]]),
    );
  const known = new Set([
    ...Object.keys(tool.params?.shape ?? {}),
    ...Object.keys(tool.query?.shape ?? {}),
  ]);
  let body: unknown;
  if (isObjectSchema(tool.body)) {
    // What is neither a path nor a query parameter goes to the body, whose schema refuses
    // a name it does not know, as the REST API does.
    body = Object.fromEntries(Object.entries(given).filter(([name]) => !known.has(name)));
  } else if (tool.body) {
    const field = tool.bodyField ?? 'body';
    const unknown = Object.keys(given).filter((name) => name !== field && !known.has(name));
    if (unknown.length > 0) {
      throw new SvcError(
        'validation_failed',
        unknown.map((name) => `${name}: unknown argument`).join('; '),
      );
    }
    body = given[field];
  } else {
    const unknown = Object.keys(given).filter((name) => !known.has(name));
    if (unknown.length > 0) {
      throw new SvcError(
        'validation_failed',
        unknown.map((name) => `${name}: unknown argument`).join('; '),
      );
    }
  }
  return { params: pick(tool.params), query: pick(tool.query), body };
}

/** Validates the split arguments with the route's schemas, as mountRoutes does. */
export function validateArguments(tool: McpTool, args: unknown): RouteInput {
  const input = splitArguments(tool, args);
  return {
    params: tool.params ? validate(tool.params, input.params) : {},
    query: tool.query ? validateQuery(tool.query, input.query) : {},
    body: tool.body ? validate(tool.body, input.body) : undefined,
  };
}

/** What a tool call answered: the REST API's JSON body, or its `{error, code}` error body. */
export type ToolOutcome = { ok: true; body: unknown } | { ok: false; body: unknown };

/** Runs one tool: over HTTP (svc mcp) or against the runtime's services (/mcp). */
export type ToolCaller = (tool: McpTool, args: unknown) => Promise<ToolOutcome>;
