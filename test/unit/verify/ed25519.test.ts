import { describe, expect, it } from '@jest/globals';
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign as nodeSign,
  verify as nodeVerify,
} from 'node:crypto';
import * as ed from '@noble/ed25519';
import {
  hasCanonicalScalar,
  isStrictPublicKey,
  keyIdOf,
  pemFromRawPublicKey,
  rawPublicKeyFromPem,
  rawPublicKeyFromSpki,
  spkiFromRawPublicKey,
  verifyEd25519Strict,
} from '@svc/verify';
import { createNativeStrictVerify } from '@svc/verify/node';
import { serverKeyFrom } from '../../../src/secrets/server-key.js';
import { hex, loadFixture, sha256Hex, unhex } from '../core/reference.js';

interface RfcVector {
  name: string;
  secret_key: string;
  public_key: string;
  message: string;
  signature: string;
}
interface EdgeVector {
  name: string;
  rule: string;
  note?: string;
  public_key: string;
  message: string;
  signature: string;
  strict: boolean;
}
const vectors = loadFixture<{
  pkcs8_seed_prefix: string;
  spki_prefix: string;
  rfc8032: RfcVector[];
  edge_cases: EdgeVector[];
}>('ed25519-vectors.json');

const privateKeyFromSeed = (seedHex: string) =>
  createPrivateKey({
    key: Buffer.from(vectors.pkcs8_seed_prefix + seedHex, 'hex'),
    format: 'der',
    type: 'pkcs8',
  });

const nodePublicKey = (rawHex: string) =>
  createPublicKey({
    key: Buffer.from(vectors.spki_prefix + rawHex, 'hex'),
    format: 'der',
    type: 'spki',
  });

const native = createNativeStrictVerify();

describe('RFC 8032 §7.1 test vectors', () => {
  it('are all five of the section', () => {
    expect(vectors.rfc8032.map((v) => v.name)).toEqual([
      'TEST 1',
      'TEST 2',
      'TEST 3',
      'TEST 1024',
      'TEST SHA(abc)',
    ]);
    expect(unhex(vectors.rfc8032[3]!.message)).toHaveLength(1023);
  });

  describe.each(vectors.rfc8032.map((v) => [v.name, v] as const))('%s', (_, v) => {
    const signature = unhex(v.signature);
    const message = unhex(v.message);
    const publicKey = unhex(v.public_key);

    it('node:crypto derives the public key from the seed', () => {
      const spki = createPublicKey(privateKeyFromSeed(v.secret_key)).export({
        format: 'der',
        type: 'spki',
      });
      expect(spki.toString('hex')).toBe(vectors.spki_prefix + v.public_key);
    });

    it('node:crypto signing from the seed gives exactly the RFC signature', () => {
      expect(nodeSign(null, message, privateKeyFromSeed(v.secret_key)).toString('hex')).toBe(
        v.signature,
      );
    });

    it('the server signer built on that key gives the same signature', () => {
      const key = serverKeyFrom(privateKeyFromSeed(v.secret_key));
      expect(hex(key.publicKeyRaw)).toBe(v.public_key);
      expect(hex(key.sign(message))).toBe(v.signature);
      expect(key.verify(signature, message, publicKey)).toBe(true);
    });

    it('verifyEd25519Strict, the native strict verifier and node:crypto all accept', () => {
      expect(verifyEd25519Strict(signature, message, publicKey)).toBe(true);
      expect(native(signature, message, publicKey)).toBe(true);
      expect(nodeVerify(null, message, nodePublicKey(v.public_key), signature)).toBe(true);
    });

    it('takes the public key as a strict one and the S half as canonical', () => {
      expect(isStrictPublicKey(publicKey)).toBe(true);
      expect(hasCanonicalScalar(signature)).toBe(true);
    });
  });
});

