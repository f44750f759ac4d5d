import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { buildToolCallClaim } from '../../../src/core/agent/tool-call-claim.js';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import {
  type Account,
  evaluate,
  expectError,
  type Json,
  ledgerState,
  signupAccount,
  statusOf,
  verify,
} from '../../support/api.js';
import { expectValidV2, H, serverPublicKey } from '../../support/receipts.js';
import { AGENT_CONFIG } from '../../support/policies.js';

// Tool-call claims (contract §12) made by the claim builder, evaluated through the API under
// the built-in agent policy: receipts that verify, secrets that never reach the ledger, and
// bad summaries refused with the ledger unchanged.
const TOKEN = `ghp_${'a1B2c3D4e5'.repeat(3)}abcdef`;

const toolCall = (command: string, id: string) =>
  buildToolCallClaim({
    harness: 'claude-code',
    session: { id: 'sess-api', cwd: '/home/dev/proj' },
    agent: 'claude',
    tool_name: 'Bash',
    tool_input: { command },
    tool_use_id: id,
  });

describe('tool-call claims over HTTP', () => {
  let t: TestApp;
  let a: Account;
  let publicKey: Uint8Array;
  beforeAll(async () => {
    t = buildTestApp();
    a = await signupAccount(t);
    publicKey = await serverPublicKey(t);
  });
  afterAll(() => t.close());

  it.each([
    ['git push --force origin main', 'BLOCKED', 'rule:force-push-protected'],
    ['npm publish', 'ESCALATED', 'rule:package-publish'],
    ['npm test', 'ALLOWED', null],
  ])(
    '%s is %s under the agent policy, with a receipt that verifies',
    async (command, verdict, rule) => {
      const before = (await ledgerState(t)).stats.total;
      const { claim } = toolCall(command, `toolu_${verdict}`);
      const res = await evaluate(t, a.apiKey, { ...claim, policy: 'agent' });
      expect(res.status).toBe(200);
      const receipt = res.body.receipt as Json;
      expect(receipt.policy).toMatchObject({
        verdict,
        name: 'agent',
        config_hash: H(AGENT_CONFIG),
        overrides: false,
      });
      const failed = ((receipt.policy as Json).checks as { rule: string }[]).map((c) => c.rule);
      if (rule) expect(failed).toContain(rule);
      else expect(failed).toEqual([]);
      await expectValidV2(receipt, publicKey, { keyId: a.keyId });
      const checked = await verify(t, receipt, {
        expect_policy: 'agent',
        expect_config_hash: H(AGENT_CONFIG),
      });
      expect(statusOf(checked)).toMatchObject({
        signature_valid: 'PASS',
        hash_integrity: 'PASS',
        policy_binding: 'PASS',
      });
      expect((await ledgerState(t)).stats.total).toBe(before + 1);
    },
  );

  it('keeps a secret of the input out of the ledger', async () => {
    const { claim } = toolCall(`git clone https://${TOKEN}@github.com/acme/web`, 'toolu_secret');
    const res = await evaluate(t, a.apiKey, { ...claim, policy: 'agent' });
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body)).not.toContain(TOKEN);
    expect(JSON.stringify(await ledgerState(t))).not.toContain(TOKEN);
  });

  it('redacts the secrets of a summary a caller wrote before signing or storing it', async () => {
    const { claim } = toolCall('ls', 'toolu_written');
    claim.action!.tool!.summary = {
      command: `curl -H "Authorization: Bearer ${TOKEN}" https://api.example.com`,
      argv: ['gh', '--token', TOKEN, 'repo', 'list'],
      paths: [`/tmp/${TOKEN}/notes`],
      urls: [`https://bob:${TOKEN}@example.com/x`],
    };
    const body = { ...claim, policy: 'agent' };
    const simulated = await request(t.app)
      .post('/v1/simulate')
      .set('X-API-Key', a.apiKey)
      .send(body);
    expect(simulated.status).toBe(200);
    expect(JSON.stringify(simulated.body)).not.toContain(TOKEN);

    const before = (await ledgerState(t)).stats.total;
    const res = await evaluate(t, a.apiKey, body);
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body)).not.toContain(TOKEN);
    expect((res.body.claim as Json).action).toMatchObject({
      tool: {
        summary: {
          command: 'curl -H "Authorization: Bearer [redacted]" https://api.example.com',
          argv: ['gh', '--token', '[redacted]', 'repo', 'list'],
          paths: ['/tmp/[redacted]/notes'],
          urls: ['https://bob:[redacted]@example.com/x'],
        },
      },
    });
    // What was signed is the redacted claim: its receipt verifies, and the ledger holds no token.
    await expectValidV2(res.body.receipt as Json, publicKey, { keyId: a.keyId });
    const after = await ledgerState(t);
    expect(after.stats.total).toBe(before + 1);
    expect(JSON.stringify(after)).not.toContain(TOKEN);
    // The same claim sent again is the same claim once redacted: answered with its receipt.
    const again = await evaluate(t, a.apiKey, body);
    expect(again.status).toBe(200);
    expect((again.body.receipt as Json).receipt_id).toBe((res.body.receipt as Json).receipt_id);
    expect((await ledgerState(t)).stats.total).toBe(before + 1);
  });

  it.each([
    [{ command: 'a'.repeat(4097) }, 'action.tool.summary.command: must be at most 4096 characters'],
    [
      { paths: ['src/../.env'] },
      'action.tool.summary.paths.0: "src/../.env" must not hold a .. segment after a name',
    ],
    [{ argv: Array(257).fill('x') }, 'action.tool.summary.argv: must hold at most 256 words'],
  ])(
    'refuses a summary %j with 400 naming the field, ledger unchanged',
    async (summary, message) => {
      const before = await ledgerState(t);
      const { claim } = toolCall('ls', 'toolu_bad');
      claim.action!.tool!.summary = summary as never;
      const res = await evaluate(t, a.apiKey, { ...claim, policy: 'agent' });
      expect(expectError(res, 400, 'validation_failed')).toBe(message);
      expect(await ledgerState(t)).toEqual(before);
    },
  );

  it('refuses an invalid command pattern in a claim’s own rules with 400, ledger unchanged', async () => {
    const before = await ledgerState(t);
    const { claim } = toolCall('ls', 'toolu_rule');
    const res = await evaluate(t, a.apiKey, {
      ...claim,
      policyConfig: {
        rules: [{ name: 'x', if: { command: 'rm <in>' }, require: { never: true } }],
      },
    });
    expect(expectError(res, 400, 'validation_failed')).toBe(
      'policyConfig.rules[0].if.command: word "<in>" is not <outside> or <project>',
    );
    expect(await ledgerState(t)).toEqual(before);
  });
});
