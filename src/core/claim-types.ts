// Closed sets and bounds of the claim that policy rules name too. They live apart from the
// claim schema, which is built from the policy schema, so that the policy schema can use them.

export const ACTION_TYPES = [
  'code_change',
  'infra_change',
  'access_change',
  'deployment',
  'merge',
  'policy_exception',
  'agent_execution',
] as const;

// The source types are part of the receipt contract the verifier package holds.
export { SOURCE_TYPES } from '@svc/verify';

/** Bounds of the changed paths conditional rules read (contract §10); docs/API.md lists them. */
export const MAX_CHANGED_PATHS = 3000;
export const MAX_PATH_CHARS = 1024;
