import { describe, expect, it } from '@jest/globals';
import {
  followKeyTransitions,
  followServedHistory,
  keyForReceipt,
  keyHistoryUrl,
  parseKeyHistory,
  pemFromRawPublicKey,
  signedRevocationsOf,
  type SigningKeyRecord,
} from '@svc/verify';
import { signRevocation, signTransition } from '../../../src/core/key-history.js';
import type { ServerKey } from '../../../src/ports/signer.js';
import { newServerKey } from '../../support/harness.js';

const LOG = 'svc.example/log';
const ids = (keys: { keyId: string }[]) => keys.map((k) => k.keyId);

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
    revocation: null,
  };
}

/** Revokes `key` in `record` from `from`, the statement signed by `signer`. */
function revoke(record: SigningKeyRecord, from: number, signer: ServerKey): SigningKeyRecord {
  const at = '2026-03-01T00:00:00.000Z';
  return {
    ...record,
    status: 'revoked',
    revoked_from_sequence: from,
    revoked_at: at,
    revocation: signRevocation(
      {
        type: 'svc-key-revocation-v1',
        log: LOG,
        key_id: record.key_id,
        revoked_from_sequence: from,
        signer_key_id: signer.keyId,
        issued_at: at,
      },
      (m) => signer.sign(m),
    ),
  };
}

describe('key transition chain', () => {
  const [a, b, c] = [newServerKey(), newServerKey(), newServerKey()];
  const good = () => [entry(a, 1, 4), entry(b, 5, 9, a), entry(c, 10, null, b)];

  it('trusts the pin and every later key linked to it by signed transitions, not earlier ones', () => {
    expect(ids(followKeyTransitions(good(), a.keyId))).toEqual([a.keyId, b.keyId, c.keyId]);
    expect(ids(followKeyTransitions(good(), c.keyId))).toEqual([c.keyId]);
    // Through JSON, as a fetched body.
    const parsed = parseKeyHistory(JSON.parse(JSON.stringify({ keys: good() })));
    expect(ids(followKeyTransitions(parsed, b.keyId))).toEqual([b.keyId, c.keyId]);
  });

  it('trusts an earlier key only when it is pinned itself', () => {
    expect(ids(followKeyTransitions(good(), [c.keyId, a.keyId]))).toEqual([
      a.keyId,
      b.keyId,
      c.keyId,
    ]);
    // A pinned key needs no statement; one without it is not followed from an earlier pin.
    const adopted = [entry(a, 1, 4), entry(b, 5, null)];
    expect(ids(followKeyTransitions(adopted, [a.keyId, b.keyId]))).toEqual([a.keyId, b.keyId]);
    expect(() => followKeyTransitions(adopted, a.keyId)).toThrow(/has no transition statement/);
    expect(() => followKeyTransitions(good(), [c.keyId, newServerKey().keyId])).toThrow(
      /is not in the history/,
    );
  });

  it('does not trust a key prepended with a statement it signed itself', () => {
    // Anyone can make a key and sign "x hands over to a" with it.
    const x = newServerKey();
    const forged = [entry(x, 1, 999_999), entry(a, 1_000_000, null, x)];
    expect(ids(followKeyTransitions(forged, a.keyId))).toEqual([a.keyId]);
    const receipt = {
      position: { sequence: 7 },
      attestations: [{ algorithm: 'Ed25519', key_id: x.keyId }],
    };
    expect(keyForReceipt(receipt, followKeyTransitions(forged, a.keyId)).key).toBeNull();
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
    // Pinned itself, a key with no transition is trusted; nothing before it is.
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

describe('signed revocations', () => {
  const [a, b, c] = [newServerKey(), newServerKey(), newServerKey()];
  const revoked = () => [revoke(entry(a, 1, 4), 3, b), entry(b, 5, null, a)];
  const seen = () => signedRevocationsOf(revoked());

  it('are honoured when signed by a trusted key', () => {
    const trusted = followKeyTransitions(revoked(), a.keyId);
    const receipt = {
      position: { sequence: 3 },
      attestations: [{ algorithm: 'Ed25519', key_id: a.keyId }],
    };
    expect(keyForReceipt(receipt, trusted).refusal).toMatch(/is revoked from sequence 3/);
    // Through JSON, as served.
    const parsed = parseKeyHistory(JSON.parse(JSON.stringify({ keys: revoked() })));
    expect(parsed[0]!.revocation!.statement.signer_key_id).toBe(b.keyId);
  });

  it('refuse a history whose revocation is not signed by a trusted key', () => {
    const forged = revoked();
    forged[0] = revoke(entry(a, 1, 4), 3, c);
    expect(() => followKeyTransitions(forged, a.keyId)).toThrow(
      `keys[0]: the revocation is signed by ${c.keyId}, a key the pin does not trust`,
    );
    const altered = revoked();
    altered[0]!.revocation!.statement.issued_at = '2020-01-01T00:00:00.000Z';
    altered[0]!.revoked_at = '2020-01-01T00:00:00.000Z';
    expect(() => followKeyTransitions(altered, a.keyId)).toThrow(
      `keys[0]: the revocation is not signed by ${b.keyId}`,
    );
    const moved = JSON.parse(JSON.stringify({ keys: revoked() })) as { keys: SigningKeyRecord[] };
    moved.keys[0]!.revoked_from_sequence = 4;
    expect(() => parseKeyHistory(moved)).toThrow(/does not match revoked_from_sequence/);
  });

  it('refuse a history that drops a revocation the verifier has seen', () => {
    const dropped = [entry(a, 1, 4), entry(b, 5, null, a)];
    expect(ids(followKeyTransitions(dropped, a.keyId))).toHaveLength(2);
    expect(() => followKeyTransitions(dropped, a.keyId, { seen: seen() })).toThrow(
      `the history omits the revocation of ${a.keyId} from sequence 3 (signed by ${b.keyId} at 2026-03-01T00:00:00.000Z) that this verifier has seen`,
    );
    // Still there: accepted; a later start would weaken it: refused.
    expect(ids(followKeyTransitions(revoked(), a.keyId, { seen: seen() }))).toHaveLength(2);
    const later = [revoke(entry(a, 1, 4), 4, b), entry(b, 5, null, a)];
    expect(() => followKeyTransitions(later, a.keyId, { seen: seen() })).toThrow(
      /it says revoked from 4/,
    );
    // Of a key the pin does not trust, a revocation changes nothing.
    expect(ids(followKeyTransitions(dropped, b.keyId, { seen: seen() }))).toEqual([b.keyId]);
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
