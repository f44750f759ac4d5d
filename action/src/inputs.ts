import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import {
  isObject,
  isVerifyError,
  parseExpectations,
  parseFingerprint,
  parsePublicKeyPem,
  parseStrictJson,
  type PublicKey,
  type VerifyExpectations,
} from '@svc/verify';
import { ActionFailure } from './failure.js';

export const MODES = ['evaluate', 'simulate', 'verify'] as const;
export type Mode = (typeof MODES)[number];
export const FAIL_ON = ['not-allowed', 'blocked', 'never'] as const;
export type FailOn = (typeof FAIL_ON)[number];

/** Every input of action.yml, read and checked once. */
export interface ActionInputs {
  apiUrl: string | null;
  apiKey: string | null;
  mode: Mode;
  /** The claim from `claim` or `claim-file`; null to build one from the workflow context. */
  claim: Record<string, unknown> | null;
  /** Absolute path of `receipt-file` (verify mode). */
  receiptFile: string | null;
  policy: string | null;
  policyConfig: Record<string, unknown> | null;
  /** `expected-policy` and `expected-config-hash`. */
  expect: VerifyExpectations;
  publicKey: PublicKey | null;
  keyFingerprint: string | null;
  failOn: FailOn;
  /** Absolute path of `disposition-file`: the human decision on an ESCALATED receipt. */
  dispositionFile?: string | null;
  /** `fetch-disposition`: ask api-url for the disposition of an ESCALATED receipt. */
  fetchDisposition?: boolean;
  /**
   * `disposition-recorder` (its signed submitter) and `disposition-reviewer` (its signed
   * reviewer.id): what the disposition must sign, besides `expect`.
   */
  dispositionExpect?: VerifyExpectations;
  /** `attestation`: fetch the receipt as an in-toto attestation and write it beside it. */
  attestation?: boolean;
  /** Absolute path of `witness-state`: witness svc's log and keep its checkpoint there. */
  witnessState: string | null;
  /** Absolute path of `witness-policy`: the C2SP tlog-policy whose quorum must cosign. */
  witnessPolicy?: string | null;
  /** Where relative paths resolve and the receipt is written: GITHUB_WORKSPACE. */
  workspace: string;
}

/** A core refusal becomes a failure naming the input. */
function checked<T>(input: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (isVerifyError(error)) throw new ActionFailure(`input ${input}: ${error.message}`);
    throw error;
  }
}

function jsonObject(input: string, text: string): Record<string, unknown> {
  const value = checked(input, () => parseStrictJson(text));
  if (!isObject(value)) throw new ActionFailure(`input ${input}: expected a JSON object`);
  return value;
}

function oneOf<T extends string>(input: string, value: string, allowed: readonly T[]): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new ActionFailure(`input ${input} must be one of ${allowed.join(', ')}; got "${value}"`);
}

/**
 * Reads the inputs through `get` (core.getInput: trimmed, "" when unset) and checks them, so a
 * mistake stops the step before anything is sent. `mask` is called on the API key first.
 */