describe('Ed25519 edge cases (contract §3)', () => {
  const rejected = vectors.edge_cases.filter((v) => !v.strict);

  it('cover every rule the contract names', () => {
    const rules = new Set(rejected.map((v) => v.rule));
    for (const rule of [
      'S < L',
      'small-order public key',
      'non-canonical public key encoding',
      'canonical R encoding',
      'signature mismatch',
      'length',
    ]) {
      expect(rules).toContain(rule);
    }
    const small = rejected.filter((v) => v.rule === 'small-order public key');
    expect(small.map((v) => v.public_key)).toEqual(
      expect.arrayContaining([
        '01' + '00'.repeat(31),
        'ec' + 'ff'.repeat(30) + '7f',
        '00'.repeat(32),
        '00'.repeat(31) + '80',
      ]),
    );
    expect(rejected.map((v) => v.public_key)).toContain('ed' + 'ff'.repeat(30) + '7f');
  });

  it.each(vectors.edge_cases.map((v) => [v.name, v] as const))(
    '%s: strict and native verifiers give the vector result',
    (_, v) => {
      const args = [unhex(v.signature), unhex(v.message), unhex(v.public_key)] as const;
      expect(verifyEd25519Strict(...args)).toBe(v.strict);
      expect(native(...args)).toBe(v.strict);
    },
  );

  it('has small-order and non-canonical key vectors that really are so', () => {
    const P = 2n ** 255n - 19n;
    const yOf = (key: Uint8Array) => {
      let y = 0n;
      for (let i = 31; i >= 0; i--) y = (y << 8n) | BigInt(i === 31 ? key[i]! & 0x7f : key[i]!);
      return y;
    };
    for (const v of vectors.edge_cases.filter((e) => e.rule === 'small-order public key')) {
      const point = ed.Point.fromBytes(unhex(v.public_key), false);
      expect(point.multiply(8n, false).is0()).toBe(true);
    }
    for (const v of vectors.edge_cases.filter(
      (e) => e.rule === 'non-canonical public key encoding',
    )) {
      const key = unhex(v.public_key);
      const xZeroWithSign = (key[31]! & 0x80) !== 0 && [1n, P - 1n].includes(yOf(key));
      expect(yOf(key) >= P || xZeroWithSign).toBe(true);
    }
  });

  it('has forgeries that only the key rules refuse: a ZIP-215 verifier accepts them', () => {
    const forgeries = vectors.edge_cases.filter((e) => /public key/.test(e.rule) && e.note);
    expect(forgeries.length).toBeGreaterThanOrEqual(8);
    for (const v of forgeries) {
      const args = [unhex(v.signature), unhex(v.message), unhex(v.public_key)] as const;
      expect(ed.verify(...args, { zip215: true })).toBe(true);
      expect(ed.verify(...args, { zip215: false })).toBe(false);
    }
  });

  it('refuses the S + L signature that node:crypto would otherwise have to reduce', () => {
    const v = vectors.edge_cases.find((e) => e.name.startsWith('S + L'))!;
    const s = unhex(v.signature);
    expect(hasCanonicalScalar(s)).toBe(false);
    expect(verifyEd25519Strict(s, unhex(v.message), unhex(v.public_key))).toBe(false);
  });

  it('refuses every small-order or non-canonical key before any signature is checked', () => {
    for (const v of vectors.edge_cases.filter((e) => /public key/.test(e.rule))) {
      expect(isStrictPublicKey(unhex(v.public_key))).toBe(false);
    }
  });

  it('agrees with the portable verifier when node:crypto alone would reject (mixed-order key)', () => {
    const v = vectors.edge_cases.find((e) => e.name.startsWith('mixed-order'))!;
    expect(v.strict).toBe(true);
    expect(isStrictPublicKey(unhex(v.public_key))).toBe(true);
    expect(native(unhex(v.signature), unhex(v.message), unhex(v.public_key))).toBe(true);
  });

  it('keeps giving the same results with a key cache of one entry', () => {
    const tiny = createNativeStrictVerify(1);
    for (let round = 0; round < 2; round++) {
      for (const v of [
        ...vectors.edge_cases,
        ...vectors.rfc8032.map((r) => ({ ...r, strict: true })),
      ]) {
        expect(tiny(unhex(v.signature), unhex(v.message), unhex(v.public_key))).toBe(v.strict);
      }
    }
  });

  it('never throws on malformed input, and is false for it', () => {
    for (const verify of [verifyEd25519Strict, native]) {
      expect(verify(new Uint8Array(0), new Uint8Array(0), new Uint8Array(0))).toBe(false);
      expect(verify(new Uint8Array(64), new Uint8Array(1), new Uint8Array(32))).toBe(false);
      expect(
        verify(new Uint8Array(64).fill(0xff), new Uint8Array(1), new Uint8Array(32).fill(0xff)),
      ).toBe(false);
    }
  });
});

