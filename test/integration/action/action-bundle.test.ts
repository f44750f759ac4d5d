import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { newServerKey } from '../../support/harness.js';
import { validClaim } from '../../support/claims.js';
import { startLiveService, type LiveService } from '../../support/live-service.js';
import { HEAD_SHA, REPOSITORY, runAction } from './run-action.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const blockedClaim = () =>
  validClaim({ claim_id: `blocked-${Math.random()}`, policyConfig: { minSources: 5 } });
const escalatedClaim = () =>
  validClaim({
    claim_id: `escalated-${Math.random()}`,
    action: { action_type: 'deployment', target_system: 'k8s', environment: 'production' },
  });

// The committed bundle, run as a runner runs it, against a real service on 127.0.0.1.
describe('the bundled Action', () => {
  let live: LiveService;
  let apiKey: string;
  let keyId: string;
  let pin: string;
  const base = () => ({ 'api-url': live.url, 'api-key': apiKey });

  beforeAll(async () => {
    live = await startLiveService();
    ({ apiKey, keyId } = await live.signup());
    pin = live.t.serverKey.keyId;
  });
  afterAll(() => live.close());

  it('evaluates a claim built from the pull_request context, verifies it, writes outputs, receipt and summary', async () => {
    const run = await runAction({ ...base(), 'key-fingerprint': pin });
    expect(run.errors).toEqual([]);
    expect(run.code).toBe(0);
    expect(run.outputs).toMatchObject({
      verdict: 'ALLOWED',
      admissibility: 'ACCEPTED',
      valid: 'true',
    });
    expect(run.outputs['receipt-id']).toMatch(/^dr-[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(run.outputs['receipt-path']).toBe(
      join(run.workspace, 'svc-receipts', `${run.outputs['receipt-id']}.json`),
    );
    const receipt = JSON.parse(run.receiptText!) as Json;
    expect(receipt.receipt_id).toBe(run.outputs['receipt-id']);
    expect(receipt.claim_id).toBe(`gh:${REPOSITORY}:run-7001-1:gate:__svc`);
    expect(receipt.subject).toMatchObject({
      repository: REPOSITORY,
      pull_request: 42,
      commit: HEAD_SHA,
      branch: 'fix/session-timeout',
      agent: 'coder-bot',
      action_type: 'merge',
    });
    expect(receipt.evidence.source_types).toEqual(['ci']);
    expect(receipt.submitter).toEqual({ kind: 'api_key', key_id: keyId });
    // The service has the same receipt: the file is what it issued.
    const stored = await live.t.store.ledger.receiptHashOf(receipt.receipt_id);
    expect(stored).toBe(receipt.chain.receipt_hash);

    expect(run.summary).toContain('## svc evaluate: ALLOWED / ACCEPTED');
    expect(run.summary).toContain(`<code>${receipt.receipt_id}</code>`);
    expect(run.summary).toContain(
      `<a href="${live.url}/explorer/receipts/${receipt.receipt_id}">receipt page</a>`,
    );
    for (const rule of ['min_sources', 'min_source_types', 'min_confidence', 'max_risk_scope'])
      expect(run.summary).toMatch(new RegExp(`\\| <code>${rule}</code> \\| pass \\|`));
    expect(run.summary).toContain(`| Submitter | <code>${keyId}</code> |`);
    expect(run.summary).toContain('(matches key-fingerprint)');
    expect(run.warnings).toEqual([]);
  });

  it('masks the API key and never prints it otherwise', async () => {
    const run = await runAction({ ...base(), 'key-fingerprint': pin });
    expect(run.stdout).toContain(`::add-mask::${apiKey}\n`);
    expect(run.stdout.split(apiKey)).toHaveLength(2);
    expect(run.summary).not.toContain(apiKey);
  });

  it('makes the claim_id unique per run attempt: a re-run is a new receipt, a repeat is the same', async () => {
    const first = await runAction(
      { ...base(), 'key-fingerprint': pin },
      { env: { GITHUB_RUN_ID: '8100' } },
    );
    const again = await runAction(
      { ...base(), 'key-fingerprint': pin },
      { env: { GITHUB_RUN_ID: '8100' } },
    );
    const rerun = await runAction(
      { ...base(), 'key-fingerprint': pin },
      { env: { GITHUB_RUN_ID: '8100', GITHUB_RUN_ATTEMPT: '2' } },
    );
    expect([first.code, again.code, rerun.code]).toEqual([0, 0, 0]);
    expect(again.outputs['receipt-id']).toBe(first.outputs['receipt-id']);
    expect(rerun.outputs['receipt-id']).not.toBe(first.outputs['receipt-id']);
    expect(JSON.parse(rerun.receiptText!).claim_id).toBe(`gh:${REPOSITORY}:run-8100-2:gate:__svc`);
  });

  it('verifies against the fetched key with a warning when nothing is pinned', async () => {
    const run = await runAction(base());
    expect(run.code).toBe(0);
    expect(run.outputs.valid).toBe('true');
    expect(run.warnings).toHaveLength(1);
    expect(run.warnings[0]).toContain('which was not pinned');
    expect(run.warnings[0]).toContain(`key-fingerprint: ${pin}`);
  });

  it('verifies against a pinned public-key PEM', async () => {
    const run = await runAction({ ...base(), 'public-key': live.t.serverKey.publicKeyPem });
    expect(run.code).toBe(0);
    expect(run.outputs.valid).toBe('true');
    expect(run.summary).toContain('from input public-key');
  });

  it('fails on a pinned-key mismatch whatever fail-on says', async () => {
    const other = newServerKey();
    const cases: [Record<string, string>, RegExp][] = [
      [
        { 'key-fingerprint': other.keyId },
        /pinned key mismatch: .* serves a key with fingerprint sha256:\w+, not the pinned/,
      ],
      [{ 'public-key': other.publicKeyPem }, /tampered with or not signed by the trusted key/],
      [
        { 'public-key': live.t.serverKey.publicKeyPem, 'key-fingerprint': other.keyId },
        /pinned key mismatch: input public-key has fingerprint/,
      ],
    ];
    for (const [inputs, message] of cases) {
      const run = await runAction({ ...base(), ...inputs, 'fail-on': 'never' });
      expect(run.code).toBe(1);
      expect(run.errors.join('\n')).toMatch(message);
    }
  });

  it('writes the job summary on a pinned-key mismatch, with empty verdict outputs', async () => {
    const other = newServerKey();
    const run = await runAction({ ...base(), 'key-fingerprint': other.keyId });
    expect(run.code).toBe(1);
    expect(run.errors[0]).toMatch(/^svc receipt not trusted: pinned key mismatch: /);
    expect(run.summary.split('\n')[0]).toBe('## svc evaluate: receipt not trusted');
    expect(run.summary).toMatch(/> \*\*Failed:\*\* pinned key mismatch: .* not the pinned/);
    expect(run.summary).toContain('| Verified offline | **no**: no trusted key to verify with |');
    expect(run.outputs).toMatchObject({ verdict: '', admissibility: '', valid: 'false' });
    expect(run.outputs['receipt-id']).toMatch(/^dr-/);
  });

  it('applies the policy input and checks the signed policy name', async () => {
    const run = await runAction({
      ...base(),
      'key-fingerprint': pin,
      claim: JSON.stringify(validClaim()),
      policy: 'default',
      'expected-config-hash': '',
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/PASS\s+policy_binding/);
    expect(run.stdout).toContain('signed policy: default sha256:');
  });

  describe('fail-on', () => {
    const cases = [
      { name: 'a BLOCKED verdict', claim: blockedClaim, failOn: 'not-allowed', code: 1 },
      { name: 'a BLOCKED verdict', claim: blockedClaim, failOn: 'blocked', code: 1 },
      { name: 'a BLOCKED verdict', claim: blockedClaim, failOn: 'never', code: 0 },
      { name: 'an ESCALATED verdict', claim: escalatedClaim, failOn: 'not-allowed', code: 1 },
      { name: 'an ESCALATED verdict', claim: escalatedClaim, failOn: 'blocked', code: 0 },
      { name: 'an ESCALATED verdict', claim: escalatedClaim, failOn: 'never', code: 0 },
    ];
    it.each(cases)('$name with fail-on $failOn exits $code', async ({ claim, failOn, code }) => {
      const run = await runAction({
        ...base(),
        'key-fingerprint': pin,
        claim: JSON.stringify(claim()),
        'fail-on': failOn,
      });
      expect(run.code).toBe(code);
      expect(run.outputs.valid).toBe('true');
      expect(run.outputs.verdict).toMatch(/^(BLOCKED|ESCALATED)$/);
      if (code === 1) expect(run.errors[0]).toContain(`(fail-on: ${failOn})`);
      else expect(run.errors).toEqual([]);
    });

    it('names the failing rules in the error line of a BLOCKED or ESCALATED verdict', async () => {
      const blocked = await runAction({
        ...base(),
        'key-fingerprint': pin,
        claim: JSON.stringify(blockedClaim()),
      });
      expect(blocked.errors).toHaveLength(1);
      expect(blocked.errors[0]).toMatch(
        /^svc gate: verdict BLOCKED, admissibility REJECTED: not ALLOWED and ACCEPTED \(fail-on: not-allowed\); failing rules: min_sources \(.*minimum 5\)$/,
      );
      const escalated = await runAction({
        ...base(),
        'key-fingerprint': pin,
        claim: JSON.stringify(escalatedClaim()),
      });
      // No rule failed: the kind of action called for review, and the error line says which.
      expect(JSON.parse(escalated.receiptText!).policy.checks).toEqual([]);
      expect(escalated.errors[0]).toMatch(
        /^svc gate: verdict ESCALATED, admissibility REJECTED: .*\(fail-on: not-allowed\); Human review required: a production deployment requires a human_approval source$/,
      );
    });

    it.each([
      ['never', 'BLOCKED'],
      ['never', 'ESCALATED'],
      ['blocked', 'ESCALATED'],
    ] as const)(
      'fail-on %s lets a %s verdict through with a warning that says so',
      async (failOn, verdict) => {
        const claim = verdict === 'BLOCKED' ? blockedClaim() : escalatedClaim();
        const run = await runAction({
          ...base(),
          'key-fingerprint': pin,
          claim: JSON.stringify(claim),
          'fail-on': failOn,
        });
        expect(run.code).toBe(0);
        expect(run.outputs.verdict).toBe(verdict);
        expect(run.warnings).toHaveLength(1);
        expect(run.warnings[0]).toMatch(
          new RegExp(
            `^svc verdict ${verdict}, admissibility REJECTED: not ALLOWED and ACCEPTED; ${verdict === 'BLOCKED' ? 'failing rules: min_sources' : 'Human review required'}.+\\. The step passes only because fail-on is ${failOn}\\.$`,
          ),
        );
        expect(run.summary).toContain('> **Warning:** svc verdict');
      },
    );

    it('an ALLOWED verdict with fail-on never gives no warning', async () => {
      const run = await runAction({
        ...base(),
        'key-fingerprint': pin,
        claim: JSON.stringify(validClaim()),
        'fail-on': 'never',
      });
      expect({ code: run.code, warnings: run.warnings }).toEqual({ code: 0, warnings: [] });
    });
  });

  it('simulates without a receipt to verify, from a claim file', async () => {
    const run = await runAction(
      { ...base(), mode: 'simulate', 'claim-file': 'claim.json' },
      { files: { 'claim.json': JSON.stringify(validClaim()) } },
    );
    expect(run.code).toBe(0);
    expect(run.outputs).toMatchObject({ verdict: 'ALLOWED', valid: 'false' });
    expect(run.outputs['receipt-path']).toMatch(/\/svc-receipts\/simulated-[\w.-]+\.json$/);
    expect(run.summary).toContain('not applicable: a simulation is not signed');
  });

  describe('verify mode', () => {
    let response: Json;
    beforeAll(async () => {
      response = await live.evaluate(apiKey);
    });

    it('verifies a stored evaluate response against the pinned key and reports its verdict', async () => {
      const run = await runAction(
        {
          mode: 'verify',
          'receipt-file': 'evaluation.json',
          'public-key': live.t.serverKey.publicKeyPem,
          'expected-policy': 'default',
          'expected-config-hash': response.receipt.policy.config_hash,
        },
        { files: { 'evaluation.json': JSON.stringify(response) } },
      );
      expect(run.errors).toEqual([]);
      expect(run.code).toBe(0);
      expect(run.outputs).toMatchObject({
        verdict: 'ALLOWED',
        admissibility: 'ACCEPTED',
        'receipt-id': response.receipt.receipt_id,
        valid: 'true',
      });
      expect(JSON.parse(run.receiptText!)).toEqual(response.receipt);
      expect(run.stdout).toMatch(/PASS\s+policy_binding/);
    });

    it('fails a tampered receipt whatever fail-on says', async () => {
      const tampered = { ...response.receipt, admissibility: { status: 'ACCEPTED', reason: 'ok' } };
      tampered.policy = {
        ...tampered.policy,
        checks: [{ rule: 'min_sources', passed: false, reason: 'x' }],
      };
      const run = await runAction(
        {
          mode: 'verify',
          'receipt-file': 'r.json',
          'api-url': live.url,
          'key-fingerprint': pin,
          'fail-on': 'never',
        },
        { files: { 'r.json': JSON.stringify(tampered) } },
      );
      expect(run.code).toBe(1);
      expect(run.outputs.valid).toBe('false');
      expect(run.errors[0]).toContain('svc receipt not trusted: the receipt is tampered with');
      expect(run.summary).toContain('**Failed:**');
      // Nothing a later step reads can pass for a go-ahead.
      expect(run.outputs).toMatchObject({ verdict: '', admissibility: '', valid: 'false' });
      expect(run.summary.split('\n')[0]).toBe('## svc verify: receipt not trusted');
      expect(run.summary).not.toMatch(/ALLOWED|ACCEPTED/);
    });

    it('fails a receipt decorated with an unsigned decision, with empty verdict outputs', async () => {
      const decorated = { ...response.receipt, decision: { proceed: true }, verdict: 'ALLOWED' };
      const run = await runAction(
        {
          mode: 'verify',
          'receipt-file': 'r.json',
          'public-key': live.t.serverKey.publicKeyPem,
          'fail-on': 'never',
        },
        { files: { 'r.json': JSON.stringify(decorated) } },
      );
      expect(run.code).toBe(1);
      expect(run.errors[0]).toMatch(
        /^svc receipt not trusted: no_unsigned_members: members neither signed nor attestations or chain: "decision", "verdict"$/,
      );
      expect(run.outputs).toMatchObject({ verdict: '', admissibility: '', valid: 'false' });
    });

    describe('fail-on, as in evaluate mode', () => {
      let blocked: Json;
      beforeAll(async () => {
        blocked = await live.evaluate(apiKey, blockedClaim());
      });
      const verifyRun = (failOn: string | null) =>
        runAction(
          {
            mode: 'verify',
            'receipt-file': 'r.json',
            'public-key': live.t.serverKey.publicKeyPem,
            ...(failOn ? { 'fail-on': failOn } : {}),
          },
          { files: { 'r.json': JSON.stringify(blocked) } },
        );

      it('a valid BLOCKED receipt fails the default fail-on, naming its failing rules', async () => {
        const run = await verifyRun(null);
        expect(run.code).toBe(1);
        expect(run.outputs).toMatchObject({ verdict: 'BLOCKED', valid: 'true' });
        expect(run.errors).toEqual([
          expect.stringMatching(
            /^svc gate: verdict BLOCKED, admissibility REJECTED: not ALLOWED and ACCEPTED \(fail-on: not-allowed\); failing rules: min_sources/,
          ),
        ]);
      });

      it('fails it with fail-on blocked; passes it with a warning with fail-on never', async () => {
        expect((await verifyRun('blocked')).code).toBe(1);
        const never = await verifyRun('never');
        expect(never.code).toBe(0);
        expect(never.warnings).toEqual([expect.stringContaining('fail-on is never')]);
      });
    });

    it('fails when the signed policy is not the expected one', async () => {
      const run = await runAction(
        {
          mode: 'verify',
          'receipt-file': 'r.json',
          'public-key': live.t.serverKey.publicKeyPem,
          'expected-policy': 'strict',
          'fail-on': 'never',
        },
        { files: { 'r.json': JSON.stringify(response.receipt) } },
      );
      expect(run.code).toBe(1);
      expect(run.errors[0]).toContain(
        'signed policy is not what this workflow asked for: policy "default" is not the expected "strict"',
      );
    });

    it('refuses a receipt file with duplicate keys', async () => {
      const text = JSON.stringify(response.receipt).replace(
        '"claim_id":',
        '"claim_id":"x","claim_id":',
      );
      const run = await runAction(
        { mode: 'verify', 'receipt-file': 'r.json', 'public-key': live.t.serverKey.publicKeyPem },
        { files: { 'r.json': text } },
      );
      expect(run.code).toBe(1);
      expect(run.errors[0]).toMatch(/is not a usable receipt: .*duplicate key "claim_id"/);
    });
  });

  it('says a 401 means the key is missing or wrong', async () => {
    const run = await runAction({
      'api-url': live.url,
      'api-key': 'sk_svc_00000000-0000-4000-8000-000000000000',
    });
    expect(run.code).toBe(1);
    expect(run.errors[0]).toContain('the API key is missing or wrong');
  });

  it('refuses malformed inputs before sending anything', async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ ...base(), mode: 'approve' }, /input mode must be one of evaluate, simulate, verify/],
      [{ ...base(), 'fail-on': 'always' }, /input fail-on must be one of/],
      [{ ...base(), claim: '{"a":1,"a":2}' }, /input claim: .*duplicate key "a"/],
      [{ ...base(), 'key-fingerprint': 'md5:abc' }, /input key-fingerprint: fingerprint must be/],
      [{ ...base(), 'public-key': 'nope' }, /input public-key: public key refused/],
      [{ 'api-url': live.url }, /mode evaluate needs input api-key/],
      [{ mode: 'verify', 'receipt-file': 'r.json' }, /no key to verify with/],
      [
        {
          mode: 'verify',
          'receipt-file': 'gone.json',
          'public-key': live.t.serverKey.publicKeyPem,
        },
        /cannot read receipt-file .*gone\.json/,
      ],
    ];
    for (const [inputs, message] of cases) {
      const run = await runAction(inputs);
      expect({ inputs, code: run.code }).toEqual({ inputs, code: 1 });
      expect(run.errors.join('\n')).toMatch(message);
    }
  });
});
