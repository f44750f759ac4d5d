import type { ClaimInput } from './claim-schema.js';

/** The facts of a tool-call claim (contract §12) that sessions, outcomes and approvals key on. */
export interface ToolCallFacts {
  sessionId: string;
  harness: string;
  toolName: string;
  inputDigest: string;
  /** The harness's id of this one call, when its agent_trace source names one. */
  toolUseId?: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/**
 * The session and call a stored claim names: `action.session.id` and `action.tool` {harness,
 * name, input_digest}; null for a claim that is not a tool call. Reads the stored claim as
 * data, without relying on the claim schema's types, so that it applies to every stored claim
 * whatever schema version validated it.
 */
export function toolCallOf(claim: ClaimInput): ToolCallFacts | null {
  const action: unknown = claim.action;
  if (!isRecord(action) || action.action_type !== 'agent_execution') return null;
  const { tool, session } = action;
  if (!isRecord(tool) || !isRecord(session)) return null;
  if (!isText(session.id) || !isText(tool.name) || !isText(tool.input_digest)) return null;
  const harness = isText(session.harness) ? session.harness : tool.harness;
  if (!isText(harness)) return null;
  // The agent_trace source names the call: `call/<the harness's tool-use id>`
  // (core/agent/tool-call-claim.ts).
  const trace = claim.sources.find((s) => s.type === 'agent_trace');
  const toolUseId = trace?.id.startsWith('call/') ? trace.id.slice('call/'.length) : trace?.id;
  return {
    sessionId: session.id,
    harness,
    toolName: tool.name,
    inputDigest: tool.input_digest,
    ...(toolUseId ? { toolUseId } : {}),
  };
}
