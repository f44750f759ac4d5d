import { createHash, createPublicKey, verify as nodeVerify } from 'node:crypto';
import canonicalize from 'canonicalize';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import { validClaim } from '../../support/claims.js';

// The ledger as a transparency log over HTTP, checked without the service's own code: the
// checkpoint's signature with node:crypto, roots and proofs by RFC 9162 written out here,
// leaves from the receipts by the reference JCS.

const sha256 = (...parts: Uint8Array[]) =>
  createHash('sha256').update(Buffer.concat(parts)).digest();
const leafHashOf = (data: Buffer) => sha256(Buffer.of(0), data);
const node = (l: Buffer, r: Buffer) => sha256(Buffer.of(1), l, r);
const split = (n: number) => 2 ** Math.floor(Math.log2(n - 1));

function root(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return sha256();
  if (leaves.length === 1) return leaves[0]!;
  const k = split(leaves.length);
  return node(root(leaves.slice(0, k)), root(leaves.slice(k)));
}

/** RFC 9162 §2.1.3.2, written from the text. */
function rootFromInclusion(index: number, size: number, leaf: Buffer, proof: Buffer[]): Buffer {
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (fn % 2 === 1 || fn === sn) {
      r = node(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn >>= 1;
        sn >>= 1;
      }
    } else r = node(r, p);
    fn >>= 1;
    sn >>= 1;
  }
  expect(sn).toBe(0);
  return r;
}

/** supertest's parser for a binary body: the bytes as one Buffer. */
const binary: Parameters<request.Test['parse']>[0] = (res, done) => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => done(null, Buffer.concat(chunks)));
};

function leafDataOf(receipt: Record<string, unknown>): Buffer {
  const signed = receipt.signed_fields as { fields: string[] };
  const core = Object.fromEntries(signed.fields.map((f) => [f, receipt[f]]));
  return Buffer.from(canonicalize({ core, attestations: receipt.attestations })!, 'utf8');
}

function parseCheckpoint(note: string) {
  const [text, signatures] = note.split('\n\n') as [string, string];
  const [origin, size, rootB64] = text.split('\n');
  const line = /^— (\S+) (\S+)$/.exec(signatures.trimEnd())!;
  const sig = Buffer.from(line[2]!, 'base64');
  return {
    text: `${text}\n`,
    origin: origin!,
    size: Number(size),
    root: Buffer.from(rootB64!, 'base64'),
    keyName: line[1]!,
    keyId: sig.subarray(0, 4),
    signature: sig.subarray(4),
  };
}

