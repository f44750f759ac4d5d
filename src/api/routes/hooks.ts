import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { EXIT_HEADER, HARNESS_NAMES, MAX_REPOSITORY, parseEvent, REPOSITORY } from '@svc/hook';
import { GIT_COMMIT } from '../../core/agent/session-facts-schema.js';
import { SvcError } from '../../core/errors.js';
import type { AgentHookService } from '../../services/agent-hooks.js';
import { apiKeySubmitter } from '../../services/claims.js';
import { defineRoute, type RouteDef } from '../route-table.js';

const hookParams = z.strictObject({
  harness: z
    .enum(HARNESS_NAMES, { error: `must be one of ${HARNESS_NAMES.join(', ')}` })
    .meta({ description: 'The agent harness whose hook event the body is.' }),
});

/** The longest an answer waits for a reviewer (?wait=). */
const MAX_WAIT_SECONDS = 300;

const hookQuery = z.strictObject({
  event: z
    .string()
    .min(1, { error: 'must name an event, e.g. PreToolUse' })
    .max(64, { error: 'must be at most 64 characters' })
    .optional()
    .meta({
      description: "The harness's event name, for a body that does not carry it (Copilot).",
    }),
  policy: z.string().min(1).max(64).optional().meta({
    description: 'The policy to decide under (default: agent); a locked key keeps its own.',
  }),
  ask: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .default('true')
    .transform((v) => v === 'true')
    .meta({ description: 'false for a run nobody watches: an escalation is then a deny.' }),
  git_head: z
    .string()
    .regex(GIT_COMMIT, { error: 'must be a commit id: 40 or 64 lower-case hex digits' })
    .optional()
    .meta({
      description:
        "On a post-tool event: the HEAD of the session's repository after the call (svc-hook sends it), recorded in the outcome's claim as action.git_head. Ignored on other events.",
    }),
  wait: z
    .string()
    .regex(/^\d{1,3}$/, { error: 'must be a whole number of seconds, 1 to 300' })
    .transform(Number)
    .refine((n) => n >= 1 && n <= MAX_WAIT_SECONDS, {
      error: 'must be a whole number of seconds, 1 to 300',
    })
    .optional()
    .meta({
      description:
        "Seconds (1-300) an escalated call the harness cannot ask about (?ask=false, or a harness without ask) waits for a reviewer's decision before the deny: approved meanwhile, the call is decided again citing the approval and allowed; rejected, it is denied with the reviewer's reason. Keep it below the harness's hook timeout.",
    }),
  repository: z
    .string()
    .max(MAX_REPOSITORY)
    .regex(REPOSITORY, { error: 'must be a repository path such as owner/name' })
    .optional()
    .meta({
      description:
        "The repository the session works in (svc-hook reads it from the git remote origin), recorded in the tool call's claim as action.repository: sessions are listed by it (GET /v1/sessions?repo=).",
    }),
});

const hookAnswerSchema = z
  .record(z.string(), z.unknown())
  .meta({ id: 'HookAnswer', description: "The harness's own hook output (docs/AGENTS.md)." });

/** Aborted when the client's connection closes before the answer is sent. */
function closed(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => controller.abort());
  return controller.signal;
}

export function hookRoutes(hooks: AgentHookService): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/hooks/:harness',
      operationId: 'agentHook',
      tag: 'Claims',
      summary: "An agent harness's hook event, answered in the harness's format (contract §12)",
      description: `For claude-code, codex, cursor, gemini-cli, copilot and mcp (svc's MCP gateway). A pre-tool event becomes a tool-call claim, decided under the key's locked policy, else ?policy=, else the built-in agent policy, with a receipt; the body is the harness's allow, deny or ask, naming the receipt, and ${EXIT_HEADER} the exit status its command hook must use (svc-hook uses it). A post-tool event records the call's outcome; session start and end events record when the session started and ended (its started_at, ended_at and end_reason). An event the harness's schema does not allow is 400 and records nothing.`,
      access: 'key',
      params: hookParams,
      query: hookQuery,
      body: z.unknown(),
      response: { status: 200, description: "The harness's answer.", schema: hookAnswerSchema },
      errors: [409],
      headers: {
        200: z.object({
          [EXIT_HEADER]: z.string().meta({ description: "The command hook's exit status." }),
        }),
      },
      async handle({ params, query, body, res }) {
        const parsed = parseEvent(params.harness, body, query.event ? { event: query.event } : {});
        if (!parsed.ok)
          throw new SvcError('validation_failed', `${params.harness} event: ${parsed.error}`);
        const answer = await hooks.handle(
          {
            harness: params.harness,
            event: parsed.event,
            canAsk: query.ask,
            ...(query.policy !== undefined && { policy: query.policy }),
            ...(query.git_head !== undefined && { gitHead: query.git_head }),
            ...(query.repository !== undefined && { repository: query.repository }),
            ...(query.wait !== undefined && { waitMs: query.wait * 1000, signal: closed(res) }),
          },
          apiKeySubmitter(res.locals.apiKey!),
        );
        res.setHeader(EXIT_HEADER, String(answer.exit_code));
        return answer.body;
      },
    }),
  ];
}
