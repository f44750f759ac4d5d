import { describe, expect, it } from '@jest/globals';
import {
  followKeyTransitions,
  followServedHistory,
  keyForReceipt,
  keyHistoryUrl,
  parseKeyHistory,
  pemFromRawPublicKey,
  type SigningKeyRecord,
} from '@svc/verify';
import { signTransition } from '../../../src/core/key-history.js';
import type { ServerKey } from '../../../src/ports/signer.js';
import { newServerKey } from '../../support/harness.js';

const LOG = 'svc.example/log';

function entry(
  key: ServerKey,
  first: number,
  last: number | null,
  previous?: ServerKey,
  statement: Record<string, unknown> = {},
): SigningKeyRecord {
  return {
    key_id: key.keyId,
    public_key_pem: pemFromRawPublicKey(key.publicKeyRaw),
    verifier_key: null,
    status: last === null ? 'current' : 'retired',
    first_sequence: first,
    last_sequence: last,
    activated_at: '2026-01-01T00:00:00.000Z',
    retired_at: last === null ? null : '2026-02-01T00:00:00.000Z',
    revoked_from_sequence: null,
    revoked_at: null,
    transition: previous
      ? signTransition(
          {
            type: 'svc-key-transition-v1',
            log: LOG,
            previous_key_id: previous.keyId,
            new_key_id: key.keyId,
            new_public_key: Buffer.from(key.publicKeyRaw).toString('base64'),
            first_sequence: first,
            issued_at: '2026-02-01T00:00:00.000Z',
            ...statement,
          } as never,
          (m) => previous.sign(m),
        )
      : null,
  };
}

describe('key transition chain', () => {
  const [a, b, c] = [newServerKey(), newServerKey(), newServerKey()];
  const good = () => [entry(a, 1, 4), entry(b, 5, 9, a), entry(c, 10, null, b)];
  const ids = (keys: { keyId: string }[]) => keys.map((k) => k.keyId);

  it('trusts every key linked to the pin by signed transitions, forward and back', () => {
    expect(ids(followKeyTransitions(good(), a.keyId))).toEqual([a.keyId, b.keyId, c.keyId]);
    expect(ids(followKeyTransitions(good(), c.keyId))).toEqual([a.keyId, b.keyId, c.keyId]);
    // Through JSON, as a fetched body.
    const parsed = parseKeyHistory(JSON.parse(JSON.stringify({ keys: good() })));
    expect(ids(followKeyTransitions(parsed, b.keyId))).toHaveLength(3);
  });

  it('refuses a transition not signed by the previous key', () => {
    const history = good();
    history[2] = entry(c, 10, null, a); // signed by a, not b
    history[2].transition!.statement.previous_key_id = b.keyId;
    expect(() => followKeyTransitions(history, a.keyId)).toThrow(
      `keys[2]: the transition is not signed by the previous key ${b.keyId}`,
    );
  });

  it('refuses a gap, an overlap and a reordering', () => {
    const gap = [entry(a, 1, 4), entry(b, 6, 9, a), entry(c, 10, null, b)];
    expect(() => followKeyTransitions(gap, a.keyId)).toThrow(/without gap or overlap/);
    const reordered = good();
    [reordered[1], reordered[2]] = [reordered[2]!, reordered[1]!];
    expect(() => followKeyTransitions(reordered, a.keyId)).toThrow(/refused/);
  });

  it('refuses a transition naming another key or another first sequence, or missing', () => {
    const other = good();
    other[1] = entry(b, 5, 9, a, { first_sequence: 6 });
    expect(() => followKeyTransitions(other, a.keyId)).toThrow(/starts at 6, the history says 5/);
    const missing = good();
    missing[2] = entry(c, 10, null);
    expect(() => followKeyTransitions(missing, a.keyId)).toThrow(/has no transition statement/);
    // Back from a pin, the chain ends quietly at a key with no transition: it is not trusted.
    expect(ids(followKeyTransitions(missing, c.keyId))).toEqual([c.keyId]);
    const wrongKey = good();
    wrongKey[1]!.public_key_pem = pemFromRawPublicKey(c.publicKeyRaw);
    expect(() => followKeyTransitions(wrongKey, a.keyId)).toThrow(/fingerprint/);
  });

  it('refuses a pin the history does not hold, and a malformed history', () => {
    expect(() => followKeyTransitions(good(), newServerKey().keyId)).toThrow(
      /is not in the history/,
    );
    expect(() => parseKeyHistory({ keys: [] })).toThrow(/at least one key/);
    expect(() => parseKeyHistory({ keys: [{ key_id: 1 }] })).toThrow(/keys\[0\]/);
  });

  it('picks the receipt key and says when it did not sign the sequence or is revoked', () => {
    const trusted = followKeyTransitions(good(), a.keyId);
    const receipt = (key: ServerKey, sequence: number) => ({
      position: { sequence },
      attestations: [{ algorithm: 'Ed25519', key_id: key.keyId }],
    });
    expect(keyForReceipt(receipt(b, 7), trusted)).toEqual({ key: trusted[1] });
    expect(keyForReceipt(receipt(b, 10), trusted).refusal).toBe(
      `key ${b.keyId} did not sign sequence 10: it signed sequences 5 to 9`,
    );
    trusted[1]!.record.revoked_from_sequence = 7;
    expect(keyForReceipt(receipt(b, 7), trusted).refusal).toMatch(/is revoked from sequence 7/);
    expect(keyForReceipt(receipt(b, 6), trusted).refusal).toBeUndefined();
    expect(keyForReceipt(receipt(newServerKey(), 6), trusted).key).toBeNull();
  });
});

describe('a served key history', () => {
  const [a, b] = [newServerKey(), newServerKey()];

  it('is read from <base>/v1/keys, whether given the base URL or the key URL', () => {
    expect(keyHistoryUrl('https://svc.example/')).toBe('https://svc.example/v1/keys');
    expect(keyHistoryUrl('https://svc.example/v1/keys/server')).toBe('https://svc.example/v1/keys');
    expect(() => keyHistoryUrl('ftp://svc.example')).toThrow(/must be http\(s\)/);
  });

  it('is followed from the pin; an empty list means none, a broken chain is refused', () => {
    const history = { keys: [entry(a, 1, 2), entry(b, 3, null, a)] };
    const body = JSON.parse(JSON.stringify(history)) as unknown;
    expect(followServedHistory(body, a.keyId)!.map((k) => k.keyId)).toEqual([a.keyId, b.keyId]);
    expect(followServedHistory({ origin: LOG, keys: [] }, a.keyId)).toBeNull();
    const forged = JSON.parse(JSON.stringify(history)) as { keys: SigningKeyRecord[] };
    forged.keys[1]!.transition!.statement.issued_at = '2020-01-01T00:00:00.000Z';
    expect(() => followServedHistory(forged, a.keyId)).toThrow(
      `the transition is not signed by the previous key ${a.keyId}`,
    );
  });
});
