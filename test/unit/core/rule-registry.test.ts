import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { canonicalize, hashCanonical } from '@svc/verify';
import { BUILTIN_POLICIES } from '../../../src/core/policies.js';
import { DEFAULT_POLICY, policyConfigSchema } from '../../../src/core/policy-config.js';
import { applyOverrides } from '../../../src/core/policy-overrides.js';
import {
  POLICY_FIELDS,
  RULE_ORDER,
  THRESHOLD_FIELDS,
  THRESHOLD_RULES,
} from '../../../src/core/rules/threshold-rules.js';

const POLICIES_DOC = readFileSync(new URL('../../../docs/POLICIES.md', import.meta.url), 'utf8');

// Written out rather than derived, so that a change to the registry shows here. The one pinned
// copy of the order: other tests read RULE_ORDER from the registry.
const CONTRACT_ORDER = [
  'min_sources',
  'min_source_types',
  'min_confidence',
  'require_provenance',
  'require_human_approval',
  'max_risk_scope',
];

// Pinned: other tests read the built-in configs from src/core/policies.ts (test/support/policies.ts),
// so these hashes are what catches a changed built-in policy.
const BUILTIN_CONFIG_HASHES = {
  default: 'sha256:54b4cf32f64e773cb17808ea27993bfc8907a5e2b3710db4dea7d36510a47f85',
  strict: 'sha256:c71ef04cfff4f6eb93f68090715a525d41119b445562532d18fe40335e47b806',
  permissive: 'sha256:2d0709c7f1687e25b88ca2d5bd9e111079a6f29821279f0fabe8d61367727f2b',
  agent: 'sha256:4ceb57131eabd60a83a2e04f61f636e9afb03ae314c45ffa1fc504c2ee2a192b',
};

const STRICTER_TEXT = { higher: 'higher', lower: 'lower', on: 'on (true)' } as const;

/** The rule table of docs/POLICIES.md, as the registry defines it. */
function ruleTable(): string {
  const rows = THRESHOLD_FIELDS.map((name) => {
    const field = POLICY_FIELDS[name] as (typeof POLICY_FIELDS)[keyof typeof POLICY_FIELDS] & {
      rule?: { name: string; onFail: string; summary: string };
    };
    const rule = field.rule;
    return `| ${rule ? `\`${rule.name}\`` : '(no rule)'} | \`${name}\` | \`${String(field.default)}\` | ${STRICTER_TEXT[field.stricter]} | ${rule ? rule.onFail : 'admissibility'} | ${rule ? rule.summary : field.description} |`;
  });
  return [
    '| Rule | Field | Default | Stricter is | On failure | Passes when |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

describe('the rule registry', () => {
  it('orders the threshold rules as contract §5 does', () => {
    expect(RULE_ORDER).toEqual(CONTRACT_ORDER);
    expect(THRESHOLD_RULES.map((r) => r.name)).toEqual(CONTRACT_ORDER);
  });

  it('blocks on the four evidence rules and escalates on approval and risk scope', () => {
    expect(Object.fromEntries(THRESHOLD_RULES.map((r) => [r.name, r.onFail]))).toEqual({
      min_sources: 'block',
      min_source_types: 'block',
      min_confidence: 'block',
      require_provenance: 'block',
      require_human_approval: 'escalate',
      max_risk_scope: 'escalate',
    });
  });

  it('gives policyConfig exactly its seven fields, each optional, and the defaults', () => {
    expect(THRESHOLD_FIELDS).toEqual([
      'minSources',
      'minSourceTypes',
      'minConfidence',
      'requireProvenance',
      'requireReplay',
      'requireHumanApproval',
      'maxRiskScope',
    ]);
    expect(policyConfigSchema.parse({})).toEqual({});
    expect(policyConfigSchema.safeParse({ minSource: 1 }).success).toBe(false);
    expect(policyConfigSchema.safeParse({ minConfidence: 1.5 }).success).toBe(false);
    expect(DEFAULT_POLICY).toEqual(
      Object.fromEntries(THRESHOLD_FIELDS.map((f) => [f, POLICY_FIELDS[f].default])),
    );
  });

  it.each(THRESHOLD_FIELDS)('the tighten-only check follows the direction it gives %s', (name) => {
    const field = POLICY_FIELDS[name];
    const base = { ...DEFAULT_POLICY };
    const looser =
      field.stricter === 'on'
        ? false
        : field.stricter === 'higher'
          ? (base[name] as number) - 0.25
          : (base[name] as number) + 1;
    const policy = {
      name: 'p',
      config: field.stricter === 'on' ? { ...base, [name]: true } : base,
      overrides: 'tighten' as const,
    };
    expect(() => applyOverrides(policy, { [name]: looser })).toThrow(
      new RegExp(`^policyConfig\\.${name}: `),
    );
  });

  it('pins the config_hash of each built-in policy', () => {
    expect(
      Object.fromEntries(BUILTIN_POLICIES.map((p) => [p.name, hashCanonical(p.config)])),
    ).toEqual(BUILTIN_CONFIG_HASHES);
  });

  it('writes each built-in policy in ASCII, so its text hashes on the fast path', () => {
    // Every evaluation hashes the config's canonical text into the replay hash (contract §4);
    // one character beyond Latin-1 makes the whole text a two-byte string, slower to hash.
    for (const p of BUILTIN_POLICIES) {
      expect({ name: p.name, outside: canonicalize(p.config).match(/[^\x20-\x7e]/g) }).toEqual({
        name: p.name,
        outside: null,
      });
    }
  });

  it('docs/POLICIES.md lists the built-in config hashes', () => {
    for (const [name, hash] of Object.entries(BUILTIN_CONFIG_HASHES)) {
      expect(POLICIES_DOC).toContain(`| \`${name}\` | \`${hash}\` |`);
    }
  });

  it('docs/POLICIES.md holds the rule table the registry defines', () => {
    expect(POLICIES_DOC).toContain(ruleTable());
  });
});
