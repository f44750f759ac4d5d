import {
  canonicalize,
  hashCanonical,
  hashText,
  portableSha256Hex,
  type Sha256Hex,
} from '@svc/verify';
import { claimInputSchema, formatIssues, type ClaimInput } from '../claim-schema.js';
import { SvcError } from '../errors.js';
import { MAX_ID_CHARS, MAX_URI_CHARS } from '../limits.js';
import type { ToolSummary } from './tool-call-schema.js';
import { isAbsoluteDir, normalizeToolPath } from './tool-paths.js';
import { redactSummary, summarizeToolCall } from './tool-summary.js';

export interface ToolCallClaimInput {
  /** The integration: `claude-code`, `codex`, `cursor`, `gemini-cli`, `copilot`, `mcp`, … */
  harness: string;
  /** The harness's session; `cwd` is its project directory (absolute). */
  session: { id: string; cwd?: string };
  /**
   * The directory the call runs in, when the harness reports one apart from the project
   * directory (absolute): the call's command and relative paths are read from there.
   */
  run_dir?: string;
  agent: string;
  agent_model?: string;
  human_operator?: string;
  /** The tool as the harness names it (an MCP tool as `mcp__<server>__<tool>`). */
  tool_name: string;
  /** The tool's input exactly as the harness sent it (parsed JSON). */
  tool_input: unknown;
  /**
   * The harness's id of this call, when it gives one: it names the claim. Without it (and
   * without `captured_at`), the same input in the same session makes the same claim_id, which
   * the service answers with the first receipt.
   */
  tool_use_id?: string;
  repository?: string;
  /** When the harness reported the call (ISO 8601 UTC): the source's provenance. */
  captured_at?: string;
  /**
   * Keep the raw input in the claim (`action.tool.input`), where it is hashed into the
   * receipt's `inputs_hash` and stored with the claim. Off unless the operator sets
   * SVC_AGENT_STORE_INPUTS=true: the raw input is not redacted.
   */
  storeInput?: boolean;
  /**
   * The escalated receipt of this very call that a reviewer decided while the harness waited:
   * the call is decided again, and its claim id names that receipt so that it is not the
   * first decision's claim (which the service would answer with the first receipt).
   */
  decided_after?: string;
}

export interface ToolCallClaim {
  claim: ClaimInput;
  /** `sha256:` + hex SHA-256 over the JCS bytes of the input as sent (contract §12). */
  input_digest: string;
}

/**
 * The input's digest: SHA-256 over its JCS bytes (contract §1, §12). Throws a
 * `validation_failed` error for an input JCS cannot represent exactly (an integer beyond
 * 2^53, a lone surrogate), which the contract refuses rather than changes. `sha256Hex`
 * defaults to the portable implementation; any gives the same digest.
 */
export function toolInputDigest(input: unknown, sha256Hex: Sha256Hex = portableSha256Hex): string {
  let text: string;
  try {
    text = canonicalize(input);
  } catch (error) {
    throw new SvcError(
      'validation_failed',
      `tool_input: ${error instanceof Error ? error.message : 'has no canonical JSON form'}`,
      { cause: error },
    );
  }
  return hashText(text, sha256Hex);
}

const clip = (text: string, max: number) =>
  text.length <= max ? text : `${text.slice(0, max - 1)}…`;

/** One line saying what the call does, from the redacted summary only. */
function describe(toolName: string, summary: ToolSummary): string {
  const what =
    summary.command ??
    summary.paths?.join(', ') ??
    summary.urls?.join(', ') ??
    (summary.mcp_tool ? `${summary.mcp_server}/${summary.mcp_tool}` : '');
  return clip(what ? `${toolName}: ${what}` : toolName, 512);
}

/** A short id built from parts, or their hash when they would be too long. */
function idOf(parts: string[], max: number, sha256Hex: Sha256Hex): string {
  const id = parts.join('/');
  return id.length <= max ? id : `${parts[0]}/${hashCanonical(parts, sha256Hex).slice(7, 39)}`;
}

