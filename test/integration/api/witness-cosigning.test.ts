import { verify } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { beginWitnessStep } from '@svc/verify';
import { auditSource } from '../../../packages/verify/src/cli/log-audit.js';
import { exportLog } from '../../../src/cli/log-export.js';
import { TransparencyLog } from '../../../src/services/transparency-log.js';
import { WitnessCosigning, type Witness } from '../../../src/services/witness-cosigning.js';
import { startFakeWitness, type FakeWitness } from '../../support/fake-witness.js';
import { freePort } from '../../support/server-process.js';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import { validClaim } from '../../support/claims.js';

// The service asks witnesses for cosignatures (C2SP tlog-witness add-checkpoint) and serves
// them with its checkpoints; the witness here is written from the specifications with
// node:crypto, and every served cosignature is checked with node:crypto too.

const ORIGIN = 'svc.example.com/ledger';

describe('witness cosignatures', () => {
  let t: TestApp;
  let apiKey: string;
  let log: TransparencyLog;
  const witnesses: FakeWitness[] = [];
  const servers: Server[] = [];

  beforeEach(async () => {
    t = buildTestApp({ config: { logOrigin: ORIGIN } });
    log = new TransparencyLog({
      tree: t.store.tree,
      ledger: t.store.ledger,
      serverKey: t.serverKey,
      clock: t.clock,
      origin: ORIGIN,
    });
    const signup = await request(t.app)
      .post('/v1/signup')
      .send({ email: 'witness@example.com' })
      .expect(201);
    apiKey = signup.body.api_key;
  });
  afterEach(async () => {
    for (const w of witnesses.splice(0)) await w.close();
    for (const s of servers.splice(0)) {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    }
    await t.close();
  });

  async function witness(name = 'witness.example/w1'): Promise<FakeWitness> {
    const w = await startFakeWitness({
      name,
      origin: ORIGIN,
      logPublicKeyPem: t.serverKey.publicKeyPem,
      now: () => Math.floor(t.clock.now() / 1000),
    });
    witnesses.push(w);
    return w;
  }

  /** The app, and the cosigning service over the same store, configured with these witnesses. */
  function configure(list: Witness[], timeoutMs?: number) {
    const app = buildTestApp({
      store: t.store,
      serverKey: t.serverKey,
      clock: t.clock,
      config: { logOrigin: ORIGIN, witnesses: list },
    }).app;
    const cosigning = new WitnessCosigning({
      log,
      tree: t.store.tree,
      witnesses: list,
      clock: t.clock,
      timeoutMs,
    });
    return { app, cosigning };
  }

  const asWitness = (w: FakeWitness): Witness => ({
    name: w.name,
    verifierKey: w.vkey,
    url: w.url,
  });

  async function evaluate(n: number) {
    for (let i = 0; i < n; i++) {
      await request(t.app)
        .post('/v1/evaluate')
        .set('X-API-Key', apiKey)
        .send(validClaim())
        .expect(200);
    }
  }

  /** The body of a served note and its signature lines. */
  function split(note: string) {
    const at = note.indexOf('\n\n');
    return { text: note.slice(0, at + 1), lines: note.slice(at + 2, -1).split('\n') };
  }

  /** Checks a cosignature line with node:crypto, as tlog-cosignature defines it. */
  function cosignatureOf(w: FakeWitness, line: string, text: string) {
    const m = /^\u2014 (\S+) (\S+)$/.exec(line)!;
    expect(m[1]).toBe(w.name);
    const blob = Buffer.from(m[2]!, 'base64');
    expect(blob.subarray(0, 4).toString('hex')).toBe(w.vkey.split('+')[1]);
    const time = blob.readBigUInt64BE(4);
    const message = Buffer.from(`cosignature/v1\ntime ${time}\n${text}`);
    return { time, valid: verify(null, message, w.publicKey, blob.subarray(12)) };
  }

  it('sends each new checkpoint with the old size and its consistency proof, and serves the cosignature', async () => {
    const w = await witness();
    const { app, cosigning } = configure([asWitness(w)]);
    await evaluate(3);
    const first = await log.makeCheckpoint();
    expect(await cosigning.cosignLatest()).toEqual([
      {
        witness: w.name,
        size: 3,
        outcome: 'cosigned',
        timestamp: Math.floor(t.clock.now() / 1000),
      },
    ]);
    // tlog-witness: "old 0", no proof line, an empty line, the checkpoint as signed.
    expect(w.requests).toEqual([{ old: 0, proof: [], note: first.note, status: 200 }]);

    await evaluate(4);
    t.clock.advance(5_000);
    const second = await log.makeCheckpoint();
    expect(await cosigning.cosignLatest()).toMatchObject([{ outcome: 'cosigned', size: 7 }]);
    // From the size the witness cosigned, with the RFC 9162 proof from 3 to 7 it verified.
    const { proof } = await log.consistency(3, 7);
    expect(proof.length).toBeGreaterThan(0);
    expect(w.requests[1]).toEqual({ old: 3, proof, note: second.note, status: 200 });
    // Nothing new: nothing sent.
    expect(await cosigning.cosignLatest()).toEqual([]);
    expect(w.requests).toHaveLength(2);

    // Served: the log's signature, then the witness's cosignature, which verifies.
    const served = await request(app).get('/v1/log/checkpoint').expect(200);
    const { text, lines } = split(served.text);
    expect(served.text.startsWith(second.note)).toBe(true);
    expect(lines).toHaveLength(2);
    expect(cosignatureOf(w, lines[1]!, text)).toEqual({
      time: BigInt(Math.floor(t.clock.now() / 1000)),
      valid: true,
    });
    // The earlier checkpoint keeps its own cosignature; every witness has cosigned it: final.
    const old = await request(app).get('/v1/log/checkpoint?size=3').expect(200);
    expect(old.headers['cache-control']).toContain('immutable');
    const earlier = split(old.text);
    expect(earlier.text).toBe(split(first.note).text);
    expect(cosignatureOf(w, earlier.lines[1]!, earlier.text).valid).toBe(true);
  });

  it('retries from the size a 409 Conflict names', async () => {
    const w = await witness();
    await evaluate(2);
    const two = await log.makeCheckpoint();
    // Someone else had the witness cosign size 2 (another instance, a monitor).
    const res = await fetch(`${w.url}/add-checkpoint`, {
      method: 'POST',
      body: `old 0\n\n${two.note}`,
    });
    expect(res.status).toBe(200);
    w.requests.length = 0;

    const { app, cosigning } = configure([asWitness(w)]);
    await evaluate(3);
    const five = await log.makeCheckpoint();
    expect(await cosigning.cosignLatest()).toMatchObject([{ outcome: 'cosigned', size: 5 }]);
    const { proof } = await log.consistency(2, 5);
    expect(w.requests).toEqual([
      { old: 0, proof: [], note: five.note, status: 409 },
      { old: 2, proof, note: five.note, status: 200 },
    ]);
    const served = await request(app).get('/v1/log/checkpoint').expect(200);
    const { text, lines } = split(served.text);
    expect(cosignatureOf(w, lines[1]!, text).valid).toBe(true);
  });

  it('stores no cosignature that does not verify under the configured key', async () => {
    const w = await witness();
    const impostor = await witness('witness.example/w1');
    // The configured key is w's; impostor answers in its name with its own key.
    const { app, cosigning } = configure([{ ...asWitness(w), url: impostor.url }]);
    await evaluate(2);
    await log.makeCheckpoint();
    expect(await cosigning.cosignLatest()).toEqual([
      {
        witness: w.name,
        size: 2,
        outcome: 'failed',
        reason: expect.stringContaining('bad cosignature: no cosignature by witness.example/w1'),
      },
    ]);
    // A witness with the right key that signs the wrong bytes.
    w.forge = true;
    const forged = configure([asWitness(w)]).cosigning;
    expect(await forged.cosignLatest()).toMatchObject([
      {
        outcome: 'failed',
        reason: 'bad cosignature: the cosignature of witness.example/w1 does not verify',
      },
    ]);
    expect(await t.store.tree.cosignaturesOf(2)).toEqual([]);
    const served = await request(app).get('/v1/log/checkpoint').expect(200);
    expect(split(served.text).lines).toHaveLength(1);
    // Not final until the witness cosigns it: cached briefly only.
    const stored = await request(app).get('/v1/log/checkpoint?size=2').expect(200);
    expect(stored.headers['cache-control']).toBe('public, max-age=60');
  });

  it('reports refusals, redirects and malformed conflicts, and tries again with the next checkpoint', async () => {
    const w = await witness();
    const { cosigning } = configure([asWitness(w)]);
    await evaluate(1);
    await log.makeCheckpoint();
    w.next = { status: 422, body: 'inconsistent\n' };
    expect(await cosigning.cosignLatest()).toMatchObject([
      {
        outcome: 'failed',
        reason: expect.stringMatching(/^422 Unprocessable Entity: .*: inconsistent$/),
      },
    ]);
    // The same checkpoint is not sent again; the next one is.
    expect(await cosigning.cosignLatest()).toEqual([]);
    await evaluate(1);
    await log.makeCheckpoint();
    w.next = { status: 307, body: '', location: `${w.url}/elsewhere` };
    expect(await cosigning.cosignLatest()).toMatchObject([
      { outcome: 'failed', reason: `HTTP 307 to ${w.url}/elsewhere: redirects are not followed` },
    ]);
    expect(w.requests).toHaveLength(2);
    await evaluate(1);
    await log.makeCheckpoint();
    w.next = { status: 409, body: 'many\n', contentType: 'text/x.tlog.size' };
    expect(await cosigning.cosignLatest()).toMatchObject([
      { outcome: 'failed', reason: '409 Conflict without a tree size in its body' },
    ]);
    await evaluate(1);
    await log.makeCheckpoint();
    expect(await cosigning.cosignLatest()).toMatchObject([{ outcome: 'cosigned', size: 4 }]);
    expect(w.requests.at(-1)).toMatchObject({ old: 0, proof: [], status: 200 });
  });

  it('refuses to go back when the witness has cosigned a larger tree', async () => {
    const w = await witness();
    const { cosigning } = configure([asWitness(w)]);
    await evaluate(1);
    await log.makeCheckpoint();
    w.next = { status: 409, body: '9\n', contentType: 'text/x.tlog.size' };
    expect(await cosigning.cosignLatest()).toMatchObject([
      {
        outcome: 'failed',
        reason: expect.stringContaining("a tree of 9 leaves, larger than this checkpoint's 1"),
      },
    ]);
    expect(w.requests).toHaveLength(1);
  });

  it('keeps no size a 409 Conflict names beyond its round: a huge one does not silence the witness', async () => {
    const w = await witness();
    const { cosigning } = configure([asWitness(w)]);
    for (const huge of ['9999999999999999', '99999999999']) {
      await evaluate(1);
      await log.makeCheckpoint();
      w.next = { status: 409, body: `${huge}\n`, contentType: 'text/x.tlog.size' };
      expect(await cosigning.cosignLatest()).toMatchObject([{ outcome: 'failed' }]);
    }
    // The next round starts from what the witness verifiably cosigned (nothing yet).
    await evaluate(1);
    const three = await log.makeCheckpoint();
    expect(await cosigning.cosignLatest()).toMatchObject([{ outcome: 'cosigned', size: 3 }]);
    expect(w.requests.at(-1)).toMatchObject({ old: 0, note: three.note, status: 200 });
    expect((await t.store.tree.cosignaturesOf(3)).map((c) => c.witness)).toEqual([w.name]);
  });

  it('does not let an unreachable or silent witness disturb evaluate', async () => {
    const good = await witness('witness.example/good');
    const down = await witness('witness.example/down');
    const silent = await witness('witness.example/silent');
    // Nothing listens on one port; the other accepts and never answers.
    const hang = createServer(() => undefined).listen(0, '127.0.0.1');
    servers.push(hang);
    await new Promise((resolve) => hang.once('listening', resolve));
    const { app, cosigning } = configure(
      [
        asWitness(good),
        { ...asWitness(down), url: `http://127.0.0.1:${await freePort()}/w` },
        {
          ...asWitness(silent),
          url: `http://127.0.0.1:${(hang.address() as AddressInfo).port}/w`,
        },
      ],
      300,
    );
    await evaluate(2);
    await log.makeCheckpoint();
    const started = Date.now();
    const round = cosigning.cosignLatest();
    // Appends go on while the round waits for the silent witness.
    await request(app).post('/v1/evaluate').set('X-API-Key', apiKey).send(validClaim()).expect(200);
    const outcomes = await round;
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(outcomes).toEqual([
      {
        witness: 'witness.example/good',
        size: 2,
        outcome: 'cosigned',
        timestamp: expect.any(Number),
      },
      {
        witness: 'witness.example/down',
        size: 2,
        outcome: 'failed',
        reason: 'unreachable: ECONNREFUSED',
      },
      {
        witness: 'witness.example/silent',
        size: 2,
        outcome: 'failed',
        reason: 'unreachable: timed out',
      },
    ]);
    expect(await t.store.tree.size()).toBe(3);
    const served = await request(app).get('/v1/log/checkpoint?size=2').expect(200);
    expect(split(served.text).lines).toHaveLength(2);
  });

  it('serves the cosignatures with a receipt’s proof and in an export, and every verifier ignores the witness’s line', async () => {
    const w = await witness();
    const { app, cosigning } = configure([asWitness(w)]);
    const evaluated = await request(app)
      .post('/v1/evaluate')
      .set('X-API-Key', apiKey)
      .send(validClaim())
      .expect(200);
    await evaluate(2);
    const stored = await log.makeCheckpoint();
    expect(await cosigning.cosignLatest()).toMatchObject([{ outcome: 'cosigned', size: 3 }]);
    const { receipt } = evaluated.body;

    // The proof's checkpoint is the served one: the log's signature, then the cosignature.
    const served = (await request(app).get('/v1/log/checkpoint').expect(200)).text;
    const proof = (await request(app).get(`/v1/receipts/${receipt.receipt_id}/proof`).expect(200))
      .body;
    expect(proof.checkpoint).toBe(served);
    expect(proof.checkpoint.startsWith(stored.note)).toBe(true);
    const { text, lines } = split(proof.checkpoint);
    expect(lines).toHaveLength(2);
    expect(cosignatureOf(w, lines[1]!, text).valid).toBe(true);

    // The server's inclusion check passes with it (the witness's key is not the log's).
    const verified = await request(app).post('/v1/verify').send({ receipt, proof }).expect(200);
    expect(verified.body.valid).toBe(true);
    expect(verified.body.checks).toContainEqual({
      name: 'inclusion',
      layer: 'ledger',
      status: 'PASS',
    });

    // A witness that does not know this witness's key accepts the cosigned checkpoint.
    const step = beginWitnessStep({
      kept: null,
      latest: proof.checkpoint,
      keys: [t.serverKey.publicKeyRaw],
    });
    expect(step).toMatchObject({ ok: true, outcome: 'first', checkpoint: { size: 3 } });

    // svc log export writes it with the cosignature; the ledger audit accepts it.
    const dir = await mkdtemp(join(tmpdir(), 'svc-export-cosigned-'));
    try {
      const exported = await exportLog(t.store, dir);
      expect(await readFile(exported.checkpointPath, 'utf8')).toBe(served);
      const audit = await auditSource({ source: { dir }, keys: [t.serverKey.publicKeyRaw] });
      expect(audit).toMatchObject({ ok: true, size: 3 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
