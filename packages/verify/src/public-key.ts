import * as ed from '@noble/ed25519';
import { keyIdOf } from './ed25519.js';
import { VerifyError } from './errors.js';
import { fromBase64 } from './encoding.js';

/** An Ed25519 public key that strict verification can use, with its fingerprint. */
export interface PublicKey {
  /** The raw 32-byte key. */
  raw: Uint8Array;
  /** `sha256:<hex>` over the DER SubjectPublicKeyInfo: the form of `attestations[].key_id`. */
  keyId: string;
}

// SEQUENCE { SEQUENCE { OID 1.3.101.112 } BIT STRING } of RFC 8410, read field by field so a
// refusal can say what is wrong instead of "not a key".
const ED25519_ALGORITHM = [0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70];
const PEM_BLOCK = /-----BEGIN PUBLIC KEY-----([A-Za-z0-9+/=\s]*)-----END PUBLIC KEY-----/;
const FINGERPRINT = /^sha256:[0-9a-fA-F]{64}$/;

const refuse = (reason: string): never => {
  throw new VerifyError('validation_failed', `public key refused: ${reason}`);
};

/**
 * Reads an SPKI PEM holding an Ed25519 key and refuses, with the reason, anything strict
 * verification must not trust: another algorithm, a key that is not 32 bytes, bytes that are
 * no curve point, a non-canonical encoding, or a point of small order (under which forged
 * signatures verify). The PEM is attacker-controlled when it was fetched.
 */
export function parsePublicKeyPem(pem: string): PublicKey {
  const body = PEM_BLOCK.exec(pem)?.[1];
  if (body === undefined) return refuse('not a PEM "PUBLIC KEY" block');
  const der = fromBase64(body.replace(/\s+/g, ''));
  if (!der) return refuse('the PEM body is not valid base64');
  return publicKeyFromSpki(der);
}

/** The key of a DER SubjectPublicKeyInfo, refused as `parsePublicKeyPem` describes. */
export function publicKeyFromSpki(der: Uint8Array): PublicKey {
  if (der[0] !== 0x30 || der[1] !== der.length - 2 || der.length > 0x7f + 2)
    return refuse('not a DER SubjectPublicKeyInfo');
  if (ED25519_ALGORITHM.some((byte, i) => der[2 + i] !== byte))
    return refuse('not an Ed25519 key (algorithm is not OID 1.3.101.112)');
  const bitString = 2 + ED25519_ALGORITHM.length;
  if (der[bitString] !== 0x03 || der[bitString + 2] !== 0x00 || der[bitString + 1] === undefined)
    return refuse('malformed subjectPublicKey BIT STRING');
  const raw = der.slice(bitString + 3);
  if (der[bitString + 1] !== raw.length + 1) return refuse('malformed subjectPublicKey length');
  return publicKeyFromRaw(raw);
}

/** A raw 32-byte key, refused as `parsePublicKeyPem` describes. */
export function publicKeyFromRaw(raw: Uint8Array): PublicKey {
  const problem = publicKeyProblem(raw);
  if (problem) refuse(problem);
  return { raw, keyId: keyIdOf(raw) };
}

/** Why a raw key is unusable for strict verification, or null when it is usable. */
export function publicKeyProblem(raw: Uint8Array): string | null {
  if (raw.length !== 32) return `wrong length: ${raw.length} bytes, an Ed25519 key has 32`;
  let point: ed.Point;
  try {
    point = ed.Point.fromBytes(raw, false);
  } catch {
    // Lenient (ZIP 215) decoding accepts y >= p and x = 0 with the sign bit set: those are
    // points, but encoded non-canonically, which strict RFC 8032 refuses.
    try {
      ed.Point.fromBytes(raw, true);
      return 'non-canonical point encoding';
    } catch {
      return 'not a point on the Ed25519 curve';
    }
  }
  return point.isSmallOrder() ? 'a point of small order (signatures under it can be forged)' : null;
}

/** A pinned fingerprint in its canonical lowercase form; throws on anything else. */
export function parseFingerprint(text: string): string {
  const trimmed = text.trim();
  if (!FINGERPRINT.test(trimmed))
    throw new VerifyError(
      'validation_failed',
      `fingerprint must be "sha256:" followed by 64 hex digits, got ${JSON.stringify(text)}`,
    );
  return trimmed.toLowerCase();
}

/**
 * The URL of the server key: `url` itself when it already names `/v1/keys/server`, else that
 * path under the svc base URL it is. Throws on a URL that is not http(s).
 */
export function serverKeyUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new VerifyError('validation_failed', `not a URL: ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new VerifyError('validation_failed', `key URL must be http(s), got ${parsed.protocol}`);
  if (/\/v1\/keys\/server\/?$/.test(parsed.pathname)) return parsed.href;
  parsed.pathname = `${parsed.pathname.replace(/\/+$/, '')}/v1/keys/server`;
  parsed.search = '';
  parsed.hash = '';
  return parsed.href;
}
