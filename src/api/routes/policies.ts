import { CLAIM_TEMPLATES } from '../../core/templates.js';
import type { PolicyService } from '../../services/policies.js';
import { defineRoute, type RouteDef } from '../route-table.js';
import {
  createPolicySchema,
  policyListSchema,
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
      summary: 'Built-in and custom policies',
      access: 'read',
      response: {
        status: 200,
        description: 'Built-in policies first, then custom ones by name.',
        schema: policyListSchema,
      },
      handle: async () => ({ policies: await policies.list() }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/policies',
      operationId: 'createPolicy',
      tag: 'Policies',
      summary: 'Create a custom policy',
      description:
        'Policies are immutable and shared by all callers; a claim names one with its top-level "policy" member, and its policyConfig overrides it. A taken name is 409 policy_conflict.',
      access: 'key',
      body: createPolicySchema,
      response: { status: 201, description: 'The created policy.', schema: policySchema },
      errors: [409],
      handle: ({ body, res }) => policies.create(body, res.locals.apiKey!.id),
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
