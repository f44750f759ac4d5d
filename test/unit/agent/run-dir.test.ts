import { describe, expect, it } from '@jest/globals';
import { buildToolCallClaim } from '../../../src/core/agent/tool-call-claim.js';
import { evaluateClaim } from '../../../src/core/evaluation.js';
import { builtinPolicy } from '../../../src/core/policies.js';
import type { Verdict } from '../../../src/core/policy.js';

// A call that runs elsewhere than its session's project directory (Codex's event `cwd` is the
// call's working directory; Gemini CLI's run_shell_command has `dir_path`): its command is
// summarized as `cd <dir> && <command>`, its relative paths read from there, and the `agent`
// policy judges it where it runs.
const agent = builtinPolicy('agent')!.config;
const PROJECT = '/home/dev/web';

function decided(tool: string, input: unknown, runDir?: string) {
  const { claim } = buildToolCallClaim({
    harness: 'codex',
    session: { id: 'sess-1', cwd: PROJECT },
    ...(runDir !== undefined && { run_dir: runDir }),
    agent: 'codex',
    tool_name: tool,
    tool_input: input,
  });
  const evaluation = evaluateClaim(claim, agent);
  expect(evaluation.replay.deterministic).toBe(true);
  return {
    summary: claim.action!.tool!.summary,
    session: claim.action!.session,
    verdict: evaluation.policy.verdict,
    failed: evaluation.policy.rules.filter((r) => !r.passed).map((r) => r.rule),
  };
}

const B: Verdict = 'BLOCKED';
const E: Verdict = 'ESCALATED';
const A: Verdict = 'ALLOWED';
const PATCH = '*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch';

describe('a call that runs outside its project directory', () => {
  it.each([
    // [tool, input, run dir, summary, verdict, a failed rule]
    [
      'Bash',
      { command: 'rm -rf build' },
      '/tmp',
      { command: 'cd /tmp && rm -rf build' },
      B,
      'rule:recursive-delete-outside-project',
    ],
    [
      'Bash',
      { command: 'rm -rf build' },
      `${PROJECT}/sub`,
      { command: 'cd sub && rm -rf build' },
      A,
      null,
    ],
    ['Bash', { command: 'rm -rf build' }, PROJECT, { command: 'rm -rf build' }, A, null],
    [
      'Bash',
      { command: 'cat .env' },
      '/tmp',
      { command: 'cd /tmp && cat .env' },
      B,
      'rule:read-secrets-in-commands',
    ],
    [
      'Bash',
      { command: 'touch notes' },
      '/tmp',
      { command: 'cd /tmp && touch notes' },
      E,
      'rule:shell-write-outside-project',
    ],
    [
      'Bash',
      { command: ['rm', '-rf', 'x'] },
      '/tmp',
      { command: 'cd /tmp && rm -rf x', argv: ['cd', '/tmp', '&&', 'rm', '-rf', 'x'] },
      B,
      'rule:recursive-delete-outside-project',
    ],
    [
      'Bash',
      { command: 'echo hi' },
      '/srv/a dir',
      { command: "cd '/srv/a dir' && echo hi", argv: ['cd', '/srv/a dir', '&&', 'echo', 'hi'] },
      A,
      null,
    ],
    [
      'apply_patch',
      { command: PATCH },
      '/tmp',
      { paths: ['/tmp/a.txt'] },
      E,
      'rule:write-outside-project',
    ],
    ['apply_patch', { command: PATCH }, `${PROJECT}/sub`, { paths: ['sub/a.txt'] }, A, null],
    [
      'Write',
      { file_path: 'notes.txt', content: 'x' },
      '/tmp',
      { paths: ['/tmp/notes.txt'] },
      E,
      'rule:write-outside-project',
    ],
    [
      'Write',
      { file_path: '/home/dev/web/a.txt', content: 'x' },
      '/tmp',
      { paths: ['a.txt'] },
      A,
      null,
    ],
    [
      'run_shell_command',
      { command: 'rm -rf x', dir_path: '/tmp' },
      undefined,
      { command: 'cd /tmp && rm -rf x', paths: ['/tmp'] },
      B,
      'rule:recursive-delete-outside-project',
    ],
    [
      'run_shell_command',
      { command: 'rm -rf x', dir_path: '../..' },
      undefined,
      { command: 'cd /home && rm -rf x' },
      B,
      'rule:recursive-delete-outside-project',
    ],
    [
      'run_shell_command',
      { command: 'ls', dir_path: 'sub' },
      undefined,
      { command: 'cd sub && ls', paths: ['sub'] },
      A,
      null,
    ],
  ] as const)('%s %j in %s', (tool, input, runDir, summary, verdict, rule) => {
    const got = decided(tool, input, runDir);
    expect(got.summary).toMatchObject(summary);
    expect(got.verdict).toBe(verdict);
    if (rule) expect(got.failed).toContain(rule);
    else expect(got.failed).toEqual([]);
    // The session's directory stays the project's: it is what "outside" is judged against.
    expect(got.session).toMatchObject({ cwd: PROJECT });
  });

  it('leaves the input digest over the input as sent', () => {
    const input = { command: 'rm -rf build' };
    const here = buildToolCallClaim({
      harness: 'codex',
      session: { id: 's', cwd: PROJECT },
      agent: 'codex',
      tool_name: 'Bash',
      tool_input: input,
    });
    const there = buildToolCallClaim({
      harness: 'codex',
      session: { id: 's', cwd: PROJECT },
      run_dir: '/tmp',
      agent: 'codex',
      tool_name: 'Bash',
      tool_input: input,
    });
    expect(there.input_digest).toBe(here.input_digest);
    expect(there.claim.action!.tool!.summary.command).not.toBe(
      here.claim.action!.tool!.summary.command,
    );
  });

  it('redacts a secret in the directory as in the command', () => {
    const token = `ghp_${'a1B2c3D4e5'.repeat(3)}123456`;
    const got = decided('Bash', { command: 'ls' }, `/tmp/${token}`);
    expect(JSON.stringify(got.summary)).not.toContain(token);
  });
});
