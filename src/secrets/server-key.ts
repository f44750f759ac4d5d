import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  type KeyObject,
} from 'node:crypto';
import { keyIdOf, pemFromRawPublicKey, rawPublicKeyFromSpki } from '@svc/verify';
import { createNativeStrictVerify } from '@svc/verify/node';
import type { ServerKey } from '../ports/signer.js';
import { heldKeyVerify } from './held-key-verify.js';
import { readOrCreateSecretFile } from './secret-files.js';

export const SIGNING_KEY_FILE = 'signing-key.pem';
/**
 * The key `svc signing-key rotate` made current, while the rotation completes: it replaces
 * signing-key.pem once the history records it. Found at start, it finishes the rotation.
 */
export const NEXT_SIGNING_KEY_FILE = 'signing-key.next.pem';

/** A ServerKey from a PKCS#8 PEM; `origin` names where it came from in the refusal. */
export const serverKeyFromPem = (pem: string, origin: string): ServerKey =>
  serverKeyFrom(parsePrivateKey(pem, origin));

/** A new Ed25519 private key, PKCS#8 PEM. */
export const generateSigningKeyPem = (): string =>
  generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();

/**
 * The server's Ed25519 identity: `pem` (PKCS#8) when configured, else the key in the data
 * directory, generated on first start so receipts stay verifiable across restarts.
 */
export function loadServerKey(options: { pem?: string; dataDir: string }): {
  key: ServerKey;
  source: 'environment' | 'generated' | 'file';
  path?: string;
} {
  if (options.pem)
    return {
      key: serverKeyFrom(parsePrivateKey(options.pem, 'SVC_SIGNING_KEY')),
      source: 'environment',
    };
  const file = readOrCreateSecretFile(options.dataDir, SIGNING_KEY_FILE, () =>
    generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  );
  return {
    key: serverKeyFrom(parsePrivateKey(file.contents, file.path)),
    source: file.created ? 'generated' : 'file',
    path: file.path,
  };
}

function parsePrivateKey(pem: string, origin: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch (error) {
    throw new Error(`${origin}: not a PKCS#8 PEM private key`, { cause: error });
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new Error(
      `${origin}: expected an Ed25519 key, found ${key.asymmetricKeyType ?? 'unknown'}`,
    );
  }
  return key;
}

/** A ServerKey over a node:crypto private key; the KeyObject is parsed once and cached. */
export function serverKeyFrom(privateKey: KeyObject): ServerKey {
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  const raw = rawPublicKeyFromSpki(new Uint8Array(spki));
  if (!raw) throw new Error('unexpected Ed25519 public key encoding');
  return {
    keyId: keyIdOf(raw),
    publicKeyRaw: raw,
    publicKeyPem: pemFromRawPublicKey(raw),
    sign: (message) => new Uint8Array(sign(null, message, privateKey)),
    // Receipts of the held key verify by re-signing (held-key-verify.ts), others in full.
    verify: heldKeyVerify(privateKey, raw, createNativeStrictVerify()),
  };
}
