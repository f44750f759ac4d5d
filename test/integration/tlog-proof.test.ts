import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import canonicalize from 'canonicalize';
import { exportLog } from '../../src/cli/log-export.js';
import { TransparencyLog } from '../../src/services/transparency-log.js';
import { WitnessCosigning, type Witness } from '../../src/services/witness-cosigning.js';
import { startFakeWitness, type FakeWitness } from '../support/fake-witness.js';
import { newServerKey } from '../support/harness.js';
import { startLiveService, type LiveService } from '../support/live-service.js';
import { ed25519Witness, hasNodeMlDsa, logVkey, mlDsaWitness } from '../support/tlog-witnesses.js';
import { runNode } from '../fixtures/run-node.js';
import { transpileTree, type TranspiledTree } from '../fixtures/transpile-tree.js';

// A receipt, its C2SP tlog-proof@v1 (from the service and from `svc log export --receipts`)
// and a C2SP tlog-policy verify offline with svc-verify, a real child process; the witnesses
// are written from tlog-witness with node:crypto, and the served proof is checked here by
// RFC 9162 written from its text, never by the service's own code.

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ORIGIN = 'svc.example.com/ledger';
const sha256 = (...parts: Uint8Array[]) =>
  createHash('sha256').update(Buffer.concat(parts)).digest();
const node = (l: Buffer, r: Buffer) => sha256(Buffer.of(1), l, r);

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

/** Leaf hash of a receipt-core-v2 receipt (contract §9): SHA-256(0x00 ‖ JCS {core, attestations}). */
function leafHashOf(receipt: Json): Buffer {
  const core = Object.fromEntries(
    (receipt.signed_fields.fields as string[]).map((f) => [f, receipt[f]]),
  );
  return sha256(
    Buffer.of(0),
    Buffer.from(canonicalize({ core, attestations: receipt.attestations })!, 'utf8'),
  );
}

