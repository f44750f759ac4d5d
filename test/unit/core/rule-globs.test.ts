import { describe, expect, it } from '@jest/globals';
import picomatch from 'picomatch/posix.js';
import { evaluatePolicy } from '../../../src/core/policy.js';
import { policyConfigSchema, resolvePolicy } from '../../../src/core/policy-config.js';
import { GLOB_STEP_BUDGET } from '../../../src/core/rules/conditional.js';
import {
  alternativesOf,
  GlobBudget,
  GlobBudgetExhausted,
  globMatcher,
  wordMatcher,
} from '../../../src/core/rules/glob.js';
import { baseAction, claimWith } from '../../support/claims.js';
import { cpuTimed } from '../../support/cpu-time.js';

const GLOBS = [
  '*',
  '**',
  '*.md',
  '**/*.md',
  'docs/**',
  'docs/*',
  '.github/workflows/**',
  'infra/**',
  'src/**/*.ts',
  'a/**/b',
  '**/b',
  'a/*/b',
  '?.txt',
  'file[0-9].txt',
  'file[^0-9].txt',
  '{src,lib}/**',
  'src/{a,b}/*.{ts,js}',
  'release/**',
  'main',
  '*[bot]',
  'acme/*',
  '**/.env',
  'x/**/y/**/z',
  '\\*.md',
  'a*b*c',
  '**/test/**',
];
const PATHS = [
  'README.md',
  'docs/a.md',
  'docs/x/y.md',
  'docs',
  'src/a.ts',
  'src/x/y/z.ts',
  'lib/a/b.js',
  '.github/workflows/ci.yml',
  '.github/README.md',
  'infra',
  'infra/.lock',
  'infra/a/b.tf',
  'a/b',
  'a/x/b',
  'a/x/y/b',
  'b',
  'x/b',
  'a.txt',
  'ab.txt',
  'file1.txt',
  'filex.txt',
  'src/a/q.ts',
  'src/b/q.js',
  'src/c/q.ts',
  'release/2026/1',
  'main',
  'renovate[bot]',
  'Acme/Web',
  'acme/web/x',
  '.env',
  'a/.env',
  'x/1/y/2/z',
  '*.md',
  'abc',
  'aXbYc',
  'a/test/b',
  'test/x',
  '.hidden',
  'docs/.vuepress/c.js',
];
const unlimited = () => new GlobBudget(Number.MAX_SAFE_INTEGER);

