import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import {
  checkQuorum,
  formatTlogPolicy,
  judgeWitnesses,
  parseTlogPolicy,
  parseWitnessVerifierKey,
  subtreeMessage,
  VerifyError,
} from '@svc/verify';
import {
  checkpointBody,
  ed25519Witness,
  hasNodeMlDsa,
  mlDsaWitness,
  testLog,
} from '../../../support/tlog-witnesses.js';

// C2SP tlog-policy parsed strictly, and the quorum of C2SP tlog-cosignature cosignatures (both
// kinds) it decides. Every signature here is made with node:crypto from the specifications'
// text; C2SP publishes no ML-DSA-44 cosignature vectors, so the ML-DSA-44 lines are signed by
// Node's OpenSSL and verified by @noble/post-quantum, two independent implementations.

const ORIGIN = 'svc.example.com/ledger';
const log = testLog(ORIGIN);
const w1 = ed25519Witness('w1.example/witness', 2);
const w2 = ed25519Witness('w2.example/witness', 3);
const w3 = ed25519Witness('w3.example/witness', 4);
const stranger = ed25519Witness('stranger.example/witness', 5);
const body = checkpointBody(ORIGIN, 42, createHash('sha256').update('root').digest());
const signed = (...lines: string[]) => `${body}\n${log.line(body)}${lines.join('')}`;

const policyText = (quorum: string, extra = '') =>
  `# svc.example.com\nlog ${log.vkey}\n\nwitness A ${w1.vkey}\nwitness B ${w2.vkey} https://w2.example/\n\twitness C ${w3.vkey}\n${extra}quorum ${quorum}\n`;

const refusal = (text: string) => {
  try {
    parseTlogPolicy(text);
  } catch (error) {
    expect(error).toBeInstanceOf(VerifyError);
    return (error as Error).message;
  }
  throw new Error('the policy was accepted');
};

describe('tlog-policy parsing', () => {
  it('reads logs, witnesses with and without URLs, groups and the quorum', () => {
    const policy = parseTlogPolicy(policyText('AB', 'group AB 2 A B\n'));
    expect(policy.logs.map((l) => l.key.name)).toEqual([ORIGIN]);
    expect(policy.witnesses.map((w) => [w.name, w.key.name, w.url])).toEqual([
      ['A', w1.name, null],
      ['B', w2.name, 'https://w2.example/'],
      ['C', w3.name, null],
    ]);
    expect(policy.groups).toEqual([{ name: 'AB', threshold: 2, members: ['A', 'B'] }]);
    expect(policy.quorum).toBe('AB');
    // Written back and read again, the same policy.
    expect(parseTlogPolicy(formatTlogPolicy(policy))).toEqual(policy);
  });

  it.each([
    ['an unknown line', policyText('A', 'mirror M x\n'), 'line 7: unknown line "mirror"'],
    ['no quorum', `log ${log.vkey}\n`, 'no quorum line'],
    ['two quorums', policyText('A', 'quorum B\n'), 'a second quorum line (the first is line 7)'],
    ['a quorum of an undefined name', policyText('Z'), '"Z" is not defined on a line before'],
    [
      'a group member defined later',
      `group G any A\n${policyText('G')}`,
      'line 1: "A" is not defined',
    ],
    ['a member listed twice', policyText('G', 'group G any A A\n'), '"A" is listed twice'],
    ['none as a member', policyText('G', 'group G any none\n'), '"none" cannot be a group member'],
    [
      'a threshold above n',
      policyText('G', 'group G 3 A B\n'),
      'the threshold 3 is more than the 2',
    ],
    ['a threshold of 0', policyText('G', 'group G 0 A B\n'), 'the threshold "0" is not'],
    [
      'a name defined twice',
      policyText('A', `witness A ${stranger.vkey}\n`),
      'the name "A" is already defined',
    ],
    [
      'a duplicate witness key',
      policyText('A', `witness D ${w1.vkey}\n`),
      'a duplicate witness key',
    ],
    ['a duplicate log key', `log ${log.vkey}\n${policyText('A')}`, 'a duplicate log key'],
    ['a log key as a witness key', `witness L ${log.vkey}\nquorum L\n`, 'not a cosigner vkey'],
    [
      'a witness key as a log key',
      `log ${w1.vkey}\nquorum none\n`,
      'not an Ed25519 signed-note vkey',
    ],
    [
      'a vkey with a wrong key ID',
      `log ${log.vkey.replace(/\+[0-9a-f]{8}\+/, '+00000000+')}\nquorum none\n`,
      'matching key ID',
    ],
    ['a control character', `log ${log.vkey}\r\nquorum none\n`, 'a control character'],
    ['a URL that is not http(s)', `log ${log.vkey} ftp://x\nquorum none\n`, 'a URL is http(s)'],
    [
      'a redefined none',
      `witness none ${w1.vkey}\nquorum none\n`,
      'the name "none" is already defined',
    ],
  ])('refuses %s', (_what, text, message) => {
    expect(refusal(text)).toContain(message);
  });

  it('accepts quorum none with no witness at all, and comments anywhere', () => {
    const policy = parseTlogPolicy('  # nothing but a quorum\n\nquorum none\n');
    expect(policy).toEqual({ logs: [], witnesses: [], groups: [], quorum: 'none' });
  });
});

