import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { parse as parseYaml } from 'yaml';
import { AGENT_POLICY_RULES } from '../../../src/core/agent/agent-policy.js';
import { buildToolCallClaim } from '../../../src/core/agent/tool-call-claim.js';
import { formatIssues, type ClaimInput } from '../../../src/core/claim-schema.js';
import { evaluateClaim } from '../../../src/core/evaluation.js';
import { policyConfigSchema, resolvePolicy } from '../../../src/core/policy-config.js';
import type { PolicyOutcome } from '../../../src/core/policy.js';
import { conditionalRulesSchema } from '../../../src/core/rules/conditional-schema.js';

const DOC = readFileSync(new URL('../../../docs/POLICIES.md', import.meta.url), 'utf8');
const CWD = '/home/dev/proj';

const claimOf = (tool_name: string, tool_input: unknown, harness = 'claude-code'): ClaimInput =>
  buildToolCallClaim({
    harness,
    session: { id: 'sess-9', cwd: CWD },
    agent: 'agent-x',
    tool_name,
    tool_input,
  }).claim;
const bash = (command: string) => claimOf('Bash', { command });

const outcome = (rules: unknown[], claim: ClaimInput): PolicyOutcome => {
  const evaluation = evaluateClaim(claim, resolvePolicy(policyConfigSchema.parse({ rules })));
  expect(evaluation.replay.deterministic).toBe(true);
  return evaluation.policy;
};
const deny = (conditions: Record<string, unknown>) => ({
  name: 'r',
  description: 'not here',
  if: conditions,
  require: { never: true },
});
const reasonOf = (o: PolicyOutcome) => o.rules.find((r) => r.rule === 'rule:r')!;