describe('rule globs', () => {
  it.each([false, true])(
    'match as picomatch does with dot on (nocase %s), on a corpus of globs and paths',
    (nocase) => {
      const differences: string[] = [];
      for (const glob of GLOBS) {
        const reference = picomatch(glob, { dot: true, nocase });
        const ours = globMatcher([glob], nocase);
        for (const path of PATHS) {
          if (reference(path) !== ours(path, unlimited()))
            differences.push(`${glob} ${path}: picomatch ${reference(path)}`);
        }
      }
      expect(differences).toEqual([]);
    },
  );

  it('reads globs and values by code points: an emoji is one character', () => {
    const matches = (glob: string, value: string) => globMatcher([glob], false)(value, unlimited());
    expect(matches('a😀b', 'a😀b')).toBe(true);
    expect(matches('a😀*', 'a😀bc')).toBe(true);
    expect(matches('a?b', 'a😀b')).toBe(true);
    expect(matches('a??b', 'a😀b')).toBe(false);
    expect(matches('a[😀x]b', 'a😀b')).toBe(true);
    expect(matches('a[^😀]b', 'a😀b')).toBe(false);
    expect(matches('a[^😀]b', 'axb')).toBe(true);
    expect(matches('a\\😀b', 'a😀b')).toBe(true);
    expect(wordMatcher(['😀'], false)('😀', unlimited())).toBe(true);
    expect(wordMatcher(['{😀,x}y'], false)('😀y', unlimited())).toBe(true);
  });

  it('answers literal alternatives as the automaton would, spending steps on them', () => {
    const tools = globMatcher(['{npm,pn?m,yarn}', 'bun'], false);
    for (const [value, expected] of [
      ['npm', true],
      ['pnpm', true],
      ['yarn', true],
      ['bun', true],
      ['npmx', false],
      ['np', false],
      ['', false],
    ] as const)
      expect([value, tools(value, unlimited())]).toEqual([value, expected]);
    expect(globMatcher(['!bun', '!npm'], false)('npm', unlimited())).toBe(false);
    expect(globMatcher(['!bun', '!npm'], false)('yarn', unlimited())).toBe(true);
    // A literal lookup is counted against the evaluation's budget: a comparison with the
    // longest literal, however long the value (an automaton per literal spends no more).
    expect(() => globMatcher(['bun'], false)('x'.repeat(20), new GlobBudget(3))).toThrow(
      GlobBudgetExhausted,
    );
    expect(() => wordMatcher(['bun'], false)('x'.repeat(20), new GlobBudget(3))).toThrow(
      GlobBudgetExhausted,
    );
    const budget = new GlobBudget(4 * 3000);
    for (let i = 0; i < 3000; i++) globMatcher(['bun'], false)('x'.repeat(1000), budget);
    expect(budget.exhausted).toBe(false);
  });

  it('keeps the matcher of a frozen list with it, and reads a list that can change each time', () => {
    const frozen = Object.freeze(['a', 'b*']);
    expect(globMatcher(frozen, false)('bc', unlimited())).toBe(true);
    expect(globMatcher(frozen, false)('c', unlimited())).toBe(false);
    expect(globMatcher(frozen, true)('BC', unlimited())).toBe(true);
    const list = ['a'];
    expect(globMatcher(list, false)('b', unlimited())).toBe(false);
    list[0] = 'b';
    expect(globMatcher(list, false)('b', unlimited())).toBe(true);
  });

  it('a "!" glob excludes; a list of only exclusions starts from **', () => {
    const notDocs = globMatcher(['!docs/**', '!**/*.md'], false);
    expect(notDocs('src/a.ts', unlimited())).toBe(true);
    expect(notDocs('docs/a.png', unlimited())).toBe(false);
    expect(notDocs('README.md', unlimited())).toBe(false);
    const infraNotDocs = globMatcher(['infra/**', '!infra/docs/**'], false);
    expect(infraNotDocs('infra/main.tf', unlimited())).toBe(true);
    expect(infraNotDocs('infra/docs/a.md', unlimited())).toBe(false);
  });

  it('match in time linear in the path: globs that make backtracking matchers hang', () => {
    // picomatch's regular expression for the first takes minutes on this path.
    const { ms } = cpuTimed(() => {
      for (const glob of ['*a*a*a*a*a*a*a*a*b', '**/a/**/a/**/a/**/c', 'a*a*a*a*a*a*a*a*a*a*?c']) {
        const budget = unlimited();
        expect(globMatcher([glob], false)('a'.repeat(1024), budget)).toBe(false);
        expect(globMatcher([glob], false)('a/'.repeat(500), budget)).toBe(false);
      }
    });
    expect(ms).toBeLessThan(2000);
  });

  it('refuses a glob with more than 64 alternatives', () => {
    expect(alternativesOf('{a,b}/{c,d}/{e,f}')).toHaveLength(8);
    expect(alternativesOf('{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}')).toBeNull();
    const parsed = policyConfigSchema.safeParse({
      rules: [
        {
          name: 'x',
          if: { paths: '{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}' },
          require: { checks: ['c'] },
        },
      ],
    });
    expect(parsed.success).toBe(false);
  });

  it('an evaluation that spends its step budget fails the rule closed, the same way on replay', () => {
    const globs = Array.from({ length: 100 }, (_, i) => `*a*a*a*a*a*a*a*a*${i}`);
    const config = resolvePolicy(
      policyConfigSchema.parse({
        rules: [
          { name: 'heavy', if: { paths: globs }, require: { checks: ['ci'] } },
          { name: 'after', if: { branch: 'main' }, require: { checks: ['ci'] } },
        ],
      }),
    );
    const claim = claimWith({
      action: {
        ...baseAction,
        branch: 'main',
        changed_paths: Array.from({ length: 300 }, () => 'a'.repeat(1000)),
      },
    });
    // The budget is about 0.4 s of matching; without it these globs would run for minutes.
    const { value: outcome, ms } = cpuTimed(() => evaluatePolicy(claim, config));
    expect(ms).toBeLessThan(5000);
    const reason = `fails closed: matching its globs took more than the evaluation's ${GLOB_STEP_BUDGET} steps`;
    expect(outcome.rules.slice(6)).toEqual([
      { rule: 'rule:heavy', passed: false, reason },
      { rule: 'rule:after', passed: false, reason },
    ]);
    expect(outcome.verdict).toBe('BLOCKED');
    expect(evaluatePolicy(claim, config)).toEqual(outcome);
  });
});
