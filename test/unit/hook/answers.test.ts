import { describe, expect, it } from '@jest/globals';
import { HARNESS_NAMES, acknowledge, answer, failClosed, failOpen, harnessOf } from '@svc/hook';
import type { HarnessName, HookAnswer, HookDecision } from '@svc/hook';
import { EMPTY_OUTPUT, PRE_TOOL_OUTPUT } from './output-schemas.js';

const RECEIPT = 'https://svc.example/receipts/01JD8Z6X7Q';

function decision(
  verdict: HookDecision['verdict'],
  extra: Partial<HookDecision> = {},
): HookDecision {
  return {
    verdict,
    reasons: verdict === 'ALLOWED' ? [] : ['rule:command denies git push --force'],
    receipt_url: RECEIPT,
    receipt_id: '01JD8Z6X7Q',
    can_ask: false,
    ...extra,
  };
}

/** The pre-tool event each harness answers in these tests (Cursor's answer depends on it). */
const PRE_TOOL_EVENT: Record<HarnessName, string> = {
  'claude-code': 'PreToolUse',
  codex: 'PreToolUse',
  cursor: 'beforeShellExecution',
  'gemini-cli': 'BeforeTool',
  copilot: 'preToolUse',
  mcp: 'PreToolUse',
};

/** The decision an answer carries, whatever the harness calls it. */
function verb(harness: HarnessName, body: Record<string, unknown>): string | undefined {
  const specific = body['hookSpecificOutput'] as Record<string, unknown> | undefined;
  switch (harness) {
    case 'claude-code':
    case 'codex':
      return specific?.['permissionDecision'] as string | undefined;
    case 'cursor':
      return body['permission'] as string;
    case 'gemini-cli':
      return body['decision'] as string | undefined;
    case 'copilot':
      return body['permissionDecision'] as string | undefined;
    case 'mcp':
      return body['decision'] as string | undefined;
  }
}

function validate(harness: HarnessName, result: HookAnswer) {
  const parsed = PRE_TOOL_OUTPUT[harness].safeParse(result.body);
  expect(parsed.error?.issues ?? []).toEqual([]);
  expect(harnessOf(harness).isAnswer(result.body)).toBe(true);
}

// What each harness does with an escalation it is allowed to ask about, and the verb of each
// verdict: "none" is an answer that lets the harness's own permission flow decide.
const EXPECTED: Record<HarnessName, { allow: string; escalatedAsk: string }> = {
  'claude-code': { allow: 'allow', escalatedAsk: 'ask' },
  codex: { allow: 'none', escalatedAsk: 'deny' },
  cursor: { allow: 'allow', escalatedAsk: 'ask' },
  'gemini-cli': { allow: 'allow', escalatedAsk: 'deny' },
  copilot: { allow: 'allow', escalatedAsk: 'deny' },
  mcp: { allow: 'allow', escalatedAsk: 'deny' },
};

