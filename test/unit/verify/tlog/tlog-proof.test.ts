import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { formatTlogProof, parseTlogProof, tlogProofAsInclusion } from '@svc/verify';
import { checkpointBody, ed25519Witness, testLog } from '../../../support/tlog-witnesses.js';

// C2SP tlog-proof@v1, §Format: the header line, an optional extra line, the index, the proof
// hashes one per line, an empty line and the checkpoint verbatim.

const ORIGIN = 'svc.example.com/ledger';
const log = testLog(ORIGIN);
const witness = ed25519Witness('w1.example/witness');
const h = (s: string) => createHash('sha256').update(s).digest();
const body = checkpointBody(ORIGIN, 5, h('root'));
const checkpoint = `${body}\n${log.line(body)}${witness.line(body)}`;

describe('tlog-proof@v1', () => {
  it('writes the format line by line', () => {
    const text = formatTlogProof({
      extra: null,
      index: 4,
      proof: [h('a'), h('b')].map((b) => new Uint8Array(b)),
      checkpoint,
    });
    expect(text).toBe(
      [
        'c2sp.org/tlog-proof@v1',
        'index 4',
        h('a').toString('base64'),
        h('b').toString('base64'),
        '',
        checkpoint,
      ].join('\n'),
    );
  });

  it('writes an extra line after the header when there is extra data, none when empty', () => {
    const base = { index: 0, proof: [], checkpoint };
    expect(formatTlogProof({ ...base, extra: Uint8Array.of(1, 2, 3) })).toBe(
      `c2sp.org/tlog-proof@v1\nextra AQID\nindex 0\n\n${checkpoint}`,
    );
    expect(formatTlogProof({ ...base, extra: new Uint8Array(0) })).toBe(
      `c2sp.org/tlog-proof@v1\nindex 0\n\n${checkpoint}`,
    );
  });

  it('reads back what it writes, and its inclusion form takes the size from the checkpoint', () => {
    const proof = {
      extra: Uint8Array.of(9),
      index: 3,
      proof: [new Uint8Array(h('x'))],
      checkpoint,
    };
    const parsed = parseTlogProof(formatTlogProof(proof));
    expect(parsed).toEqual({ proof });
    expect(tlogProofAsInclusion(proof)).toEqual({
      leaf_index: 3,
      tree_size: 5,
      inclusion: [h('x').toString('base64')],
      checkpoint,
    });
  });

  it.each([
    [
      'another header',
      `c2sp.org/tlog-proof@v2\nindex 0\n\n${checkpoint}`,
      'the first line is not c2sp.org/tlog-proof@v1',
    ],
    [
      'an index with a leading zero',
      `c2sp.org/tlog-proof@v1\nindex 01\n\n${checkpoint}`,
      'line 2 is not "index <decimal>"',
    ],
    [
      'a missing index',
      `c2sp.org/tlog-proof@v1\n${h('a').toString('base64')}\n\n${checkpoint}`,
      'line 2 is not "index <decimal>"',
    ],
    [
      'an index after the hashes',
      `c2sp.org/tlog-proof@v1\nindex 0\nindex 1\n\n${checkpoint}`,
      'line 3 is not the base64 of a 32-byte hash',
    ],
    [
      'a short hash',
      `c2sp.org/tlog-proof@v1\nindex 0\nAAAA\n\n${checkpoint}`,
      'line 3 is not the base64 of a 32-byte hash',
    ],
    [
      'no empty line',
      `c2sp.org/tlog-proof@v1\nindex 0\n${body}`,
      'no empty line before the checkpoint',
    ],
    [
      'no checkpoint',
      `c2sp.org/tlog-proof@v1\nindex 0\n\nnot a note\n`,
      'what follows the empty line is not a signed checkpoint',
    ],
    [
      'an unsigned checkpoint',
      `c2sp.org/tlog-proof@v1\nindex 0\n\n${body}`,
      'not a signed checkpoint',
    ],
    [
      'an empty extra',
      `c2sp.org/tlog-proof@v1\nextra \nindex 0\n\n${checkpoint}`,
      'the extra line is not base64 data',
    ],
    ['a JSON proof', '{"leaf_index":0}', 'no empty line before the checkpoint'],
  ])('refuses %s', (_what, text, problem) => {
    const parsed = parseTlogProof(text);
    expect('problem' in parsed && parsed.problem).toContain(problem);
  });
});
