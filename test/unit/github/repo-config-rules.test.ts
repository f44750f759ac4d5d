import { describe, expect, it } from '@jest/globals';
import { parse as parseYaml } from 'yaml';
import { parseRepoConfig } from '../../../src/github/repo-config.js';

const parsed = (yaml: string) => parseRepoConfig(parseYaml(yaml));

describe('.github/svc.yml rules', () => {
  it('top-level rules travel in policyConfig.rules, with defaults filled, after any there', () => {
    const result = parsed(`
policy: strict
policyConfig:
  minConfidence: 0.9
  rules:
    - name: first
      require: { checks: [ci] }
rules:
  - name: second
    if: { paths: "infra/**" }
    require:
      approvals: { count: 2, from: { teams: ["@acme/platform"] } }
    on_fail: escalate
`);
    expect(result).toEqual({
      ok: true,
      config: expect.objectContaining({
        policy: 'strict',
        policyConfig: {
          minConfidence: 0.9,
          rules: [
            { name: 'first', if: {}, require: { checks: ['ci'] }, on_fail: 'block' },
            {
              name: 'second',
              if: { paths: 'infra/**' },
              require: { approvals: { count: 2, from: { teams: ['@acme/platform'] } } },
              on_fail: 'escalate',
            },
          ],
        },
      }),
    });
    if (result.ok) expect(result.config).not.toHaveProperty('rules');
  });

  it('a file without rules parses as before', () => {
    const result = parsed('policy: strict\n');
    expect(result.ok && result.config.policyConfig).toBeUndefined();
  });

  it('an invalid rule names the rule and field', () => {
    expect(
      parsed(`
rules:
  - name: ok
    require: { checks: [ci] }
  - name: bad
    require:
      approvals: { count: 0 }
`),
    ).toEqual({
      ok: false,
      problem: 'rules[1].require.approvals.count: Too small: expected number to be >=1',
    });
  });

  it('a name in both rules and policyConfig.rules is refused', () => {
    expect(
      parsed(`
policyConfig:
  rules: [{ name: twice, require: { checks: [ci] } }]
rules: [{ name: twice, require: { checks: [lint] } }]
`),
    ).toEqual({
      ok: false,
      problem: 'rules[0].name: duplicate rule name "twice" (also in policyConfig.rules)',
    });
  });
});