describe('transparency log endpoints', () => {
  let t: TestApp;
  let apiKey: string;
  beforeEach(async () => {
    t = buildTestApp({ config: { logOrigin: 'svc.example.com/ledger' } });
    const signup = await request(t.app)
      .post('/v1/signup')
      .send({ email: 'log@example.com' })
      .expect(201);
    apiKey = signup.body.api_key;
  });
  afterEach(async () => {
    await t.close();
  });

  async function evaluate(n: number) {
    const receipts: Record<string, unknown>[] = [];
    for (let i = 0; i < n; i++) {
      const res = await request(t.app)
        .post('/v1/evaluate')
        .set('X-API-Key', apiKey)
        .send(validClaim())
        .expect(200);
      receipts.push(res.body.receipt);
    }
    return receipts;
  }

  it('signs a checkpoint of an empty ledger, then of every receipt appended', async () => {
    const empty = await request(t.app).get('/v1/log/checkpoint').expect(200);
    expect(empty.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(parseCheckpoint(empty.text)).toMatchObject({
      origin: 'svc.example.com/ledger',
      size: 0,
    });
    expect(parseCheckpoint(empty.text).root).toEqual(sha256());

    const receipts = await evaluate(5);
    const res = await request(t.app).get('/v1/log/checkpoint').expect(200);
    expect(res.headers['cache-control']).toBe('no-cache');
    const cp = parseCheckpoint(res.text);
    expect(cp.size).toBe(5);
    expect(cp.keyName).toBe('svc.example.com/ledger');
    expect(cp.root).toEqual(root(receipts.map((r) => leafHashOf(leafDataOf(r)))));
    // C2SP key ID = SHA-256(name ‖ \n ‖ 0x01 ‖ key)[:4]; the signature covers the note text.
    const raw = Buffer.from(t.serverKey.publicKeyRaw);
    expect(cp.keyId).toEqual(
      sha256(Buffer.from('svc.example.com/ledger\n'), Buffer.of(1), raw).subarray(0, 4),
    );
    const key = createPublicKey(t.serverKey.publicKeyPem);
    expect(nodeVerify(null, Buffer.from(cp.text), key, cp.signature)).toBe(true);
    // Receipts carry the same origin in their signed position.
    expect((receipts[0]!.position as { log: string }).log).toBe('svc.example.com/ledger');

    // Stored: the checkpoint of size 5 is served by size, and stays cacheable.
    const stored = await request(t.app).get('/v1/log/checkpoint?size=5').expect(200);
    expect(stored.text).toBe(res.text);
    expect(stored.headers['cache-control']).toContain('immutable');
    const zero = await request(t.app).get('/v1/log/checkpoint?size=0').expect(200);
    expect(zero.text).toBe(empty.text);
  });

  it('proves every receipt included in the checkpoint, offline', async () => {
    const receipts = await evaluate(7);
    const leaves = receipts.map((r) => leafHashOf(leafDataOf(r)));
    for (const [i, receipt] of receipts.entries()) {
      const res = await request(t.app).get(`/v1/receipts/${receipt.receipt_id}/proof`).expect(200);
      expect(res.body.leaf_index).toBe(i);
      expect(res.body.tree_size).toBe(7);
      expect(Buffer.from(res.body.leaf_hash, 'base64')).toEqual(leaves[i]);
      const cp = parseCheckpoint(res.body.checkpoint);
      expect(cp.size).toBe(7);
      const proof = (res.body.inclusion as string[]).map((p) => Buffer.from(p, 'base64'));
      expect(rootFromInclusion(i, 7, leaves[i]!, proof)).toEqual(cp.root);
    }
    // In an earlier tree: the proof of leaf 1 in the tree of 3.
    const res = await request(t.app)
      .get(`/v1/receipts/${receipts[1]!.receipt_id}/proof?size=3`)
      .expect(200);
    const proof = (res.body.inclusion as string[]).map((p) => Buffer.from(p, 'base64'));
    expect(rootFromInclusion(1, 3, leaves[1]!, proof)).toEqual(root(leaves.slice(0, 3)));
    expect(res.body.checkpoint).toBeNull();
  });

  it('proves the ledger only grew between two checkpoints', async () => {
    await evaluate(3);
    const first = parseCheckpoint((await request(t.app).get('/v1/log/checkpoint')).text);
    await evaluate(6);
    const second = parseCheckpoint((await request(t.app).get('/v1/log/checkpoint')).text);
    const res = await request(t.app)
      .get(`/v1/log/consistency?from=${first.size}&to=${second.size}`)
      .expect(200);
    expect(res.body).toMatchObject({ from: 3, to: 9 });
    expect(res.body.proof.length).toBeGreaterThan(0);
  });

  it('serves tiles and entry bundles that rebuild the root', async () => {
    const receipts = await evaluate(4);
    const cp = parseCheckpoint((await request(t.app).get('/v1/log/checkpoint')).text);
    const tile = await request(t.app)
      .get('/v1/log/tile/0/000.p/4')
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(tile.headers['content-type']).toBe('application/octet-stream');
    const hashes = Array.from({ length: 4 }, (_, i) =>
      (tile.body as Buffer).subarray(i * 32, (i + 1) * 32),
    );
    expect(root(hashes)).toEqual(cp.root);
    const bundle = await request(t.app)
      .get('/v1/log/tile/entries/000.p/4')
      .buffer(true)
      .parse(binary)
      .expect(200);
    const entries: Buffer[] = [];
    for (let at = 0; at < bundle.body.length;) {
      const length = (bundle.body as Buffer).readUInt16BE(at);
      entries.push((bundle.body as Buffer).subarray(at + 2, at + 2 + length));
      at += 2 + length;
    }
    expect(entries).toEqual(receipts.map(leafDataOf));
    // Public reads: a partial bundle may still grow wider under another path, so a minute.
    expect(bundle.headers['cache-control']).toBe('public, max-age=60');
    // A tile the tree does not hold yet, and paths that are no tile.
    await request(t.app).get('/v1/log/tile/0/000.p/5').expect(404);
    await request(t.app).get('/v1/log/tile/0/000').expect(404);
    for (const bad of [
      '0/00',
      '0/000.p/0',
      'x/000',
      '0/000.p/256',
      '64/000',
      // Non-canonical spellings of tiles that exist: C2SP has one path per tile.
      '0/x000/000.p/4',
      'entries/x000/000.p/4',
      '0/000.p/04',
      '00/000.p/4',
      '0%2F000.p%2F4',
      'entries%2F000.p%2F4',
      '0/000.P/4',
    ]) {
      const res = await request(t.app).get(`/v1/log/tile/${bad}`).expect(404);
      expect(res.body).toMatchObject({ code: 'not_found', request_id: expect.any(String) });
    }
  });

  it('answers impossible sizes with a clear 400 and unknown ones with 404, changing nothing', async () => {
    const [receipt] = await evaluate(2);
    const before = await request(t.app).get('/v1/ledger/stats').expect(200);
    const cases: [string, number, string][] = [
      ['/v1/log/consistency?from=2&to=1', 400, 'validation_failed'],
      ['/v1/log/consistency?from=0&to=3', 400, 'validation_failed'],
      ['/v1/log/consistency?from=-1&to=1', 400, 'validation_failed'],
      ['/v1/log/consistency?from=1', 400, 'validation_failed'],
      ['/v1/log/consistency?from=1e0&to=2', 400, 'validation_failed'],
      ['/v1/log/checkpoint?size=abc', 400, 'validation_failed'],
      ['/v1/log/checkpoint?size=1', 404, 'not_found'],
      [`/v1/receipts/${receipt!.receipt_id}/proof?size=0`, 400, 'validation_failed'],
      [`/v1/receipts/${receipt!.receipt_id}/proof?size=3`, 400, 'validation_failed'],
      ['/v1/receipts/dr-nope/proof', 404, 'not_found'],
    ];
    for (const [path, status, code] of cases) {
      const res = await request(t.app).get(path);
      expect({ path, status: res.status, code: res.body.code }).toEqual({ path, status, code });
      expect(res.body).toMatchObject({ error: expect.any(String), request_id: expect.any(String) });
    }
    const after = await request(t.app).get('/v1/ledger/stats').expect(200);
    expect(after.body.head).toEqual(before.body.head);
  });
});
