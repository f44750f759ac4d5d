import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseNote, signNote } from '@svc/verify';
import { newServerKey } from '../support/harness.js';
import { validClaim } from '../support/claims.js';
import { startLiveService, type LiveService } from '../support/live-service.js';
import { runNode, runNodeWithInput } from '../fixtures/run-node.js';
import { transpileTree, type TranspiledTree } from '../fixtures/transpile-tree.js';
import { loadFixture } from '../support/fixtures.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

// svc-verify runs as a real child process against receipts from a real service on 127.0.0.1.
describe('svc-verify', () => {
  let tree: TranspiledTree;
  let live: LiveService;
  let dir: string;
  let script: string;
  let response: Json;
  let receipt: Json;
  let submitter: string;
  let fingerprint: string;
  const file = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  const cli = (...args: string[]) => runNode(script, args);
  let receiptPath: string;
  let keyPath: string;

  beforeAll(async () => {
    tree = transpileTree(['packages/verify/src/cli/svc-verify.ts']);
    script = fileURLToPath(tree.url('packages/verify/src/cli/svc-verify.ts'));
    dir = mkdtempSync(join(tmpdir(), 'svc-verify-'));
    live = await startLiveService();
    const account = await live.signup();
    submitter = account.keyId;
    response = await live.evaluate(account.apiKey);
    receipt = response.receipt as Json;
    fingerprint = live.t.serverKey.keyId;
    receiptPath = file('receipt.json', JSON.stringify(receipt, null, 2));
    keyPath = file('server.pem', live.t.serverKey.publicKeyPem);
  });
  afterAll(async () => {
    await live.close();
    tree.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints its usage with --help', async () => {
    const run = await cli('--help');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('svc-verify <file | -> --key <pem-file>');
    expect(run.stdout).toContain('Exit codes: 0 valid, 1 not valid, 2 wrong usage');
  });

  it('says VALID with exit 0 for a receipt from the service under its key, and shows what was signed', async () => {
    const run = await cli(receiptPath, '--key', keyPath);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^PASS\s+signature_valid$/m);
    expect(run.stdout).toMatch(/^SKIPPED\s+hash_integrity\s+no ledger consulted$/m);
    expect(run.stdout).toMatch(/^PASS\s+chain_linkage/m);
    expect(run.stdout).toContain(`receipt       ${receipt.receipt_id}`);
    expect(run.stdout).toContain(`submitter     ${submitter}`);
    expect(run.stdout).toContain(`policy        default  ${receipt.policy.config_hash}`);
    expect(run.stdout).toMatch(/\nVALID: .*\n$/);
  });

  it('checks the .receipt of a whole evaluate response, read from standard input', async () => {
    const run = await runNodeWithInput(script, ['-', '--key', keyPath], JSON.stringify(response));
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`receipt       ${receipt.receipt_id}`);
  });

  it('prints the shape of POST /v1/verify with --json', async () => {
    const run = await cli(receiptPath, '--key', keyPath, '--json');
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as Json;
    const served = (await (
      await fetch(`${live.url}/v1/verify`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(receipt),
      })
    ).json()) as Json;
    expect(Object.keys(result).sort()).toEqual(Object.keys(served).sort());
    expect(result.checks.map((c: Json) => c.name)).toEqual(served.checks.map((c: Json) => c.name));
    expect(result.signed).toEqual(served.signed);
    expect(result).toMatchObject({ valid: true, receipt_id: receipt.receipt_id });
  });

  it('exits 1 for a tampered receipt', async () => {
    const tampered = { ...receipt, policy: { ...receipt.policy, verdict: 'ALLOWED', name: 'lax' } };
    const run = await cli(file('tampered.json', JSON.stringify(tampered)), '--key', keyPath);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^FAIL\s+signature_valid\s+Ed25519 signature does not verify/m);
    expect(run.stdout).toMatch(/^verdict {7}unknown: the signature did not verify/);
    expect(run.stdout).not.toContain('ALLOWED');
    expect(run.stdout).toMatch(/\nNOT VALID\n$/);
  });

  it('prints the version of @svc/verify with --version', async () => {
    const pkg = JSON.parse(
      readFileSync(new URL('../../packages/verify/package.json', import.meta.url), 'utf8'),
    ) as Json;
    const run = await cli('--version');
    expect(run).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
  });

  it('prints the signed verdict, admissibility and proceed first', async () => {
    const run = await cli(receiptPath, '--key', keyPath);
    expect(run.stdout.split('\n').slice(0, 3)).toEqual([
      'verdict       ALLOWED',
      'admissibility ACCEPTED',
      'proceed       yes: the signed verdict is ALLOWED and admissibility ACCEPTED',
    ]);
  });

  describe('a BLOCKED or ESCALATED receipt', () => {
    const outcomes: Record<string, string> = {};
    beforeAll(async () => {
      const account = await live.signup();
      const blocked = await live.evaluate(
        account.apiKey,
        validClaim({ claim_id: 'cli-blocked', policyConfig: { minSources: 5 } }),
      );
      const escalated = await live.evaluate(
        account.apiKey,
        validClaim({
          claim_id: 'cli-escalated',
          action: { action_type: 'deployment', target_system: 'k8s', environment: 'production' },
        }),
      );
      outcomes.BLOCKED = file('blocked.json', JSON.stringify(blocked.receipt));
      outcomes.ESCALATED = file('escalated.json', JSON.stringify(escalated.receipt));
    });

    it('is VALID with exit 0, but says first that it is not a go-ahead and why', async () => {
      const run = await cli(outcomes.BLOCKED!, '--key', keyPath);
      expect(run.code).toBe(0);
      const lines = run.stdout.split('\n');
      expect(lines[0]).toBe('verdict       BLOCKED');
      expect(lines[1]).toBe('admissibility REJECTED');
      expect(lines[2]).toMatch(
        /^proceed {7}no: the signed verdict is BLOCKED and admissibility REJECTED, not ALLOWED and ACCEPTED; failed rules: min_sources \(.+minimum 5\)$/,
      );
      expect(run.stdout).toMatch(
        /\nVALID BUT NOT A GO-AHEAD: the receipt is authentic and its signed verdict is BLOCKED \/ REJECTED: do not proceed on it\n$/,
      );
    });

    it.each(['BLOCKED', 'ESCALATED'])(
      '%s: --require-proceed exits 1 and says why, so `svc-verify … && deploy` does not deploy',
      async (verdict) => {
        const run = await cli(outcomes[verdict]!, '--key', keyPath, '--require-proceed');
        expect(run.code).toBe(1);
        expect(run.stdout.split('\n')[0]).toBe(`verdict       ${verdict}`);
        expect(run.stderr).toMatch(
          new RegExp(
            `^svc-verify: --require-proceed: not proceeding: the signed verdict is ${verdict} and admissibility REJECTED, not ALLOWED and ACCEPTED; \\S`,
          ),
        );
      },
    );

    it('--require-proceed exits 0 for an ALLOWED, ACCEPTED receipt', async () => {
      const run = await cli(receiptPath, '--key', keyPath, '--require-proceed');
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    });

    it('--require-proceed with --json: standard output is the JSON document alone', async () => {
      const run = await cli(outcomes.BLOCKED!, '--key', keyPath, '--require-proceed', '--json');
      expect(run.code).toBe(1);
      expect(JSON.parse(run.stdout)).toMatchObject({ valid: true, admissibility: 'REJECTED' });
      expect(run.stderr).toMatch(/not proceeding: the signed verdict is BLOCKED/);
    });

    it('decorated with an unsigned decision saying proceed, it is NOT VALID', async () => {
      const blocked = JSON.parse(readFileSync(outcomes.BLOCKED!, 'utf8')) as Json;
      for (const [name, decoration] of [
        ['decision', { decision: { proceed: true } }],
        ['verdict', { verdict: 'ALLOWED' }],
      ] as const) {
        const path = file(`decorated-${name}.json`, JSON.stringify({ ...blocked, ...decoration }));
        const run = await cli(path, '--key', keyPath);
        expect(run.code).toBe(1);
        expect(run.stdout).toMatch(
          new RegExp(`^FAIL\\s+no_unsigned_members\\s+members neither signed .*"${name}"$`, 'm'),
        );
        expect(run.stdout).toMatch(/^proceed {7}no: the receipt is not valid/m);
        expect(run.stdout).toMatch(/\nNOT VALID\n$/);
      }
    });
  });

  it('in --json mode prints one JSON document and nothing else, whatever the outcome', async () => {
    const tampered = file(
      'tampered-json.json',
      JSON.stringify({ ...receipt, policy: { ...receipt.policy, verdict: 'BLOCKED' } }),
    );
    for (const args of [
      [receiptPath, '--key', keyPath, '--json'],
      [receiptPath, '--key', keyPath, '--json', '--require-proceed'],
      [tampered, '--key', keyPath, '--json'],
      [receiptPath, '--key', file('other-json.pem', newServerKey().publicKeyPem), '--json'],
    ]) {
      const run = await cli(...args);
      expect(() => JSON.parse(run.stdout) as unknown).not.toThrow();
      expect(run.stdout.trimStart().startsWith('{')).toBe(true);
      expect(Object.keys(JSON.parse(run.stdout) as Json)).toContain('checks');
    }
  });

  it('exits 1 under another key and names the key that signed', async () => {
    const other = file('other.pem', newServerKey().publicKeyPem);
    const run = await cli(receiptPath, '--key', other);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`signed by     ${fingerprint}`);
  });

  it('checks expectations against the signed policy, config hash and submitter', async () => {
    const good = await cli(
      receiptPath,
      '--key',
      keyPath,
      '--expect-policy',
      'default',
      '--expect-config-hash',
      receipt.policy.config_hash,
      '--expect-submitter',
      submitter,
    );
    expect(good.code).toBe(0);
    expect(good.stdout).toMatch(/^PASS\s+policy_binding$/m);
    const bad = await cli(receiptPath, '--key', keyPath, '--expect-policy', 'strict');
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(
      /^FAIL\s+policy_binding\s+policy "default" is not the expected "strict"/m,
    );
  });

  it('fetches the key from a base URL or the key URL when the fingerprint matches', async () => {
    for (const url of [live.url, `${live.url}/`, `${live.url}/v1/keys/server`]) {
      const run = await cli(receiptPath, '--fingerprint', fingerprint, '--key-url', url);
      expect({ url, code: run.code, stderr: run.stderr }).toEqual({ url, code: 0, stderr: '' });
    }
  });

  it('refuses a fetched key whose fingerprint differs from the pin, with exit 2', async () => {
    const pin = newServerKey().keyId;
    const run = await cli(receiptPath, '--fingerprint', pin, '--key-url', live.url);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`key fingerprint ${fingerprint} differs from the pinned ${pin}`);
    expect(run.stdout).toBe('');
  });

  it('refuses to say valid without a key', async () => {
    for (const args of [[receiptPath], [receiptPath, '--fingerprint', fingerprint]]) {
      const run = await cli(...args);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/no key given|--fingerprint needs --key-url/);
    }
    const unpinned = await cli(receiptPath, '--key-url', live.url);
    expect(unpinned.code).toBe(2);
    expect(unpinned.stderr).toContain('--key-url needs --fingerprint');
  });

  it('verifies the golden v1 and v2 receipts, reporting v1 chain linkage as UNVERIFIED', async () => {
    const vectors = loadFixture<Json>('receipt-vectors.json');
    const key = file('golden.pem', vectors.signer.public_key_pem);
    const golden: [string, Json][] = [
      ...vectors.receipts.map((v: Json) => ['v1', v.receipt]),
      ...vectors.receipts_v2.map((v: Json) => ['v2', v.receipt]),
    ];
    for (const [contract, receipt] of golden) {
      const run = await cli(
        file(`golden-${receipt.receipt_id}.json`, JSON.stringify(receipt)),
        '--key',
        key,
      );
      expect({ contract, code: run.code }).toEqual({ contract, code: 0 });
      expect(run.stdout).toContain(`contract      receipt-core-${contract}`);
      expect(run.stdout).toMatch(
        contract === 'v1'
          ? /^UNVERIFIED\s+chain_linkage\s+receipt-core-v1 does not sign/m
          : /^PASS\s+chain_linkage/m,
      );
    }
  });

  it('exits 2 with the reason for unusable input', async () => {
    const text = JSON.stringify(receipt);
    const smallOrderKey = `-----BEGIN PUBLIC KEY-----\n${Buffer.from('302a300506032b6570032100' + '00'.repeat(32), 'hex').toString('base64')}\n-----END PUBLIC KEY-----\n`;
    const cases: [string[], RegExp][] = [
      [[join(dir, 'missing.json'), '--key', keyPath], /cannot read receipt file .*missing\.json/],
      [[file('not-json.json', '{"receipt_id":'), '--key', keyPath], /not valid JSON/],
      [
        [
          file('dup.json', text.replace('"claim_id":', '"claim_id":"x","claim_id":')),
          '--key',
          keyPath,
        ],
        /duplicate key "claim_id"/,
      ],
      [
        [
          file('unsafe.json', text.replace(/"sequence":\d+/, '"sequence":9007199254740993')),
          '--key',
          keyPath,
        ],
        /integer outside the exactly representable range/,
      ],
      [[receiptPath, '--key', file('small.pem', smallOrderKey)], /small order/],
      [[receiptPath, '--key', file('junk.pem', 'not a key')], /not a PEM "PUBLIC KEY" block/],
      [
        [receiptPath, '--key', keyPath, '--fingerprint', 'sha256:12'],
        /--fingerprint: fingerprint must be/,
      ],
      [[receiptPath, '--key', keyPath, '--nope'], /Unknown option '--nope'/],
      [
        [receiptPath, '--key', keyPath, '--fingerprint', `sha256:${'0'.repeat(64)}`],
        /key fingerprint sha256:\w+ differs from the pinned sha256:0{64}; refusing the key/,
      ],
      [[receiptPath, '--key', keyPath, '--key-url', 'http://127.0.0.1:1'], /not both/],
      [
        [receiptPath, '--fingerprint', fingerprint, '--key-url', 'http://127.0.0.1:1'],
        // The key history is fetched first (GET /v1/keys), then the single key.
        /cannot fetch http:\/\/127\.0\.0\.1:1\/v1\/keys/,
      ],
      [
        [receiptPath, '--fingerprint', fingerprint, '--key-url', `${live.url}/elsewhere`],
        /elsewhere\/v1\/keys\/server answered HTTP 404/,
      ],
      [['--key', keyPath], /exactly one receipt file/],
      [[receiptPath, '--key', keyPath, '--expect-submitter', 'bob'], /expected submitter must be/],
    ];
    for (const [args, reason] of cases) {
      const run = await cli(...args);
      expect({ args, code: run.code }).toEqual({ args, code: 2 });
      expect(run.stderr).toMatch(reason);
      expect(run.stderr).toContain('Run "svc-verify --help" for usage.');
    }
  });
  describe('--proof: inclusion in the ledger, offline', () => {
    let apiKey: string;
    let first: Json;
    let second: Json;
    let proofPath: string;
    let proof: Json;
    const proofOf = async (r: Json) =>
      (await (
        await fetch(`${live.url}/v1/receipts/${r.receipt_id}/proof`, {
          headers: { 'X-API-Key': apiKey },
        })
      ).json()) as Json;
    const tamper = (name: string, change: (p: Json) => void) => {
      const copy = JSON.parse(JSON.stringify(proof)) as Json;
      change(copy);
      return file(name, JSON.stringify(copy));
    };
    const inclusionLine = (stdout: string) =>
      stdout.split('\n').find((l) => /^\S+\s+inclusion\b/.test(l));

    beforeAll(async () => {
      apiKey = (await live.signup()).apiKey;
      first = (await live.evaluate(apiKey)).receipt as Json;
      second = (await live.evaluate(apiKey)).receipt as Json;
      await live.evaluate(apiKey);
      proof = await proofOf(first);
      expect(proof.tree_size).toBeGreaterThanOrEqual(3);
      expect(proof.inclusion.length).toBeGreaterThan(0);
      file('first.json', JSON.stringify(first));
      proofPath = file('proof.json', JSON.stringify(proof));
    });
    const firstPath = () => join(dir, 'first.json');

    it('without --proof, inclusion is SKIPPED and the receipt is valid', async () => {
      const run = await cli(receiptPath, '--key', keyPath);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^SKIPPED\s+inclusion\s+no inclusion proof given$/m);
    });

    it('an honest receipt and its proof: valid, inclusion PASS, as POST /v1/verify says', async () => {
      const run = await cli(firstPath(), '--key', keyPath, '--proof', proofPath);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(inclusionLine(run.stdout)).toBe('PASS       inclusion');
      expect(run.stdout).toMatch(/\nVALID: .*included in the log.*\n$/);
      const json = await cli(firstPath(), '--key', keyPath, '--proof', proofPath, '--json');
      expect(json.code).toBe(0);
      const result = JSON.parse(json.stdout) as Json;
      const served = (await (
        await fetch(`${live.url}/v1/verify`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ receipt: first, proof }),
        })
      ).json()) as Json;
      const inclusion = (r: Json) => r.checks.find((c: Json) => c.name === 'inclusion');
      expect(inclusion(result)).toEqual({ name: 'inclusion', layer: 'ledger', status: 'PASS' });
      expect(inclusion(result)).toEqual(inclusion(served));
      expect(result.checks.map((c: Json) => c.name)).toEqual(
        served.checks.map((c: Json) => c.name),
      );
      expect(result.valid).toBe(true);
    });

    it('a tampered proof: exit 1, inclusion FAIL with the reason', async () => {
      const tampered = tamper('tampered-proof.json', (p) => {
        p.inclusion[0] = Buffer.alloc(32, 7).toString('base64');
      });
      const run = await cli(firstPath(), '--key', keyPath, '--proof', tampered);
      expect(run.code).toBe(1);
      expect(inclusionLine(run.stdout)).toMatch(
        /^FAIL\s+inclusion\s+the inclusion proof does not lead from this receipt's leaf \d+ to the root of the checkpoint of size \d+$/,
      );
      expect(run.stdout).toMatch(/\nNOT VALID\n$/);
      const json = await cli(firstPath(), '--key', keyPath, '--proof', tampered, '--json');
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toMatchObject({ valid: false });
    });

    it('the proof of another receipt: exit 1', async () => {
      const other = file('other-proof.json', JSON.stringify(await proofOf(second)));
      const run = await cli(firstPath(), '--key', keyPath, '--proof', other);
      expect(run.code).toBe(1);
      expect(inclusionLine(run.stdout)).toMatch(
        /^FAIL\s+inclusion\s+leaf_index \d+ is not this receipt's leaf: chain.sequence \d+ is leaf \d+$/,
      );
    });

    it('a checkpoint signed by another key: exit 1', async () => {
      const other = newServerKey();
      const forged = tamper('forged-checkpoint.json', (p) => {
        const text = parseNote(p.checkpoint as string)!.text;
        const origin = text.split('\n')[0]!;
        p.checkpoint = signNote(text, { name: origin, publicKey: other.publicKeyRaw }, (m) =>
          other.sign(m),
        );
      });
      const run = await cli(firstPath(), '--key', keyPath, '--proof', forged);
      expect(run.code).toBe(1);
      expect(inclusionLine(run.stdout)).toMatch(/^FAIL\s+inclusion\s+bad checkpoint signature: /);
    });

    it('--checkpoint: the proof must be of that checkpoint', async () => {
      // The proof's own checkpoint, as a witness would keep it: PASS.
      const same = file('same-checkpoint', proof.checkpoint as string);
      const ok = await cli(
        firstPath(),
        '--key',
        keyPath,
        '--proof',
        proofPath,
        '--checkpoint',
        same,
      );
      expect(ok.code).toBe(0);
      expect(inclusionLine(ok.stdout)).toBe('PASS       inclusion');
      // A newer checkpoint than the proof's: FAIL, naming both.
      await live.evaluate(apiKey);
      const newer = await (await fetch(`${live.url}/v1/log/checkpoint`)).text();
      expect(newer).not.toBe(proof.checkpoint);
      const path = file('newer-checkpoint', newer);
      const run = await cli(
        firstPath(),
        '--key',
        keyPath,
        '--proof',
        proofPath,
        '--checkpoint',
        path,
      );
      expect(run.code).toBe(1);
      expect(inclusionLine(run.stdout)).toMatch(
        new RegExp(
          `^FAIL\\s+inclusion\\s+the proof's checkpoint \\(size ${proof.tree_size}, root \\S+\\) is not the trusted checkpoint \\(size ${proof.tree_size + 1}, root \\S+\\)$`,
        ),
      );
      const json = await cli(
        firstPath(),
        '--key',
        keyPath,
        '--proof',
        proofPath,
        '--checkpoint',
        path,
        '--json',
      );
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout).checks).toContainEqual({
        name: 'inclusion',
        layer: 'ledger',
        status: 'FAIL',
        detail: expect.stringContaining('is not the trusted checkpoint'),
      });
    });

    it('exits 2 for a proof or checkpoint file of the wrong shape', async () => {
      const cases: [string[], RegExp][] = [
        [['--proof', file('not-json', '{"leaf_index": ')], /--proof .*not-json/],
        [
          ['--proof', tamper('bad-shape.json', (p) => (p.leaf_index = 'one'))],
          /--proof .*bad-shape\.json: malformed proof: leaf_index must be a non-negative integer/,
        ],
        [
          ['--proof', proofPath, '--checkpoint', file('bad-checkpoint', 'hello\n')],
          /--checkpoint .*bad-checkpoint: not a checkpoint/,
        ],
        [['--checkpoint', proofPath], /--checkpoint needs --proof/],
      ];
      for (const [args, reason] of cases) {
        const run = await cli(firstPath(), '--key', keyPath, ...args);
        expect(run.code).toBe(2);
        expect(run.stdout).toBe('');
        expect(run.stderr).toMatch(reason);
      }
    });
  });
});
