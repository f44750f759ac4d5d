import {
  followServedHistory,
  isObject,
  isVerifyError,
  keyFromHistory,
  keyHistoryUrl,
  parsePublicKeyPem,
  parseStrictJson,
  type PublicKey,
  serverKeyUrl,
  type TrustedKey as HistoryKey,
} from '@svc/verify';
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

/** What the pin trusts: one key, or the keys of svc's history linked to it by signed transitions. */
export interface Trust {
  /** The key a receipt is verified against, and why that key may not have signed it. */
  keyFor(receipt: unknown): { key: TrustedKey; keyRefusal?: string };
  /** The raw keys a checkpoint of the log may be signed with. */
  checkpointKeys: Uint8Array[];
  /** Whether the keys were pinned rather than taken on trust. */
  pinned: boolean;
}

const single = (key: TrustedKey): Trust => ({
  keyFor: () => ({ key }),
  checkpointKeys: [key.key.raw],
  pinned: key.pinned,
});

/** A core refusal of something svc served becomes a failure naming where it came from. */
function served<T>(where: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (isVerifyError(error))
      throw new ActionFailure(`${where}: ${error.message}. The receipt is not trusted.`);
    throw error;
  }
}

/**
 * The keys the pinned key-fingerprint trusts through svc's signing-key history, the pinned
 * one among them; null when svc publishes no history (an svc from before it answers 404, one
 * that recorded no key yet an empty list): then the single server key holds. The history is
 * attacker-controlled: a chain that does not link every key to the pin by a statement the key
 * before it signed is refused, failing the step.
 */
async function historyOf(apiUrl: string, pin: string, http: HttpDeps): Promise<Trust | null> {
  const url = keyHistoryUrl(apiUrl);
  const res = await callSvc(url, { method: 'GET' }, http);
  if (res.status === 404) return null;
  if (res.status !== 200) throw new ActionFailure(describeFailure(res, 'the key history request'));
  const body = served(`the key history served at ${url}`, () => parseStrictJson(res.text));
  const listed = isObject(body) && Array.isArray(body.keys) ? body.keys.filter(isObject) : [];
  const current = listed.at(-1)?.key_id;
  if (typeof current === 'string' && !listed.some((k) => k.key_id === pin))
    throw new ActionFailure(
      `pinned key mismatch: ${url} serves a key with fingerprint ${current}, not the pinned key-fingerprint ${pin}, and no key of its history is the pinned one. The receipt is not trusted.`,
    );
  const chain = served(`the key history served at ${url}`, () => followServedHistory(body, pin));
  if (!chain) return null;
  const at = chain.findIndex((k) => k.keyId === pin);
  const originOf = (key: HistoryKey): string => {
    const i = chain.indexOf(key);
    if (i === at) return `${url} (matches key-fingerprint)`;
    const n = Math.abs(i - at);
    return `${url} (${i > at ? 'a later' : 'an earlier'} key, linked to key-fingerprint by ${n} signed key transition${n > 1 ? 's' : ''})`;
  };
  return {
    keyFor(receipt) {
      const { key, keyRefusal } = keyFromHistory(receipt, chain);
      const record = chain.find((k) => k.keyId === key.keyId)!;
      return { key: { key, pinned: true, origin: originOf(record) }, keyRefusal };
    },
    // Any key of the chain may have signed the newest checkpoint (one made before a rotation
    // stays the newest until the log grows); a revoked key vouches for nothing.
    checkpointKeys: chain.filter((k) => k.record.status !== 'revoked').map((k) => k.raw),
    pinned: true,
  };
}

/**
 * The keys receipts and checkpoints are verified against. A pinned PEM is used as given. A
 * pinned key-fingerprint is looked up in svc's key history (`GET /v1/keys`) and reaches the
 * keys linked to it by signed transitions; without a history, the key svc serves must have
 * that fingerprint. Without a pin the served key is taken — attacker-influenced if the network
 * or the service is — with a warning.
 */
export async function trustedKeys(
  inputs: ActionInputs,
  http: HttpDeps,
  warn: (message: string) => void,
): Promise<Trust> {
  const pin = inputs.keyFingerprint;
  if (inputs.publicKey) {
    if (pin && inputs.publicKey.keyId !== pin)
      throw new ActionFailure(
        `pinned key mismatch: input public-key has fingerprint ${inputs.publicKey.keyId}, not key-fingerprint ${pin}`,
      );
    return single({ key: inputs.publicKey, pinned: true, origin: 'input public-key' });
  }
  if (pin) {
    const history = await historyOf(inputs.apiUrl!, pin, http);
    if (history) return history;
  }
  const url = serverKeyUrl(inputs.apiUrl!);
  const res = await callSvc(url, { method: 'GET' }, http);
  if (res.status !== 200) throw new ActionFailure(describeFailure(res, 'the key request'));
  let key: PublicKey;
  try {
    key = parsePublicKeyPem(res.text);
  } catch (error) {
    if (isVerifyError(error)) throw new ActionFailure(`the key served at ${url}: ${error.message}`);
    throw error;
  }
  if (pin) {
    if (key.keyId !== pin)
      throw new ActionFailure(
        `pinned key mismatch: ${url} serves a key with fingerprint ${key.keyId}, not the pinned key-fingerprint ${pin}. The receipt is not trusted.`,
      );
    return single({ key, pinned: true, origin: `${url} (matches key-fingerprint)` });
  }
  warn(
    `The receipt was verified against the key ${url} serves, which was not pinned: whoever controls that address controls the result. Pin it with key-fingerprint: ${key.keyId} (after checking that fingerprint through a channel you trust).`,
  );
  return single({ key, pinned: false, origin: `${url} (not pinned)` });
}
