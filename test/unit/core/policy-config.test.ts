import { describe, expect, it } from '@jest/globals';
import {
  DEFAULT_POLICY,
  policyConfigSchema,
  resolvePolicy,
} from '../../../src/core/policy-config.js';

// Contract §5, written out here rather than imported, so a changed default fails.
const CONTRACT_DEFAULTS = {
  minSources: 1,
  minSourceTypes: 1,
  minConfidence: 0.5,
  requireProvenance: false,
  requireReplay: true,
  requireHumanApproval: false,
  maxRiskScope: 5,
};

describe('resolvePolicy (contract §5 defaults)', () => {
  it('gives exactly the contract defaults when policyConfig is omitted or empty', () => {
    expect(resolvePolicy()).toEqual(CONTRACT_DEFAULTS);
    expect(resolvePolicy(undefined)).toEqual(CONTRACT_DEFAULTS);
    expect(resolvePolicy({})).toEqual(CONTRACT_DEFAULTS);
    expect(DEFAULT_POLICY).toEqual(CONTRACT_DEFAULTS);
  });

  it('fills every member a partial config leaves out', () => {
    expect(resolvePolicy({ minSources: 3, requireReplay: false })).toEqual({
      ...CONTRACT_DEFAULTS,
      minSources: 3,
      requireReplay: false,
    });
  });

  it('keeps falsy overrides (0, false) instead of replacing them with defaults', () => {
    expect(
      resolvePolicy({ minSources: 0, minConfidence: 0, maxRiskScope: 0, requireReplay: false }),
    ).toEqual({
      ...CONTRACT_DEFAULTS,
      minSources: 0,
      minConfidence: 0,
      maxRiskScope: 0,
      requireReplay: false,
    });
  });

  it('lets later layers win and skips members that are undefined', () => {
    const effective = resolvePolicy({ minSources: 2, minConfidence: 0.7 }, undefined, {
      minSources: 4,
      minConfidence: undefined,
    });
    expect(effective).toEqual({ ...CONTRACT_DEFAULTS, minSources: 4, minConfidence: 0.7 });
  });

  it('returns a fresh object each time and never changes the defaults', () => {
    const a = resolvePolicy();
    a.minSources = 99;
    expect(resolvePolicy().minSources).toBe(1);
    expect(Object.isFrozen(DEFAULT_POLICY)).toBe(true);
  });

  it('has exactly the seven members of the spec, so replay_hash commits to all of them', () => {
    expect(Object.keys(resolvePolicy({ minSources: 2 })).sort()).toEqual(
      Object.keys(CONTRACT_DEFAULTS).sort(),
    );
  });
});

describe('policyConfigSchema', () => {
  it.each([
    ['an unknown member', { minSource: 1 }],
    ['a negative minimum', { minSources: -1 }],
    ['a fractional count', { minSourceTypes: 1.5 }],
    ['a confidence above 1', { minConfidence: 1.01 }],
    ['a string for a boolean', { requireReplay: 'yes' }],
  ])('refuses %s', (_, config) => {
    expect(policyConfigSchema.safeParse(config).success).toBe(false);
  });

  it('accepts every member at its bounds', () => {
    const config = {
      minSources: 0,
      minSourceTypes: 0,
      minConfidence: 1,
      requireProvenance: true,
      requireReplay: false,
      requireHumanApproval: true,
      maxRiskScope: 0,
    };
    expect(policyConfigSchema.parse(config)).toEqual(config);
  });
});
