import {
  BodyError,
  LIMITS,
  decodedArgs,
  firstStr,
  isObject,
  mcpToolName,
  optInt,
  optStr,
  present,
  requireObject,
  str,
  kindIn,
} from '../read.js';
import type { Json } from '../read.js';
import { parsed } from '../parse-result.js';
import {
  allowText,
  askText,
  denyText,
  escalatedDenyText,
  escalationAsks,
  failClosedText,
  failOpenText,
} from '../text.js';
import type { Harness, HookAnswer, HookDecision, HookEvent, HookEventKind } from '../types.js';

// Cursor hooks (cursor.com/docs/agent/hooks): command hooks in hooks.json, JSON on stdin and
// stdout. The gating events answer { permission: allow | deny | ask, user_message,
// agent_message }; exit code 2 denies. Cursor names the specific events by what they gate
// (beforeShellExecution, beforeMCPExecution, beforeReadFile) besides the generic preToolUse.

const KINDS: Record<string, HookEventKind> = {
  preToolUse: 'pre_tool',
  beforeShellExecution: 'pre_tool',
  beforeMCPExecution: 'pre_tool',
  beforeReadFile: 'pre_tool',
  postToolUse: 'post_tool',
  postToolUseFailure: 'post_tool',
  afterShellExecution: 'post_tool',
  afterMCPExecution: 'post_tool',
  // afterFileEdit is not an outcome: no gate precedes it (a write is gated by preToolUse, whose
  // input it does not carry), so it could pair with no decision. postToolUse reports writes.
  sessionStart: 'session_start',
  sessionEnd: 'session_end',
};

/** The events whose documented answer includes "ask". */
const CAN_ASK = new Set(['beforeShellExecution', 'beforeMCPExecution']);

/**
 * beforeMCPExecution names no server, only its url (HTTP transports) or command (stdio): the
 * server label is the url's host, else the command's program name, so that mcp__* rules apply.
 */
function mcpServerOf(body: Json): string {
  const named = optStr(body, 'server_name', LIMITS.name);
  if (named) return named;
  const url = optStr(body, 'url', LIMITS.path);
  if (url) {
    try {
      return new URL(url).host || 'unknown';
    } catch {
      return 'unknown';
    }
  }
  const command = optStr(body, 'command', LIMITS.path);
  const program = command?.trim().split(/\s+/)[0]?.split('/').pop();
  return program || 'unknown';
}

function toolOf(hookEvent: string, body: Json): HookEvent['tool'] {
  switch (hookEvent) {
    case 'beforeShellExecution':
    case 'afterShellExecution':
      // The command alone is the input, as a shell tool's input is elsewhere: the directory is
      // the call's context (session.cwd), and afterShellExecution may not carry it.
      return { name: 'Shell', input: { command: str(body, 'command', 1_000_000) } };
    case 'beforeMCPExecution':
      return {
        name: mcpToolName(mcpServerOf(body), str(body, 'tool_name', LIMITS.name)),
        input: decodedArgs(present(body, 'tool_input')),
      };
    case 'afterMCPExecution': {
      // Cursor names the server (its url or command) only before the call: without it, the
      // outcome pairs with the decision on this tool of whichever server, same arguments.
      const tool = str(body, 'tool_name', LIMITS.name);
      const server = mcpServerOf(body);
      return {
        name: mcpToolName(server, tool),
        input: decodedArgs(present(body, 'tool_input')),
        ...(server === 'unknown' && { any_mcp_server: tool }),
      };
    }
    case 'beforeReadFile':
      // Only the path: `content` is the file's content, which svc must never receive.
      return { name: 'Read', input: { file_path: str(body, 'file_path', LIMITS.path) } };
    default: {
      const tool: NonNullable<HookEvent['tool']> = {
        name: str(body, 'tool_name', LIMITS.name),
        input: decodedArgs(present(body, 'tool_input')),
      };
      const useId = optStr(body, 'tool_use_id', LIMITS.id);
      if (useId) tool.use_id = useId;
      return tool;
    }
  }
}

