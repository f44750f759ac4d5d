import {
  BodyError,
  LIMITS,
  decodedArgs,
  firstStr,
  isObject,
  present,
  requireObject,
  kindIn,
} from '../read.js';
import type { Json } from '../read.js';
import { parsed } from '../parse-result.js';
import { allowText, denyText, escalatedDenyText, failClosedText, failOpenText } from '../text.js';
import type { Harness, HookAnswer, HookDecision, HookEvent, HookEventKind } from '../types.js';

// GitHub Copilot hooks, for the Copilot CLI and the cloud agent (docs.github.com: "GitHub
// Copilot CLI hooks reference" and "Hooks configuration"; github/docs content/copilot/
// reference/): command hooks in .github/hooks/*.json. preToolUse answers
// { permissionDecision, permissionDecisionReason }. Hook failures — a non-zero exit or a
// timeout — are logged and skipped and never block, so every denial here, the fail-closed
// one included, is JSON on stdout with exit 0. Configured in camelCase (preToolUse) the
// payload has camelCase fields and no event name; configured in PascalCase (PreToolUse) it
// has hook_event_name and snake_case fields. "ask" is listed by the CLI reference but the
// hooks configuration reference says only "deny" is processed, and the cloud agent has no
// operator to ask: an escalation is a denial with the place where a reviewer decides.

const KINDS: Record<string, HookEventKind> = {
  preToolUse: 'pre_tool',
  PreToolUse: 'pre_tool',
  postToolUse: 'post_tool',
  PostToolUse: 'post_tool',
  postToolUseFailure: 'post_tool',
  PostToolUseFailure: 'post_tool',
  sessionStart: 'session_start',
  SessionStart: 'session_start',
  sessionEnd: 'session_end',
  SessionEnd: 'session_end',
};

/** The camelCase payloads carry no event name: it is read from the fields they have. */
function eventFromShape(body: Json): string {
  const hasTool = 'toolName' in body;
  if (hasTool && 'toolResult' in body) return 'postToolUse';
  if (hasTool && 'error' in body) return 'postToolUseFailure';
  if (hasTool) return 'preToolUse';
  if ('source' in body) return 'sessionStart';
  if ('reason' in body) return 'sessionEnd';
  return 'unknown';
}

function outcomeOf(hookEvent: string, body: Json): HookEvent['outcome'] {
  if (hookEvent === 'postToolUseFailure' || hookEvent === 'PostToolUseFailure') {
    return { status: 'failed', output: body['error'] };
  }
  const result = body['toolResult'] ?? body['tool_result'];
  const type = isObject(result) ? (result['resultType'] ?? result['result_type']) : undefined;
  return { status: type === 'success' ? 'succeeded' : 'failed', output: result };
}

function read(raw: unknown, hint?: string): HookEvent {
  const body = requireObject(raw, 'the body');
  const named = firstStr(body, ['hook_event_name'], LIMITS.name);
  const hookEvent = hint ?? named ?? eventFromShape(body);
  const kind = kindIn(KINDS, hookEvent);
  const id = firstStr(body, ['sessionId', 'session_id'], LIMITS.id);
  if (!id) {
    throw new BodyError('sessionId must be a non-empty string (Copilot CLI sends it)');
  }
  const event: HookEvent = { kind, hook_event: hookEvent, session: { id }, agent: 'copilot' };
  const cwd = firstStr(body, ['cwd'], LIMITS.path);
  if (cwd) event.session.cwd = cwd;
  const transcript = firstStr(body, ['transcriptPath', 'transcript_path'], LIMITS.path);
  if (transcript) event.transcript_path = transcript;
  if (kind === 'pre_tool' || kind === 'post_tool') {
    const camel = 'toolName' in body;
    const name = firstStr(body, [camel ? 'toolName' : 'tool_name'], LIMITS.name);
    if (!name)
      throw new BodyError(`${camel ? 'toolName' : 'tool_name'} must be a non-empty string`);
    // toolArgs is a JSON string of the arguments: the input is the value it encodes.
    event.tool = { name, input: decodedArgs(present(body, camel ? 'toolArgs' : 'tool_input')) };
  }
  if (kind === 'post_tool') event.outcome = outcomeOf(hookEvent, body);
  return event;
}

function decision(value: 'allow' | 'deny', reason: string): Record<string, unknown> {
  return { permissionDecision: value, permissionDecisionReason: reason };
}

function answer(d: HookDecision): HookAnswer {
  if (d.verdict === 'ALLOWED') return { body: decision('allow', allowText(d)), exit_code: 0 };
  const text = d.verdict === 'BLOCKED' ? denyText(d) : escalatedDenyText(d);
  return { body: decision('deny', text), exit_code: 0 };
}

const DECISIONS = new Set(['allow', 'deny', 'ask']);

export const copilot: Harness = {
  name: 'copilot',
  parseEvent: (body, options) => parsed('copilot', body, (b) => read(b, options?.event)),
  answer,
  asks: () => false,
  kindOf: (hookEvent) => kindIn(KINDS, hookEvent),
  acknowledge: () => ({ body: {}, exit_code: 0 }),
  failClosed(message) {
    const text = failClosedText(message);
    return { body: decision('deny', text), exit_code: 0, stderr: text };
  },
  failOpen(message) {
    // Empty output keeps Copilot's default behaviour; the warning goes to its hook log.
    return { body: {}, exit_code: 0, stderr: failOpenText(message) };
  },
  isAnswer(body): body is Record<string, unknown> {
    if (!isObject(body)) return false;
    const value = body['permissionDecision'];
    if (value !== undefined && !(typeof value === 'string' && DECISIONS.has(value))) return false;
    const reason = body['permissionDecisionReason'];
    return reason === undefined || typeof reason === 'string';
  },
  reasonOf(body) {
    const reason = body['permissionDecisionReason'];
    return typeof reason === 'string' ? reason : undefined;
  },
};
