import { CLAIM_TEMPLATES } from '../../core/templates.js';
import type { PolicyService } from '../../services/policies.js';
import { defineRoute, type RouteDef } from '../route-table.js';
import {
  createPolicySchema,
  policyListSchema,
  policyNameParams,
  policySchema,
  templateListSchema,
} from '../schemas/policies.js';

export function policyRoutes(policies: PolicyService): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/policies',
      operationId: 'listPolicies',
      tag: 'Policies',
      summary: 'Built-in, shared and your own policies',
      description:
        "Built-ins first, then shared (operator-created) policies and, with a key, the key's own, by name. Other keys' policies are never listed.",
      access: 'read',
      response: {
        status: 200,
        description: 'The policies the caller can use.',
        schema: policyListSchema,
      },
      handle: async ({ res }) => ({ policies: await policies.list(res.locals.apiKey?.id ?? null) }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/policies/:name',
      operationId: 'getPolicy',
      tag: 'Policies',
      summary: 'One policy, with the config_hash to pin',
      description:
        "A built-in or shared policy, or one of the caller's own: its config, effective config with defaults, config_hash (what receipts evaluated under it without overrides carry), override mode and origin. Another account's policy is 404.",
      access: 'read',
      params: policyNameParams,
      response: { status: 200, description: 'The policy.', schema: policySchema },
      errors: [404],
      handle: ({ params, res }) => policies.get(params.name, res.locals.apiKey?.id ?? null),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/policies',
      operationId: 'createPolicy',
      tag: 'Policies',
      summary: 'Create a custom policy of your own',
      description:
        'The policy belongs to your account: only your keys see it, use it, or delete it. It is immutable; a claim names it with its top-level "policy" member. Its "overrides" (default "tighten") bounds what a claim\'s policyConfig may change. A name that is built in, shared, or already yours is 409 policy_conflict.',
      access: 'key',
      body: createPolicySchema,
      response: { status: 201, description: 'The created policy.', schema: policySchema },
      errors: [409],
      handle: ({ body, res }) => policies.create(body, res.locals.apiKey!.id),
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/policies/:name',
      operationId: 'deletePolicy',
      tag: 'Policies',
      summary: 'Delete a policy of your own',
      description:
        'Receipts already issued under it keep its name and config_hash. Built-in, shared and other keys’ policies answer 404.',
      access: 'key',
      params: policyNameParams,
      response: { status: 204, description: 'Deleted.', empty: true },
      errors: [404],
      handle: ({ params, res }) => policies.delete(params.name, res.locals.apiKey!.id),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/templates',
      operationId: 'listTemplates',
      tag: 'Policies',
      summary: 'Claim templates for common scenarios',
      description: 'Each template is a complete ClaimInput; replace its identifiers and evidence.',
      access: 'read',
      response: { status: 200, description: 'The templates.', schema: templateListSchema },
      handle: () => ({ templates: [...CLAIM_TEMPLATES] }),
    }),
  ];
}
