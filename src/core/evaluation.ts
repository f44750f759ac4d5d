import { canonicalize, hashCanonical, sha256Prefixed } from './canonical.js';
import { utf8Bytes } from './encoding.js';
import type { ClaimInput } from './claim-schema.js';
import { evaluatePolicy, type PolicyOutcome, type Verdict } from './policy.js';
import type { PolicyConfig } from './policy-config.js';

export type AdmissibilityStatus = 'ACCEPTED' | 'NON_DETERMINISTIC' | 'REJECTED';

export interface ReplayOutcome {
  passed: boolean;
  deterministic: boolean;
  replay_hash: string;
}

export interface Evaluation {
  inputs_hash: string;
  config: PolicyConfig;
  policy: PolicyOutcome;
  replay: ReplayOutcome;
  admissibility: { status: AdmissibilityStatus; reason: string };
}

/** `replay_hash` of the receipt contract (§4). */
export function replayHash(
  inputsHash: string,
  config: PolicyConfig,
  outcome: PolicyOutcome,
): string {
  return hashCanonical({
    inputs_hash: inputsHash,
    policy: config,
    verdict: outcome.verdict,
    rules: outcome.rules,
  });
}

/**
 * Evaluates a validated claim under an effective policy and checks that a second, fresh
 * evaluation from the claim's canonical bytes reproduces it (contract §5).
 */
export function evaluateClaim(claim: ClaimInput, config: PolicyConfig): Evaluation {
  // One canonical form serves both the evidence commitment and the replay, which starts
  // from exactly these bytes.
  const canonicalClaim = canonicalize(claim);
  const inputsHash = sha256Prefixed(utf8Bytes(canonicalClaim));
  const first = evaluatePolicy(claim, config);
  const firstHash = replayHash(inputsHash, config, first);

  const replayedClaim = JSON.parse(canonicalClaim) as ClaimInput;
  const replayedConfig = JSON.parse(canonicalize(config)) as PolicyConfig;
  const second = evaluatePolicy(replayedClaim, replayedConfig);
  const deterministic = replayHash(inputsHash, replayedConfig, second) === firstHash;

  const expected = claim.expected_replay_match;
  const passed = expected === undefined ? deterministic : deterministic === expected;
  const replay = { passed, deterministic, replay_hash: firstHash };
  return {
    inputs_hash: inputsHash,
    config,
    policy: first,
    replay,
    admissibility: admissibilityOf(first.verdict, replay, config, expected),
  };
}

function admissibilityOf(
  verdict: Verdict,
  replay: { passed: boolean; deterministic: boolean },
  config: PolicyConfig,
  expected: boolean | undefined,
): Evaluation['admissibility'] {
  if (!replay.passed && config.requireReplay) {
    const reason =
      expected !== undefined && replay.deterministic
        ? `replay was deterministic, but the claim expected expected_replay_match=${expected}`
        : 'replay did not reproduce the evaluation';
    return { status: 'NON_DETERMINISTIC', reason };
  }
  const replayNote = config.requireReplay ? 'replay passed' : 'replay not required';
  if (verdict === 'ALLOWED')
    return { status: 'ACCEPTED', reason: `verdict ALLOWED; ${replayNote}` };
  if (verdict === 'ESCALATED') {
    return {
      status: 'REJECTED',
      reason: 'verdict ESCALATED: not admissible until a human decides',
    };
  }
  return { status: 'REJECTED', reason: 'verdict BLOCKED: a policy rule failed' };
}