describe('tlog-proof files, tlog-policy files and witness quorums', () => {
  let tree: TranspiledTree;
  let script: string;
  let live: LiveService;
  let dir: string;
  let w1: FakeWitness;
  let w2: FakeWitness;
  let cosigning: WitnessCosigning;
  const receipts: Json[] = [];
  const stranger = ed25519Witness('stranger.example/w', 9);
  const cli = (...args: string[]) => runNode(script, args);
  const file = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${live.url}${path}`, { headers });
  const asWitness = (w: FakeWitness): Witness => ({
    name: w.name,
    verifierKey: w.vkey,
    url: w.url,
  });

  beforeAll(async () => {
    tree = transpileTree(['packages/verify/src/cli/svc-verify.ts']);
    script = fileURLToPath(tree.url('packages/verify/src/cli/svc-verify.ts'));
    dir = mkdtempSync(join(tmpdir(), 'tlog-proof-'));
    const serverKey = newServerKey();
    const startWitness = (name: string) =>
      startFakeWitness({
        name,
        origin: ORIGIN,
        logPublicKeyPem: serverKey.publicKeyPem,
        now: () => Math.floor(live.t.clock.now() / 1000),
      });
    w1 = await startWitness('w1.example/witness');
    w2 = await startWitness('w2.example/witness');
    live = await startLiveService({
      serverKey,
      config: { logOrigin: ORIGIN, witnesses: [asWitness(w1), asWitness(w2)] },
    });
    const account = await live.signup();
    for (let i = 0; i < 3; i++)
      receipts.push((await live.evaluate(account.apiKey)).receipt as Json);
    const log = new TransparencyLog({
      tree: live.t.store.tree,
      ledger: live.t.store.ledger,
      serverKey,
      clock: live.t.clock,
      origin: ORIGIN,
    });
    cosigning = new WitnessCosigning({
      log,
      tree: live.t.store.tree,
      witnesses: [asWitness(w1), asWitness(w2)],
      clock: live.t.clock,
      minIntervalMs: 60_000,
    });
    await log.makeCheckpoint();
    expect(await cosigning.cosignLatest()).toMatchObject([
      { outcome: 'cosigned', size: 3 },
      { outcome: 'cosigned', size: 3 },
    ]);
  });
  afterAll(async () => {
    await live.close();
    await w1.close();
    await w2.close();
    tree.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  async function tlogProof(receipt: Json, query = '?format=tlog-proof') {
    const res = await get(`/v1/receipts/${receipt.receipt_id}/proof${query}`);
    expect(res.status).toBe(200);
    return res.text();
  }

  /** A policy written by hand: the log key (computed here from its PEM) and these witnesses. */
  const policyFile = (name: string, witnessLines: string[], quorum: string) =>
    file(
      name,
      `log ${logVkey(ORIGIN, live.t.serverKey.publicKeyPem)}\n${witnessLines.join('\n')}\nquorum ${quorum}\n`,
    );
  const bothWitnesses = () => [`witness A ${w1.vkey}`, `witness B ${w2.vkey}`];

  it('serves the C2SP tlog-proof@v1 text: header, index, proof lines, empty line, cosigned checkpoint', async () => {
    const receipt = receipts[1]!;
    const res = await get(`/v1/receipts/${receipt.receipt_id}/proof`, {
      Accept: 'text/x-tlog-proof',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/x-tlog-proof; charset=utf-8');
    expect(res.headers.get('vary')).toContain('Accept');
    const text = await res.text();
    expect(await tlogProof(receipt)).toBe(text);
    const checkpoint = await (await get('/v1/log/checkpoint?size=3')).text();
    // Two cosignatures after the log's own signature.
    expect(checkpoint.split('\n\n')[1]!.trimEnd().split('\n')).toHaveLength(3);
    const [head, ...rest] = text.split('\n\n');
    expect(rest.join('\n\n')).toBe(checkpoint);
    const lines = head!.split('\n');
    expect(lines[0]).toBe('c2sp.org/tlog-proof@v1');
    expect(lines[1]).toBe('index 1');
    const proof = lines.slice(2).map((l) => Buffer.from(l, 'base64'));
    expect(proof).toHaveLength(2);
    const root = Buffer.from(checkpoint.split('\n')[2]!, 'base64');
    expect(rootFromInclusion(1, 3, leafHashOf(receipt), proof)).toEqual(root);
  });

  it('keeps JSON the default, ?format=json wins over Accept, and OpenAPI documents both', async () => {
    const openapi = (await (await get('/v1/openapi.json')).json()) as Json;
    expect(
      Object.keys(openapi.paths['/v1/receipts/{id}/proof'].get.responses['200'].content),
    ).toEqual(['application/json', 'text/x-tlog-proof']);
    const id = receipts[0]!.receipt_id as string;
    for (const [query, headers] of [
      ['', {}],
      ['', { Accept: '*/*' }],
      ['?format=json', { Accept: 'text/x-tlog-proof' }],
    ] as const) {
      const res = await get(`/v1/receipts/${id}/proof${query}`, headers);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toMatchObject({ leaf_index: 0, tree_size: 3 });
    }
  });

  it('answers a bad format with 400 and a size without a checkpoint with 404, changing nothing', async () => {
    const id = receipts[0]!.receipt_id as string;
    const before = (await (await get('/v1/ledger/stats')).json()) as Json;
    const bad = await get(`/v1/receipts/${id}/proof?format=xml`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      code: 'validation_failed',
      request_id: expect.any(String),
    });
    const none = await get(`/v1/receipts/${id}/proof?format=tlog-proof&size=2`);
    expect(none.status).toBe(404);
    const body = (await none.json()) as Json;
    expect(body).toMatchObject({ code: 'not_found', request_id: expect.any(String) });
    expect(body.error).toContain('No checkpoint of size 2 was made');
    expect(await (await get('/v1/ledger/stats')).json()).toEqual(before);
  });

  it('verifies a receipt, its .tlog-proof and a policy offline, naming the witnesses that cosigned', async () => {
    const receipt = receipts[1]!;
    const receiptPath = file('r1.json', JSON.stringify(receipt));
    const proofPath = file('r1.tlog-proof', await tlogProof(receipt));
    const policy = await policyFile('both.policy', [...bothWitnesses(), 'group G all A B'], 'G');
    // No --key: the policy's log key is the trust.
    const run = await cli(receiptPath, '--proof', proofPath, '--policy', policy);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^PASS\s+signature_valid$/m);
    expect(run.stdout).toMatch(/^PASS\s+inclusion$/m);
    expect(run.stdout).toMatch(
      /^witness\s+cosigned\s+A \(w1\.example\/witness, cosignature\/v1\) at /m,
    );
    expect(run.stdout).toMatch(/^witness\s+cosigned\s+B \(w2\.example\/witness/m);
    expect(run.stdout).toContain('quorum        MET: quorum G met: cosigned by A, B');
    expect(run.stdout).toContain("the policy's witness quorum met");
    const json = await cli(receiptPath, '--proof', proofPath, '--policy', policy, '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({
      valid: true,
      witnesses: { ok: true, report: { met: true, quorum: 'G', unknown: [] } },
    });
    // With the key pinned as well, the policy's log must still have signed.
    const pem = file('server.pem', live.t.serverKey.publicKeyPem);
    expect(
      (await cli(receiptPath, '--proof', proofPath, '--policy', policy, '--key', pem)).code,
    ).toBe(0);
  });

  (hasNodeMlDsa ? it : it.skip)(
    "counts an ML-DSA-44 subtree/v1 cosignature (signed by Node's OpenSSL) towards the quorum",
    async () => {
      const pq = mlDsaWitness('pq.example/witness');
      const proof = await tlogProof(receipts[1]!);
      const body = `${proof.split('\n\n')[1]!}\n`;
      const proofPath = file('pq.tlog-proof', proof + pq.line(body));
      const receiptPath = file('pq.json', JSON.stringify(receipts[1]));
      const policy = policyFile(
        'pq.policy',
        [`witness A ${w1.vkey}`, `witness P ${pq.vkey}`, 'group G all A P'],
        'G',
      );
      const run = await cli(receiptPath, '--proof', proofPath, '--policy', policy);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(
        /^witness\s+cosigned\s+P \(pq\.example\/witness, subtree\/v1\) at /m,
      );
      expect(run.stdout).toContain('quorum G met: cosigned by A, P');
      // The same line over another tree size does not verify: refused, naming the witness.
      const other = body.replace('\n3\n', '\n2\n');
      const forged = file('pq-forged.tlog-proof', proof + pq.line(other));
      const refused = await cli(receiptPath, '--proof', forged, '--policy', policy);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toContain(
        'the subtree/v1 cosignature of pq.example/witness does not verify',
      );
    },
  );

  it('refuses a quorum not met, and one met only by a witness the policy does not know', async () => {
    const receiptPath = file('r2.json', JSON.stringify(receipts[2]));
    const proofPath = file('r2.tlog-proof', await tlogProof(receipts[2]!));
    const unmet = await policyFile(
      'unmet.policy',
      [...bothWitnesses(), `witness S ${stranger.vkey}`, 'group G all A B S'],
      'G',
    );
    let run = await cli(receiptPath, '--proof', proofPath, '--policy', unmet);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^witness\s+missing\s+S \(stranger\.example\/w/m);
    expect(run.stdout).toContain('quorum        NOT MET: quorum G NOT met: cosigned by A, B');
    expect(run.stdout).toMatch(/NOT VALID\n$/);
    const onlyStranger = await policyFile('stranger.policy', [`witness S ${stranger.vkey}`], 'S');
    run = await cli(receiptPath, '--proof', proofPath, '--policy', onlyStranger);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      `quorum S NOT met: cosigned by no witness of the policy; ignored: ${w1.name}, ${w2.name} (not in the policy)`,
    );
  });

  it('fails a tampered index, proof line, checkpoint and cosignature, each with its reason', async () => {
    const receipt = receipts[1]!;
    const receiptPath = file('t.json', JSON.stringify(receipt));
    const good = await tlogProof(receipt);
    const policy = await policyFile('t.policy', [...bothWitnesses(), 'group G any A B'], 'G');
    const lines = good.split('\n');
    const otherHash = sha256(Buffer.from('another node')).toString('base64');
    const cosignature = lines.findIndex((l) => l.startsWith(`\u2014 ${w1.name} `));
    const flipped = (line: string) => {
      const [dash, name, sig] = line.split(' ') as [string, string, string];
      const bytes = Buffer.from(sig, 'base64');
      bytes[bytes.length - 1]! ^= 1;
      return `${dash} ${name} ${bytes.toString('base64')}`;
    };
    const rootLine = lines.indexOf('3') + 1;
    const cases: [string, (l: string[]) => void, RegExp][] = [
      [
        'index',
        (l) => (l[1] = 'index 2'),
        /FAIL\s+inclusion\s+leaf_index 2 is not this receipt's leaf/,
      ],
      [
        'proof line',
        (l) => (l[2] = otherHash),
        /FAIL\s+inclusion\s+the inclusion proof does not lead/,
      ],
      [
        'checkpoint',
        (l) => (l[rootLine] = otherHash),
        /FAIL\s+inclusion\s+bad checkpoint signature/,
      ],
      [
        'cosignature',
        (l) => (l[cosignature] = flipped(l[cosignature]!)),
        /quorum\s+NOT MET: the cosignature\/v1 cosignature of w1\.example\/witness does not verify/,
      ],
    ];
    for (const [what, tamper, reason] of cases) {
      const copy = [...lines];
      tamper(copy);
      const run = await cli(
        receiptPath,
        '--proof',
        file(`t-${what}`, copy.join('\n')),
        '--policy',
        policy,
      );
      expect({ what, code: run.code }).toEqual({ what, code: 1 });
      expect(run.stdout).toMatch(reason);
    }
  });

  it('refuses unusable proof and policy files with exit 2 and a clear message', async () => {
    const receiptPath = file('u.json', JSON.stringify(receipts[0]));
    const good = await tlogProof(receipts[0]!);
    const policy = await policyFile('u.policy', bothWitnesses(), 'A');
    const cases: [string[], string][] = [
      [
        ['--proof', file('u1', good.replace('index 0', 'index 00')), '--policy', policy],
        'malformed tlog-proof: line 2 is not "index <decimal>"',
      ],
      [
        [
          '--proof',
          file('u2', good.replace(/\n[A-Za-z0-9+/]{43}=\n/, '\nnot-base64\n')),
          '--policy',
          policy,
        ],
        'malformed tlog-proof: line 3 is not the base64 of a 32-byte hash',
      ],
      [
        ['--proof', file('u3', good), '--policy', file('bad.policy', 'quorum none\nverifier x\n')],
        'tlog-policy line 2: unknown line "verifier"',
      ],
      [
        ['--proof', file('u4', good), '--policy', file('no-quorum.policy', '# empty\n')],
        'tlog-policy: no quorum line',
      ],
      [['--policy', policy], '--policy needs --proof'],
      [
        [
          '--proof',
          file('u5', good),
          '--policy',
          file('other.policy', `log ${stranger.vkey.replace('+', '+')}\nquorum none\n`),
        ],
        'tlog-policy line 1: not an Ed25519 signed-note vkey',
      ],
      [
        ['--proof', file('u6', good), '--policy', join(dir, 'missing.policy')],
        'cannot read the policy',
      ],
    ];
    for (const [args, message] of cases) {
      const run = await cli(receiptPath, ...args);
      expect({ args, code: run.code }).toEqual({ args, code: 2 });
      expect(run.stderr).toContain(message);
    }
  });

  it('writes a policy for the service with policy init, trusting the key on first use only with a note', async () => {
    const out = join(dir, 'init.policy');
    const run = await cli(
      'policy',
      'init',
      '--url',
      live.url,
      '--witness',
      w1.vkey,
      '--witness',
      w2.vkey,
      '--quorum',
      '1',
      '--out',
      out,
    );
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(
      `the log key ${live.t.serverKey.keyId} was trusted on first use: check this fingerprint through another channel`,
    );
    const text = readFileSync(out, 'utf8');
    expect(text).toContain(`# FINGERPRINT ${live.t.serverKey.keyId}`);
    expect(text.split('\n').filter((l) => !l.startsWith('#') && l !== '')).toEqual([
      `log ${logVkey(ORIGIN, live.t.serverKey.publicKeyPem)}`,
      `witness ${w1.name} ${w1.vkey}`,
      `witness ${w2.name} ${w2.vkey}`,
      `group witnesses any ${w1.name} ${w2.name}`,
      'quorum witnesses',
    ]);
    // Pinned, the note says where the keys came from instead.
    const pinned = await cli(
      'policy',
      'init',
      '--url',
      live.url,
      '--fingerprint',
      live.t.serverKey.keyId,
    );
    expect(pinned.code).toBe(0);
    expect(pinned.stdout).toContain('signed key history');
    expect(pinned.stdout).toMatch(/\nquorum none\n$/);
    // The policy it wrote verifies the service's proofs.
    const receiptPath = file('init.json', JSON.stringify(receipts[0]));
    const proofPath = file('init.tlog-proof', await tlogProof(receipts[0]!));
    expect((await cli(receiptPath, '--proof', proofPath, '--policy', out)).code).toBe(0);
    for (const [args, message] of [
      [['policy', 'init'], 'policy init needs --url'],
      [
        ['policy', 'init', '--url', live.url, '--witness', 'w+00000000+AAAA'],
        '--witness 1: not a cosigner vkey',
      ],
      [
        ['policy', 'init', '--url', live.url, '--witness', w1.vkey, '--quorum', '2'],
        '--quorum 2 is more than the 1 witness(es) given',
      ],
      [['policy', 'init', '--url', live.url, '--quorum', 'all'], '--quorum all needs witnesses'],
      [['policy', 'frobnicate'], 'policy: unknown command "frobnicate"'],
    ] as [string[], string][]) {
      const bad = await cli(...args);
      expect({ args, code: bad.code }).toEqual({ args, code: 2 });
      expect(bad.stderr).toContain(message);
    }
  });

  it('judges the quorum in svc-verify witness and ledger with --policy', async () => {
    const pem = file('server.pem', live.t.serverKey.publicKeyPem);
    const met = await policyFile('w-met.policy', [...bothWitnesses(), 'group G all A B'], 'G');
    const unmet = await policyFile('w-unmet.policy', [`witness S ${stranger.vkey}`], 'S');
    const state = join(dir, 'witness.state');
    let run = await cli(
      'witness',
      '--state',
      state,
      '--url',
      live.url,
      '--key',
      pem,
      '--policy',
      met,
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('quorum        MET: quorum G met: cosigned by A, B');
    run = await cli(
      'witness',
      '--state',
      state,
      '--url',
      live.url,
      '--key',
      pem,
      '--policy',
      unmet,
      '--json',
    );
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({
      ok: true,
      outcome: 'unchanged',
      witnesses: { ok: false },
    });
    expect(run.stderr).toContain('QUORUM NOT MET: quorum S NOT met');

    const exported = join(dir, 'export');
    const done = await exportLog(live.t.store, exported, { receipts: true });
    expect(done).toMatchObject({ size: 3, receipts: 3 });
    run = await cli('ledger', '--dir', exported, '--key', pem, '--policy', met);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('LEDGER OK');
    expect(run.stdout).toContain('quorum        MET');
    run = await cli('ledger', '--dir', exported, '--key', pem, '--policy', unmet);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('svc-verify ledger: QUORUM NOT MET');
    run = await cli(
      'ledger',
      '--dir',
      exported,
      '--key',
      pem,
      '--policy',
      file('x.policy', 'log nonsense\n'),
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('tlog-policy line 1');
  });

  it('exports every receipt beside its .tlog-proof, and each pair verifies offline', async () => {
    const exported = join(dir, 'export-receipts');
    await exportLog(live.t.store, exported, { receipts: true });
    const policy = await policyFile('e.policy', [...bothWitnesses(), 'group G all A B'], 'G');
    for (const receipt of receipts) {
      const base = join(exported, 'receipts', receipt.receipt_id as string);
      expect(JSON.parse(readFileSync(`${base}.json`, 'utf8'))).toEqual(receipt);
      expect(readFileSync(`${base}.tlog-proof`, 'utf8')).toBe(
        await tlogProof(receipt, '?format=tlog-proof&size=3'),
      );
      const run = await cli(`${base}.json`, '--proof', `${base}.tlog-proof`, '--policy', policy);
      expect({ id: receipt.receipt_id, code: run.code }).toEqual({
        id: receipt.receipt_id,
        code: 0,
      });
    }
    // Without --receipts, no receipts directory.
    const plain = join(dir, 'export-plain');
    await exportLog(live.t.store, plain);
    expect(existsSync(join(plain, 'receipts'))).toBe(false);
  });

  it('sends witnesses a checkpoint at most every interval, while the service signs fresh ones', async () => {
    const account = await live.signup();
    const sent = () => [w1.requests.length, w2.requests.length];
    const before = sent();
    const late = (await live.evaluate(account.apiKey)).receipt as Json;
    // The service's own checkpoint covers the new receipt at once.
    const served = await (await get('/v1/log/checkpoint')).text();
    expect(served.split('\n')[1]).toBe('4');
    live.t.clock.advance(30_000);
    expect(await cosigning.cosignLatest()).toEqual([]);
    expect(sent()).toEqual(before);
    // A tlog-proof of an older receipt is made against the checkpoint the witnesses cosigned;
    // the new receipt's against the newest, not cosigned yet.
    expect(await tlogProof(receipts[0]!)).toContain('\n\nsvc.example.com/ledger\n3\n');
    const fresh = await tlogProof(late);
    expect(fresh).toContain('\n\nsvc.example.com/ledger\n4\n');
    expect(fresh.split('\n\n')[2]!.trimEnd().split('\n')).toHaveLength(1);
    live.t.clock.advance(30_000);
    expect(await cosigning.cosignLatest()).toMatchObject([
      { outcome: 'cosigned', size: 4 },
      { outcome: 'cosigned', size: 4 },
    ]);
    expect(sent()).toEqual(before.map((n) => n + 1));
    expect(await tlogProof(late)).toContain(`\u2014 ${w1.name} `);
  });
});
