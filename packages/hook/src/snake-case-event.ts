import { kindIn, LIMITS, optStr, present, requireObject, str, type Json } from './read.js';
import type { HookEvent, HookEventKind } from './types.js';

/**
 * The members Claude Code, Codex and Gemini CLI send alike (the latter two took Claude Code's
 * snake_case event shape): the event's name, the session and its directory, the model, the
 * transcript and the permission mode where given, and for a tool event the tool, its input as
 * sent and the call's id. Each harness reads the rest (its outcome, its MCP names) itself.
 */
export function snakeCaseEvent(
  raw: unknown,
  kinds: Readonly<Record<string, HookEventKind>>,
  agent: string,
  toolName: (body: Json) => string = (body) => str(body, 'tool_name', LIMITS.name),
): { body: Json; event: HookEvent } {
  const body = requireObject(raw, 'the body');
  const hookEvent = str(body, 'hook_event_name', LIMITS.name);
  const kind = kindIn(kinds, hookEvent);
  const event: HookEvent = {
    kind,
    hook_event: hookEvent,
    session: { id: str(body, 'session_id', LIMITS.id) },
    agent,
  };
  const cwd = optStr(body, 'cwd', LIMITS.path);
  if (cwd) event.session.cwd = cwd;
  const model = optStr(body, 'model', LIMITS.text);
  if (model) event.model = model;
  const transcript = optStr(body, 'transcript_path', LIMITS.path);
  if (transcript) event.transcript_path = transcript;
  const mode = optStr(body, 'permission_mode', LIMITS.text);
  if (mode) event.permission_mode = mode;
  if (kind === 'pre_tool' || kind === 'post_tool') {
    event.tool = { name: toolName(body), input: present(body, 'tool_input') };
    const useId = optStr(body, 'tool_use_id', LIMITS.id);
    if (useId) event.tool.use_id = useId;
  }
  return { body, event };
}
