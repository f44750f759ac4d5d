import {
  BodyError,
  LIMITS,
  isObject,
  optStr,
  present,
  requireObject,
  str,
  kindIn,
} from '../read.js';
import { parsed } from '../parse-result.js';
import { allowText, denyText, escalatedDenyText, failClosedText, failOpenText } from '../text.js';
import type { Harness, HookAnswer, HookDecision, HookEvent, HookEventKind } from '../types.js';

// svc's own MCP gateway (`svc mcp-gateway`, docs/MCP.md) asks before every
// tools/call it forwards. This is the small event shape it sends and the JSON it reads back;
// no third party defines it, so it is strict: an unknown event name is an error, not "other".
//
// Event: { hook_event_name: PreToolUse | PostToolUse | SessionStart | SessionEnd,
//          session_id, cwd?, agent? (the MCP client's clientInfo.name), model?,
//          tool_name: mcp__<server>__<tool>, tool_input (the call's arguments),
//          tool_use_id?, tool_response?: { isError?, result_digest? } (PostToolUse) }
// Answer: { decision: allow | deny, verdict, reason, receipt_id?, receipt_url? }

const KINDS: Record<string, HookEventKind> = {
  PreToolUse: 'pre_tool',
  PostToolUse: 'post_tool',
  SessionStart: 'session_start',
  SessionEnd: 'session_end',
};

/** `mcp__<server>__<tool>`: a server name holds no `__`, so the name splits one way only. */
const TOOL_NAME = /^mcp__(?:(?!__)[^\s])+?__\S+$/;
const DIGEST = /^sha256:[0-9a-f]{64}$/;

function toolResponse(body: Record<string, unknown>): NonNullable<HookEvent['outcome']> {
  const raw = body['tool_response'];
  if (raw === undefined || raw === null) return { status: 'succeeded' };
  const response = requireObject(raw, 'tool_response');
  const isError = response['isError'];
  if (isError !== undefined && typeof isError !== 'boolean') {
    throw new BodyError('tool_response.isError must be a boolean');
  }
  const digest = response['result_digest'];
  if (digest !== undefined && (typeof digest !== 'string' || !DIGEST.test(digest))) {
    throw new BodyError('tool_response.result_digest must be sha256: and 64 hex digits');
  }
  // The output recorded is this small report, not the tool's result: its digest names the
  // result without sending it (a result may be megabytes, or secret).
  const output: Record<string, unknown> = { isError: isError === true };
  if (digest !== undefined) output['result_digest'] = digest;
  return { status: isError === true ? 'failed' : 'succeeded', output };
}

function read(raw: unknown): HookEvent {
  const body = requireObject(raw, 'the body');
  const hookEvent = str(body, 'hook_event_name', LIMITS.name);
  const kind = kindIn(KINDS, hookEvent);
  if (kind === 'other') {
    throw new BodyError(`hook_event_name must be one of ${Object.keys(KINDS).join(', ')}`);
  }
  const event: HookEvent = {
    kind,
    hook_event: hookEvent,
    session: { id: str(body, 'session_id', LIMITS.id) },
    agent: optStr(body, 'agent', LIMITS.name) ?? 'mcp',
  };
  const cwd = optStr(body, 'cwd', LIMITS.path);
  if (cwd) event.session.cwd = cwd;
  const model = optStr(body, 'model', LIMITS.text);
  if (model) event.model = model;
  if (kind === 'pre_tool' || kind === 'post_tool') {
    const name = str(body, 'tool_name', LIMITS.name);
    if (!TOOL_NAME.test(name)) throw new BodyError('tool_name must be mcp__<server>__<tool>');
    const input = present(body, 'tool_input');
    // MCP tool arguments are an object (tools/call params.arguments).
    if (!isObject(input)) throw new BodyError('tool_input must be a JSON object');
    event.tool = { name, input };
    const useId = optStr(body, 'tool_use_id', LIMITS.id);
    if (useId) event.tool.use_id = useId;
  }
  if (kind === 'post_tool') event.outcome = toolResponse(body);
  return event;
}

function decided(
  decision: 'allow' | 'deny',
  verdict: HookDecision['verdict'] | undefined,
  reason: string,
  from?: HookDecision,
): Record<string, unknown> {
  const body: Record<string, unknown> = { decision };
  if (verdict) body['verdict'] = verdict;
  body['reason'] = reason;
  if (from?.receipt_id) body['receipt_id'] = from.receipt_id;
  if (from?.receipt_url) body['receipt_url'] = from.receipt_url;
  return body;
}

function answer(decision: HookDecision): HookAnswer {
  const { verdict } = decision;
  if (verdict === 'ALLOWED') {
    return { body: decided('allow', verdict, allowText(decision), decision), exit_code: 0 };
  }
  // The gateway has nobody to ask: approval is a reviewer's disposition in svc (contract
  // §11), so an escalation is a deny that says where to approve, whatever can_ask says.
  const text = verdict === 'BLOCKED' ? denyText(decision) : escalatedDenyText(decision);
  return { body: decided('deny', verdict, text, decision), exit_code: 0 };
}

const DECISIONS = new Set(['allow', 'deny']);
const VERDICTS = new Set(['ALLOWED', 'BLOCKED', 'ESCALATED']);

export const mcp: Harness = {
  name: 'mcp',
  parseEvent: (body) => parsed('mcp', body, read),
  answer,
  asks: () => false,
  kindOf: (hookEvent) => kindIn(KINDS, hookEvent),
  acknowledge: () => ({ body: {}, exit_code: 0 }),
  failClosed(message) {
    const text = failClosedText(message);
    return { body: decided('deny', undefined, text), exit_code: 2, stderr: text };
  },
  failOpen(message) {
    const text = failOpenText(message);
    return { body: decided('allow', undefined, text), exit_code: 0, stderr: text };
  },
  isAnswer(body): body is Record<string, unknown> {
    if (!isObject(body)) return false;
    const decision = body['decision'];
    if (decision !== undefined && !(typeof decision === 'string' && DECISIONS.has(decision))) {
      return false;
    }
    const verdict = body['verdict'];
    if (verdict !== undefined && !(typeof verdict === 'string' && VERDICTS.has(verdict))) {
      return false;
    }
    return ['reason', 'receipt_id', 'receipt_url'].every(
      (k) => body[k] === undefined || typeof body[k] === 'string',
    );
  },
  reasonOf(body) {
    const reason = body['reason'];
    return typeof reason === 'string' ? reason : undefined;
  },
};
