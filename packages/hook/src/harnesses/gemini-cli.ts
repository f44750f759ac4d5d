import { LIMITS, isObject, mcpToolName, optStr, str, kindIn } from '../read.js';
import { parsed } from '../parse-result.js';
import { allowText, denyText, escalatedDenyText, failClosedText, failOpenText } from '../text.js';
import type { Harness, HookAnswer, HookDecision, HookEvent, HookEventKind } from '../types.js';
import { snakeCaseEvent } from '../snake-case-event.js';

// Gemini CLI hooks (github.com/google-gemini/gemini-cli, docs/hooks/reference.md and
// packages/core/src/hooks/types.ts): command hooks, JSON on stdin and stdout. BeforeTool
// answers { decision: "allow" | "deny" (alias "block"), reason }; the reason goes to the
// agent as the tool's error. Exit 2 blocks with stderr as the reason; any other non-zero
// exit is only a warning, and the call goes on. No "ask" is documented for BeforeTool, so an
// escalation is a denial with the place where a reviewer decides.

const KINDS: Record<string, HookEventKind> = {
  BeforeTool: 'pre_tool',
  AfterTool: 'post_tool',
  SessionStart: 'session_start',
  SessionEnd: 'session_end',
};

function toolName(body: Record<string, unknown>): string {
  const name = str(body, 'tool_name', LIMITS.name);
  // MCP tools carry mcp_context { server_name, tool_name (the server's own name) }.
  const context = body['mcp_context'];
  if (isObject(context) && !name.startsWith('mcp__')) {
    const server = optStr(context, 'server_name', LIMITS.name);
    const tool = optStr(context, 'tool_name', LIMITS.name);
    if (server && tool) return mcpToolName(server, tool);
  }
  return name;
}

/**
 * A shell command's exit code as run_shell_command reports it to the model: its llmContent
 * ends with the tool's own lines, `Exit Code: <n>` (only when not 0) just before
 * `Process Group PGID: <n>` (Gemini CLI 0.61). Only those closing lines are read: the output
 * before them is the command's, and may print anything, but cannot come after them.
 */
function shellExitCode(response: unknown): number | undefined {
  if (!isObject(response) || typeof response['llmContent'] !== 'string') return undefined;
  const content = response['llmContent'];
  const end = /\nProcess Group PGID: [^\n]*\n?(?:<\/untrusted_context>)?\s*$/.exec(content);
  if (!end) return undefined;
  const code = /\nExit Code: (\d{1,9})$/.exec(content.slice(0, end.index));
  // No such line: 0, or a signal; recorded as having run, with no exit code.
  return code ? Number(code[1]) : undefined;
}

function read(raw: unknown): HookEvent {
  const { body, event } = snakeCaseEvent(raw, KINDS, 'gemini-cli', toolName);
  const kind = event.kind;
  if (kind === 'post_tool') {
    // tool_response is { llmContent, returnDisplay, error? }.
    const response = body['tool_response'];
    const failed =
      isObject(response) && response['error'] !== undefined && response['error'] !== null;
    const exit = event.tool?.name === 'run_shell_command' ? shellExitCode(response) : undefined;
    event.outcome =
      exit !== undefined
        ? {
            status: exit === 0 && !failed ? 'succeeded' : 'failed',
            exit_code: exit,
            output: response,
          }
        : { status: failed ? 'failed' : 'succeeded', output: response };
  }
  return event;
}

function answer(decision: HookDecision): HookAnswer {
  if (decision.verdict === 'ALLOWED') {
    // systemMessage is shown to the user in the terminal.
    return { body: { decision: 'allow', systemMessage: allowText(decision) }, exit_code: 0 };
  }
  const text = decision.verdict === 'BLOCKED' ? denyText(decision) : escalatedDenyText(decision);
  return { body: { decision: 'deny', reason: text, systemMessage: text }, exit_code: 0 };
}

const DECISIONS = new Set(['allow', 'deny', 'block', 'approve', 'ask']);

export const geminiCli: Harness = {
  name: 'gemini-cli',
  parseEvent: (body) => parsed('gemini-cli', body, read),
  answer,
  asks: () => false,
  kindOf: (hookEvent) => kindIn(KINDS, hookEvent),
  acknowledge: () => ({ body: {}, exit_code: 0 }),
  failClosed(message) {
    const text = failClosedText(message);
    return { body: { decision: 'deny', reason: text }, exit_code: 2, stderr: text };
  },
  failOpen(message) {
    const text = failOpenText(message);
    return { body: { systemMessage: text }, exit_code: 0, stderr: text };
  },
  isAnswer(body): body is Record<string, unknown> {
    if (!isObject(body)) return false;
    const decision = body['decision'];
    if (decision !== undefined && !(typeof decision === 'string' && DECISIONS.has(decision))) {
      return false;
    }
    return ['reason', 'systemMessage'].every(
      (k) => body[k] === undefined || typeof body[k] === 'string',
    );
  },
  reasonOf(body) {
    const reason = body['reason'];
    return typeof reason === 'string' ? reason : undefined;
  },
};