describe.each(HARNESS_NAMES)('the answers of %s', (harness) => {
  const at = { hook_event: PRE_TOOL_EVENT[harness] };

  it('allows an ALLOWED call in its documented output shape, naming the receipt', () => {
    const result = answer(harness, decision('ALLOWED', at));
    validate(harness, result);
    expect(result.exit_code).toBe(0);
    expect(verb(harness, result.body) ?? 'none').toBe(EXPECTED[harness].allow);
    expect(JSON.stringify(result.body)).toContain(RECEIPT);
  });

  it('denies a BLOCKED call with the rule reasons and the receipt', () => {
    const result = answer(harness, decision('BLOCKED', { ...at, can_ask: true }));
    validate(harness, result);
    expect(result.exit_code).toBe(0);
    expect(verb(harness, result.body)).toBe('deny');
    const text = JSON.stringify(result.body);
    expect(text).toContain('rule:command denies git push --force');
    expect(text).toContain(RECEIPT);
  });

  it('asks about an ESCALATED call only where the harness can ask', () => {
    const result = answer(harness, decision('ESCALATED', { ...at, can_ask: true }));
    validate(harness, result);
    expect(verb(harness, result.body)).toBe(EXPECTED[harness].escalatedAsk);
    expect(JSON.stringify(result.body)).toContain(RECEIPT);
  });

  it('denies an ESCALATED call it may not ask about, with the place where a reviewer decides', () => {
    const result = answer(harness, decision('ESCALATED', { ...at, can_ask: false }));
    validate(harness, result);
    expect(verb(harness, result.body)).toBe('deny');
    expect(JSON.stringify(result.body)).toContain(`a reviewer can approve it at ${RECEIPT}`);
  });

  it('names the receipt by its id when there is no URL', () => {
    const result = answer(harness, decision('BLOCKED', { ...at, receipt_url: undefined }));
    validate(harness, result);
    expect(JSON.stringify(result.body)).toContain('receipt 01JD8Z6X7Q');
  });

  it('fails closed with a denial that names the problem and blocks in that harness', () => {
    const result = failClosed(harness, 'svc answered HTTP 503');
    validate(harness, result);
    expect(verb(harness, result.body)).toBe('deny');
    expect(result.stderr).toContain('svc answered HTTP 503');
    // Copilot never blocks on a non-zero exit: its denial is the JSON with exit 0. The others
    // block on exit 2 with the reason on stderr, whatever stdout holds.
    expect(result.exit_code).toBe(harness === 'copilot' ? 0 : 2);
  });

  it('fails open without forcing an allow, with a warning', () => {
    const result = failOpen(harness, 'svc cannot be reached');
    validate(harness, result);
    expect(result.exit_code).toBe(0);
    // Cursor and svc's MCP gateway have no permission flow of their own to fall back on.
    const allows = harness === 'cursor' || harness === 'mcp';
    expect(verb(harness, result.body) ?? 'none').toBe(allows ? 'allow' : 'none');
    expect(result.stderr).toContain('WARNING');
    expect(result.stderr).toContain('svc cannot be reached');
  });

  it('acknowledges a post-tool or session event with an empty answer', () => {
    const result = acknowledge(harness);
    expect(EMPTY_OUTPUT.safeParse(result.body).success).toBe(true);
    expect(result.exit_code).toBe(0);
  });
});

describe('answers that depend on the event', () => {
  it('Cursor asks before a shell command or an MCP call, not before a file read', () => {
    const ask = (hook_event: string) =>
      answer('cursor', decision('ESCALATED', { can_ask: true, hook_event })).body['permission'];
    expect(ask('beforeShellExecution')).toBe('ask');
    expect(ask('beforeMCPExecution')).toBe('ask');
    expect(ask('beforeReadFile')).toBe('deny');
    expect(ask('preToolUse')).toBe('deny');
  });

  it('bounds the reasons an answer shows', () => {
    const reasons = Array.from({ length: 50 }, (_, i) => `reason ${i} ${'x'.repeat(200)}`);
    const result = answer('copilot', decision('BLOCKED', { reasons }));
    const text = result.body['permissionDecisionReason'] as string;
    expect(text.length).toBeLessThanOrEqual(2000);
    expect(text).not.toContain('reason 5 ');
  });
});

describe('isAnswer, what svc-hook accepts from svc', () => {
  it.each<[HarnessName, unknown]>([
    [
      'claude-code',
      { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'maybe' } },
    ],
    ['claude-code', { hookSpecificOutput: 'deny' }],
    ['codex', { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask' } }],
    ['codex', { permission: 'deny' }],
    ['cursor', { permission: 'block' }],
    ['cursor', { permission: 'deny', user_message: 1 }],
    ['gemini-cli', { decision: 'no' }],
    ['copilot', { permissionDecision: 'never' }],
    ['copilot', []],
    ['copilot', 'deny'],
    ['mcp', { decision: 'ask' }],
    ['mcp', { decision: 'deny', verdict: 'MAYBE' }],
    ['mcp', { decision: 'deny', receipt_url: 7 }],
  ])('%s refuses %j', (harness, body) => {
    expect(harnessOf(harness).isAnswer(body)).toBe(false);
  });
});
