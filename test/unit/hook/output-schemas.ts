import { z } from 'zod';
import type { HarnessName } from '@svc/hook';

// Each harness's pre-tool answer as its documentation (or source) defines it, strict: a field
// the harness does not know fails. Where a harness ignores or refuses a documented value,
// the refinement says so, citing where.

// Claude Code, code.claude.com/docs/en/hooks: common JSON output fields and PreToolUse's
// hookSpecificOutput.
const claudeCode = z.strictObject({
  continue: z.boolean().optional(),
  stopReason: z.string().optional(),
  suppressOutput: z.boolean().optional(),
  systemMessage: z.string().optional(),
  hookSpecificOutput: z
    .strictObject({
      hookEventName: z.literal('PreToolUse'),
      permissionDecision: z.enum(['allow', 'deny', 'ask', 'defer']).optional(),
      permissionDecisionReason: z.string().optional(),
      updatedInput: z.record(z.string(), z.unknown()).optional(),
      additionalContext: z.string().optional(),
    })
    .optional(),
});

// Codex, codex-rs/hooks/schema/generated/pre-tool-use.command.output.schema.json; the
// refinements are engine/output_parser.rs: allow without updatedInput and ask are rejected
// (and a rejected output does not block), deny needs a non-empty reason.
const codex = z
  .strictObject({
    continue: z.boolean().optional(),
    stopReason: z.string().optional(),
    suppressOutput: z.boolean().optional(),
    systemMessage: z.string().optional(),
    hookSpecificOutput: z
      .strictObject({
        hookEventName: z.enum(['PreToolUse', 'SessionStart', 'UserPromptSubmit', 'Stop']),
        additionalContext: z.string().optional(),
        permissionDecision: z.enum(['allow', 'deny', 'ask']).optional(),
        permissionDecisionReason: z.string().optional(),
        updatedInput: z.unknown().optional(),
      })
      .optional(),
  })
  .refine((b) => b.continue !== false && b.stopReason === undefined && !b.suppressOutput, {
    message: 'PreToolUse refuses continue:false, stopReason and suppressOutput',
  })
  .refine((b) => b.hookSpecificOutput?.permissionDecision !== 'ask', {
    message: 'Codex refuses permissionDecision:ask',
  })
  .refine(
    (b) =>
      b.hookSpecificOutput?.permissionDecision !== 'allow' ||
      b.hookSpecificOutput.updatedInput !== undefined,
    { message: 'Codex refuses permissionDecision:allow without updatedInput' },
  )
  .refine(
    (b) =>
      b.hookSpecificOutput?.permissionDecision !== 'deny' ||
      (b.hookSpecificOutput.permissionDecisionReason ?? '').trim().length > 0,
    { message: 'a Codex deny needs a non-empty permissionDecisionReason' },
  );

// Cursor, cursor.com/docs/agent/hooks: the permission answer of the gating events.
const cursor = z.strictObject({
  permission: z.enum(['allow', 'deny', 'ask']),
  user_message: z.string().optional(),
  agent_message: z.string().optional(),
  updated_input: z.record(z.string(), z.unknown()).optional(),
});

// Gemini CLI, docs/hooks/reference.md: common output fields and BeforeTool's; the reason is
// required when the decision is deny.
const geminiCli = z
  .strictObject({
    systemMessage: z.string().optional(),
    suppressOutput: z.boolean().optional(),
    continue: z.boolean().optional(),
    stopReason: z.string().optional(),
    decision: z.enum(['allow', 'deny', 'block']).optional(),
    reason: z.string().optional(),
    hookSpecificOutput: z
      .strictObject({
        hookEventName: z.literal('BeforeTool'),
        tool_input: z.record(z.string(), z.unknown()).optional(),
      })
      .optional(),
  })
  .refine((b) => b.decision !== 'deny' || (b.reason ?? '').length > 0, {
    message: 'a Gemini CLI deny needs a reason',
  });

// GitHub Copilot, "GitHub Copilot CLI hooks reference": preToolUse decision control; the
// reason is required when the decision is deny.
const copilot = z
  .strictObject({
    permissionDecision: z.enum(['allow', 'deny', 'ask']).optional(),
    permissionDecisionReason: z.string().optional(),
    modifiedArgs: z.record(z.string(), z.unknown()).optional(),
  })
  .refine((b) => b.permissionDecision !== 'deny' || (b.permissionDecisionReason ?? '').length > 0, {
    message: 'a Copilot deny needs a permissionDecisionReason',
  });

// svc's MCP gateway, packages/hook/src/harnesses/mcp.ts: the answer the gateway reads.
const mcp = z.strictObject({
  decision: z.enum(['allow', 'deny']),
  verdict: z.enum(['ALLOWED', 'BLOCKED', 'ESCALATED']).optional(),
  reason: z.string().min(1),
  receipt_id: z.string().optional(),
  receipt_url: z.string().optional(),
});

export const PRE_TOOL_OUTPUT: Record<HarnessName, z.ZodType> = {
  'claude-code': claudeCode,
  codex,
  cursor,
  'gemini-cli': geminiCli,
  copilot,
  mcp,
};

/** What every harness accepts as "nothing to say" on a post-tool or session event. */
export const EMPTY_OUTPUT = z.strictObject({});
