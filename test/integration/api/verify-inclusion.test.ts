import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import {
  checkpointText,
  fromBase64,
  parseCheckpointText,
  parseNote,
  signNote,
  toBase64,
} from '@svc/verify';
import type { ServerKey } from '../../../src/ports/signer.js';
import { buildTestApp, ManualClock, newServerKey, type TestApp } from '../../support/harness.js';
import { clone, expectError, type Json, ledgerState, newKey } from '../../support/api.js';
import { validClaim } from '../../support/claims.js';

type Check = { name: string; layer: string; status: string; detail?: string };
const inclusionOf = (body: Json) => (body.checks as Check[]).find((c) => c.name === 'inclusion');
const failing = (body: Json) =>
  (body.checks as Check[]).filter((c) => c.status === 'FAIL').map((c) => c.name);

const ORIGIN = 'svc.example/ledger';

/** The checkpoint of `note` re-signed by `key` under `name`, optionally of another origin. */
function resign(note: string, key: ServerKey, origin = ORIGIN): string {
  const body = parseCheckpointText(parseNote(note)!.text)!;
  return signNote(
    checkpointText({ origin, size: body.size, root: body.root }),
    { name: origin, publicKey: key.publicKeyRaw },
    (message) => key.sign(message),
  );
}

const withoutLeafHash = (proof: Json): Json => {
  const copy = clone(proof);
  delete copy.leaf_hash;
  return copy;
};

/** A base64 hash with one bit flipped. */
function flip(b64: string): string {
  const bytes = fromBase64(b64)!;
  bytes[0]! ^= 1;
  return toBase64(bytes);
}

