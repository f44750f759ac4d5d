import {
  canonicalize,
  pemFromRawPublicKey,
  receiptHash,
  signedCoreOf,
  toBase64,
  utf8Bytes,
  type SigningKeyRecord,
} from '@svc/verify';
import { signTransition } from '../../src/core/key-history.js';
import type { ServerKey } from '../../src/ports/signer.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * The attack on a backwards walk of a key history: a key anyone can make (`forged`) is put
 * before the pinned key, with a transition "forged → pinned" that `forged` signs itself. The
 * forged key claims sequences 1 to `from - 1`; the pinned key starts at `from`.
 */
export function forgedPrefixHistory(
  served: { origin: string; keys: SigningKeyRecord[] },
  pinned: ServerKey,
  forged: ServerKey,
  from = 1_000_000,
): { origin: string; keys: SigningKeyRecord[] } {
  const genuine = served.keys.find((k) => k.key_id === pinned.keyId)!;
  const at = genuine.activated_at;
  return {
    origin: served.origin,
    keys: [
      {
        key_id: forged.keyId,
        public_key_pem: pemFromRawPublicKey(forged.publicKeyRaw),
        verifier_key: null,
        status: 'retired',
        first_sequence: 1,
        last_sequence: from - 1,
        activated_at: at,
        retired_at: at,
        revoked_from_sequence: null,
        revoked_at: null,
        transition: null,
        revocation: null,
      },
      {
        ...genuine,
        first_sequence: from,
        transition: signTransition(
          {
            type: 'svc-key-transition-v1',
            log: served.origin,
            previous_key_id: forged.keyId,
            new_key_id: pinned.keyId,
            new_public_key: toBase64(pinned.publicKeyRaw),
            first_sequence: from,
            issued_at: at,
          },
          (m) => forged.sign(m),
        ),
      },
    ],
  };
}

/** A v2 receipt re-signed by `key` (its attestation replaced, its hash recomputed). */
export function resignReceipt(receipt: Json, key: Pick<ServerKey, 'keyId' | 'sign'>): Json {
  const core = signedCoreOf(receipt)!;
  const attestations = [
    {
      signer: 'svc-server',
      algorithm: 'Ed25519',
      key_id: key.keyId,
      signature: toBase64(key.sign(utf8Bytes(canonicalize(core)))),
      timestamp: receipt.issued_at ?? receipt.attestations[0].timestamp,
    },
  ];
  const resigned = { ...receipt, attestations };
  return { ...resigned, chain: { ...receipt.chain, receipt_hash: receiptHash(resigned) } };
}