describe('quorum over cosignatures', () => {
  it('is met when the group threshold of known witnesses cosigned, and names them', () => {
    const policy = parseTlogPolicy(policyText('G', 'group G 2 A B C\n'));
    const result = checkQuorum(signed(w1.line(body, 1_700_000_001), w3.line(body)), policy);
    expect(result).toMatchObject({ ok: true, report: { met: true, quorum: 'G', unknown: [] } });
    if (!result.ok) return;
    expect(result.report.witnesses).toEqual([
      {
        name: 'A',
        key_name: w1.name,
        kind: 'cosignature/v1',
        cosigned: true,
        timestamp: 1_700_000_001,
      },
      { name: 'B', key_name: w2.name, kind: 'cosignature/v1', cosigned: false },
      {
        name: 'C',
        key_name: w3.name,
        kind: 'cosignature/v1',
        cosigned: true,
        timestamp: 1_700_000_000,
      },
    ]);
    expect(result.report.reason).toBe(`quorum G met: cosigned by A, C`);
  });

  it('is not met when too few cosigned', () => {
    const policy = parseTlogPolicy(policyText('G', 'group G 2 A B C\n'));
    const result = checkQuorum(signed(w2.line(body)), policy);
    expect(result).toMatchObject({ ok: true, report: { met: false } });
    if (result.ok) expect(result.report.reason).toBe('quorum G NOT met: cosigned by B');
  });

  it('is not met by a witness the policy does not know, which is named as ignored', () => {
    const policy = parseTlogPolicy(policyText('A'));
    const result = checkQuorum(signed(stranger.line(body)), policy);
    expect(result).toMatchObject({ ok: true, report: { met: false, unknown: [stranger.name] } });
    if (result.ok)
      expect(result.report.reason).toBe(
        `quorum A NOT met: cosigned by no witness of the policy; ignored: ${stranger.name} (not in the policy)`,
      );
  });

  it('evaluates nested groups (all of X, any of Y)', () => {
    const policy = parseTlogPolicy(
      policyText('XY', 'group X all A B\ngroup Y any C\ngroup XY all X Y\n'),
    );
    const met = (...lines: string[]) => {
      const r = checkQuorum(signed(...lines), policy);
      return r.ok && r.report.met;
    };
    expect(met(w1.line(body), w2.line(body), w3.line(body))).toBe(true);
    expect(met(w1.line(body), w3.line(body))).toBe(false);
    expect(met(w1.line(body), w2.line(body))).toBe(false);
  });

  it('refuses a policy witness cosignature that does not verify, naming the witness', () => {
    const policy = parseTlogPolicy(policyText('A'));
    // The cosignature of another checkpoint body: the right key, the wrong message.
    const other = checkpointBody(ORIGIN, 43, createHash('sha256').update('x').digest());
    expect(checkQuorum(signed(w1.line(other)), policy)).toEqual({
      ok: false,
      reason: `the cosignature/v1 cosignature of ${w1.name} does not verify`,
    });
  });

  it('refuses a cosignature dated after notAfter', () => {
    const policy = parseTlogPolicy(policyText('A'));
    const result = checkQuorum(signed(w1.line(body, 2_000_000_000)), policy, {
      notAfter: 1_900_000_000,
    });
    expect(result).toEqual({
      ok: false,
      reason: `the cosignature of ${w1.name} is dated in the future (2000000000)`,
    });
  });
});

