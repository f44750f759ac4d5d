import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';
import formats from 'ajv-formats';

/**
 * GitHub's REST API description (@octokit/openapi, its api.github.com.json) as JSON Schema
 * checks: the request bodies svc sends to GitHub and the webhook payloads GitHub sends svc.
 *
 * The package holds ten descriptions of 11-78 MB each and its index.js parses them all; only
 * the 13 MB one is read, once per test file (Jest gives each file its own module registry), on
 * first use. Measured on two busy cores: 0.1-0.3 s to parse it, 0.7-1 s in all before the
 * first check, 0.3-0.5 s more to compile the five checks deployment-gate.test.ts uses, 20 MB
 * of heap kept. Its dereferenced twin (api.github.com.deref.json) is 73 MB: 0.4-0.9 s and
 * 190 MB to parse alone. ajv resolves the plain one's references itself, and compiles only
 * what a check uses.
 */
export interface GitHubOpenApi {
  /** The description's version (the package's). */
  version: string;
  /**
   * What is wrong with `body` as the JSON request body of `method path` (a concrete path such
   * as /repos/acme/web/check-runs/1000, matched against the description's templates): one
   * line per problem, none when GitHub's schema takes it. Throws for an operation GitHub does
   * not have (a typo in a test is not a passing check).
   */
  requestBodyProblems(method: string, path: string, body: unknown): string[];
  /** The same for a webhook payload, by the description's name (`deployment-protection-rule-requested`). */
  webhookProblems(name: string, payload: unknown): string[];
  /**
   * The same against one of the description's schemas (`review-custom-gates-state-required`):
   * for a body that must be one branch of an operation's `anyOf`.
   */
  schemaProblems(name: string, value: unknown): string[];
}

// The id ajv resolves the description's `#/components/schemas/...` references against.
const ID = 'https://api.github.com/openapi.json';
const FILE = 'generated/api.github.com.json';

type Node = Record<string, unknown>;
type Operation = { requestBody?: { content?: Record<string, { schema?: unknown }> } };

/**
 * OpenAPI 3.0's `nullable: true` beside `allOf`/`anyOf`/`$ref` and no `type`: GitHub means
 * "this, or null"; ajv only reads `nullable` beside a `type` (and refuses it without one).
 * Rewritten in place: the parsed description is this module's own.
 */
function nullableToAnyOf(node: unknown): unknown {
  if (node === null || typeof node !== 'object') return node;
  const object = node as Node;
  for (const key of Object.keys(object)) object[key] = nullableToAnyOf(object[key]);
  if (Array.isArray(node) || object.nullable !== true || 'type' in object) return node;
  const schema = { ...object };
  delete schema.nullable;
  return { anyOf: [schema, { type: 'null' }] };
}

/** A schema outside components/schemas with its `#/...` references made absolute (a copy). */
function anchored(node: unknown): unknown {
  if (node === null || typeof node !== 'object') return node;
  if (Array.isArray(node)) return node.map(anchored);
  const out: Node = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] = key === '$ref' && typeof value === 'string' ? ID + value : anchored(value);
  }
  return out;
}

function loadGitHubOpenApi(): GitHubOpenApi {
  const require = createRequire(import.meta.url);
  const path = require.resolve(`@octokit/openapi/${FILE}`);
  const description = JSON.parse(readFileSync(path, 'utf8')) as {
    info: { version: string };
    paths: Record<string, Record<string, Operation>>;
    'x-webhooks': Record<string, { post: Operation }>;
    components: { schemas: Record<string, unknown> };
  };
  const { schemas } = description.components;
  nullableToAnyOf(schemas);
  // strict: false, as the description carries OpenAPI's own keywords (example, discriminator,
  // x-github); formats are checked, GitHub's own two (not JSON Schema's) taken as they come.
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  formats.default(ajv);
  ajv.addFormat('repo.nwo', true).addFormat('timestamp', true);
  // Only components/schemas goes to ajv (every reference points there): the paths, webhooks
  // and 1.4 MB of response examples would be walked for nothing.
  ajv.addSchema({ $id: ID, components: { schemas } });

  const compiled = new Map<string, ValidateFunction>();
  const check = (key: string, schema: () => unknown, value: unknown): string[] => {
    let validate = compiled.get(key);
    if (!validate) {
      validate = ajv.compile(nullableToAnyOf(anchored(schema())) as object);
      compiled.set(key, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map(
      (e) => `${e.instancePath || '(body)'} ${e.message ?? e.keyword} (${e.schemaPath})`,
    );
  };
  const bodyOf = (operation: Operation) => operation.requestBody?.content?.['application/json'];

  // The templates, most literal first: /repos/{owner}/{repo}/check-runs/{check_run_id}
  // before any template whose variable would also match `check-runs`.
  const templates = Object.keys(description.paths)
    .map((template) => ({
      template,
      pattern: new RegExp(
        '^' +
          template
            .split(/\{[^}]+\}/)
            .map((literal) => literal.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
            .join('[^/]+') +
          '$',
      ),
      literal: template.replace(/\{[^}]+\}/g, '').length,
    }))
    .sort((a, b) => b.literal - a.literal);

  return {
    version: description.info.version,
    requestBodyProblems(method, path, body) {
      const bare = path.split('?')[0]!;
      const verb = method.toLowerCase();
      const found = templates.find(
        (t) => t.pattern.test(bare) && description.paths[t.template]![verb],
      );
      if (!found) throw new TypeError(`GitHub's REST API has no ${method} ${bare}`);
      const json = bodyOf(description.paths[found.template]![verb]!);
      if (!json) {
        return body === undefined ? [] : [`${method} ${found.template} takes no JSON body`];
      }
      return check(`${verb} ${found.template}`, () => json.schema, body);
    },
    webhookProblems(name, payload) {
      const webhook = description['x-webhooks'][name];
      if (!webhook) throw new TypeError(`GitHub has no webhook ${name}`);
      return check(`webhook ${name}`, () => bodyOf(webhook.post)?.schema, payload);
    },
    schemaProblems(name, value) {
      if (!(name in schemas)) throw new TypeError(`GitHub's description has no schema ${name}`);
      return check(`schema ${name}`, () => ({ $ref: `#/components/schemas/${name}` }), value);
    },
  };
}

let loaded: GitHubOpenApi | undefined;

/** GitHub's REST API description, read on first use and kept for the test file. */
export function githubOpenApi(): GitHubOpenApi {
  loaded ??= loadGitHubOpenApi();
  return loaded;
}