describe('POST /v1/verify: the inclusion check', () => {
  let t: TestApp;
  let key: string;
  const receipts: Json[] = [];
  const proofs: Json[] = [];
  let early: Json;
  let before: Awaited<ReturnType<typeof ledgerState>>;

  const verify = (body: unknown) =>
    request(t.app)
      .post('/v1/verify')
      .send(body as object);
  const proofOf = async (receipt: Json) => {
    const res = await request(t.app).get(`/v1/receipts/${receipt.receipt_id as string}/proof`);
    expect(res.status).toBe(200);
    return res.body as Json;
  };

  beforeAll(async () => {
    t = buildTestApp({ logOrigin: ORIGIN, clock: new ManualClock() });
    key = await newKey(t, 'enterprise');
    for (let i = 0; i < 5; i++) {
      const res = await request(t.app)
        .post('/v1/evaluate')
        .set('X-API-Key', key)
        .send(validClaim());
      expect(res.status).toBe(200);
      receipts.push(res.body.receipt as Json);
      if (i === 0) early = await proofOf(receipts[0]!);
    }
    for (const receipt of receipts) proofs.push(await proofOf(receipt));
    expect(proofs[1]!.tree_size).toBe(5);
    expect((proofs[1]!.inclusion as string[]).length).toBe(3);
    before = await ledgerState(t);
  });
  afterAll(async () => {
    // Nothing below appended, changed or removed a receipt.
    expect(await ledgerState(t)).toEqual(before);
    await t.close();
  });

  it('an honest receipt passes without a proof: the ledger makes one', async () => {
    for (const body of [receipts[1], { receipt: receipts[1] }]) {
      const res = await verify(body);
      expect(res.status).toBe(200);
      expect(inclusionOf(res.body)).toEqual({ name: 'inclusion', layer: 'ledger', status: 'PASS' });
      expect(res.body.valid).toBe(true);
    }
  });

  it('an honest receipt passes with the proof GET /proof answered, with or without leaf_hash', async () => {
    for (const [i, proof] of proofs.entries()) {
      const res = await verify({ receipt: receipts[i], proof });
      expect(inclusionOf(res.body)).toEqual({ name: 'inclusion', layer: 'ledger', status: 'PASS' });
      expect(res.body.valid).toBe(true);
    }
    const bare = withoutLeafHash(proofs[2]!);
    const res = await verify({ receipt: receipts[2], proof: bare });
    expect(inclusionOf(res.body)!.status).toBe('PASS');
  });

  it('a proof in an older checkpoint still passes after the ledger grew', async () => {
    expect(early.tree_size).toBe(1);
    expect(early.checkpoint).toEqual(expect.stringContaining(`${ORIGIN}\n1\n`));
    const res = await verify({ receipt: receipts[0], proof: early });
    expect(inclusionOf(res.body)!.status).toBe('PASS');
  });

  const failsWith = async (receipt: Json, proof: Json, detail: string | RegExp) => {
    const res = await verify({ receipt, proof });
    expect(res.status).toBe(200);
    expect(res.body.valid).toBe(false);
    expect(failing(res.body)).toEqual(['inclusion']);
    const check = inclusionOf(res.body)!;
    expect(check.layer).toBe('ledger');
    if (typeof detail === 'string') expect(check.detail).toBe(detail);
    else expect(check.detail).toMatch(detail);
  };

  it("a checkpoint signed by another key fails: it is not a key of the ledger's history", async () => {
    const proof = {
      ...proofs[1]!,
      checkpoint: resign(proofs[1]!.checkpoint as string, newServerKey()),
    };
    await failsWith(
      receipts[1]!,
      proof,
      "bad checkpoint signature: no signature by a key of this ledger's key history",
    );
  });

  it("a checkpoint of another origin fails, even signed by the ledger's own key", async () => {
    const proof = {
      ...proofs[1]!,
      checkpoint: resign(proofs[1]!.checkpoint as string, t.serverKey, 'other.example/log'),
    };
    await failsWith(
      receipts[1]!,
      proof,
      `the checkpoint is of log "other.example/log", not this ledger's "${ORIGIN}"`,
    );
  });

  it('a checkpoint whose signature does not verify fails', async () => {
    const note = proofs[1]!.checkpoint as string;
    const [text, line] = [
      note.slice(0, note.lastIndexOf('\n\n') + 2),
      note.slice(note.lastIndexOf('\n\n') + 2),
    ];
    const sig = line.trim().split(' ')[2]!;
    const bytes = fromBase64(sig)!;
    bytes[10]! ^= 1;
    const forged = `${text}\u2014 ${ORIGIN} ${toBase64(bytes)}\n`;
    await failsWith(
      receipts[1]!,
      { ...proofs[1]!, checkpoint: forged },
      `bad checkpoint signature: the signature of ${ORIGIN} does not verify`,
    );
  });

  it('a checkpoint signed by the ledger’s key for a size it holds, with another root, is reported as fork evidence', async () => {
    // A forked tree of size 2 that holds receipt 1's genuine leaf beside a forged one, signed
    // with the ledger's own key: the inclusion proof leads to its root.
    const leaf = fromBase64(proofs[0]!.leaf_hash as string)!;
    const forged = createHash('sha256').update('\x00forged leaf').digest();
    const forkRoot = createHash('sha256')
      .update(Buffer.concat([Buffer.from([1]), leaf, forged]))
      .digest();
    const checkpoint = signNote(
      checkpointText({ origin: ORIGIN, size: 2, root: new Uint8Array(forkRoot) }),
      { name: ORIGIN, publicKey: t.serverKey.publicKeyRaw },
      (message) => t.serverKey.sign(message),
    );
    const proof = {
      leaf_index: 0,
      tree_size: 2,
      leaf_hash: proofs[0]!.leaf_hash,
      inclusion: [toBase64(forged)],
      checkpoint,
    };
    const res = await verify({ receipt: receipts[0], proof });
    expect(res.status).toBe(200);
    // The ledger's own root of size 2, from its tile (two leaf hashes).
    const tile = await request(t.app)
      .get('/v1/log/tile/0/000.p/2')
      .buffer(true)
      .parse((r, done) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => done(null, Buffer.concat(chunks)));
      });
    const ledgerRoot = createHash('sha256')
      .update(Buffer.concat([Buffer.from([1]), tile.body as Buffer]))
      .digest();
    expect(res.body.fork_evidence).toEqual({
      size: 2,
      checkpoint_root: forkRoot.toString('base64'),
      ledger_root: ledgerRoot.toString('base64'),
      signed_by: [t.serverKey.keyId],
      checkpoint,
    });
    expect(res.body.valid).toBe(false);
    expect(inclusionOf(res.body)).toMatchObject({
      status: 'FAIL',
      detail: expect.stringContaining('fork evidence'),
    });
    // An honest proof carries no such member, and the ledger is unchanged.
    const honest = await verify({ receipt: receipts[0], proof: proofs[0] });
    expect(honest.body.valid).toBe(true);
    expect(honest.body).not.toHaveProperty('fork_evidence');
    expect(await ledgerState(t)).toEqual(before);
  });

  it('a tampered proof element fails', async () => {
    for (const at of [0, 2]) {
      const proof = clone(proofs[1]!);
      (proof.inclusion as string[])[at] = flip((proof.inclusion as string[])[at]!);
      await failsWith(
        receipts[1]!,
        proof,
        "the inclusion proof does not lead from this receipt's leaf 1 to the root of the checkpoint of size 5",
      );
    }
    // A proof element dropped or added does not lead there either.
    const short = { ...proofs[1]!, inclusion: (proofs[1]!.inclusion as string[]).slice(0, 2) };
    await failsWith(receipts[1]!, short, /does not lead/);
    const long = {
      ...proofs[1]!,
      inclusion: [...(proofs[1]!.inclusion as string[]), proofs[0]!.leaf_hash],
    };
    await failsWith(receipts[1]!, long, /does not lead/);
  });

  it('a wrong leaf_index, or a tree_size other than the checkpoint’s, fails', async () => {
    await failsWith(
      receipts[1]!,
      { ...proofs[1]!, leaf_index: 2 },
      "leaf_index 2 is not this receipt's leaf: chain.sequence 2 is leaf 1",
    );
    await failsWith(
      receipts[1]!,
      { ...proofs[1]!, tree_size: 4 },
      "tree_size 4 is not the checkpoint's size 5",
    );
  });

  it('the proof of another receipt fails', async () => {
    await failsWith(
      receipts[1]!,
      proofs[3]!,
      "leaf_index 3 is not this receipt's leaf: chain.sequence 2 is leaf 1",
    );
    // Relabelled as this receipt's leaf, it still names the other leaf hash ...
    await failsWith(
      receipts[1]!,
      { ...proofs[3]!, leaf_index: 1 },
      `the proof is for leaf hash ${proofs[3]!.leaf_hash as string}, not this receipt's ${proofs[1]!.leaf_hash as string}`,
    );
    // ... and without it, its path does not lead from this leaf to the root.
    const bare = withoutLeafHash(proofs[3]!);
    await failsWith(receipts[1]!, { ...bare, leaf_index: 1 }, /does not lead/);
  });

  it('a tampered receipt fails inclusion with its own proof, beside hash_integrity', async () => {
    const tampered = clone(receipts[1]!);
    (tampered.attestations as Json[])[0]!.timestamp = '2020-01-01T00:00:00.000Z';
    const res = await verify({ receipt: tampered, proof: proofs[1] });
    expect(res.body.valid).toBe(false);
    expect(failing(res.body)).toEqual(['hash_integrity', 'chain_linkage', 'inclusion']);
    expect(inclusionOf(res.body)!.detail).toMatch(/^the proof is for leaf hash /);
    // The ledger's own proof is of the stored receipt's leaf, not of this one.
    const made = await verify(tampered);
    expect(inclusionOf(made.body)!.detail).toBe(
      `the proof is for leaf hash ${proofs[1]!.leaf_hash as string}, not this receipt's ${
        (inclusionOf(res.body)!.detail as string).split("this receipt's ")[1]
      }`,
    );
  });

  it('a proof without a checkpoint, or with a note that is no checkpoint, fails', async () => {
    await failsWith(
      receipts[1]!,
      { ...proofs[1]!, checkpoint: null },
      'the proof has no checkpoint: it proves nothing without a signed tree head',
    );
    await failsWith(
      receipts[1]!,
      { ...proofs[1]!, checkpoint: 'not a note' },
      'the checkpoint is not a well-formed signed checkpoint',
    );
  });

  describe('a proof of the wrong shape is 400, the ledger untouched', () => {
    const hash = () => proofs[1]!.leaf_hash as string;
    it.each<[string, () => unknown, RegExp]>([
      [
        'inclusion not base64',
        () => ({ ...proofs[1], inclusion: ['%%%'] }),
        /^proof\.inclusion\.0: must be the standard base64 of a 32-byte hash$/,
      ],
      [
        'a hash of 31 bytes',
        () => ({ ...proofs[1], inclusion: [toBase64(new Uint8Array(31))] }),
        /^proof\.inclusion\.0: /,
      ],
      [
        'more than 64 hashes',
        () => ({ ...proofs[1], inclusion: Array(65).fill(hash()) }),
        /^proof\.inclusion: Too big/,
      ],
      [
        'inclusion not an array',
        () => ({ ...proofs[1], inclusion: hash() }),
        /^proof\.inclusion: /,
      ],
      ['leaf_index a string', () => ({ ...proofs[1], leaf_index: '1' }), /^proof\.leaf_index: /],
      ['leaf_index negative', () => ({ ...proofs[1], leaf_index: -1 }), /^proof\.leaf_index: /],
      ['tree_size a fraction', () => ({ ...proofs[1], tree_size: 4.5 }), /^proof\.tree_size: /],
      ['checkpoint a number', () => ({ ...proofs[1], checkpoint: 5 }), /^proof\.checkpoint: /],
      [
        'checkpoint too long',
        () => ({ ...proofs[1], checkpoint: 'x'.repeat(16 * 1024 + 1) }),
        /^proof\.checkpoint: Too big/,
      ],
      ['a member missing', () => ({ ...proofs[1], tree_size: undefined }), /^proof\.tree_size: /],
      ['an unknown member', () => ({ ...proofs[1], root: hash() }), /proof/],
      ['proof not an object', () => 'proof', /^proof: /],
    ])('%s', async (_name, proof, message) => {
      const res = await verify({ receipt: receipts[1], proof: proof() });
      expect(expectError(res, 400, 'validation_failed')).toMatch(message);
    });

    it('a wrapper with other members, or a receipt that is not an object', async () => {
      expect(
        expectError(
          await verify({ receipt: receipts[1], proof: proofs[1], extra: 1 }),
          400,
          'validation_failed',
        ),
      ).toMatch(/a verify request is a receipt, or \{receipt, proof\}/);
      expect(
        expectError(await verify({ receipt: 'dr-01', proof: proofs[1] }), 400, 'validation_failed'),
      ).toMatch(/^receipt: /);
    });
  });
});

