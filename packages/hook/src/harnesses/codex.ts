import { isObject, kindIn } from '../read.js';
import { parsed } from '../parse-result.js';
import { allowText, denyText, escalatedDenyText, failClosedText, failOpenText } from '../text.js';
import type { Harness, HookAnswer, HookDecision, HookEvent, HookEventKind } from '../types.js';
import { snakeCaseEvent } from '../snake-case-event.js';

// Codex hooks (github.com/openai/codex, codex-rs/hooks: schema/generated/*.schema.json,
// engine/output_parser.rs, events/pre_tool_use.rs): command hooks only, event JSON on stdin.
// A PreToolUse hook denies with hookSpecificOutput.permissionDecision "deny" and a non-empty
// permissionDecisionReason, or with exit code 2 and the reason on stderr. Codex rejects
// permissionDecision "allow" without updatedInput and "ask" as unsupported, and a rejected
// output is a failed hook that does not block: an allow is therefore no decision at all, and
// an escalation is a denial with the place where a reviewer decides.

const KINDS: Record<string, HookEventKind> = {
  PreToolUse: 'pre_tool',
  PostToolUse: 'post_tool',
  SessionStart: 'session_start',
};

function read(raw: unknown): HookEvent {
  // transcript_path is a nullable string in Codex's schema. Shell-like tools pass
  // { command }, MCP tools their resolved arguments; the name is Codex's canonical tool_name
  // (events/pre_tool_use.rs keeps it stable for policy).
  const { body, event } = snakeCaseEvent(raw, KINDS, 'codex');
  const kind = event.kind;
  if (kind === 'post_tool') {
    const response = body['tool_response'];
    const exit = isObject(response) ? response['exit_code'] : headerExitCode(response);
    event.outcome =
      typeof exit === 'number' && Number.isInteger(exit)
        ? { status: exit === 0 ? 'succeeded' : 'failed', exit_code: exit, output: response }
        : { status: 'succeeded', output: response };
  }
  return event;
}

/**
 * The exit code of a response Codex wrote as text with its own header first (`apply_patch`
 * in Codex CLI 0.171: "Exit code: 0\nWall time: 0.1 seconds\nOutput:\n…"). Only the header
 * is read: what follows `Output:` is the tool's own, and may say anything. A shell command's
 * response there is its output alone, with no exit code: recorded as having run.
 */
function headerExitCode(response: unknown): number | undefined {
  if (typeof response !== 'string') return undefined;
  const header = /^Exit code: (\d{1,9})\nWall time: /.exec(response);
  return header ? Number(header[1]) : undefined;
}

function deny(reason: string): Record<string, unknown> {
  return {
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: reason,
    },
  };
}

function answer(decision: HookDecision): HookAnswer {
  if (decision.verdict === 'ALLOWED') {
    // No decision lets the call go on to Codex's own approval policy; systemMessage names
    // the receipt to the user.
    return { body: { systemMessage: allowText(decision) }, exit_code: 0 };
  }
  const text = decision.verdict === 'BLOCKED' ? denyText(decision) : escalatedDenyText(decision);
  return { body: deny(text), exit_code: 0 };
}

const ALLOWED_KEYS = new Set([
  'continue',
  'hookSpecificOutput',
  'stopReason',
  'suppressOutput',
  'systemMessage',
  'decision',
  'reason',
]);

export const codex: Harness = {
  name: 'codex',
  parseEvent: (body) => parsed('codex', body, read),
  answer,
  asks: () => false,
  kindOf: (hookEvent) => kindIn(KINDS, hookEvent),
  acknowledge: () => ({ body: {}, exit_code: 0 }),
  failClosed(message) {
    // Exit 2 with a non-empty stderr blocks; without a stderr reason Codex would not block.
    const text = failClosedText(message);
    return { body: deny(text), exit_code: 2, stderr: text };
  },
  failOpen(message) {
    const text = failOpenText(message);
    return { body: { systemMessage: text }, exit_code: 0, stderr: text };
  },
  isAnswer(body): body is Record<string, unknown> {
    if (!isObject(body)) return false;
    if (!Object.keys(body).every((k) => ALLOWED_KEYS.has(k))) return false;
    const specific = body['hookSpecificOutput'];
    if (specific === undefined) return true;
    if (!isObject(specific) || typeof specific['hookEventName'] !== 'string') return false;
    const decision = specific['permissionDecision'];
    if (decision === undefined) return true;
    // Only what Codex acts on: deny with a reason (allow needs updatedInput, ask is refused).
    return decision === 'deny' && typeof specific['permissionDecisionReason'] === 'string';
  },
  reasonOf(body) {
    const specific = body['hookSpecificOutput'];
    const reason = isObject(specific) ? specific['permissionDecisionReason'] : undefined;
    return typeof reason === 'string' ? reason : undefined;
  },
};