describe('hasCanonicalScalar', () => {
  const L = 2n ** 252n + 27742317777372353535851937790883648493n;
  const withS = (s: bigint) => {
    const bytes = new Uint8Array(64);
    for (let i = 0; i < 32; i++) bytes[32 + i] = Number((s >> BigInt(8 * i)) & 0xffn);
    return bytes;
  };

  it.each([
    ['0', 0n, true],
    ['1', 1n, true],
    ['L - 1', L - 1n, true],
    ['L', L, false],
    ['L + 1', L + 1n, false],
    ['2^252 (below L)', 2n ** 252n, true],
    ['2^253', 2n ** 253n, false],
    ['2^256 - 1', 2n ** 256n - 1n, false],
  ])('S = %s is canonical: %s', (_, s, canonical) => {
    expect(hasCanonicalScalar(withS(s))).toBe(canonical);
  });

  it('is false for a signature of the wrong length', () => {
    expect(hasCanonicalScalar(new Uint8Array(63))).toBe(false);
    expect(hasCanonicalScalar(new Uint8Array(65))).toBe(false);
  });
});

describe('public key encodings', () => {
  const { publicKey } = generateKeyPairSync('ed25519');
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  const pem = publicKey.export({ format: 'pem', type: 'spki' }).toString();
  const raw = new Uint8Array(spki.subarray(12));

  it('keyIdOf is sha256 over the SPKI DER that node:crypto exports (contract §2)', () => {
    expect(keyIdOf(raw)).toBe(`sha256:${sha256Hex(spki)}`);
  });

  it('spkiFromRawPublicKey builds the DER node:crypto exports, and reverses', () => {
    expect(hex(spkiFromRawPublicKey(raw))).toBe(spki.toString('hex'));
    expect(rawPublicKeyFromSpki(new Uint8Array(spki))).toEqual(raw);
  });

  it('pemFromRawPublicKey writes the PEM node:crypto writes, and rawPublicKeyFromPem reverses it', () => {
    expect(pemFromRawPublicKey(raw)).toBe(pem);
    expect(rawPublicKeyFromPem(pem)).toEqual(raw);
    expect(rawPublicKeyFromPem(pemFromRawPublicKey(raw))).toEqual(raw);
  });

  it('gives node:crypto a PEM it reads as the same key', () => {
    const reread = createPublicKey(pemFromRawPublicKey(raw)).export({
      format: 'der',
      type: 'spki',
    });
    expect(reread.equals(spki)).toBe(true);
  });

  it('reads a PEM with CRLF line ends or surrounding white space', () => {
    expect(rawPublicKeyFromPem(pem.replace(/\n/g, '\r\n'))).toEqual(raw);
    expect(rawPublicKeyFromPem(`\n  ${pem}\n\n`)).toEqual(raw);
  });

  it.each([
    ['an RSA public key', () => generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey],
    ['an EC P-256 public key', () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey],
    ['an Ed448 public key', () => generateKeyPairSync('ed448').publicKey],
  ])('returns null for %s', (_, make) => {
    expect(
      rawPublicKeyFromPem(make().export({ format: 'pem', type: 'spki' }).toString()),
    ).toBeNull();
  });

  it.each([
    [
      'an Ed25519 private key',
      () =>
        generateKeyPairSync('ed25519')
          .privateKey.export({ format: 'pem', type: 'pkcs8' })
          .toString(),
    ],
    ['garbage', () => 'not a key'],
    ['an empty string', () => ''],
    [
      'a body that is not base64',
      () => '-----BEGIN PUBLIC KEY-----\n!!!!\n-----END PUBLIC KEY-----\n',
    ],
    [
      'a key one byte short',
      () =>
        `-----BEGIN PUBLIC KEY-----\n${spki.subarray(0, 43).toString('base64')}\n-----END PUBLIC KEY-----\n`,
    ],
    [
      'a key one byte long',
      () =>
        `-----BEGIN PUBLIC KEY-----\n${Buffer.concat([spki, Buffer.from([0])]).toString('base64')}\n-----END PUBLIC KEY-----\n`,
    ],
    ['two keys in one text', () => pem + pem],
  ])('returns null for %s', (_, make) => {
    expect(rawPublicKeyFromPem(make())).toBeNull();
  });

  it('rawPublicKeyFromSpki refuses other lengths and other algorithm prefixes', () => {
    expect(rawPublicKeyFromSpki(new Uint8Array(spki.subarray(0, 43)))).toBeNull();
    const otherOid = new Uint8Array(spki);
    otherOid[8] = 0x71; // 1.3.101.113 is Ed448
    expect(rawPublicKeyFromSpki(otherOid)).toBeNull();
  });

  it('distinguishes keys: one raw key, one key_id', () => {
    const other = new Uint8Array(
      generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(12),
    );
    expect(keyIdOf(other)).not.toBe(keyIdOf(raw));
  });
});
