import { z } from 'zod';
import { AGENT_POLICY_RULES } from './agent/agent-policy.js';
import { deepFrozen } from './deep-frozen.js';
import { DEFAULT_POLICY, type PolicyConfig } from './policy-config.js';
import type { OverrideMode } from './policy-overrides.js';

export const POLICY_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
export const policyNameSchema = z.string().regex(POLICY_NAME, {
  error: 'must be 1-64 characters of a-z, 0-9, ".", "_" or "-", starting with a letter or digit',
});

export interface NamedPolicy {
  name: string;
  description: string;
  config: PolicyConfig;
  builtin: boolean;
  /** How far a claim's policyConfig may move it; `default` keeps the specification's `any`. */
  overrides: OverrideMode;
}

/**
 * Built-in policies: the registry's defaults with the fields each one changes. Their configs
 * are complete, so a receipt's replay hash never depends on a later default, and their
 * config_hash values are pinned by a test and listed in docs/POLICIES.md.
 */
export const BUILTIN_POLICIES: readonly NamedPolicy[] = deepFrozen([
  {
    name: 'default',
    description:
      'The contract defaults: one admissible source with average confidence 0.5, replay required.',
    config: { ...DEFAULT_POLICY },
    builtin: true,
    overrides: 'any',
  },
  {
    name: 'strict',
    description:
      'For production changes: two sources of two types, confidence 0.8, provenance on every source, a human approval, risk scope at most 3.',
    config: {
      ...DEFAULT_POLICY,
      minSources: 2,
      minSourceTypes: 2,
      minConfidence: 0.8,
      requireProvenance: true,
      requireHumanApproval: true,
      maxRiskScope: 3,
    },
    builtin: true,
    overrides: 'tighten',
  },
  {
    name: 'permissive',
    description:
      'For low-risk automation: one source, confidence 0.3, replay not required, risk scope up to 10.',
    config: { ...DEFAULT_POLICY, minConfidence: 0.3, requireReplay: false, maxRiskScope: 10 },
    builtin: true,
    overrides: 'tighten',
  },
  {
    name: 'agent',
    description:
      "For coding agents' tool calls: denies destructive commands, force pushes and deletions of protected branches, history rewrites, disk and permission changes and reading credential files; asks before other force pushes, git reset --hard, writes outside the project, network access beyond an allowlist and publishing; allows the rest.",
    config: { ...DEFAULT_POLICY, rules: AGENT_POLICY_RULES.map((rule) => structuredClone(rule)) },
    builtin: true,
    overrides: 'tighten',
  },
]);

export const builtinPolicy = (name: string): NamedPolicy | undefined =>
  BUILTIN_POLICIES.find((policy) => policy.name === name);
