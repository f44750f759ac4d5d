import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import {
  dssePae,
  parseDsseEnvelope,
  verifyDsse,
  type DsseEnvelope,
} from '../../../packages/verify/src/attestation.js';

// DSSE's own test vectors (test/fixtures/dsse/README.md says where they come from).
interface Vector {
  id: string;
  envelope: DsseEnvelope;
  trustedKeys: string[];
  supportedPayloadTypes: string[];
  pae: string;
  expect: 'accept' | 'reject';
}
const fixture = JSON.parse(
  readFileSync(new URL('../../fixtures/dsse/vectors.json', import.meta.url), 'utf8'),
) as { keys: Record<string, { public: string }>; vectors: Vector[] };
const base64Any = (text: string) =>
  Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');

describe('DSSE PAE', () => {
  it.each(
    fixture.vectors
      .filter((v) => v.id !== 'payload-type-swapped')
      .map((v) => [v.id, v] as [string, Vector]),
  )('is the bytes of the vector %s', (_id, vector) => {
    const { payloadType, payload } = vector.envelope;
    expect(Buffer.from(dssePae(payloadType, base64Any(payload))).toString('hex')).toBe(vector.pae);
  });
});

describe('DSSE verification against the vectors', () => {
  it.each(fixture.vectors.map((v) => [v.id, v.expect, v] as [string, string, Vector]))(
    '%s: %s',
    (_id, expected, vector) => {
      const keys = vector.trustedKeys.map((name) => ({
        keyId: name,
        raw: new Uint8Array(Buffer.from(fixture.keys[name]!.public, 'hex')),
      }));
      const accepted = verifyDsse(vector.envelope, keys, vector.supportedPayloadTypes);
      expect(accepted ? 'accept' : 'reject').toBe(expected);
    },
  );

  it('refuses a signature by a key that is not trusted, whatever its keyid says', () => {
    const vector = fixture.vectors.find((v) => v.id === 'threshold-two-distinct-keys')!;
    const onlyB = { ...vector.envelope, signatures: [vector.envelope.signatures[1]!] };
    const a = { keyId: 'B', raw: new Uint8Array(Buffer.from(fixture.keys.A!.public, 'hex')) };
    expect(verifyDsse(onlyB, [a], vector.supportedPayloadTypes)).toBe(false);
  });
});

describe('a DSSE envelope read from text', () => {
  it.each([
    ['not an object', '[]', 'expected a JSON object'],
    ['no payload', '{"payloadType":"x","signatures":[{"sig":"AA=="}]}', 'payload'],
    ['no signatures', '{"payload":"","payloadType":"x","signatures":[]}', 'signatures'],
    ['a signature without sig', '{"payload":"","payloadType":"x","signatures":[{}]}', 'sig'],
  ])('is refused when %s', (_what, text, message) => {
    expect(() => parseDsseEnvelope(text)).toThrow(message);
  });
});