describe('conditions on tool calls', () => {
  it('tool: globs over the tool name, case-insensitively, mcp__* included', () => {
    expect(outcome([deny({ tool: 'mcp__*' })], claimOf('mcp__github__merge', {})).verdict).toBe(
      'BLOCKED',
    );
    expect(outcome([deny({ tool: 'bash' })], bash('ls')).verdict).toBe('BLOCKED');
    expect(reasonOf(outcome([deny({ tool: 'Write' })], bash('ls')))).toEqual({
      rule: 'rule:r',
      passed: true,
      reason: 'does not apply: tool "Bash" matches none of Write',
    });
  });

  it('never: a rule that applies fails, naming its description', () => {
    expect(reasonOf(outcome([deny({ tool: 'Bash' })], bash('ls')))).toEqual({
      rule: 'rule:r',
      passed: false,
      reason: 'applies; never allowed: not here',
    });
    const ask = { ...deny({ tool: 'Bash' }), on_fail: 'escalate' };
    expect(outcome([ask], bash('ls')).verdict).toBe('ESCALATED');
  });

  it('command: names the patterns when no command matches', () => {
    expect(
      reasonOf(outcome([deny({ command: 'terraform apply' })], bash('terraform plan'))),
    ).toEqual({
      rule: 'rule:r',
      passed: true,
      reason: 'does not apply: no command of the call matches "terraform apply"',
    });
    expect(
      reasonOf(outcome([deny({ command: 'terraform apply' })], claimOf('Read', { file_path: 'a' })))
        .reason,
    ).toBe('does not apply: the call has no command');
  });

  it('command: names the first of several patterns and counts the others, cut past 120 characters', () => {
    const plan = bash('terraform plan');
    const two = deny({ command: ['terraform apply', 'terraform destroy'] });
    expect(reasonOf(outcome([two], plan)).reason).toBe(
      'does not apply: no command of the call matches "terraform apply" or 1 other pattern',
    );
    const programs = `{${Array.from({ length: 30 }, (_, i) => `program-${i}`).join(',')}} ** x`;
    const long = deny({ command: [programs, 'a', 'b'] });
    const { reason } = reasonOf(outcome([long], plan));
    expect(reason).toBe(
      `does not apply: no command of the call matches "${programs.slice(0, 117)}..." or 2 other patterns`,
    );
    // ASCII only: the reason is hashed with the policy's text (rule-registry.test.ts).
    expect(reason).toMatch(/^[\x20-\x7e]+$/);
  });

  it('tool_paths, outside_project and urls read the summary', () => {
    const read = claimOf('Read', { file_path: '/home/dev/proj/config/.env.local' });
    expect(outcome([deny({ tool_paths: '**/.env*' })], read).verdict).toBe('BLOCKED');
    expect(outcome([deny({ outside_project: true })], read).verdict).toBe('ALLOWED');
    expect(outcome([deny({ outside_project: false })], read).verdict).toBe('BLOCKED');
    const outside = claimOf('Read', { file_path: '/etc/passwd' });
    expect(outcome([deny({ outside_project: true })], outside).verdict).toBe('BLOCKED');
    const fetch = claimOf('WebFetch', { url: 'https://API.Example.com/x', prompt: 'p' });
    expect(outcome([deny({ urls: '*.example.com' })], fetch).verdict).toBe('BLOCKED');
    expect(outcome([deny({ urls: ['!*.example.com'] })], fetch).verdict).toBe('ALLOWED');
    expect(outcome([deny({ urls: ['!github.com'] })], fetch).verdict).toBe('BLOCKED');
  });

  it('mcp_server and session read the claim', () => {
    const mcp = claimOf('mcp__Postgres__query', { sql: 'select 1' }, 'cursor');
    expect(outcome([deny({ mcp_server: 'postgres' })], mcp).verdict).toBe('BLOCKED');
    expect(outcome([deny({ session: { harness: 'cursor' } })], mcp).verdict).toBe('BLOCKED');
    expect(outcome([deny({ session: { harness: 'codex' } })], mcp).verdict).toBe('ALLOWED');
    expect(outcome([deny({ session: { cwd: '/home/dev/**' } })], mcp).verdict).toBe('BLOCKED');
    expect(outcome([deny({ session: { id: 'other-*' } })], mcp).verdict).toBe('ALLOWED');
  });

  it('fails closed on a summary marked incomplete', () => {
    const claim = bash('ls');
    claim.action!.tool!.summary.incomplete = true;
    for (const conditions of [
      { command: 'rm' },
      { tool_paths: 'x' },
      { urls: 'x' },
      { outside_project: true },
    ]) {
      expect(outcome([deny(conditions)], claim).verdict).toBe('BLOCKED');
    }
  });

  it('matches patterns of the longest length allowed, `**` between every word included', () => {
    const words = Array.from({ length: 16 }, (_, i) => `w${i}`);
    const longest = ['echo', ...words.slice(0, 15).flatMap((w) => ['**', w]), '**'].join(' ');
    expect(longest.split(' ')).toHaveLength(32);
    const line = `echo x ${words.join(' y ')}`;
    expect(outcome([deny({ command: longest })], bash(line)).verdict).toBe('BLOCKED');
    const missing = `echo ${words.filter((w) => w !== 'w14').join(' ')}`;
    expect(outcome([deny({ command: longest })], bash(missing)).verdict).toBe('ALLOWED');
    const exact = ['echo', ...Array.from({ length: 31 }, (_, i) => `a${i}`)].join(' ');
    expect(outcome([deny({ command: exact })], bash(exact)).verdict).toBe('BLOCKED');
    expect(outcome([deny({ command: exact })], bash(`${exact} more`)).verdict).toBe('BLOCKED');
    expect(outcome([deny({ command: exact })], bash(exact.replace(' a30', ''))).verdict).toBe(
      'ALLOWED',
    );
  });

  it('refuses invalid patterns and session conditions, naming the rule and field', () => {
    const problems = (conditions: Record<string, unknown>) => {
      const parsed = policyConfigSchema.safeParse({ rules: [deny(conditions)] });
      return parsed.success ? '' : formatIssues(parsed.error);
    };
    expect(problems({ command: 'rm <inside>' })).toBe(
      'rules[0].if.command: word "<inside>" is not <outside> or <project>',
    );
    expect(problems({ command: '' })).toMatch(/^rules\[0\]\.if\.command: /);
    expect(problems({ command: Array(33).fill('a').join(' ') })).toBe(
      'rules[0].if.command: must hold at most 32 words',
    );
    expect(problems({ session: { harness: 'Claude Code' } })).toMatch(
      /^rules\[0\]\.if\.session\.harness: /,
    );
    expect(problems({ outside_project: 'yes' })).toMatch(/^rules\[0\]\.if\.outside_project: /);
  });
});