describe('POST /v1/verify: inclusion across a key rotation', () => {
  it('a checkpoint of a retired key passes; once the key is revoked from a sequence, its checkpoints from there fail', async () => {
    const { openSqliteStore } = await import('../../../src/storage/sqlite/sqlite-store.js');
    const { SigningKeyService } = await import('../../../src/services/signing-keys.js');
    const store = openSqliteStore(':memory:');
    const clock = new ManualClock();
    const keys = new SigningKeyService({ store: store.signingKeys, clock, origin: ORIGIN });
    const oldKey = newServerKey();
    const nextKey = newServerKey();
    await keys.register(oldKey);
    const first = buildTestApp({ store, serverKey: oldKey, clock, logOrigin: ORIGIN });
    const apiKey = await newKey(first);
    const receipts: Json[] = [];
    const proofs: Json[] = [];
    for (let i = 0; i < 3; i++) {
      receipts.push(
        (await request(first.app).post('/v1/evaluate').set('X-API-Key', apiKey).send(validClaim()))
          .body.receipt,
      );
      proofs.push(
        (await request(first.app).get(`/v1/receipts/${receipts[i]!.receipt_id as string}/proof`))
          .body,
      );
    }
    await first.jobs.stop();
    clock.advance(1000);
    await keys.rotate(oldKey, nextKey);
    const second = buildTestApp({ store, serverKey: nextKey, clock, logOrigin: ORIGIN });
    try {
      const verify = async (body: unknown) =>
        inclusionOf(
          (
            await request(second.app)
              .post('/v1/verify')
              .send(body as object)
          ).body,
        )!;
      for (const [i, proof] of proofs.entries())
        expect((await verify({ receipt: receipts[i], proof })).status).toBe('PASS');
      // The newest checkpoint (size 3, by the old key) still serves a proof made now.
      expect((await verify(receipts[0])).status).toBe('PASS');
      // A checkpoint the new key signed of a size the old key covered is not one it made.
      const early = { ...proofs[0]!, checkpoint: resign(proofs[0]!.checkpoint as string, nextKey) };
      expect(await verify({ receipt: receipts[0], proof: early })).toMatchObject({
        status: 'FAIL',
        detail: `bad checkpoint signature: ${nextKey.keyId} took over at size 3, after this checkpoint of size 1`,
      });
      await keys.revoke(oldKey.keyId, 2, nextKey);
      // Recorded by another process (the operator's CLI), the revocation shows in verify once
      // the service's copy of the history is older than 5 seconds.
      expect(await verify({ receipt: receipts[1], proof: proofs[1] })).toMatchObject({
        status: 'PASS',
      });
      clock.advance(5_000);
      expect((await verify({ receipt: receipts[0], proof: proofs[0] })).status).toBe('PASS');
      expect(await verify({ receipt: receipts[1], proof: proofs[1] })).toMatchObject({
        status: 'FAIL',
        detail: `bad checkpoint signature: ${oldKey.keyId} is revoked from sequence 2: its checkpoint of size 2 is not trusted`,
      });
    } finally {
      await second.jobs.stop();
      await store.close();
    }
  });
});
