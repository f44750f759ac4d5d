import { isSvcError } from '../../src/core/errors.js';
import { parsePublicKeyPem, serverKeyUrl, type PublicKey } from '../../src/core/public-key.js';
import { ActionFailure } from './failure.js';
import { callSvc, describeFailure, type HttpDeps } from './http.js';
import type { ActionInputs } from './inputs.js';

export interface TrustedKey {
  key: PublicKey;
  /** Whether the key was pinned (public-key or key-fingerprint) rather than taken on trust. */
  pinned: boolean;
  /** Where it came from, for the log and the summary. */
  origin: string;
}

/**
 * The key the receipt is verified against. A pinned PEM is used as given; otherwise the key
 * is fetched from svc — attacker-influenced if the network or the service is — and accepted
 * only when it matches key-fingerprint, or with a warning when nothing was pinned.
 */
export async function trustedKey(
  inputs: ActionInputs,
  http: HttpDeps,
  warn: (message: string) => void,
): Promise<TrustedKey> {
  const pin = inputs.keyFingerprint;
  if (inputs.publicKey) {
    if (pin && inputs.publicKey.keyId !== pin)
      throw new ActionFailure(
        `pinned key mismatch: input public-key has fingerprint ${inputs.publicKey.keyId}, not key-fingerprint ${pin}`,
      );
    return { key: inputs.publicKey, pinned: true, origin: 'input public-key' };
  }
  const url = serverKeyUrl(inputs.apiUrl!);
  const res = await callSvc(url, { method: 'GET' }, http);
  if (res.status !== 200) throw new ActionFailure(describeFailure(res, 'the key request'));
  let key: PublicKey;
  try {
    key = parsePublicKeyPem(res.text);
  } catch (error) {
    if (isSvcError(error)) throw new ActionFailure(`the key served at ${url}: ${error.message}`);
    throw error;
  }
  if (pin) {
    if (key.keyId !== pin)
      throw new ActionFailure(
        `pinned key mismatch: ${url} serves a key with fingerprint ${key.keyId}, not the pinned key-fingerprint ${pin}. The receipt is not trusted.`,
      );
    return { key, pinned: true, origin: `${url} (matches key-fingerprint)` };
  }
  warn(
    `The receipt was verified against the key ${url} serves, which was not pinned: whoever controls that address controls the result. Pin it with key-fingerprint: ${key.keyId} (after checking that fingerprint through a channel you trust).`,
  );
  return { key, pinned: false, origin: `${url} (not pinned)` };
}