/** The rules of a `<!-- tool-call-example: name -->` block of docs/POLICIES.md. */
function example(name: string): unknown[] {
  const marker = `<!-- tool-call-example: ${name} -->\n`;
  const at = DOC.indexOf(marker);
  if (at < 0) throw new Error(`no example ${name}`);
  const yaml = /^```yaml\n([\s\S]*?)\n```/.exec(DOC.slice(at + marker.length))![1]!;
  return (parseYaml(yaml) as { rules: unknown[] }).rules;
}

describe('the tool-call examples of docs/POLICIES.md', () => {
  const verdict = (name: string, claim: ClaimInput) => outcome(example(name), claim).verdict;

  it('blocks force pushes to main, not other pushes', () => {
    for (const command of [
      'git push --force origin main',
      'git push -f origin master',
      'git push origin +main',
      'sudo git push origin HEAD:refs/heads/main --force-with-lease',
    ]) {
      expect([command, verdict('no-force-push-main', bash(command))]).toEqual([command, 'BLOCKED']);
    }
    expect(verdict('no-force-push-main', bash('git push origin main'))).toBe('ALLOWED');
    expect(verdict('no-force-push-main', bash('git push -f origin feature'))).toBe('ALLOWED');
  });

  it('asks before terraform apply', () => {
    expect(verdict('ask-terraform-apply', bash('cd infra && terraform apply -auto-approve'))).toBe(
      'ESCALATED',
    );
    expect(verdict('ask-terraform-apply', bash('env TF_LOG=1 terraform -chdir=x apply'))).toBe(
      'ESCALATED',
    );
    expect(verdict('ask-terraform-apply', bash('terraform plan'))).toBe('ALLOWED');
  });

  it('denies reading .env', () => {
    expect(verdict('no-dotenv', claimOf('Read', { file_path: `${CWD}/.env` }))).toBe('BLOCKED');
    expect(verdict('no-dotenv', bash('cat .env | grep KEY'))).toBe('BLOCKED');
    expect(verdict('no-dotenv', claimOf('Read', { file_path: '.env.example' }))).toBe('ALLOWED');
  });

  it('allows only the project directory', () => {
    expect(verdict('project-only', claimOf('Read', { file_path: '/etc/hosts' }))).toBe('BLOCKED');
    expect(verdict('project-only', claimOf('Write', { file_path: 'src/a.ts', content: '' }))).toBe(
      'ALLOWED',
    );
    expect(verdict('project-only', bash('cp build/app /usr/local/bin/'))).toBe('BLOCKED');
    expect(verdict('project-only', bash('cd .. && ls'))).toBe('BLOCKED');
    expect(verdict('project-only', bash('cp a.txt b.txt'))).toBe('ALLOWED');
  });
});

/** The table of the agent policy's rules in docs/POLICIES.md, as agent-policy.ts defines it. */
function agentRuleTable(): string {
  const when = (conditions: Record<string, unknown>) =>
    Object.entries(conditions)
      .map(([name, value]) => {
        const values = (Array.isArray(value) ? value : [value]).map((v) => `\`${String(v)}\``);
        return `${name}: ${values.join(', ')}`;
      })
      .join('; ');
  return [
    '| Rule | On failure | Applies when | Why |',
    '| --- | --- | --- | --- |',
    ...AGENT_POLICY_RULES.map(
      (r) =>
        `| \`rule:${r.name}\` | ${r.on_fail === 'block' ? 'block (deny)' : 'escalate (ask)'} | ${when(r.if as Record<string, unknown>)} | ${r.description} |`,
    ),
  ].join('\n');
}

describe('the built-in agent policy', () => {
  it('is written as validation leaves it', () => {
    expect(conditionalRulesSchema.parse(AGENT_POLICY_RULES)).toEqual(AGENT_POLICY_RULES);
  });

  it('docs/POLICIES.md lists its rules with their reasons', () => {
    const start = DOC.indexOf(
      '<!-- agent-rules: generated from src/core/agent/agent-policy.ts -->\n',
    );
    const end = DOC.indexOf('\n<!-- /agent-rules -->');
    expect(DOC.slice(start, end).split('\n').slice(1).join('\n')).toBe(agentRuleTable());
  });
});
