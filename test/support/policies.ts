import { builtinPolicy } from '../../src/core/policies.js';
import type { PolicyConfig } from '../../src/core/policy-config.js';

// The configs of the built-in policies, read from their one source (src/core/policies.ts) so
// a changed default is changed for every test at once. test/unit/core/rule-registry.test.ts
// pins their config_hash values independently; that pin is what catches an unintended change.

const configOf = (name: string): Readonly<PolicyConfig> => {
  const policy = builtinPolicy(name);
  if (!policy) throw new Error(`no built-in policy ${name}`);
  return Object.freeze({ ...policy.config });
};

export const DEFAULT_CONFIG = configOf('default');
export const STRICT_CONFIG = configOf('strict');
export const PERMISSIVE_CONFIG = configOf('permissive');
export const AGENT_CONFIG = configOf('agent');