describe('a checkpoint judged against a policy', () => {
  it('requires a signature by a listed log, and passes the quorum verdict on', () => {
    const policy = parseTlogPolicy(policyText('A'));
    expect(judgeWitnesses(signed(w1.line(body)), policy)).toMatchObject({
      ok: true,
      reason: 'quorum A met: cosigned by A',
    });
    // Signed by another key of the same name: not a log of the policy.
    const impostor = testLog(ORIGIN, 7);
    const forged = `${body}\n${impostor.line(body)}${w1.line(body)}`;
    expect(judgeWitnesses(forged, policy)).toEqual({
      ok: false,
      report: null,
      reason: `the checkpoint of "${ORIGIN}" is not signed by a log of the policy: no signature by a trusted key`,
    });
    // A policy without logs leaves the log's key to the caller.
    const noLogs = parseTlogPolicy(`witness A ${w1.vkey}\nquorum A\n`);
    expect(judgeWitnesses(forged, noLogs)).toMatchObject({ ok: true });
  });
});

(hasNodeMlDsa ? describe : describe.skip)('ML-DSA-44 subtree/v1 cosignatures', () => {
  const pq = mlDsaWitness('pq.example/witness');

  it('parses the type 0x06 vkey (1312-byte key) with its key ID', () => {
    const key = parseWitnessVerifierKey(pq.vkey);
    expect(key).toMatchObject({ name: pq.name, kind: 'subtree/v1' });
    expect(key?.publicKey.length).toBe(1312);
  });

  it('writes the cosigned_message exactly as the specification lays it out', () => {
    const root = createHash('sha256').update('r').digest();
    const bytes = subtreeMessage({
      cosigner: 'c',
      timestamp: 258n,
      origin: 'o/l',
      start: 0n,
      end: 5n,
      hash: new Uint8Array(root),
    });
    expect(Buffer.from(bytes).toString('hex')).toBe(
      Buffer.concat([
        Buffer.from('subtree/v1\n\0'),
        Buffer.from([1]),
        Buffer.from('c'),
        Buffer.from('0000000000000102', 'hex'),
        Buffer.from([3]),
        Buffer.from('o/l'),
        Buffer.alloc(8),
        Buffer.from('0000000000000005', 'hex'),
        root,
      ]).toString('hex'),
    );
  });

  it('counts a Node-signed ML-DSA-44 cosignature towards the quorum beside an Ed25519 one', () => {
    const policy = parseTlogPolicy(
      `log ${log.vkey}\nwitness A ${w1.vkey}\nwitness P ${pq.vkey}\ngroup G all A P\nquorum G\n`,
    );
    const result = checkQuorum(signed(w1.line(body), pq.line(body)), policy);
    expect(result).toMatchObject({ ok: true, report: { met: true } });
    if (result.ok)
      expect(result.report.witnesses.map((w) => [w.name, w.kind, w.cosigned])).toEqual([
        ['A', 'cosignature/v1', true],
        ['P', 'subtree/v1', true],
      ]);
  });

  it('refuses an ML-DSA-44 cosignature of another tree size', () => {
    const policy = parseTlogPolicy(`witness P ${pq.vkey}\nquorum P\n`);
    const other = body.replace('\n42\n', '\n41\n');
    expect(checkQuorum(signed(pq.line(other)), policy)).toEqual({
      ok: false,
      reason: `the subtree/v1 cosignature of ${pq.name} does not verify`,
    });
  });
});
