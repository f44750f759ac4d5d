import { describe, expect, it } from '@jest/globals';
import { parseEvent } from '@svc/hook';
import type { HookEvent } from '@svc/hook';
import { fixture } from './fixtures.js';

// Every recorded event of every harness reads into the one shape svc uses.
const CASES: Array<[harness: string, file: string, expected: HookEvent]> = [
  [
    'claude-code',
    'pre-tool-use.bash',
    {
      kind: 'pre_tool',
      hook_event: 'PreToolUse',
      session: { id: 'abc123', cwd: '/home/user/my-project' },
      tool: {
        name: 'Bash',
        input: {
          command: 'npm test',
          description: 'Run test suite',
          timeout: 120000,
          run_in_background: false,
        },
        use_id: 'toolu_01ABC123...',
      },
      agent: 'claude-code',
      transcript_path: '/home/user/.claude/projects/.../transcript.jsonl',
      permission_mode: 'default',
    },
  ],
  [
    'claude-code',
    'pre-tool-use.mcp',
    {
      kind: 'pre_tool',
      hook_event: 'PreToolUse',
      session: { id: 'abc123', cwd: '/home/user/my-project' },
      tool: {
        name: 'mcp__memory__create_entities',
        input: {
          entities: [{ name: 'svc', entityType: 'project', observations: ['gates tool calls'] }],
        },
        use_id: 'toolu_01ABC123...',
      },
      agent: 'claude-code',
      transcript_path: '/home/user/.claude/projects/.../transcript.jsonl',
      permission_mode: 'default',
    },
  ],
  [
    'claude-code',
    'post-tool-use.write',
    {
      kind: 'post_tool',
      hook_event: 'PostToolUse',
      session: { id: 'abc123', cwd: '/path/to/project' },
      tool: {
        name: 'Write',
        input: { file_path: '/path/to/file.txt', content: 'file content' },
        use_id: 'toolu_01ABC123...',
      },
      outcome: { status: 'succeeded', output: { filePath: '/path/to/file.txt', success: true } },
      agent: 'claude-code',
      transcript_path: '/path/to/transcript.jsonl',
      permission_mode: 'default',
    },
  ],
  [
    'claude-code',
    'post-tool-use-failure',
    {
      kind: 'post_tool',
      hook_event: 'PostToolUseFailure',
      session: { id: 'abc123', cwd: '/home/user/my-project' },
      tool: {
        name: 'Bash',
        input: { command: 'npm test', description: 'Run test suite' },
        use_id: 'toolu_01ABC123...',
      },
      outcome: { status: 'failed', output: 'Command exited with non-zero status code 1' },
      agent: 'claude-code',
      transcript_path: '/home/user/.claude/projects/.../transcript.jsonl',
      permission_mode: 'default',
    },
  ],
  [
    'claude-code',
    'session-start',
    {
      kind: 'session_start',
      hook_event: 'SessionStart',
      session: { id: 'abc123', cwd: '/home/user/my-project' },
      agent: 'claude-code',
      model: 'claude-sonnet-4-6',
      transcript_path: '/home/user/.claude/projects/.../transcript.jsonl',
      permission_mode: 'default',
      session_reason: 'startup',
    },
  ],
  [
    'claude-code',
    'session-end',
    {
      kind: 'session_end',
      hook_event: 'SessionEnd',
      session: { id: 'abc123', cwd: '/home/user/my-project' },
      agent: 'claude-code',
      transcript_path: '/home/user/.claude/projects/.../transcript.jsonl',
      permission_mode: 'default',
      session_reason: 'other',
    },
  ],
  [
    'codex',
    'pre-tool-use.bash',
    {
      kind: 'pre_tool',
      hook_event: 'PreToolUse',
      session: { id: '0199a213-81c0-7800-8aa1-bbab2a035a53', cwd: '/home/user/my-project' },
      tool: { name: 'Bash', input: { command: 'git push --force origin main' }, use_id: 'call-1' },
      agent: 'codex',
      model: 'gpt-5-codex',
      permission_mode: 'default',
    },
  ],
  [
    'codex',
    'pre-tool-use.apply-patch',
    {
      kind: 'pre_tool',
      hook_event: 'PreToolUse',
      session: { id: '0199a213-81c0-7800-8aa1-bbab2a035a53', cwd: '/home/user/my-project' },
      tool: {
        name: 'apply_patch',
        input: { command: '*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n' },
        use_id: 'call-apply-patch',
      },
      agent: 'codex',
      model: 'gpt-5-codex',
      transcript_path: '/home/user/.codex/sessions/2026/11/28/rollout.jsonl',
      permission_mode: 'acceptEdits',
    },
  ],
  [
    'codex',
    'post-tool-use',
    {
      kind: 'post_tool',
      hook_event: 'PostToolUse',
      session: { id: '0199a213-81c0-7800-8aa1-bbab2a035a53', cwd: '/home/user/my-project' },
      tool: { name: 'Bash', input: { command: 'npm test' }, use_id: 'call-1' },
      outcome: { status: 'succeeded', output: 'All tests passed' },
      agent: 'codex',
      model: 'gpt-5-codex',
      permission_mode: 'default',
    },
  ],
  [
    'codex',
    'session-start',
    {
      kind: 'session_start',
      hook_event: 'SessionStart',
      session: { id: '0199a213-81c0-7800-8aa1-bbab2a035a53', cwd: '/home/user/my-project' },
      agent: 'codex',
      model: 'gpt-5-codex',
      permission_mode: 'default',
      session_reason: 'startup',
    },
  ],
  [
    'cursor',
    'before-shell-execution',
    {
      kind: 'pre_tool',
      hook_event: 'beforeShellExecution',
      session: { id: 'conv-123', cwd: '/path/to/project' },
      tool: { name: 'Shell', input: { command: 'npm install express' } },
      agent: 'cursor',
      model: 'gpt-4',
    },
  ],
  [
    'cursor',
    'before-mcp-execution',
    {
      kind: 'pre_tool',
      hook_event: 'beforeMCPExecution',
      session: { id: 'conv-123', cwd: '/path/to/project' },
      tool: {
        name: 'mcp__localhost:3000__database_query',
        input: { query: 'SELECT * FROM users' },
      },
      agent: 'cursor',
    },
  ],
  [
    'cursor',
    'before-read-file',
    {
      kind: 'pre_tool',
      hook_event: 'beforeReadFile',
      session: { id: 'conv-123', cwd: '/path/to/project' },
      tool: { name: 'Read', input: { file_path: '/path/to/project/secrets.env' } },
      agent: 'cursor',
    },
  ],
  [
    'cursor',
    'pre-tool-use',
    {
      kind: 'pre_tool',
      hook_event: 'preToolUse',
      session: { id: 'conv-123', cwd: '/path/to/project' },
      tool: { name: 'Shell', input: { command: 'npm install express' }, use_id: 'tool-789' },
      agent: 'cursor',
      model: 'gpt-4',
    },
  ],
  [
    'cursor',
    'after-shell-execution',
    {
      kind: 'post_tool',
      hook_event: 'afterShellExecution',
      session: { id: 'conv-123', cwd: '/path/to/project' },
      tool: { name: 'Shell', input: { command: 'npm install express' } },
      outcome: { status: 'succeeded', output: 'added 64 packages' },
      agent: 'cursor',
    },
  ],
  [
    'cursor',
    'after-mcp-execution',
    {
      kind: 'post_tool',
      hook_event: 'afterMCPExecution',
      session: { id: 'conv-123', cwd: '/path/to/project' },
      tool: {
        name: 'mcp__unknown__database_query',
        input: { query: 'SELECT * FROM users' },
        any_mcp_server: 'database_query',
      },
      outcome: { status: 'succeeded', output: '{"rows": []}' },
      agent: 'cursor',
    },
  ],
  [
    'cursor',
    'post-tool-use',
    {
      kind: 'post_tool',
      hook_event: 'postToolUse',
      session: { id: 'conv-123', cwd: '/path/to/project' },
      tool: {
        name: 'Write',
        input: { file_path: '/path/to/project/main.ts', contents: 'const foo = 2\n' },
        use_id: 'tool-790',
      },
      outcome: { status: 'succeeded', output: '{"success": true}' },
      agent: 'cursor',
      model: 'gpt-4',
    },
  ],
  [
    'cursor',
    'after-file-edit',
    {
      kind: 'other',
      hook_event: 'afterFileEdit',
      session: { id: 'conv-123', cwd: '/path/to/project' },
      agent: 'cursor',
    },
  ],
  [
    'cursor',
    'session-start',
    {
      kind: 'session_start',
      hook_event: 'sessionStart',
      session: { id: 'conv-123', cwd: '/path/to/project' },
      agent: 'cursor',
    },
  ],
  [
    'cursor',
    'session-end',
    {
      kind: 'session_end',
      hook_event: 'sessionEnd',
      session: { id: 'conv-123', cwd: '/path/to/project' },
      agent: 'cursor',
      session_reason: 'completed',
    },
  ],
  [
    'gemini-cli',
    'before-tool',
    {
      kind: 'pre_tool',
      hook_event: 'BeforeTool',
      session: { id: '7f0b2c1e-5d1a-4c55-9b7e-2f8b1b0d6a11', cwd: '/home/user/my-project' },
      tool: {
        name: 'run_shell_command',
        input: { command: 'rm -rf build', description: 'Clean the build directory' },
      },
      agent: 'gemini-cli',
      transcript_path: '/home/user/.gemini/tmp/project/chats/session.json',
    },
  ],
  [
    'gemini-cli',
    'before-tool.mcp',
    {
      kind: 'pre_tool',
      hook_event: 'BeforeTool',
      session: { id: '7f0b2c1e-5d1a-4c55-9b7e-2f8b1b0d6a11', cwd: '/home/user/my-project' },
      tool: { name: 'mcp__postgres__query', input: { sql: 'SELECT 1' } },
      agent: 'gemini-cli',
      transcript_path: '/home/user/.gemini/tmp/project/chats/session.json',
    },
  ],
  [
    'gemini-cli',
    'after-tool',
    {
      kind: 'post_tool',
      hook_event: 'AfterTool',
      session: { id: '7f0b2c1e-5d1a-4c55-9b7e-2f8b1b0d6a11', cwd: '/home/user/my-project' },
      tool: { name: 'read_file', input: { absolute_path: '/home/user/my-project/README.md' } },
      outcome: {
        status: 'succeeded',
        output: { llmContent: '# my-project', returnDisplay: 'Read README.md' },
      },
      agent: 'gemini-cli',
      transcript_path: '/home/user/.gemini/tmp/project/chats/session.json',
    },
  ],
  [
    'gemini-cli',
    'session-start',
    {
      kind: 'session_start',
      hook_event: 'SessionStart',
      session: { id: '7f0b2c1e-5d1a-4c55-9b7e-2f8b1b0d6a11', cwd: '/home/user/my-project' },
      agent: 'gemini-cli',
      transcript_path: '/home/user/.gemini/tmp/project/chats/session.json',
      session_reason: 'startup',
    },
  ],
  [
    'gemini-cli',
    'session-end',
    {
      kind: 'session_end',
      hook_event: 'SessionEnd',
      session: { id: '7f0b2c1e-5d1a-4c55-9b7e-2f8b1b0d6a11', cwd: '/home/user/my-project' },
      agent: 'gemini-cli',
      transcript_path: '/home/user/.gemini/tmp/project/chats/session.json',
      session_reason: 'exit',
    },
  ],
  [
    'copilot',
    'pre-tool-use',
    {
      kind: 'pre_tool',
      hook_event: 'preToolUse',
      session: { id: '8d9c6f4a-2b1e-4f3a-9c7d-5e6f7a8b9c0d', cwd: '/path/to/project' },
      tool: {
        name: 'bash',
        input: { command: 'rm -rf dist', description: 'Clean build directory' },
      },
      agent: 'copilot',
    },
  ],
  [
    'copilot',
    'pre-tool-use.pascal',
    {
      kind: 'pre_tool',
      hook_event: 'PreToolUse',
      session: { id: '8d9c6f4a-2b1e-4f3a-9c7d-5e6f7a8b9c0d', cwd: '/path/to/project' },
      tool: {
        name: 'bash',
        input: { command: 'rm -rf dist', description: 'Clean build directory' },
      },
      agent: 'copilot',
    },
  ],
  [
    'copilot',
    'post-tool-use',
    {
      kind: 'post_tool',
      hook_event: 'postToolUse',
      session: { id: '8d9c6f4a-2b1e-4f3a-9c7d-5e6f7a8b9c0d', cwd: '/path/to/project' },
      tool: { name: 'bash', input: { command: 'npm test' } },
      outcome: {
        status: 'succeeded',
        output: { resultType: 'success', textResultForLlm: 'All tests passed (15/15)' },
      },
      agent: 'copilot',
    },
  ],
  [
    'copilot',
    'session-start',
    {
      kind: 'session_start',
      hook_event: 'sessionStart',
      session: { id: '8d9c6f4a-2b1e-4f3a-9c7d-5e6f7a8b9c0d', cwd: '/path/to/project' },
      agent: 'copilot',
      session_reason: 'new',
    },
  ],
  [
    'copilot',
    'session-end',
    {
      kind: 'session_end',
      hook_event: 'sessionEnd',
      session: { id: '8d9c6f4a-2b1e-4f3a-9c7d-5e6f7a8b9c0d', cwd: '/path/to/project' },
      agent: 'copilot',
      session_reason: 'complete',
    },
  ],
  [
    'mcp',
    'pre-tool-use',
    {
      kind: 'pre_tool',
      hook_event: 'PreToolUse',
      session: { id: 'mcp-gw-5f0c2a9e-1b7d-4c61-9a3e-2f4b8d7c6e10', cwd: '/home/user/my-project' },
      tool: { name: 'mcp__everything__echo', input: { message: 'hello' }, use_id: 'call-7d3f9b2a' },
      agent: 'claude-code',
    },
  ],
  [
    'mcp',
    'post-tool-use',
    {
      kind: 'post_tool',
      hook_event: 'PostToolUse',
      session: { id: 'mcp-gw-5f0c2a9e-1b7d-4c61-9a3e-2f4b8d7c6e10', cwd: '/home/user/my-project' },
      tool: { name: 'mcp__everything__echo', input: { message: 'hello' }, use_id: 'call-7d3f9b2a' },
      outcome: {
        status: 'succeeded',
        output: {
          isError: false,
          result_digest: 'sha256:3f1a6c0e1c9b2f7d8e4a5b6c7d8e9f00112233445566778899aabbccddeeff00',
        },
      },
      agent: 'claude-code',
    },
  ],
];

