import { claimInputSchema, type ClaimInput, type Source } from '../../../src/core/claim-schema.js';
import { validClaim } from '../../support/harness.js';

/**
 * A claim as the API would hand it to the core: the harness's valid claim with `overrides`,
 * through JSON (so an override of undefined removes the member, as it would on the wire) and
 * through the schema, so every test input is one the service could really receive.
 */
export function claimWith(overrides: Record<string, unknown> = {}): ClaimInput {
  return claimInputSchema.parse(JSON.parse(JSON.stringify(validClaim(overrides))));
}

let sourceCount = 0;

export function source(
  type: Source['type'],
  confidence = 0.9,
  extra: Partial<Omit<Source, 'type' | 'confidence'>> = {},
): Source {
  sourceCount += 1;
  return {
    id: `${type}-${sourceCount}`,
    type,
    uri: `https://evidence.example/${type}/${sourceCount}`,
    confidence,
    content: `${type} evidence`,
    ...extra,
  };
}

export const provenance = { captured_at: '2026-01-15T10:00:00Z', collector: 'ci-bot' };

export const baseAction = { action_type: 'merge', target_system: 'github' } as const;
