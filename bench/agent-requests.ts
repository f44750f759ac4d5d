import type autocannon from 'autocannon';
import { buildToolCallClaim } from '../src/core/agent/tool-call-claim.js';

// The load of the agent gate's doors: a coding agent's hook asking before each tool call
// (POST /v1/hooks/claude-code), and an AuthZEN PEP asking one evaluation or a batch
// (POST /access/v1/evaluation[s]). Every request is a new call, so every answer is a receipt.

const JSON_HEADERS = { 'content-type': 'application/json' };

/** The sessions the hook load spreads its calls over: one per connection. */
export const HOOK_SESSIONS = 8;

// Tool calls of a typical session: mostly allowed, some denied under the agent policy.
const CALLS: { tool_name: string; tool_input: Record<string, unknown> }[] = [
  { tool_name: 'Bash', tool_input: { command: 'npm test' } },
  { tool_name: 'Read', tool_input: { file_path: '/work/app/src/index.ts' } },
  { tool_name: 'Bash', tool_input: { command: 'git status && git diff --stat' } },
  {
    tool_name: 'Edit',
    tool_input: { file_path: '/work/app/src/app.ts', old_string: 'a', new_string: 'b' },
  },
  { tool_name: 'Bash', tool_input: { command: 'git push --force origin main' } },
  { tool_name: 'Grep', tool_input: { pattern: 'TODO', path: '/work/app/src' } },
];

/** A Claude Code PreToolUse event of session `s`, call `i`. */
export function hookEvent(s: number, i: number, prefix = ''): string {
  const call = CALLS[i % CALLS.length]!;
  return JSON.stringify({
    session_id: `bench-session-${prefix}${s}`,
    transcript_path: '/tmp/bench/transcript.jsonl',
    cwd: '/work/app',
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    ...call,
    tool_use_id: `toolu_bench_${prefix}${s}_${i}`,
  });
}

/** POSTs to `path`, the body of the i-th request made by `body(i)`. */
function numbered(
  path: string,
  headers: Record<string, string>,
  body: (i: number) => string,
): autocannon.Request[] {
  let n = 0;
  return [
    {
      method: 'POST',
      path,
      headers: { ...JSON_HEADERS, ...headers },
      setupRequest: (request) => ({ ...request, body: body(n++) }),
    },
  ];
}

/** Claude Code PreToolUse events, every one a new call; `prefix` keeps scenarios' calls apart. */
export const hookRequests = (apiKey: string, prefix = ''): autocannon.Request[] =>
  numbered('/v1/hooks/claude-code', { 'x-api-key': apiKey }, (i) =>
    hookEvent(i % HOOK_SESSIONS, i, prefix),
  );

/**
 * The claim the hook makes of `hookEvent(s, i)` (contract §12), named for the `agent` policy:
 * what POST /v1/evaluate is sent to cost the same decision without the hook's door.
 */
export function toolCallClaim(s: number, i: number, prefix = ''): Record<string, unknown> {
  const event = JSON.parse(hookEvent(s, i, prefix)) as {
    session_id: string;
    cwd: string;
    tool_name: string;
    tool_input: unknown;
    tool_use_id: string;
  };
  const { claim } = buildToolCallClaim({
    harness: 'claude-code',
    session: { id: event.session_id, cwd: event.cwd },
    agent: 'claude-code',
    tool_name: event.tool_name,
    tool_input: event.tool_input,
    tool_use_id: event.tool_use_id,
    captured_at: new Date().toISOString(),
  });
  return { ...claim, policy: 'agent' };
}

export const toolCallClaimRequests = (apiKey: string, prefix: string): autocannon.Request[] =>
  numbered('/v1/evaluate', { 'x-api-key': apiKey }, (i) =>
    JSON.stringify(toolCallClaim(i % HOOK_SESSIONS, i, prefix)),
  );

/** One AuthZEN evaluation, the resource numbered so that each is a new claim. */
export function authzenEvaluation(i: number): Record<string, unknown> {
  return {
    subject: { type: 'agent', id: 'deploy-bot', properties: { model: 'bench-model' } },
    action: { name: 'code_change' },
    resource: {
      type: 'github',
      id: `acme/service-${i}`,
      properties: { repository: `acme/service-${i % 50}`, branch: 'main' },
    },
    context: { time: '2026-11-28T10:00:00Z' },
  };
}

/** A batch of `size` evaluations sharing subject and action, under execute_all. */
export function authzenBatch(i: number, size: number): Record<string, unknown> {
  return {
    subject: { type: 'agent', id: 'deploy-bot' },
    action: { name: 'code_change' },
    options: { evaluations_semantic: 'execute_all' },
    evaluations: Array.from({ length: size }, (_, j) => ({
      resource: { type: 'github', id: `acme/batch-${i}-${j}` },
    })),
  };
}

export const authzenRequests = (apiKey: string, batch: number | null): autocannon.Request[] =>
  numbered(
    batch === null ? '/access/v1/evaluation' : '/access/v1/evaluations',
    { authorization: `Bearer ${apiKey}` },
    (i) => JSON.stringify(batch === null ? authzenEvaluation(i) : authzenBatch(i, batch)),
  );
