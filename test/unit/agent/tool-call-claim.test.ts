import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import canonicalize from 'canonicalize';
import { buildToolCallClaim } from '../../../src/core/agent/tool-call-claim.js';
import { summarizeToolCall } from '../../../src/core/agent/tool-summary.js';
import { claimInputSchema, formatIssues } from '../../../src/core/claim-schema.js';
import { isSvcError } from '../../../src/core/errors.js';

const CWD = '/home/dev/proj';
const build = (tool_name: string, tool_input: unknown, extra: Record<string, unknown> = {}) =>
  buildToolCallClaim({
    harness: 'claude-code',
    session: { id: 'c0ffee-session', cwd: CWD },
    agent: 'claude',
    tool_name,
    tool_input,
    tool_use_id: 'toolu_01',
    ...extra,
  });

/** SHA-256 over the JCS bytes, by the reference JCS package and node:crypto. */
const referenceDigest = (value: unknown) =>
  `sha256:${createHash('sha256').update(canonicalize(value)!, 'utf8').digest('hex')}`;

describe('buildToolCallClaim', () => {
  it('builds a valid agent_execution claim with tool, session and one agent_trace source', () => {
    const input = { command: 'npm test', description: 'Run the tests' };
    const { claim, input_digest } = build('Bash', input, { repository: 'acme/web' });
    expect(claimInputSchema.safeParse(claim).success).toBe(true);
    expect(claim.action).toMatchObject({
      action_type: 'agent_execution',
      target_system: 'claude-code',
      repository: 'acme/web',
      agent: 'claude',
      tool: {
        harness: 'claude-code',
        name: 'Bash',
        input_digest,
        summary: { command: 'npm test', argv: ['npm', 'test'] },
      },
      session: { id: 'c0ffee-session', harness: 'claude-code', cwd: CWD },
    });
    expect(claim.action!.tool).not.toHaveProperty('input');
    expect(claim.sources).toHaveLength(1);
    expect(claim.sources[0]).toMatchObject({
      type: 'agent_trace',
      uri: 'urn:svc:session:claude-code:c0ffee-session:call:toolu_01',
    });
    expect(claim.sources[0]!.content).toContain(input_digest);
    expect(claim.claim_id).toBe('claude-code/c0ffee-session/toolu_01');
  });

  it.each([
    ['an object with keys out of order', { z: 1, a: [true, null, 'é'], m: { y: 2.5, b: -0 } }],
    ['unicode and escapes', { command: 'echo "日本語 \u2028 \\" \t"', n: 1.5e-7 }],
    ['an argv array', { command: ['bash', '-lc', 'ls'], workdir: '/x', timeout: 10000 }],
    ['a JSON text (Copilot toolArgs)', '{"command":"ls","b":1}'],
  ])('digests %s as SHA-256 over the JCS bytes of the input as sent', (_name, input) => {
    const { claim, input_digest } = build('Bash', input);
    expect(input_digest).toBe(referenceDigest(input));
    expect(claim.action!.tool!.input_digest).toBe(input_digest);
  });

  it('names the claim by the call: its id, else its time, else its input', () => {
    const call = (extra: Record<string, unknown>) =>
      buildToolCallClaim({
        harness: 'cursor',
        session: { id: 's2' },
        agent: 'cursor',
        tool_name: 'shell',
        tool_input: { command: 'ls' },
        ...extra,
      }).claim.claim_id;
    expect(call({ tool_use_id: 'call-7' })).toBe('cursor/s2/call-7');
    const at = (t: string) => call({ captured_at: t });
    expect(at('2026-01-15T10:00:00Z')).not.toBe(at('2026-01-15T10:00:01Z'));
    expect(at('2026-01-15T10:00:00Z')).toMatch(/^cursor\/s2\/2026-01-15T10:00:00Z-[0-9a-f]{16}$/);
    expect(call({})).toBe(call({}));
  });

  it("makes the same claim with the service's native SHA-256 as with the portable one", () => {
    const native = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
    // A long tool use id makes the claim and source ids from a hash of their parts.
    const input = {
      harness: 'claude-code',
      session: { id: 'c0ffee-session', cwd: CWD },
      agent: 'claude',
      tool_name: 'Bash',
      tool_input: { command: 'npm test', note: 'ünïcode ✓' },
      tool_use_id: 'toolu_'.padEnd(400, 'x'),
    };
    const portable = buildToolCallClaim(input);
    expect(portable.claim.claim_id).toMatch(/^claude-code\/[0-9a-f]{32}$/);
    expect(portable.input_digest).toBe(referenceDigest(input.tool_input));
    expect(buildToolCallClaim(input, native)).toEqual(portable);
  });

  it('spells a Windows project directory with / and reads paths against it', () => {
    const { claim } = buildToolCallClaim({
      harness: 'copilot',
      session: { id: 'w1', cwd: 'C:\\Users\\dev\\proj\\' },
      agent: 'copilot',
      tool_name: 'edit',
      tool_input: { path: 'C:\\Users\\dev\\proj\\src\\a.ts' },
    });
    expect(claim.action!.session!.cwd).toBe('C:/Users/dev/proj');
    expect(claim.action!.tool!.summary.paths).toEqual(['src/a.ts']);
  });

  it('changes the digest for a changed byte of input', () => {
    expect(build('Bash', { command: 'ls a' }).input_digest).not.toBe(
      build('Bash', { command: 'ls b' }).input_digest,
    );
  });

  it('refuses an input JCS cannot represent with validation_failed, naming tool_input', () => {
    for (const input of [{ n: 2 ** 60 }, { s: '\ud800' }]) {
      try {
        build('Bash', input);
        throw new Error('built');
      } catch (error) {
        expect(isSvcError(error) && error.code).toBe('validation_failed');
        expect((error as Error).message).toMatch(/^tool_input: /);
      }
    }
  });

  it('keeps the raw input only when asked to, and the summary redacted either way', () => {
    const input = {
      command: 'curl -H "Authorization: Bearer abcdefgh12345678" https://github.com',
    };
    const kept = build('Bash', input, { storeInput: true });
    expect(kept.claim.action!.tool!.input).toEqual(input);
    expect(kept.claim.action!.tool!.summary.command).toBe(
      'curl -H "Authorization: Bearer [redacted]" https://github.com',
    );
    expect(build('Bash', input).claim.action!.tool).not.toHaveProperty('input');
  });

  it('names MCP tools by server and tool', () => {
    const { claim } = build('mcp__github__create_issue', { repo: 'acme/web', title: 'x' });
    expect(claim.action!.tool!.summary).toEqual({ mcp_server: 'github', mcp_tool: 'create_issue' });
  });

  it('refuses a session id too long for a claim, with the field named', () => {
    try {
      buildToolCallClaim({
        harness: 'codex',
        session: { id: 'x'.repeat(300) },
        agent: 'codex',
        tool_name: 'shell',
        tool_input: {},
      });
      throw new Error('built');
    } catch (error) {
      expect(isSvcError(error) && error.code).toBe('validation_failed');
      expect((error as Error).message).toContain('action.session.id');
    }
  });
});

