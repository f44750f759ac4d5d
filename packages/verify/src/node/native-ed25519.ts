import { createPublicKey, verify as nodeVerify, type KeyObject } from 'node:crypto';
import {
  hasCanonicalScalar,
  isStrictPublicKey,
  spkiFromRawPublicKey,
  verifyEd25519Strict,
} from '../ed25519.js';
import { toHex } from '../encoding.js';
import type { Ed25519Verify } from '../ed25519.js';

/**
 * node:crypto's Ed25519 verification (OpenSSL, cofactorless) made to give exactly the results
 * of the portable strict verifier (contract §3):
 * - keys that strict verification refuses (non-canonical, small order) are refused first;
 * - S >= L is refused first;
 * - a native acceptance then implies a strict one; a native rejection is confirmed by the
 *   portable verifier, whose cofactored equation accepts a few crafted signatures that the
 *   cofactorless one does not. Only invalid signatures pay that cost.
 */
export function createNativeStrictVerify(cacheSize = 64): Ed25519Verify {
  const keys = new Map<string, KeyObject | null>();
  const keyObjectOf = (publicKey: Uint8Array): KeyObject | null => {
    const id = toHex(publicKey);
    let key = keys.get(id);
    if (key === undefined) {
      key = isStrictPublicKey(publicKey)
        ? createPublicKey({
            key: Buffer.from(spkiFromRawPublicKey(publicKey)),
            format: 'der',
            type: 'spki',
          })
        : null;
      if (keys.size >= cacheSize) keys.delete(keys.keys().next().value!);
      keys.set(id, key);
    }
    return key;
  };
  return (signature, message, publicKey) => {
    if (signature.length !== 64 || publicKey.length !== 32 || !hasCanonicalScalar(signature))
      return false;
    const key = keyObjectOf(publicKey);
    if (!key) return false;
    if (nodeVerify(null, message, key, signature)) return true;
    return verifyEd25519Strict(signature, message, publicKey);
  };
}
