import type autocannon from 'autocannon';

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
export function hookEvent(s: number, i: number): string {
  const call = CALLS[i % CALLS.length]!;
  return JSON.stringify({
    session_id: `bench-session-${s}`,
    transcript_path: '/tmp/bench/transcript.jsonl',
    cwd: '/work/app',
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    ...call,
    tool_use_id: `toolu_bench_${s}_${i}`,
  });
}

export function hookRequests(apiKey: string): autocannon.Request[] {
  let n = 0;
  return [
    {
      method: 'POST',
      path: '/v1/hooks/claude-code',
      headers: { ...JSON_HEADERS, 'x-api-key': apiKey },
      setupRequest: (request) => {
        const i = n++;
        return { ...request, body: hookEvent(i % HOOK_SESSIONS, i) };
      },
    },
  ];
}

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

export function authzenRequests(apiKey: string, batch: number | null): autocannon.Request[] {
  let n = 0;
  return [
    {
      method: 'POST',
      path: batch === null ? '/access/v1/evaluation' : '/access/v1/evaluations',
      headers: { ...JSON_HEADERS, authorization: `Bearer ${apiKey}` },
      setupRequest: (request) => {
        const i = n++;
        const body = batch === null ? authzenEvaluation(i) : authzenBatch(i, batch);
        return { ...request, body: JSON.stringify(body) };
      },
    },
  ];
}