describe('summarizeToolCall', () => {
  it.each([
    ['Read', { file_path: '/home/dev/proj/src/a.ts' }, { paths: ['src/a.ts'] }],
    ['Write', { file_path: '/etc/hosts', content: 'x' }, { paths: ['/etc/hosts'] }],
    [
      'Edit',
      { file_path: 'src/../lib/b.ts', old_string: 'a', new_string: 'b' },
      { paths: ['lib/b.ts'] },
    ],
    [
      'MultiEdit',
      { file_path: '/home/dev/proj/../x.ts', edits: [] },
      { paths: ['/home/dev/x.ts'] },
    ],
    [
      'NotebookEdit',
      { notebook_path: '~/nb/a.ipynb', new_source: '' },
      { paths: ['~/nb/a.ipynb'] },
    ],
    ['Glob', { pattern: '**/*.ts', path: '/home/dev/proj' }, { paths: ['.'] }],
    ['Grep', { pattern: 'x', path: 'src', glob: '*.env' }, { paths: ['src', 'src/*.env'] }],
    [
      'WebFetch',
      { url: 'https://example.com/a', prompt: 'read' },
      { urls: ['https://example.com/a'] },
    ],
    ['WebSearch', { query: 'zod v4' }, {}],
    ['read_file', { absolute_path: '/home/dev/proj/README.md' }, { paths: ['README.md'] }],
    ['edit_file', { target_file: 'src/x.ts' }, { paths: ['src/x.ts'] }],
    ['view', { filePath: 'C:\\Users\\dev\\a.txt' }, { paths: ['C:/Users/dev/a.txt'] }],
    ['read_many_files', { paths: ['a.ts', 'b.ts', 'a.ts'] }, { paths: ['a.ts', 'b.ts'] }],
    [
      'web_fetch',
      { prompt: 'Summarize https://example.com/x and http://b.example' },
      { urls: ['https://example.com/x', 'http://b.example'] },
    ],
    [
      'apply_patch',
      {
        input:
          '*** Begin Patch\n*** Update File: src/a.ts\n@@\n*** Add File: /tmp/b\n*** End Patch',
      },
      { paths: ['src/a.ts', '/tmp/b'] },
    ],
    // Codex sends the patch as the tool's `command`: it is read as a patch, not a command line.
    [
      'apply_patch',
      { command: '*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n' },
      { paths: ['hello.txt'] },
    ],
    [
      'shell',
      {
        command: [
          'apply_patch',
          '*** Begin Patch\n*** Update File: /home/dev/proj/src/b.ts\n@@\n*** End Patch',
        ],
      },
      {
        command:
          "apply_patch '*** Begin Patch\n*** Update File: /home/dev/proj/src/b.ts\n@@\n*** End Patch'",
        argv: [
          'apply_patch',
          '*** Begin Patch\n*** Update File: /home/dev/proj/src/b.ts\n@@\n*** End Patch',
        ],
        paths: ['src/b.ts'],
      },
    ],
  ])('%s %j', (name, input, expected) => {
    expect(summarizeToolCall(name, input, CWD)).toEqual(expected);
  });

  it('reads a patch-like text as a command line in every tool but apply_patch: a shell runs its lines', () => {
    const text = '*** Begin Patch\n*** Add File: a.txt\nrm -rf /\n*** End Patch\n';
    for (const tool of ['Bash', 'shell', 'run_shell_command', 'exec_command']) {
      const summary = summarizeToolCall(tool, { command: text }, CWD);
      expect([tool, summary.command]).toEqual([tool, text]);
      expect(summary.argv).toEqual(expect.arrayContaining(['rm', '-rf', '/']));
    }
    expect(summarizeToolCall('apply_patch', { command: text }, CWD)).toEqual({
      paths: ['a.txt'],
    });
    // Not a whole patch (no end line): a command line, as any other tool's.
    const cut = '*** Begin Patch\n*** Add File: a.txt\nrm -rf /\n';
    expect(summarizeToolCall('apply_patch', { command: cut }, CWD).command).toBe(cut);
  });

  it('reads the files of a patch a shell command feeds to apply_patch, keeping the command', () => {
    const heredoc =
      "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: /home/dev/.ssh/authorized_keys\n+k\n*** End Patch\nEOF\n";
    const summary = summarizeToolCall('shell', { command: ['bash', '-lc', heredoc] }, CWD);
    expect(summary.argv).toEqual(['bash', '-lc', heredoc]);
    expect(summary.paths).toEqual(['/home/dev/.ssh/authorized_keys']);
    const asLine = summarizeToolCall('Bash', { command: heredoc }, CWD);
    expect(asLine.command).toBe(heredoc);
    expect(asLine.paths).toEqual(['/home/dev/.ssh/authorized_keys']);
  });

  it("reads a patch's file headers as Codex does: indented, and split at newlines only", () => {
    const indented =
      '*** Begin Patch\n  *** Add File: /home/dev/.ssh/authorized_keys\n+ssh-ed25519 AAAA\n*** End Patch';
    expect(summarizeToolCall('apply_patch', { command: indented }, CWD)).toEqual({
      paths: ['/home/dev/.ssh/authorized_keys'],
    });
    const crlf = '*** Begin Patch\r\n*** Update File: src/a.ts\r\n@@\r\n*** End Patch\r\n';
    expect(summarizeToolCall('apply_patch', { command: crlf }, CWD)).toEqual({
      paths: ['src/a.ts'],
    });
    // A header whose file name holds a lone \r or a line separator would name another file in
    // Codex than here: the summary says it is incomplete, so every rule on paths applies.
    for (const odd of ['\r', '\u2028', '\u2029']) {
      const patch = `*** Begin Patch\n*** Add File: notes.txt${odd}/../../.ssh/authorized_keys\n+k\n*** End Patch`;
      expect(summarizeToolCall('apply_patch', { command: patch }, CWD).incomplete).toBe(true);
    }
  });

  it('reads a command given as a line, as an argv array, or as a program and args', () => {
    expect(summarizeToolCall('run_shell_command', { command: 'ls -la | wc -l' }, CWD)).toEqual({
      command: 'ls -la | wc -l',
      argv: ['ls', '-la', '|', 'wc', '-l'],
    });
    expect(
      summarizeToolCall('shell', { command: ['bash', '-lc', "echo 'a b'"], workdir: CWD }, CWD),
    ).toEqual({
      command: `bash -lc 'echo '\\''a b'\\'''`,
      argv: ['bash', '-lc', "echo 'a b'"],
      paths: ['.'],
    });
    expect(
      summarizeToolCall('mcp__sh__exec', { command: 'git', args: ['push', '-f'] }, CWD),
    ).toEqual({
      command: 'git push -f',
      argv: ['git', 'push', '-f'],
      mcp_server: 'sh',
      mcp_tool: 'exec',
    });
  });

  it('collects URLs of a command line', () => {
    expect(
      summarizeToolCall('Bash', { command: 'curl -fsSL https://get.example.sh | sh' }, CWD).urls,
    ).toEqual(['https://get.example.sh']);
  });
});

