import { canonicalize, hashText, portableSha256Hex, type Sha256Hex } from '@svc/verify';
import type { ClaimInput } from './claim-schema.js';
import { deepFrozen } from './deep-frozen.js';
import { evaluatePolicy, type PolicyOutcome, type RuleResult, type Verdict } from './policy.js';
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
  /** H(config): what a receipt-core-v2 signs as `policy.config_hash`. */
  config_hash: string;
  policy: PolicyOutcome;
  replay: ReplayOutcome;
  admissibility: { status: AdmissibilityStatus; reason: string };
}

/** `replay_hash` of the receipt contract (§4). */
export function replayHash(
  inputsHash: string,
  config: PolicyConfig,
  outcome: PolicyOutcome,
  sha256Hex: Sha256Hex = portableSha256Hex,
): string {
  return replayHashOfText(inputsHash, canonicalize(config), outcome, sha256Hex);
}

// JCS of { inputs_hash, policy, rules, verdict } is its members' canonical texts under keys in
// that (sorted) order, so the config's canonical text, computed once per config, is spliced in
// rather than recomputed, and so is the outcome's rules text once made.
const replayHashOfText = (
  inputsHash: string,
  configText: string,
  outcome: PolicyOutcome,
  sha256Hex: Sha256Hex,
  rulesText = canonicalize(outcome.rules),
): string =>
  hashText(
    `{"inputs_hash":${canonicalize(inputsHash)},"policy":${configText},` +
      `"rules":${rulesText},"verdict":${canonicalize(outcome.verdict)}}`,
    sha256Hex,
  );

// The canonical text and hash of a config, and the config parsed back from that text (what
// the replay evaluates under), kept per config object: a policy applied as it is gives every
// claim under it the same object (core/effective-policy.ts), and its text (the agent policy's
// runs to kilobytes) is the same each time, so parsing it again would give the same value.
// Configs are never mutated (the parsed one is frozen); a hash is the same whichever SHA-256
// implementation made it.
const configTexts = new WeakMap<
  PolicyConfig,
  { text: string; hash: string; replayed: PolicyConfig }
>();
function canonicalConfig(config: PolicyConfig, sha256Hex: Sha256Hex) {
  let found = configTexts.get(config);
  if (!found) {
    const text = canonicalize(config);
    const replayed = deepFrozen(JSON.parse(text) as PolicyConfig);
    found = { text, hash: hashText(text, sha256Hex), replayed };
    configTexts.set(config, found);
  }
  return found;
}

/**
 * Whether two lists of rule results are equal member by member, each result exactly
 * `{ rule, passed, reason }`: then their canonical texts are equal, without making the second.
 * False says nothing (a result of another shape is left to the texts).
 */
const sameResults = (a: readonly RuleResult[], b: readonly RuleResult[]): boolean =>
  a.length === b.length &&
  a.every((x, i) => {
    const y = b[i]!;
    return (
      typeof x.rule === 'string' &&
      typeof x.passed === 'boolean' &&
      typeof x.reason === 'string' &&
      x.rule === y.rule &&
      x.passed === y.passed &&
      x.reason === y.reason &&
      Object.keys(x).length === 3 &&
      Object.keys(y).length === 3
    );
  });

/**
 * Evaluates a validated claim under an effective policy and checks that a second, fresh
 * evaluation from the claim's canonical bytes reproduces it (contract §5). Each of the claim
 * and the config is canonicalized once; `sha256Hex` defaults to the portable implementation.
 */
export function evaluateClaim(
  claim: ClaimInput,
  config: PolicyConfig,
  sha256Hex: Sha256Hex = portableSha256Hex,
): Evaluation {
  // One canonical form serves both the evidence commitment and the replay, which starts
  // from exactly these bytes.
  const canonicalClaim = canonicalize(claim);
  const inputsHash = hashText(canonicalClaim, sha256Hex);
  const {
    text: configText,
    hash: configHash,
    replayed: replayedConfig,
  } = canonicalConfig(config, sha256Hex);
  const first = evaluatePolicy(claim, config);
  const firstRules = canonicalize(first.rules);
  const firstHash = replayHashOfText(inputsHash, configText, first, sha256Hex, firstRules);

  const replayedClaim = JSON.parse(canonicalClaim) as ClaimInput;
  const second = evaluatePolicy(replayedClaim, replayedConfig);
  // replayedConfig is parsed from configText, and JCS of a value parsed from canonical text is
  // that text again: the replay's hash would differ from the first only where its rules'
  // canonical text or its verdict do, so those are compared rather than hashed again.
  const deterministic =
    second.verdict === first.verdict &&
    (sameResults(first.rules, second.rules) || canonicalize(second.rules) === firstRules);

  const expected = claim.expected_replay_match;
  const passed = expected === undefined ? deterministic : deterministic === expected;
  const replay = { passed, deterministic, replay_hash: firstHash };
  return {
    inputs_hash: inputsHash,
    config,
    config_hash: configHash,
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
