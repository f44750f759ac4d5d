import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createPublicKey, verify as nodeVerify } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { startLiveService, type LiveService } from '../support/live-service.js';
import { claimOf } from '../support/claims.js';
import { runNode } from '../fixtures/run-node.js';
import { transpileTree, type TranspiledTree } from '../fixtures/transpile-tree.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

// A receipt as an in-toto attestation (contract §14): served by GET /v1/receipts/:id/attestation,
// checked here by a DSSE verifier written from the DSSE specification with node:crypto (not the
// code that signed), and by svc-verify attestation.

/** DSSE v1.0 protocol.md: PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body. */
function pae(type: string, body: Buffer): Buffer {
  const t = Buffer.from(type, 'utf8');
  return Buffer.concat([
    Buffer.from(`DSSEv1 ${t.length} `),
    t,
    Buffer.from(` ${body.length} `),
    body,
  ]);
}

let live: LiveService;
let apiKey: string;
let tree: TranspiledTree;
let dir: string;
let serverPem: string;
const cli = (...args: string[]) =>
  runNode(fileURLToPath(tree.url('packages/verify/src/cli/svc-verify.ts')), args, 30_000);
const file = (name: string, content: string) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

beforeAll(async () => {
  tree = transpileTree(['packages/verify/src/cli/svc-verify.ts']);
  dir = mkdtempSync(join(tmpdir(), 'svc-attestation-'));
  live = await startLiveService({ config: { baseUrl: 'https://svc.example' } });
  apiKey = (await live.signup()).apiKey;
  serverPem = await (await fetch(`${live.url}/v1/keys/server`)).text();
});
afterAll(async () => {
  await live.close();
  tree.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

async function attested(claim: Json): Promise<{ receipt: Json; envelope: Json; statement: Json }> {
  const receipt = (await live.evaluate(apiKey, claim)).receipt as Json;
  const res = await request(live.t.app).get(`/v1/receipts/${receipt.receipt_id}/attestation`);
  expect(res.status).toBe(200);
  const envelope = res.body as Json;
  const statement = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8')) as Json;
  return { receipt, envelope, statement };
}

describe('GET /v1/receipts/:id/attestation', () => {
  it('is a DSSE envelope signed over PAE by the current key, as DSSE verifies it', async () => {
    const { envelope } = await attested(claimOf());
    expect(envelope.payloadType).toBe('application/vnd.in-toto+json');
    expect(envelope.signatures).toHaveLength(1);
    const [signature] = envelope.signatures as { keyid: string; sig: string }[];
    expect(signature!.keyid).toBe(live.t.serverKey.keyId);
    const body = Buffer.from(envelope.payload, 'base64');
    const signed = pae(envelope.payloadType, body);
    const key = createPublicKey(serverPem);
    expect(nodeVerify(null, signed, key, Buffer.from(signature!.sig, 'base64'))).toBe(true);
    const flipped = Buffer.from(body);
    flipped[10] = flipped[10]! ^ 1;
    expect(
      nodeVerify(
        null,
        pae(envelope.payloadType, flipped),
        key,
        Buffer.from(signature!.sig, 'base64'),
      ),
    ).toBe(false);
  });

  it('states an SLSA VSA v1 of the receipt, its commit the subject', async () => {
    const { receipt, statement } = await attested(claimOf());
    const receiptHex = (receipt.chain.receipt_hash as string).slice('sha256:'.length);
    expect(statement).toEqual({
      _type: 'https://in-toto.io/Statement/v1',
      subject: [{ name: 'acme/web', digest: { gitCommit: 'a1b2c3d' } }],
      predicateType: 'https://slsa.dev/verification_summary/v1',
      predicate: {
        verifier: { id: 'https://svc.example' },
        timeVerified: receipt.issued_at,
        resourceUri: 'git+https://github.com/acme/web@a1b2c3d',
        policy: {
          uri: 'https://svc.example/v1/policies/default',
          digest: { sha256: (receipt.policy.config_hash as string).slice('sha256:'.length) },
        },
        inputAttestations: [
          {
            uri: `https://svc.example/v1/receipts/${receipt.receipt_id}`,
            digest: { sha256: receiptHex },
          },
        ],
        verificationResult: 'PASSED',
        verifiedLevels: [],
      },
    });
  });

  it('says FAILED for a receipt that does not proceed, and names the receipt without a commit', async () => {
    const { receipt, statement } = await attested(claimOf({ kind: 'blocked', commit: null }));
    expect(receipt.policy.verdict).toBe('BLOCKED');
    expect(statement.predicate).toMatchObject({
      verificationResult: 'FAILED',
      verifiedLevels: ['FAILED'],
    });
    expect(statement.subject).toEqual([
      {
        name: receipt.receipt_id,
        digest: { sha256: (receipt.chain.receipt_hash as string).slice('sha256:'.length) },
      },
    ]);
  });

  it('is 404 for a receipt that does not exist', async () => {
    const res = await request(live.t.app).get(
      '/v1/receipts/dr-00000000000000000000000000/attestation',
    );
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });
});

describe('svc-verify attestation', () => {
  it('accepts the envelope of a receipt under the pinned key', async () => {
    const { receipt, envelope } = await attested(claimOf());
    const run = await cli(
      'attestation',
      file('ok.dsse.json', JSON.stringify(envelope)),
      '--receipt',
      file('ok.json', JSON.stringify(receipt)),
      '--key',
      file('server.pem', serverPem),
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^signature\s+PASS/m);
    expect(run.stdout).toMatch(/^verification_result\s+PASS\s+PASSED, as the receipt says/m);
    expect(run.stdout).toMatch(/ATTESTATION OK$/m);
  });

  it('refuses an envelope of another receipt, a tampered payload and a result the receipt denies', async () => {
    const a = await attested(claimOf());
    const b = await attested(claimOf({ kind: 'blocked' }));
    const key = file('server.pem', serverPem);
    const receiptA = file('a.json', JSON.stringify(a.receipt));
    const other = await cli(
      'attestation',
      file('b.dsse.json', JSON.stringify(b.envelope)),
      '--receipt',
      receiptA,
      '--key',
      key,
    );
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('receipt_digest');
    // The statement of A with its result turned to FAILED, re-signed by the same key: the
    // signature holds, the statement contradicts the receipt.
    const lying = {
      ...a.statement,
      predicate: { ...a.statement.predicate, verificationResult: 'FAILED' },
    };
    const payload = Buffer.from(JSON.stringify(lying));
    const resigned = {
      ...a.envelope,
      payload: payload.toString('base64'),
      signatures: [
        {
          keyid: live.t.serverKey.keyId,
          sig: Buffer.from(live.t.serverKey.sign(pae(a.envelope.payloadType, payload))).toString(
            'base64',
          ),
        },
      ],
    };
    const contradicts = await cli(
      'attestation',
      file('lie.dsse.json', JSON.stringify(resigned)),
      '--receipt',
      receiptA,
      '--key',
      key,
    );
    expect(contradicts.code).toBe(1);
    expect(contradicts.stderr).toContain(
      'verification_result: verificationResult FAILED but the receipt says PASSED',
    );
    const tampered = { ...resigned, signatures: a.envelope.signatures };
    const run = await cli(
      'attestation',
      file('tampered.dsse.json', JSON.stringify(tampered)),
      '--receipt',
      receiptA,
      '--key',
      key,
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('signature: no signature verifies under a trusted key');
  });

  it('exits 2 on an envelope that is not one, and without --receipt', async () => {
    const key = file('server.pem', serverPem);
    const notEnvelope = await cli(
      'attestation',
      file('x.json', '{"payload": 1}'),
      '--receipt',
      key,
      '--key',
      key,
    );
    expect(notEnvelope.code).toBe(2);
    expect(notEnvelope.stderr).toContain('envelope: payload must be a base64 string');
    const noReceipt = await cli('attestation', file('y.json', '{}'), '--key', key);
    expect(noReceipt.code).toBe(2);
    expect(noReceipt.stderr).toContain('attestation needs --receipt <file>');
  });
});