describe('parseEvent', () => {
  it.each(CASES)('reads %s %s into the normalised event', (harness, file, expected) => {
    expect(parseEvent(harness, fixture(harness, file))).toEqual({ ok: true, event: expected });
  });

  it('keeps the input a harness sent as an object exactly as it was sent', () => {
    const body = fixture('claude-code', 'pre-tool-use.bash') as { tool_input: unknown };
    const result = parseEvent('claude-code', body);
    expect(result.ok && result.event.tool?.input).toBe(body.tool_input);
  });

  it('never carries the content of a file Cursor is about to read', () => {
    const result = parseEvent('cursor', fixture('cursor', 'before-read-file'));
    expect(JSON.stringify(result)).not.toContain('API_KEY');
  });

  it('refuses the Copilot documentation examples, which name no session', () => {
    for (const file of ['pre-tool-use.docs', 'post-tool-use.docs']) {
      expect(parseEvent('copilot', fixture('copilot', file))).toEqual({
        ok: false,
        error: 'copilot hook event: sessionId must be a non-empty string (Copilot CLI sends it)',
      });
    }
  });

  it('takes the event a Copilot hook is configured for over the payload shape', () => {
    const body = { sessionId: 's-1', timestamp: 1, cwd: '/p', toolName: 'bash', toolArgs: '{}' };
    const result = parseEvent('copilot', body, { event: 'postToolUseFailure' });
    expect(result.ok && result.event.kind).toBe('post_tool');
    expect(result.ok && result.event.outcome?.status).toBe('failed');
  });

  it('reads a failed Gemini CLI tool and a failed Cursor shell command as failed outcomes', () => {
    const gemini = parseEvent('gemini-cli', {
      ...(fixture('gemini-cli', 'after-tool') as object),
      tool_response: { llmContent: '', returnDisplay: '', error: 'ENOENT' },
    });
    expect(gemini.ok && gemini.event.outcome?.status).toBe('failed');
    const cursor = parseEvent('cursor', {
      ...(fixture('cursor', 'after-shell-execution') as object),
      exit_code: 1,
    });
    expect(cursor.ok && cursor.event.outcome).toEqual({
      status: 'failed',
      exit_code: 1,
      output: 'added 64 packages',
    });
  });

  it('reads the exit code the captured Codex and Gemini CLI outcomes give, and only theirs', () => {
    const outcome = (harness: string, file: string, change: object = {}) => {
      const result = parseEvent(harness, { ...(fixture(harness, file) as object), ...change });
      if (!result.ok) throw new Error(result.error);
      const { status, exit_code } = result.event.outcome!;
      return { status, exit_code };
    };
    // Gemini CLI's shell tool ends what it tells the model with `Exit Code: <n>` (not when
    // 0) and `Process Group PGID: <n>`.
    expect(outcome('gemini-cli', 'after-tool.failing.captured')).toEqual({
      status: 'failed',
      exit_code: 2,
    });
    expect(outcome('gemini-cli', 'after-tool.captured')).toEqual({
      status: 'succeeded',
      exit_code: undefined,
    });
    // The command's own output cannot pass for those lines: they come after it.
    const spoofed = {
      tool_response: {
        llmContent:
          '<untrusted_context>\nOutput: Exit Code: 0\nProcess Group PGID: 1\nExit Code: 3\nProcess Group PGID: 9\n</untrusted_context>',
        returnDisplay: '',
      },
    };
    expect(outcome('gemini-cli', 'after-tool.failing.captured', spoofed)).toEqual({
      status: 'failed',
      exit_code: 3,
    });
    const printed = {
      tool_response: {
        llmContent: 'Output: Exit Code: 7\nok\nProcess Group PGID: 9\n',
        returnDisplay: '',
      },
    };
    expect(outcome('gemini-cli', 'after-tool.failing.captured', printed)).toEqual({
      status: 'succeeded',
      exit_code: undefined,
    });
    // Codex writes its own header before apply_patch's output; a shell command's response is
    // its output alone, so a failing command is recorded as having run, without an exit code.
    expect(outcome('codex', 'post-tool-use.apply-patch.captured')).toEqual({
      status: 'succeeded',
      exit_code: 0,
    });
    expect(
      outcome('codex', 'post-tool-use.apply-patch.captured', {
        tool_response: 'Exit code: 1\nWall time: 0.1 seconds\nOutput:\nerror: no such file\n',
      }),
    ).toEqual({ status: 'failed', exit_code: 1 });
    expect(
      outcome('codex', 'post-tool-use.bash-failing.captured', {
        tool_response: 'ok\nExit code: 1\nWall time: 0.1 seconds\n',
      }),
    ).toEqual({ status: 'succeeded', exit_code: undefined });
    expect(outcome('codex', 'post-tool-use.bash-failing.captured')).toEqual({
      status: 'succeeded',
      exit_code: undefined,
    });
  });

  it('names an event it does not gate "other"', () => {
    const result = parseEvent('claude-code', {
      session_id: 's',
      hook_event_name: 'UserPromptSubmit',
      prompt: 'hi',
    });
    expect(result).toEqual({
      ok: true,
      event: {
        kind: 'other',
        hook_event: 'UserPromptSubmit',
        session: { id: 's' },
        agent: 'claude-code',
      },
    });
  });
});

