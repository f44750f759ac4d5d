import { z } from 'zod';

const decisionContextSchema = z
  .object({
    receipt_id: z.string().optional().meta({ description: 'The receipt behind the decision.' }),
    verdict: z.enum(['ALLOWED', 'BLOCKED', 'ESCALATED']),
    reason_admin: z
      .array(z.string())
      .meta({ description: 'Each failed rule as `<rule>: <reason>`, else why it was admitted.' }),
    reason_user: z.string().meta({ description: 'One short sentence for the subject.' }),
    receipt_url: z.string().optional(),
    explorer_url: z.string().optional(),
    approval: z
      .object({ request_url: z.string(), explorer_url: z.string() })
      .optional()
      .meta({ description: 'ESCALATED: where a reviewer approves or rejects the action.' }),
    dry_run: z.literal(true).optional(),
  })
  .meta({ id: 'AuthzenDecisionContext' });

/** AuthZEN §5.5: `decision` is true exactly when the receipt says proceed. */
export const authzenDecisionSchema = z
  .object({ decision: z.boolean(), context: decisionContextSchema })
  .meta({ id: 'AuthzenDecision' });

/** AuthZEN §7.3: an evaluation that failed on its own is a closed decision with its error. */
const evaluationErrorSchema = z
  .object({
    decision: z.literal(false),
    context: z.object({ error: z.object({ status: z.number().int(), message: z.string() }) }),
  })
  .meta({ id: 'AuthzenEvaluationError' });

export const authzenEvaluationsResponseSchema = z.union([
  z
    .object({ evaluations: z.array(z.union([authzenDecisionSchema, evaluationErrorSchema])) })
    .meta({ id: 'AuthzenEvaluationsResponse' }),
  authzenDecisionSchema,
]);

/** AuthZEN §9: the Policy Decision Point's metadata. */
export const authzenConfigurationSchema = z
  .object({
    policy_decision_point: z.string(),
    access_evaluation_endpoint: z.string(),
    access_evaluations_endpoint: z.string(),
  })
  .meta({ id: 'AuthzenConfiguration' });