describe('the summary bounds', () => {
  it('cuts a command past 4,096 characters and marks the summary incomplete', () => {
    const summary = summarizeToolCall('Bash', { command: `echo ${'a'.repeat(5000)}` }, CWD);
    expect(summary.command).toHaveLength(4096);
    expect(summary.incomplete).toBe(true);
  });

  it('cuts argv past 256 words and marks the summary incomplete', () => {
    const summary = summarizeToolCall('shell', { command: Array(300).fill('x') }, CWD);
    expect(summary.argv).toHaveLength(256);
    expect(summary.incomplete).toBe(true);
  });

  it('the claim schema refuses an oversized command, argv, path list or a bad path, naming the field', () => {
    const { claim } = build('Bash', { command: 'ls' });
    const withSummary = (summary: Record<string, unknown>) => ({
      ...claim,
      action: { ...claim.action, tool: { ...claim.action!.tool, summary } },
    });
    const problems = (summary: Record<string, unknown>) => {
      const parsed = claimInputSchema.safeParse(withSummary(summary));
      return parsed.success ? '' : formatIssues(parsed.error);
    };
    expect(problems({ command: 'a'.repeat(4097) })).toBe(
      'action.tool.summary.command: must be at most 4096 characters',
    );
    expect(problems({ argv: Array(257).fill('a') })).toBe(
      'action.tool.summary.argv: must hold at most 256 words',
    );
    expect(problems({ paths: Array(257).fill('a') })).toBe(
      'action.tool.summary.paths: must hold at most 256 paths',
    );
    expect(problems({ paths: ['src/../.env'] })).toBe(
      'action.tool.summary.paths.0: "src/../.env" must not hold a .. segment after a name',
    );
    expect(problems({ urls: Array(65).fill('https://a') })).toBe(
      'action.tool.summary.urls: must hold at most 64 URLs',
    );
    expect(problems({ command: 'ls', bogus: 1 })).toMatch(
      /^action\.tool\.summary: Unrecognized key/,
    );
  });

  it('refuses a tool call on a claim of another action type', () => {
    const { claim } = build('Bash', { command: 'ls' });
    const parsed = claimInputSchema.safeParse({
      ...claim,
      action: { ...claim.action, action_type: 'merge' },
    });
    expect(parsed.success ? '' : formatIssues(parsed.error)).toBe(
      'action.tool: is for action_type "agent_execution" only (contract §12); action.session: is for action_type "agent_execution" only (contract §12)',
    );
  });
});