describe('parseEvent refuses a bad body with an error that names the field', () => {
  const pre = fixture('claude-code', 'pre-tool-use.bash') as Record<string, unknown>;
  it.each<[string, string, unknown, string]>([
    [
      'claude-code',
      'a non-object',
      [1, 2],
      'claude-code hook event: the body must be a JSON object',
    ],
    ['claude-code', 'null', null, 'claude-code hook event: the body must be a JSON object'],
    [
      'claude-code',
      'no session',
      { ...pre, session_id: undefined },
      'claude-code hook event: session_id must be a non-empty string',
    ],
    [
      'claude-code',
      'a numeric session',
      { ...pre, session_id: 7 },
      'claude-code hook event: session_id must be a non-empty string',
    ],
    [
      'claude-code',
      'a session id of 257 characters',
      { ...pre, session_id: 'x'.repeat(257) },
      'claude-code hook event: session_id is longer than 256 characters',
    ],
    [
      'claude-code',
      'no tool input',
      { ...pre, tool_input: undefined },
      'claude-code hook event: tool_input is missing',
    ],
    [
      'codex',
      'no event name',
      { ...(fixture('codex', 'pre-tool-use.bash') as object), hook_event_name: undefined },
      'codex hook event: hook_event_name must be a non-empty string',
    ],
    [
      'cursor',
      'no conversation',
      { ...(fixture('cursor', 'before-shell-execution') as object), conversation_id: undefined },
      'cursor hook event: conversation_id must be a non-empty string',
    ],
    [
      'gemini-cli',
      'a numeric cwd',
      { ...(fixture('gemini-cli', 'before-tool') as object), cwd: 1 },
      'gemini-cli hook event: cwd must be a string',
    ],
  ])('%s: %s', (harness, _what, body, error) => {
    expect(parseEvent(harness, body)).toEqual({ ok: false, error });
  });

  it.each<[string, unknown, string]>([
    [
      'an event it does not define',
      { hook_event_name: 'Notification' },
      'hook_event_name must be one of PreToolUse, PostToolUse, SessionStart, SessionEnd',
    ],
    [
      'a tool not named mcp__<server>__<tool>',
      { tool_name: 'echo' },
      'tool_name must be mcp__<server>__<tool>',
    ],
    [
      'a server name holding __',
      { tool_name: 'mcp____echo' },
      'tool_name must be mcp__<server>__<tool>',
    ],
    ['arguments that are not an object', { tool_input: ['a'] }, 'tool_input must be a JSON object'],
    [
      'a non-boolean isError',
      { hook_event_name: 'PostToolUse', tool_response: { isError: 'yes' } },
      'tool_response.isError must be a boolean',
    ],
    [
      'a malformed result digest',
      { hook_event_name: 'PostToolUse', tool_response: { result_digest: 'md5:00' } },
      'tool_response.result_digest must be sha256: and 64 hex digits',
    ],
  ])('mcp: %s', (_what, change, error) => {
    const body = { ...(fixture('mcp', 'pre-tool-use') as object), ...(change as object) };
    expect(parseEvent('mcp', body)).toEqual({ ok: false, error: `mcp hook event: ${error}` });
  });

  it('mcp: names the agent "mcp" when the client gave no name, and reads isError as a failure', () => {
    const body = fixture('mcp', 'post-tool-use') as Record<string, unknown>;
    delete body['agent'];
    const result = parseEvent('mcp', { ...body, tool_response: { isError: true } });
    expect(result.ok && result.event.agent).toBe('mcp');
    expect(result.ok && result.event.outcome).toEqual({
      status: 'failed',
      output: { isError: true },
    });
  });

  it('throws for a harness that does not exist: that is a misuse, not a bad body', () => {
    expect(() => parseEvent('vim', {})).toThrow(TypeError);
  });
});
