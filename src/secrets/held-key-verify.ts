import { sign, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { Ed25519Verify } from '@svc/verify';

/**
 * Strict Ed25519 verification that first re-signs when the key is the one whose private half
 * the service holds: on a Xeon, node:crypto signs in about a third of the time it verifies
 * (45 against 138 µs), and nearly every receipt presented to `POST /v1/verify` was signed by
 * the service's current key.
 *
 * Why a byte-identical signature is a valid one: Ed25519 signing is deterministic (RFC 8032
 * §5.1.6: r = SHA-512(prefix ‖ M), R = rB, S = (r + SHA-512(R ‖ A ‖ M)·s) mod L), so for the
 * key pair (s, A) and the message M there is exactly one signature the signer makes, and it
 * satisfies every rule of strict verification: S is reduced mod L, R is the canonical
 * encoding of a point, A = sB is in the prime-order subgroup (never small order), and the
 * group equation holds by construction. Bytes equal to it (compared in constant time) are
 * that signature. The check is sound only because `publicKeyRaw` is derived from
 * `privateKey` (serverKeyFrom), and the signer is checked once against `strict` here.
 *
 * Anything else — another key, another message, a non-canonical S (S + L), or a valid
 * signature that another signer made with a random nonce — is not equal, and goes to the full
 * strict verification: the fast path only ever answers "valid", never "invalid". The
 * signature made here is compared and dropped, never returned or logged, and compared in
 * constant time: a comparison that stopped at the first differing byte would let a client
 * time its way to the server's signature of any message it chose, byte by byte. A presented
 * signature that does not match costs one signature more than before (about 45 µs).
 */
export function heldKeyVerify(
  privateKey: KeyObject,
  publicKeyRaw: Uint8Array,
  strict: Ed25519Verify,
): Ed25519Verify {
  const own = Buffer.from(publicKeyRaw);
  const probe = Buffer.from('svc held-key verify self-check');
  if (!strict(new Uint8Array(sign(null, probe, privateKey)), probe, own)) {
    throw new Error('the signing key does not verify its own signature under its public key');
  }
  return (signature, message, publicKey) => {
    if (signature.length === 64 && own.equals(publicKey)) {
      if (timingSafeEqual(sign(null, message, privateKey), signature)) return true;
    }
    return strict(signature, message, publicKey);
  };
}
