import { generateKeyPairSync, verify } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { transpileTree, type TranspiledTree } from '../fixtures/transpile-tree.js';
import { startFakeWitness, type FakeWitness } from '../support/fake-witness.js';
import { validClaim } from '../support/claims.js';
import {
  freePort,
  startServerProcess,
  until,
  type ServerProcess,
} from '../support/server-process.js';

// The process entry's checkpoint timer sends each new checkpoint to SVC_WITNESSES: one
// witness cosigns, one cannot be reached and is logged, and evaluate goes on regardless.

const ORIGIN = 'svc.test/ledger';
let tree: TranspiledTree;
let dataDir: string;
let server: ServerProcess | undefined;
let good: FakeWitness;

beforeAll(() => {
  tree = transpileTree(['src/server.ts']);
  dataDir = mkdtempSync(join(tmpdir(), 'svc-witness-'));
});

afterAll(async () => {
  server?.kill();
  await good?.close();
  tree.cleanup();
  rmSync(dataDir, { recursive: true, force: true });
});

it('cosigns checkpoints from the timer, logs an unreachable witness at warn, and keeps evaluating', async () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  good = await startFakeWitness({
    name: 'witness.example/good',
    origin: ORIGIN,
    logPublicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    now: () => Math.floor(Date.now() / 1000),
  });
  const down = await startFakeWitness({
    name: 'witness.example/down',
    origin: ORIGIN,
    logPublicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    now: () => Math.floor(Date.now() / 1000),
  });
  const downVkey = down.vkey;
  await down.close();
  server = startServerProcess(tree, await freePort(), {
    SVC_DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    SVC_LOG_ORIGIN: ORIGIN,
    SVC_SIGNING_KEY: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    SVC_CHECKPOINT_INTERVAL: '0.2',
    SVC_WITNESS_MIN_INTERVAL: '0.1',
    SVC_WITNESSES: JSON.stringify([
      { vkey: good.vkey, url: good.url },
      { vkey: downVkey, url: `http://127.0.0.1:${await freePort()}/w` },
    ]),
  });
  const url = server.url;
  await until('the server answering', async () =>
    (await fetch(`${url}/health`)).ok ? true : null,
  );
  const signup = await fetch(`${url}/v1/signup`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: 'witness-process@example.com' }),
  });
  const { api_key: apiKey } = (await signup.json()) as { api_key: string };
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${url}/v1/evaluate`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': apiKey },
      body: JSON.stringify(validClaim()),
    });
    expect(res.status).toBe(200);
  }
  // The checkpoint of all three receipts, with the good witness's cosignature appended.
  const note = await until('a cosigned checkpoint of size 3', async () => {
    const text = await (await fetch(`${url}/v1/log/checkpoint?size=3`)).text();
    return text.split('\n\n')[1]?.trimEnd().split('\n').length === 2 ? text : null;
  });
  const [body, signatures] = note.split('\n\n') as [string, string];
  const line = signatures.trimEnd().split('\n')[1]!;
  expect(line.startsWith('\u2014 witness.example/good ')).toBe(true);
  const blob = Buffer.from(line.split(' ')[2]!, 'base64');
  const message = `cosignature/v1\ntime ${blob.readBigUInt64BE(4)}\n${body}\n`;
  expect(verify(null, Buffer.from(message), good.publicKey, blob.subarray(12))).toBe(true);
  expect(good.requests.at(-1)).toMatchObject({ status: 200 });

  const warning = await until(
    'the unreachable witness logged',
    () =>
      server!.logLines().find((l) => l.level === 40 && l.witness === 'witness.example/down') ??
      null,
  );
  expect(warning).toMatchObject({
    msg: 'witness did not cosign',
    reason: 'unreachable: ECONNREFUSED',
  });
}, 60_000);
