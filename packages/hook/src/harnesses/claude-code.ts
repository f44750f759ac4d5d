import { BodyError, isObject, kindIn } from '../read.js';
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
import { snakeCaseEvent } from '../snake-case-event.js';

// Claude Code hooks (code.claude.com/docs/en/hooks): command hooks read the event on stdin
// and answer on stdout; HTTP hooks receive the same JSON as the POST body and answer with it.
// PreToolUse answers with hookSpecificOutput.permissionDecision allow | deny | ask; exit
// code 2 blocks with stderr as the reason; any other non-zero exit is a non-blocking error.

const KINDS: Record<string, HookEventKind> = {
  PreToolUse: 'pre_tool',
  PostToolUse: 'post_tool',
  PostToolUseFailure: 'post_tool',
  SessionStart: 'session_start',
  SessionEnd: 'session_end',
};

function read(raw: unknown): HookEvent {
  // Claude Code already names MCP tools mcp__<server>__<tool>.
  const { body, event } = snakeCaseEvent(raw, KINDS, 'claude-code');
  const hookEvent = event.hook_event;
  if (hookEvent === 'PostToolUse') {
    event.outcome = { status: 'succeeded', output: body['tool_response'] };
  } else if (hookEvent === 'PostToolUseFailure') {
    const error = body['error'];
    if (error !== undefined && typeof error !== 'string')
      throw new BodyError('error must be a string');
    event.outcome = { status: 'failed', output: error };
  }
  return event;
}

function preToolUse(decision: 'allow' | 'deny' | 'ask', reason: string): Record<string, unknown> {
  return {
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: decision,
      permissionDecisionReason: reason,
    },
  };
}

function answer(decision: HookDecision): HookAnswer {
  if (decision.verdict === 'ALLOWED') {
    // allow skips Claude Code's permission prompt; its reason is shown to the user.
    return { body: preToolUse('allow', allowText(decision)), exit_code: 0 };
  }
  if (escalationAsks(decision, true)) {
    // ask shows the prompt, with the reason, to the operator.
    return { body: preToolUse('ask', askText(decision)), exit_code: 0 };
  }
  const text = decision.verdict === 'BLOCKED' ? denyText(decision) : escalatedDenyText(decision);
  // deny cancels the call; the reason is shown to Claude.
  return { body: preToolUse('deny', text), exit_code: 0 };
}

const DECISIONS = new Set(['allow', 'deny', 'ask', 'defer']);

export const claudeCode: Harness = {
  name: 'claude-code',
  parseEvent: (body) => parsed('claude-code', body, read),
  answer,
  asks: () => true,
  kindOf: (hookEvent) => kindIn(KINDS, hookEvent),
  acknowledge: () => ({ body: {}, exit_code: 0 }),
  failClosed(message) {
    // Exit 2 blocks the call whatever stdout holds, with stderr as the reason.
    const text = failClosedText(message);
    return { body: preToolUse('deny', text), exit_code: 2, stderr: text };
  },
  failOpen(message) {
    // No permissionDecision: Claude Code's own permission rules and prompts still apply.
    const text = failOpenText(message);
    return { body: { systemMessage: text }, exit_code: 0, stderr: text };
  },
  isAnswer(body): body is Record<string, unknown> {
    if (!isObject(body)) return false;
    const specific = body['hookSpecificOutput'];
    if (specific === undefined) return true;
    if (!isObject(specific) || typeof specific['hookEventName'] !== 'string') return false;
    const decision = specific['permissionDecision'];
    return decision === undefined || (typeof decision === 'string' && DECISIONS.has(decision));
  },
  reasonOf(body) {
    const specific = body['hookSpecificOutput'];
    const reason = isObject(specific) ? specific['permissionDecisionReason'] : undefined;
    return typeof reason === 'string' ? reason : undefined;
  },
};