function outcomeOf(hookEvent: string, body: Json): HookEvent['outcome'] {
  switch (hookEvent) {
    case 'postToolUseFailure':
      return { status: 'failed', output: body['error_message'] };
    case 'afterShellExecution': {
      const exit = optInt(body, 'exit_code');
      const outcome: NonNullable<HookEvent['outcome']> = {
        status: exit === undefined || exit === 0 ? 'succeeded' : 'failed',
        output: body['output'],
      };
      if (exit !== undefined) outcome.exit_code = exit;
      return outcome;
    }
    case 'afterMCPExecution':
      return { status: 'succeeded', output: body['result_json'] };
    default:
      return { status: 'succeeded', output: body['tool_output'] };
  }
}

function read(raw: unknown): HookEvent {
  const body = requireObject(raw, 'the body');
  const hookEvent = str(body, 'hook_event_name', LIMITS.name);
  const kind = kindIn(KINDS, hookEvent);
  // conversation_id names the agent conversation in every event; the session events also
  // carry session_id, the same conversation.
  const id = firstStr(body, ['conversation_id', 'session_id'], LIMITS.id);
  if (!id) throw new BodyError('conversation_id must be a non-empty string');
  const event: HookEvent = { kind, hook_event: hookEvent, session: { id }, agent: 'cursor' };
  const roots = body['workspace_roots'];
  const root = Array.isArray(roots) && typeof roots[0] === 'string' ? roots[0] : undefined;
  const cwd = optStr(body, 'cwd', LIMITS.path) ?? root;
  if (cwd && cwd.length <= LIMITS.path) event.session.cwd = cwd;
  const model = optStr(body, 'model', LIMITS.text);
  if (model) event.model = model;
  const transcript = optStr(body, 'transcript_path', LIMITS.path);
  if (transcript) event.transcript_path = transcript;
  if (kind === 'pre_tool' || kind === 'post_tool') event.tool = toolOf(hookEvent, body);
  if (kind === 'post_tool') event.outcome = outcomeOf(hookEvent, body);
  return event;
}

function permission(
  value: 'allow' | 'deny' | 'ask',
  userMessage: string,
  agentMessage?: string,
): Record<string, unknown> {
  const body: Record<string, unknown> = { permission: value, user_message: userMessage };
  if (agentMessage) body['agent_message'] = agentMessage;
  return body;
}

function answer(decision: HookDecision): HookAnswer {
  if (decision.verdict === 'ALLOWED') {
    return { body: permission('allow', allowText(decision)), exit_code: 0 };
  }
  if (escalationAsks(decision, cursor.asks(decision.hook_event))) {
    return { body: permission('ask', askText(decision)), exit_code: 0 };
  }
  const text = decision.verdict === 'BLOCKED' ? denyText(decision) : escalatedDenyText(decision);
  // The user reads user_message; the agent reads agent_message and can act on it.
  return { body: permission('deny', text, text), exit_code: 0 };
}

const PERMISSIONS = new Set(['allow', 'deny', 'ask']);

export const cursor: Harness = {
  name: 'cursor',
  parseEvent: (body) => parsed('cursor', body, read),
  answer,
  asks: (hookEvent) => hookEvent !== undefined && CAN_ASK.has(hookEvent),
  kindOf: (hookEvent) => kindIn(KINDS, hookEvent),
  acknowledge: () => ({ body: {}, exit_code: 0 }),
  failClosed(message) {
    const text = failClosedText(message);
    return { body: permission('deny', text, text), exit_code: 2, stderr: text };
  },
  failOpen(message) {
    const text = failOpenText(message);
    return { body: permission('allow', text), exit_code: 0, stderr: text };
  },
  isAnswer(body): body is Record<string, unknown> {
    if (!isObject(body)) return false;
    const value = body['permission'];
    if (value !== undefined && !(typeof value === 'string' && PERMISSIONS.has(value))) {
      return false;
    }
    return ['user_message', 'agent_message'].every(
      (k) => body[k] === undefined || typeof body[k] === 'string',
    );
  },
  reasonOf(body) {
    const reason = body['agent_message'] ?? body['user_message'];
    return typeof reason === 'string' ? reason : undefined;
  },
};