/**
 * The claim of one tool call (contract §12): `action_type` `agent_execution`, `action.tool`
 * with the input's digest and its redacted summary, `action.session`, and one `agent_trace`
 * source naming the session and the call. Pure: the caller supplies the time, if any, and
 * may supply its SHA-256 (the service's native one). Throws `validation_failed` when the
 * facts given cannot make a valid claim.
 */
export function buildToolCallClaim(
  input: ToolCallClaimInput,
  sha256Hex: Sha256Hex = portableSha256Hex,
): ToolCallClaim {
  const digest = toolInputDigest(input.tool_input, sha256Hex);
  // The project directory in the paths' own spelling (`C:\proj\` is `C:/proj`); a
  // relative one stays as given, for the schema to refuse.
  const raw = input.session.cwd;
  const cwd =
    raw !== undefined && isAbsoluteDir(raw) ? (normalizeToolPath(raw, undefined) ?? raw) : raw;
  const summary = summarizeToolCall(input.tool_name, input.tool_input, cwd, input.run_dir);
  // The call's id names the claim: claim_id is unique per account, and the service answers a
  // repeated claim_id with the first receipt. Without the harness's id, the time of the call
  // keeps two calls of the same input apart; without either, they are one claim.
  const short = digest.slice('sha256:'.length, 'sha256:'.length + 16);
  const call =
    input.tool_use_id ??
    (input.captured_at !== undefined ? `${input.captured_at}-${short}` : short);
  const enc = encodeURIComponent;
  const claim: ClaimInput = {
    claim_id: idOf(
      [
        input.harness,
        input.session.id,
        call,
        ...(input.decided_after === undefined ? [] : ['after', input.decided_after]),
      ],
      MAX_ID_CHARS,
      sha256Hex,
    ),
    entity: input.repository ?? cwd ?? `${input.harness}/${input.session.id}`,
    claim: `${input.agent} calls ${describe(input.tool_name, summary)}`,
    action: {
      action_type: 'agent_execution',
      target_system: input.harness,
      ...(input.repository !== undefined && { repository: input.repository }),
      agent: input.agent,
      ...(input.agent_model !== undefined && { agent_model: input.agent_model }),
      ...(input.human_operator !== undefined && { human_operator: input.human_operator }),
      tool: {
        harness: input.harness,
        name: input.tool_name,
        input_digest: digest,
        summary,
        ...(input.storeInput && { input: input.tool_input }),
      },
      session: {
        id: input.session.id,
        harness: input.harness,
        ...(cwd !== undefined && { cwd }),
      },
    },
    sources: [
      {
        id: idOf(['call', call], MAX_ID_CHARS, sha256Hex),
        type: 'agent_trace',
        uri: clip(
          `urn:svc:session:${enc(input.harness)}:${enc(input.session.id)}:call:${enc(call)}`,
          MAX_URI_CHARS,
        ),
        // The harness's own report of the call it is about to make: what is decided on is
        // exactly that call, so nothing about it is uncertain.
        confidence: 1,
        content: `${input.harness} session ${input.session.id}: ${input.tool_name} call ${call}, input ${digest}`,
        ...(input.captured_at !== undefined && {
          provenance: { captured_at: input.captured_at, collector: input.harness },
        }),
      },
    ],
  };
  const parsed = claimInputSchema.safeParse(claim);
  if (!parsed.success) throw new SvcError('validation_failed', formatIssues(parsed.error));
  return { claim: parsed.data, input_digest: digest };
}

/**
 * The claim with its tool call's summary redacted (`redactSummary`), for a claim a caller
 * wrote: the claim itself when there is nothing to redact, as for every claim built here.
 */
export function redactToolCallClaim(claim: ClaimInput): ClaimInput {
  const tool = claim.action?.tool;
  if (!tool) return claim;
  const summary = redactSummary(tool.summary);
  return summary === tool.summary
    ? claim
    : { ...claim, action: { ...claim.action!, tool: { ...tool, summary } } };
}
