import { describe, expect, it } from '@jest/globals';
import { isSvcError } from '../../../src/core/errors.js';
import {
  effectivePolicy,
  policyNameOf,
  type NamedPolicy,
  type PolicyRequest,
} from '../../../src/core/effective-policy.js';
import { builtinPolicy } from '../../../src/core/policies.js';
import { policyConfigSchema, type PolicyConfigInput } from '../../../src/core/policy-config.js';
import type { OverrideMode } from '../../../src/core/policy-overrides.js';
import { repoConfigSchema } from '../../../src/github/repo-config.js';
import { claimDoing } from '../../support/claims.js';

const strict = builtinPolicy('strict')!;
const named = (overrides: OverrideMode): NamedPolicy => ({
  name: 'gate',
  config: { ...strict.config },
  overrides,
});
const asked = (policyConfig?: unknown): PolicyRequest => ({
  policy: 'gate',
  ...(policyConfig === undefined
    ? {}
    : { policyConfig: policyConfigSchema.parse(policyConfig) as PolicyConfigInput }),
});

/** The code and message of the refusal `run` throws. */
function refusal(run: () => unknown): { code: string; message: string } {
  try {
    run();
  } catch (error) {
    if (isSvcError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('policyNameOf: the policy a request is evaluated under', () => {
  it('a lock, else the named policy, else default', () => {
    expect(policyNameOf({ policy: 'permissive' }, 'strict')).toBe('strict');
    expect(policyNameOf({ policy: 'permissive' }, null)).toBe('permissive');
    expect(policyNameOf({}, null)).toBe('default');
  });
});

describe('effectivePolicy', () => {
  it('without a policyConfig: the named policy as it is, nothing overridden', () => {
    expect(effectivePolicy(asked(), null, named('tighten'))).toEqual({
      name: 'gate',
      config: strict.config,
      overridden: false,
    });
  });

  it("applies the request's policyConfig as far as the policy's overrides allow", () => {
    expect(effectivePolicy(asked({ minSources: 1 }), null, named('any'))).toEqual({
      name: 'gate',
      config: { ...strict.config, minSources: 1 },
      overridden: true,
    });
    expect(
      refusal(() => effectivePolicy(asked({ minSources: 1 }), null, named('tighten'))),
    ).toEqual({
      code: 'policy_override_refused',
      message: `policyConfig.minSources: policy "gate" allows only stricter values here (at least ${strict.config.minSources}); got 1`,
    });
  });

  it('under a lock, a policy that allows any override allows only stricter ones', () => {
    const tighter = { minSources: strict.config.minSources + 1 };
    expect(effectivePolicy(asked(tighter), 'gate', named('any')).config.minSources).toBe(
      tighter.minSources,
    );
    expect(refusal(() => effectivePolicy(asked({ minSources: 1 }), 'gate', named('any')))).toEqual({
      code: 'policy_override_refused',
      message: `policyConfig.minSources: policy "gate" allows only stricter values here (at least ${strict.config.minSources}); got 1`,
    });
  });

  it('an unknown policy, and a lock whose policy is gone, are validation_failed', () => {
    expect(refusal(() => effectivePolicy({ policy: 'nope' }, null, null))).toEqual({
      code: 'validation_failed',
      message: 'policy: unknown policy "nope"',
    });
    expect(refusal(() => effectivePolicy({ policy: 'other' }, 'gone', null))).toEqual({
      code: 'validation_failed',
      message: 'policy: this key is locked to "gone", which no longer exists; ask the operator',
    });
  });

  it("a claim's own rules whose globs take too long to match against it: rule_budget_exceeded", () => {
    const globs = Array.from({ length: 100 }, (_, i) => `*a*a*a*a*a*a*a*a*${i}`);
    const heavy = { rules: [{ name: 'heavy', if: { paths: globs }, require: { checks: ['ci'] } }] };
    const claim = claimDoing(
      {
        changed_paths: Array.from(
          { length: 300 },
          (_, i) => `${'a'.repeat(1000)}${'z'.repeat(1 + (i % 5))}`,
        ),
      },
      { policy: 'gate', policyConfig: heavy },
    );
    expect(refusal(() => effectivePolicy(claim, null, named('any'))).code).toBe(
      'rule_budget_exceeded',
    );
    // A repository config has no action yet: its rules are matched when its claims are.
    const repo = repoConfigSchema.parse({ policy: 'gate', policyConfig: heavy });
    expect(effectivePolicy(repo, null, named('any')).config.rules).toEqual(
      policyConfigSchema.parse(heavy).rules,
    );
  });

  it("a repository config's rules are added after the policy's, as the App's claims get them", () => {
    const repo = repoConfigSchema.parse({
      policy: 'gate',
      rules: [{ name: 'docs', if: { only_paths: ['docs/**'] }, require: { checks: ['build'] } }],
    });
    const { config, overridden } = effectivePolicy(repo, null, named('tighten'));
    expect(config.rules!.map((r) => r.name)).toEqual(['docs']);
    expect(overridden).toBe(true);
  });
});