export function readInputs(
  get: (name: string) => string,
  mask: (secret: string) => void,
  env: NodeJS.ProcessEnv,
): ActionInputs {
  const apiKey = get('api-key') || null;
  if (apiKey) mask(apiKey);
  const workspace = env.GITHUB_WORKSPACE || process.cwd();
  const inWorkspace = (path: string) => (isAbsolute(path) ? path : resolve(workspace, path));
  const readText = (input: string, path: string) => {
    try {
      return readFileSync(inWorkspace(path), 'utf8');
    } catch (error) {
      throw new ActionFailure(`input ${input}: cannot read ${path}: ${(error as Error).message}`);
    }
  };

  const mode = oneOf('mode', get('mode') || 'evaluate', MODES);
  const failOn = oneOf('fail-on', get('fail-on') || 'not-allowed', FAIL_ON);
  const apiUrl = get('api-url').replace(/\/+$/, '') || null;
  if (apiUrl && !/^https?:\/\/[^/]/.test(apiUrl))
    throw new ActionFailure(`input api-url must be an http(s) URL; got "${apiUrl}"`);

  if (get('claim') && get('claim-file'))
    throw new ActionFailure('give input claim or claim-file, not both');
  const claimText =
    get('claim') || (get('claim-file') && readText('claim-file', get('claim-file')));
  const claim = claimText ? jsonObject(get('claim') ? 'claim' : 'claim-file', claimText) : null;
  const policyConfigText = get('policy-config');

  const pem = get('public-key');
  const fingerprint = get('key-fingerprint');
  const inputs: ActionInputs = {
    apiUrl,
    apiKey,
    mode,
    claim,
    receiptFile: get('receipt-file') ? inWorkspace(get('receipt-file')) : null,
    policy: get('policy') || null,
    policyConfig: policyConfigText ? jsonObject('policy-config', policyConfigText) : null,
    expect: checked('expected-policy / expected-config-hash', () =>
      parseExpectations({
        policy: get('expected-policy'),
        configHash: get('expected-config-hash'),
      }),
    ),
    publicKey: pem ? checked('public-key', () => parsePublicKeyPem(pem)) : null,
    keyFingerprint: fingerprint
      ? checked('key-fingerprint', () => parseFingerprint(fingerprint))
      : null,
    failOn,
    dispositionFile: get('disposition-file') ? inWorkspace(get('disposition-file')) : null,
    fetchDisposition:
      oneOf('fetch-disposition', get('fetch-disposition') || 'false', ['true', 'false']) === 'true',
    dispositionExpect: checked('disposition-recorder / disposition-reviewer', () =>
      parseExpectations({
        submitter: get('disposition-recorder'),
        reviewer: get('disposition-reviewer'),
      }),
    ),
    witnessState: get('witness-state') ? inWorkspace(get('witness-state')) : null,
    attestation: oneOf('attestation', get('attestation') || 'false', ['true', 'false']) === 'true',
    witnessPolicy: get('witness-policy') ? inWorkspace(get('witness-policy')) : null,
    workspace,
  };

  if (mode === 'verify') {
    if (!inputs.receiptFile) throw new ActionFailure('mode verify needs input receipt-file');
    if (claim || inputs.policy || inputs.policyConfig)
      throw new ActionFailure(
        'mode verify sends nothing: claim, policy and policy-config do not apply',
      );
  } else {
    if (!apiUrl) throw new ActionFailure(`mode ${mode} needs input api-url`);
    if (!apiKey) throw new ActionFailure(`mode ${mode} needs input api-key`);
    if (inputs.receiptFile)
      throw new ActionFailure(`input receipt-file applies to mode verify only`);
  }
  if (
    Object.keys(inputs.dispositionExpect ?? {}).length > 0 &&
    !inputs.dispositionFile &&
    !inputs.fetchDisposition
  )
    throw new ActionFailure(
      'inputs disposition-recorder and disposition-reviewer need disposition-file or fetch-disposition',
    );
  if (inputs.dispositionFile && inputs.fetchDisposition)
    throw new ActionFailure('give input disposition-file or fetch-disposition, not both');
  if (inputs.fetchDisposition && !apiUrl)
    throw new ActionFailure('input fetch-disposition needs api-url: the service to ask');
  if (mode === 'simulate' && (inputs.dispositionFile || inputs.fetchDisposition))
    throw new ActionFailure('mode simulate issues no receipt: a disposition does not apply');
  if (inputs.attestation && (mode === 'simulate' || !apiUrl))
    throw new ActionFailure(
      'input attestation needs api-url and a receipt (mode evaluate or verify)',
    );
  // Verifying needs a key: the pinned PEM, or one fetched from api-url.
  if (mode !== 'simulate' && !inputs.publicKey && !apiUrl)
    throw new ActionFailure(
      'no key to verify with: give public-key, or api-url to fetch the key (pinned with key-fingerprint)',
    );
  // A witness trusts a checkpoint only under a key pinned out of band: a key fetched from the
  // log it watches would let that log sign any history.
  if (inputs.witnessPolicy && !inputs.witnessState)
    throw new ActionFailure(
      'input witness-policy needs witness-state: the policy judges the witnessed checkpoint',
    );
  if (inputs.witnessState) {
    if (!apiUrl) throw new ActionFailure('input witness-state needs api-url: the log to witness');
    if (!inputs.publicKey && !inputs.keyFingerprint)
      throw new ActionFailure(
        'input witness-state needs a pinned key: key-fingerprint or public-key',
      );
  }
  return inputs;
}
