import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import { type Json, ledgerState, newKey, uniqueEmail } from '../../support/api.js';
import { H, nobleVerifies } from '../../support/receipts.js';
import { validClaim } from '../../support/claims.js';

describe('concurrent requests', () => {
  let t: TestApp;
  let server: Server;
  let base: string;
  let key: string;

  beforeEach(async () => {
    t = buildTestApp();
    // One real server on the loopback address for every request of a test.
    server = createServer(t.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    key = await newKey(t, 'enterprise');
  });
  afterEach(async () => {
    await new Promise<void>((resolve, reject) =>
      server.close((error) => (error ? reject(error) : resolve())),
    );
    await t.close();
  });

  const evaluate = (claim: Json) =>
    request(base).post('/v1/evaluate').set('X-API-Key', key).send(claim);

  it('50 concurrent evaluates: sequences exactly 1..50, each linked to the previous receipt_hash', async () => {
    const claims = Array.from({ length: 50 }, (_, i) => validClaim({ claim_id: `parallel-${i}` }));
    const responses = await Promise.all(claims.map(evaluate));

    expect(responses.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(responses.every((r) => r.headers['idempotent-replay'] === undefined)).toBe(true);
    const receipts = responses.map((r) => r.body.receipt as Json);
    expect(receipts.map((r) => r.claim_id)).toEqual(claims.map((c) => c.claim_id));
    expect(new Set(receipts.map((r) => r.receipt_id)).size).toBe(50);
    const sequences = receipts.map((r) => (r.chain as Json).sequence as number);
    expect([...sequences].sort((a, b) => a - b)).toEqual(
      Array.from({ length: 50 }, (_, i) => i + 1),
    );

    const { entries, head, stats } = await ledgerState(t);
    expect(entries).toHaveLength(50);
    expect(stats.total).toBe(50);
    let previous: string | null = null;
    entries.forEach((entry, i) => {
      const { chain } = entry.receipt;
      expect(chain.sequence).toBe(i + 1);
      expect(chain.previous_receipt_hash).toBe(previous);
      // The signed position is the stored one: signing happened inside the serialized append.
      expect(entry.receipt.position).toEqual({
        log: expect.any(String),
        sequence: chain.sequence,
        previous_receipt_hash: chain.previous_receipt_hash,
      });
      const fields = entry.receipt.signed_fields.fields as (keyof typeof entry.receipt)[];
      const core = Object.fromEntries(fields.map((f) => [f, entry.receipt[f]]));
      expect(chain.receipt_hash).toBe(H({ core, attestations: entry.receipt.attestations }));
      previous = chain.receipt_hash;
    });
    expect(entries[0]!.receipt.chain.previous_receipt_hash).toBeNull();
    expect(head).toEqual({ sequence: 50, receipt_hash: previous });

    // What each caller got is what the ledger holds, and every receipt verifies.
    const byId = new Map(entries.map((e) => [e.receipt.receipt_id, e.receipt]));
    for (const receipt of receipts) {
      expect(byId.get(receipt.receipt_id as string)).toEqual(receipt);
      expect(await nobleVerifies(receipt, t.serverKey.publicKeyRaw)).toBe(true);
    }
    const verified = await Promise.all(
      receipts.map((r) => request(base).post('/v1/verify').send(r)),
    );
    expect(verified.every((v) => v.body.valid === true)).toBe(true);
  });

  it('the same claim sent 20 times at once gives one receipt and 19 idempotent replays', async () => {
    const claim = validClaim();
    const responses = await Promise.all(Array.from({ length: 20 }, () => evaluate(claim)));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    const fresh = responses.filter((r) => r.headers['idempotent-replay'] === undefined);
    expect(fresh).toHaveLength(1);
    for (const res of responses) expect(res.body).toEqual(fresh[0]!.body);
    const { entries } = await ledgerState(t);
    expect(entries).toHaveLength(1);
    expect(entries[0]!.receipt).toEqual(fresh[0]!.body.receipt);
  });

  it('one claim_id with 10 different contents at once: one receipt, nine conflicts', async () => {
    const base_ = validClaim({ claim_id: 'contested' });
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => evaluate({ ...base_, claim: `variant ${i}` })),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, ...Array(9).fill(409)]);
    for (const res of responses.filter((r) => r.status === 409)) {
      expect(res.body.code).toBe('claim_conflict');
    }
    const winner = responses.find((r) => r.status === 200)!;
    const { entries } = await ledgerState(t);
    expect(entries.map((e) => e.receipt)).toEqual([winner.body.receipt]);
    expect(entries[0]!.claim).toEqual(winner.body.claim);
  });

  it('evaluates, simulations and verifies interleaved: only evaluates reach the ledger, gap-free', async () => {
    const first = await evaluate(validClaim());
    const work = Array.from({ length: 60 }, (_, i) => {
      if (i % 3 === 0) return evaluate(validClaim({ claim_id: `mixed-${i}` }));
      if (i % 3 === 1)
        return request(base).post('/v1/simulate').set('X-API-Key', key).send(validClaim());
      return request(base).post('/v1/verify').send(first.body.receipt);
    });
    const responses = await Promise.all(work);
    expect(responses.every((r) => r.status === 200)).toBe(true);
    const { entries, head } = await ledgerState(t);
    expect(entries.map((e) => e.receipt.chain.sequence)).toEqual(
      Array.from({ length: 21 }, (_, i) => i + 1),
    );
    expect(head.sequence).toBe(21);
    for (let i = 1; i < entries.length; i++) {
      expect(entries[i]!.receipt.chain.previous_receipt_hash).toBe(
        entries[i - 1]!.receipt.chain.receipt_hash,
      );
    }
  });

  it('concurrent signups for one email issue exactly one key; the others are 409', async () => {
    const email = uniqueEmail('race');
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        request(base)
          .post('/v1/signup')
          .send({ email: i % 2 ? email.toUpperCase() : email }),
      ),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)]);
    for (const refused of responses.filter((r) => r.status === 409)) {
      expect(refused.body.code).toBe('email_registered');
      expect(JSON.stringify(refused.body)).not.toContain('sk_svc_');
    }
  });

  it('a free key hit by 120 requests at once gets exactly 100 through', async () => {
    const free = await newKey(t);
    const responses = await Promise.all(
      Array.from({ length: 120 }, () => request(base).get('/v1/account').set('X-API-Key', free)),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(100);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
    const remaining = responses
      .filter((r) => r.status === 200)
      .map((r) => Number(r.headers['x-ratelimit-remaining']))
      .sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 100 }, (_, i) => i));
  });
});
