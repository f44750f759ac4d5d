import { createHash, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import {
  cosignatureLine,
  cosignCheckpoint,
  cosignedMessage,
  cosignerKeyId,
  cosignerVerifierKey,
  parseCosignerVerifierKey,
  parseSignatureLine,
  parseVerifierKey,
  verifierKey,
  verifyCosignatures,
} from '@svc/verify';

// C2SP tlog-cosignature (Ed25519, type 0x04), checked against bytes written out here from the
// specification's text with node:crypto, and against the specification's own example.

// The specification's checkpoint and cosignature example (tlog-cosignature, "Format").
const SPEC_BODY =
  'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n';
const SPEC_LINE =
  '\u2014 witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==';

// RFC 8032 §7.1 test 1: a fixed Ed25519 key.
const SEED = Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex');
const PUBLIC = Buffer.from(
  'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
  'hex',
);
const privateKey = createPrivateKey({
  key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), SEED]),
  format: 'der',
  type: 'pkcs8',
});
const publicKey = createPublicKey(privateKey);
const NAME = 'witness.example/w1';
const key = { name: NAME, publicKey: new Uint8Array(PUBLIC) };
const signer = (message: Uint8Array) => new Uint8Array(sign(null, message, privateKey));

// "SHA-256(<name> || "\n" || 0x04 || 32-byte Ed25519 cosigner public key)[:4]"
const expectedKeyId = createHash('sha256')
  .update(`${NAME}\n`)
  .update(Buffer.of(0x04))
  .update(PUBLIC)
  .digest()
  .subarray(0, 4);

describe('tlog-cosignature, Ed25519', () => {
  it('computes the key ID and verifier key of type 0x04 as the specification writes them', () => {
    expect(cosignerKeyId(key)).toBe(expectedKeyId.readUInt32BE(0));
    const vkey = cosignerVerifierKey(key);
    expect(vkey).toBe(
      `${NAME}+${expectedKeyId.toString('hex')}+${Buffer.concat([Buffer.of(4), PUBLIC]).toString('base64')}`,
    );
    expect(parseCosignerVerifierKey(vkey)).toEqual(key);
    // The same key as an ordinary note key (type 0x01) has another ID and is no cosigner key.
    const noteVkey = verifierKey(key);
    expect(noteVkey.split('+')[1]).not.toBe(expectedKeyId.toString('hex'));
    expect(parseCosignerVerifierKey(noteVkey)).toBeNull();
    // Both keys' base64 holds a '+': only the first two separate a vkey's parts.
    expect(vkey.split('+').length).toBeGreaterThan(3);
    expect(noteVkey.split('+').length).toBeGreaterThan(3);
    expect(parseVerifierKey(noteVkey)).toEqual(key);
    // A key ID that does not match, and malformed keys, are refused.
    expect(parseCosignerVerifierKey(vkey.replace(/\+[0-9a-f]{8}\+/, '+00000000+'))).toBeNull();
    expect(parseCosignerVerifierKey(`${NAME}+${expectedKeyId.toString('hex')}`)).toBeNull();
    expect(parseCosignerVerifierKey('')).toBeNull();
  });

  it('signs the message "cosignature/v1\\ntime <t>\\n" + the checkpoint body', () => {
    // The specification's example message, byte for byte.
    expect(Buffer.from(cosignedMessage(SPEC_BODY, 1679315147n)).toString('utf8')).toBe(
      'cosignature/v1\ntime 1679315147\nexample.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n',
    );
    const line = cosignCheckpoint(SPEC_BODY, key, 1679315147n, signer);
    // "— <key name> base64(32-bit key ID || u64 big-endian timestamp || signature)", by hand.
    const message = Buffer.from(`cosignature/v1\ntime 1679315147\n${SPEC_BODY}`);
    const timestamp = Buffer.alloc(8);
    timestamp.writeBigUInt64BE(1679315147n);
    const expected = Buffer.concat([expectedKeyId, timestamp, sign(null, message, privateKey)]);
    expect(line).toBe(`\u2014 ${NAME} ${expected.toString('base64')}\n`);
    // And it verifies with node:crypto over the same bytes.
    const blob = Buffer.from(line.trimEnd().split(' ')[2]!, 'base64');
    expect(verify(null, message, publicKey, blob.subarray(12))).toBe(true);
  });

  it("frames the specification's example line: key ID, then the timestamp of its message", () => {
    const parsed = parseSignatureLine(SPEC_LINE)!;
    expect(parsed.name).toBe('witness.example.com/w1');
    expect(parsed.keyId).toBe(0x8d66cf3f);
    expect(parsed.signature).toHaveLength(8 + 64);
    expect(Buffer.from(parsed.signature).readBigUInt64BE(0)).toBe(1679315147n);
  });

  it('verifies a witness answer, ignoring lines of other keys', () => {
    const line = cosignCheckpoint(SPEC_BODY, key, 1700000000n, signer);
    const other = { name: 'other.example/w2', publicKey: new Uint8Array(32).fill(9) };
    const answer = `${SPEC_LINE}\n${line}${cosignatureLine(other, 5n, new Uint8Array(64))}`;
    expect(verifyCosignatures(SPEC_BODY, answer, key)).toEqual({
      ok: true,
      cosignatures: [{ line, timestamp: 1700000000 }],
    });
  });

  it('refuses an answer whose cosignature does not verify, or is of another checkpoint', () => {
    const line = cosignCheckpoint(SPEC_BODY, key, 1700000000n, signer);
    const blob = Buffer.from(line.trimEnd().split(' ')[2]!, 'base64');
    // Another timestamp under the same signature.
    const moved = Buffer.from(blob);
    moved.writeBigUInt64BE(1700000001n, 4);
    const forged = `\u2014 ${NAME} ${moved.toString('base64')}\n`;
    expect(verifyCosignatures(SPEC_BODY, forged, key)).toMatchObject({ ok: false });
    // The right line over another checkpoint.
    const otherBody = SPEC_BODY.replace('20852163', '20852164');
    expect(verifyCosignatures(otherBody, line, key)).toEqual({
      ok: false,
      reason: `the cosignature of ${NAME} does not verify`,
    });
    // A plain note signature (no timestamp) by the key's name and ID: wrong length.
    const short = `\u2014 ${NAME} ${Buffer.concat([expectedKeyId, Buffer.alloc(64)]).toString('base64')}\n`;
    expect(verifyCosignatures(SPEC_BODY, short, key)).toMatchObject({ ok: false });
  });

  it('refuses a zero or future timestamp, no line of the key, and malformed answers', () => {
    const zero = cosignCheckpoint(SPEC_BODY, key, 0n, signer);
    expect(verifyCosignatures(SPEC_BODY, zero, key)).toMatchObject({ ok: false });
    const future = cosignCheckpoint(SPEC_BODY, key, 1800000000n, signer);
    expect(verifyCosignatures(SPEC_BODY, future, key, { notAfter: 1700000000 })).toMatchObject({
      ok: false,
    });
    expect(verifyCosignatures(SPEC_BODY, future, key)).toMatchObject({ ok: true });
    expect(verifyCosignatures(SPEC_BODY, `${SPEC_LINE}\n`, key)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('no cosignature by'),
    });
    for (const bad of ['', 'ok', `${future.trimEnd()}`, `\n${future}`, `${future}\n`, 'x\n']) {
      expect(verifyCosignatures(SPEC_BODY, bad, key)).toMatchObject({ ok: false });
    }
  });
});
