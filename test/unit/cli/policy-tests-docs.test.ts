import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import {
  detectKind,
  loadCases,
  parseDocument,
  PolicySet,
  renderResults,
  runCases,
  subjectOf,
  type Subject,
} from '../../../src/cli/policy-tests.js';

const DOC = readFileSync(new URL('../../../docs/POLICY_TESTS.md', import.meta.url), 'utf8');

/** The example files of the doc: fenced blocks whose first line is `# <path>` or `// <path>`. */
const FILES = new Map(
  [...DOC.matchAll(/```(?:yaml|json)\n(?:#|\/\/) (\S+)\n([\s\S]*?)```/g)].map((m) => [
    m[1]!,
    m[2]!,
  ]),
);

async function subject(path: string): Promise<Subject> {
  const doc = parseDocument(FILES.get(path)!, path);
  if (!doc.ok) throw new Error(doc.problems.join('\n'));
  const kind = detectKind(doc.value, path);
  if (typeof kind !== 'string') throw new Error(kind.problem);
  const parsed = await subjectOf(doc.value, kind, new PolicySet());
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  return parsed.value;
}

async function run(policy: string, cases: string) {
  const doc = parseDocument(FILES.get(cases)!, cases);
  if (!doc.ok) throw new Error(doc.problems.join('\n'));
  const loaded = loadCases(doc.value, (path) => {
    const text = FILES.get(posix.join(posix.dirname(cases), path));
    return text === undefined ? { ok: false, problem: 'not in the doc' } : { ok: true, text };
  });
  if (!loaded.ok) throw new Error(loaded.problems.join('\n'));
  const s = await subject(policy);
  return { subject: s, results: await runCases(s, loaded.value) };
}

/** The lines of the doc's console block that follows `$ <command>`. */
const consoleOf = (command: string) =>
  new RegExp(`\\$ ${command.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n([\\s\\S]*?)\`\`\``)
    .exec(DOC)![1]!
    .trimEnd()
    .split('\n');

describe('docs/POLICY_TESTS.md', () => {
  it('holds the example files it names', () => {
    expect([...FILES.keys()].sort()).toEqual([
      '.github/svc.yml',
      'docs-only/.github/svc.yml',
      'docs-only/policy-tests.yml',
      'policies/production.yml',
      'policy-tests/claims/unapproved.json',
      'policy-tests/production.yml',
      'policy-tests/prs/42.yml',
      'policy-tests/pull-requests.yml',
    ]);
  });

  it('shows the config_hash svc policy check prints for its policy', async () => {
    const s = await subject('policies/production.yml');
    if (s.kind === 'repo-config') throw new Error('a policy');
    const shown = consoleOf('svc policy check policies/production.yml');
    expect(shown).toContain(`config_hash: ${s.view.config_hash}`);
    expect(shown).toContain('    "minConfidence": 0.8,');
    expect((await subject('.github/svc.yml')).kind).toBe('repo-config');
  });

  it('passes every example case, printing what the doc shows', async () => {
    const production = await run('policies/production.yml', 'policy-tests/production.yml');
    expect(production.results.every((r) => r.passed)).toBe(true);
    expect(renderResults(production.subject, production.results)).toEqual(
      consoleOf('svc policy test policies/production.yml policy-tests/production.yml'),
    );

    const prs = await run('.github/svc.yml', 'policy-tests/pull-requests.yml');
    expect(prs.results.map((r) => [r.name, r.passed, r.differences])).toEqual([
      ['an approved dependency bump is allowed', true, []],
    ]);
    const shown = consoleOf('svc policy test .github/svc.yml policy-tests/pull-requests.yml');
    expect(renderResults(prs.subject, prs.results).slice(1)).toEqual(shown.slice(1));

    const docsOnly = await run('docs-only/.github/svc.yml', 'docs-only/policy-tests.yml');
    expect(docsOnly.results.map((r) => [r.name, r.passed, r.differences])).toEqual([
      ['docs with green CI need nothing else', true, []],
      ['a code change without a review goes to a human', true, []],
    ]);
    expect(renderResults(docsOnly.subject, docsOnly.results).slice(1)).toEqual(
      consoleOf('svc policy test docs-only/.github/svc.yml docs-only/policy-tests.yml').slice(1),
    );
  });
});
