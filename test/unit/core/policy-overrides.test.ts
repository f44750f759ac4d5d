import { describe, expect, it } from '@jest/globals';
import { isSvcError } from '../../../src/core/errors.js';
import { builtinPolicy } from '../../../src/core/policies.js';
import { DEFAULT_POLICY, type PolicyConfig } from '../../../src/core/policy-config.js';
import {
  applyOverrides,
  lockedMode,
  type OverrideMode,
} from '../../../src/core/policy-overrides.js';

const strict = builtinPolicy('strict')!;
const policy = (overrides: OverrideMode, config: PolicyConfig = strict.config) => ({
  name: 'p',
  config,
  overrides,
});

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (isSvcError(error) && error.code === 'policy_override_refused') return error.message;
    throw error;
  }
  throw new Error('expected policy_override_refused');
}

describe('applyOverrides under tighten', () => {
  it.each([
    ['minSources', 3],
    ['minSourceTypes', 3],
    ['minConfidence', 0.9],
    ['maxRiskScope', 1],
  ] as const)('accepts a stricter %s', (field, value) => {
    const { config, overridden } = applyOverrides(policy('tighten'), { [field]: value });
    expect(config).toEqual({ ...strict.config, [field]: value });
    expect(overridden).toBe(true);
  });

  it.each([
    ['minSources', 1, 'at least 2'],
    ['minSourceTypes', 0, 'at least 2'],
    ['minConfidence', 0.79, 'at least 0.8'],
    ['maxRiskScope', 4, 'at most 3'],
    ['requireProvenance', false, 'true'],
    ['requireReplay', false, 'true'],
    ['requireHumanApproval', false, 'true'],
  ] as const)('refuses a looser %s, naming the field', (field, value, bound) => {
    expect(refusal(() => applyOverrides(policy('tighten'), { [field]: value }))).toBe(
      `policyConfig.${field}: policy "p" allows only stricter values here (${bound}); got ${value}`,
    );
  });

  it('turns requirements on, never off', () => {
    const base = policy('tighten', { ...DEFAULT_POLICY });
    expect(applyOverrides(base, { requireHumanApproval: true }).config.requireHumanApproval).toBe(
      true,
    );
    expect(applyOverrides(base, { requireReplay: true }).overridden).toBe(false);
    expect(refusal(() => applyOverrides(base, { requireReplay: false }))).toMatch(
      /^policyConfig\.requireReplay: /,
    );
  });

  it('equal values are not overrides', () => {
    expect(applyOverrides(policy('tighten'), { ...strict.config })).toEqual({
      config: strict.config,
      overridden: false,
    });
    expect(applyOverrides(policy('tighten'), undefined).overridden).toBe(false);
  });

  it('refuses a mixed request as a whole (the first looser field in contract order)', () => {
    expect(
      refusal(() => applyOverrides(policy('tighten'), { minSources: 5, minConfidence: 0.1 })),
    ).toMatch(/^policyConfig\.minConfidence: /);
  });
});

describe('applyOverrides under any and none', () => {
  it('any accepts looser values and reports the override', () => {
    const zeroed = {
      minSources: 0,
      minSourceTypes: 0,
      minConfidence: 0,
      requireProvenance: false,
      requireHumanApproval: false,
      maxRiskScope: 10_000,
    };
    const { config, overridden } = applyOverrides(policy('any'), zeroed);
    expect(config).toEqual({ ...strict.config, ...zeroed });
    expect(overridden).toBe(true);
  });

  it('none refuses any change, even a stricter one, and accepts restating a value', () => {
    expect(refusal(() => applyOverrides(policy('none'), { minSources: 9 }))).toBe(
      'policyConfig.minSources: policy "p" takes no per-request overrides (it sets 2)',
    );
    expect(applyOverrides(policy('none'), { minSources: 2 }).overridden).toBe(false);
  });

  it('a locked key never gets looser than tighten', () => {
    expect(lockedMode('any')).toBe('tighten');
    expect(lockedMode('tighten')).toBe('tighten');
    expect(lockedMode('none')).toBe('none');
  });
});
