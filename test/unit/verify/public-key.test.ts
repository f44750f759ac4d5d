import { describe, expect, it } from '@jest/globals';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { parseFingerprint, parsePublicKeyPem, publicKeyFromRaw, serverKeyUrl } from '@svc/verify';
import { loadFixture, unhex } from '../core/reference.js';

const SPKI_PREFIX = '302a300506032b6570032100';
const pemOf = (der: Buffer) =>
  `-----BEGIN PUBLIC KEY-----\n${der.toString('base64')}\n-----END PUBLIC KEY-----\n`;
const pemOfRaw = (rawHex: string) => pemOf(Buffer.from(SPKI_PREFIX + rawHex, 'hex'));

interface EdgeVector {
  name: string;
  rule: string;
  public_key: string;
}
const edges = loadFixture<{ edge_cases: EdgeVector[] }>('ed25519-vectors.json').edge_cases;
const smallOrder = edges.filter((v) => v.rule === 'small-order public key');
const nonCanonical = edges.filter((v) => v.rule === 'non-canonical public key encoding');

describe('parsePublicKeyPem', () => {
  it('reads a node:crypto Ed25519 SPKI PEM and fingerprints it as attestations[].key_id', () => {
    const { publicKey } = generateKeyPairSync('ed25519');
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const der = publicKey.export({ type: 'spki', format: 'der' });
    const key = parsePublicKeyPem(pem);
    expect(Buffer.from(key.raw).toString('hex')).toBe(der.subarray(12).toString('hex'));
    expect(key.keyId).toBe(`sha256:${createHash('sha256').update(der).digest('hex')}`);
  });

  it('accepts CRLF line ends and text around the PEM block', () => {
    const { publicKey } = generateKeyPairSync('ed25519');
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(parsePublicKeyPem(`key:\r\n${pem.replace(/\n/g, '\r\n')}`).raw).toHaveLength(32);
  });

  it('refuses a key of another algorithm', () => {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(() => parsePublicKeyPem(pem)).toThrow(/not an Ed25519 key|not a DER/);
    const x25519 = generateKeyPairSync('x25519').publicKey.export({ type: 'spki', format: 'pem' });
    expect(() => parsePublicKeyPem(x25519.toString())).toThrow(/not an Ed25519 key/);
  });

  it('refuses text that is not a PEM public key', () => {
    expect(() => parsePublicKeyPem('hello')).toThrow(/not a PEM "PUBLIC KEY" block/);
    expect(() =>
      parsePublicKeyPem('-----BEGIN PUBLIC KEY-----\nA===\n-----END PUBLIC KEY-----'),
    ).toThrow(/not valid base64/);
  });

  it('refuses keys of the wrong length with the length', () => {
    const short = Buffer.from('302930050603' + '2b6570032000' + '11'.repeat(31), 'hex');
    expect(() => parsePublicKeyPem(pemOf(short))).toThrow(/wrong length: 31 bytes/);
    const long = Buffer.from('302b30050603' + '2b6570032200' + '11'.repeat(33), 'hex');
    expect(() => parsePublicKeyPem(pemOf(long))).toThrow(/wrong length: 33 bytes/);
    expect(() => publicKeyFromRaw(new Uint8Array(0))).toThrow(/wrong length: 0 bytes/);
  });

  it('refuses bytes that are no point on the curve', () => {
    // y = 2 has no x on edwards25519 (x^2 is not a square modulo p).
    const notAPoint = '02' + '00'.repeat(31);
    expect(() => parsePublicKeyPem(pemOfRaw(notAPoint))).toThrow(
      /not a point on the Ed25519 curve/,
    );
  });

  it.each(smallOrder.map((v) => [v.name, v.public_key]))(
    'refuses the small-order key %s',
    (_name, raw) => {
      expect(() => parsePublicKeyPem(pemOfRaw(raw))).toThrow(/small order/);
    },
  );

  it.each(nonCanonical.map((v) => [v.name, v.public_key]))(
    'refuses the non-canonical encoding %s',
    (_name, raw) => {
      expect(() => publicKeyFromRaw(unhex(raw))).toThrow(/non-canonical point encoding/);
    },
  );
});

describe('parseFingerprint', () => {
  it('accepts sha256:<64 hex> in either case and returns it lowercase', () => {
    expect(parseFingerprint(` sha256:${'AB'.repeat(32)} `)).toBe(`sha256:${'ab'.repeat(32)}`);
  });
  it.each([
    '',
    'sha256:abc',
    `sha512:${'a'.repeat(64)}`,
    'a'.repeat(64),
    `sha256:${'g'.repeat(64)}`,
  ])('refuses %j', (text) => {
    expect(() => parseFingerprint(text)).toThrow(/fingerprint must be "sha256:"/);
  });
});

describe('serverKeyUrl', () => {
  it('appends the key path to a base URL, with or without a trailing slash or prefix', () => {
    expect(serverKeyUrl('http://127.0.0.1:3000')).toBe('http://127.0.0.1:3000/v1/keys/server');
    expect(serverKeyUrl('https://svc.example/api/')).toBe('https://svc.example/api/v1/keys/server');
  });
  it('keeps a URL that already names the key', () => {
    expect(serverKeyUrl('https://svc.example/v1/keys/server')).toBe(
      'https://svc.example/v1/keys/server',
    );
  });
  it('refuses what is not an http(s) URL', () => {
    expect(() => serverKeyUrl('svc.example')).toThrow(/not a URL/);
    expect(() => serverKeyUrl('file:///etc/passwd')).toThrow(/must be http\(s\)/);
  });
});
