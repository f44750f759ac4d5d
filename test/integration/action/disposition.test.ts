import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { validClaim } from '../../support/claims.js';
import { startLiveService, type LiveService } from '../../support/live-service.js';
import { runAction } from './run-action.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const escalatedClaim = () =>
  validClaim({
    claim_id: `escalated-${Math.random()}`,
    action: {
      action_type: 'deployment',
      target_system: 'k8s',
      environment: 'production',
      agent: 'deploy-bot',
    },
  });

// The committed bundle: fail-on judges an ESCALATED receipt by its verified disposition.
describe('the bundled Action with a disposition', () => {
  let live: LiveService;
  let agentKey: string;
  let reviewerKey: string;
  let reviewerKeyId: string;

  const dispose = async (receiptId: string, decision: 'approve' | 'reject') => {
    const res = await fetch(`${live.url}/v1/receipts/${receiptId}/disposition`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': reviewerKey },
      body: JSON.stringify({ decision, reviewer: { id: 'release-manager' }, reason: 'CAB-7' }),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as Json;
  };
  const escalated = async () => {
    const response = (await live.evaluate(agentKey, escalatedClaim())) as Json;
    expect(response.receipt.policy.verdict).toBe('ESCALATED');
    return response;
  };
  const verifyWith = (response: Json, disposition: unknown, extra: Record<string, string> = {}) =>
    runAction(
      {
        mode: 'verify',
        'receipt-file': 'r.json',
        'disposition-file': 'd.json',
        'public-key': live.t.serverKey.publicKeyPem,
        ...extra,
      },
      {
        files: { 'r.json': JSON.stringify(response), 'd.json': JSON.stringify(disposition) },
      },
    );

  beforeAll(async () => {
    live = await startLiveService();
    agentKey = (await live.signup()).apiKey;
    ({ apiKey: reviewerKey, keyId: reviewerKeyId } = await live.signupReviewer());
  });
  afterAll(() => live.close());

  it('passes an escalation approved by a verified disposition of that very receipt', async () => {
    const response = await escalated();
    const disposition = await dispose(response.receipt.receipt_id, 'approve');
    const run = await verifyWith(response, disposition);
    expect(run.errors).toEqual([]);
    expect(run.code).toBe(0);
    expect(run.outputs).toMatchObject({
      verdict: 'ESCALATED',
      valid: 'true',
      disposition: 'approve',
      'disposition-receipt-id': disposition.receipt.receipt_id,
    });
    expect(run.stdout).toMatch(/disposition PASS\s+parent_link/);
    expect(run.summary).toContain('**Decided:** the escalation was decided: approve by user');
    // Without it, the same receipt fails the default fail-on.
    const alone = await runAction(
      { mode: 'verify', 'receipt-file': 'r.json', 'public-key': live.t.serverKey.publicKeyPem },
      { files: { 'r.json': JSON.stringify(response) } },
    );
    expect(alone.code).toBe(1);
    expect(alone.errors[0]).toMatch(/^svc gate: verdict ESCALATED/);
  });

  it('disposition-recorder and disposition-reviewer require who recorded the decision and whom it names', async () => {
    const response = await escalated();
    const disposition = await dispose(response.receipt.receipt_id, 'approve');
    const pinned = await verifyWith(response, disposition, {
      'disposition-recorder': reviewerKeyId,
      'disposition-reviewer': 'release-manager',
    });
    expect(pinned.errors).toEqual([]);
    expect(pinned.code).toBe(0);
    expect(pinned.outputs.disposition).toBe('approve');
    expect(pinned.stdout).toContain(`recorded by ${reviewerKeyId}`);

    // Recorded by another key than the one the workflow trusts: not trusted, whatever fail-on.
    const byAnother = await verifyWith(response, disposition, {
      'disposition-recorder': 'github_app:4242:777',
      'fail-on': 'never',
    });
    expect(byAnother.code).toBe(1);
    expect(byAnother.outputs.disposition).toBe('');
    expect(byAnother.errors[0]).toMatch(
      /the disposition \(disposition-file .*\) is not trusted: .* is not what this workflow asked for: submitter .* is not the expected "github_app:4242:777"/,
    );
    const named = await verifyWith(response, disposition, { 'disposition-reviewer': 'maintainer' });
    expect(named.code).toBe(1);
    expect(named.errors[0]).toContain(
      'reviewer "release-manager" is not the expected "maintainer"',
    );

    const alone = await runAction(
      {
        mode: 'verify',
        'receipt-file': 'r.json',
        'public-key': live.t.serverKey.publicKeyPem,
        'disposition-recorder': reviewerKeyId,
      },
      { files: { 'r.json': JSON.stringify(response) } },
    );
    expect(alone.code).toBe(1);
    expect(alone.errors[0]).toContain('need disposition-file or fetch-disposition');
  });

  it('fails an escalation rejected by its disposition, as BLOCKED', async () => {
    const response = await escalated();
    const disposition = await dispose(response.receipt.receipt_id, 'reject');
    const run = await verifyWith(response, disposition.receipt, { 'fail-on': 'blocked' });
    expect(run.code).toBe(1);
    expect(run.outputs.disposition).toBe('reject');
    expect(run.errors).toEqual([
      expect.stringMatching(
        /^svc gate: verdict BLOCKED, admissibility REJECTED \(fail-on: blocked\); failing rules: human_disposition \(CAB-7\)/,
      ),
    ]);
  });

  it('refuses the disposition of another receipt, and a tampered one, whatever fail-on says', async () => {
    const response = await escalated();
    const other = await escalated();
    const disposition = await dispose(other.receipt.receipt_id, 'approve');
    const run = await verifyWith(response, disposition, { 'fail-on': 'never' });
    expect(run.code).toBe(1);
    expect(run.errors[0]).toMatch(
      /^svc receipt not trusted: the disposition \(disposition-file .*\) is not trusted: parent_link:/,
    );
    expect(run.outputs.disposition).toBe('');

    const own = await dispose(response.receipt.receipt_id, 'reject');
    const tampered = structuredClone(own);
    tampered.receipt.disposition.decision = 'approve';
    tampered.receipt.policy.verdict = 'ALLOWED';
    const forged = await verifyWith(response, tampered);
    expect(forged.code).toBe(1);
    expect(forged.errors[0]).toContain('the receipt is tampered with or not signed');
  });

  it('evaluate mode with fetch-disposition: ESCALATED until decided, then passes', async () => {
    const claim = JSON.stringify(escalatedClaim());
    const inputs = {
      'api-url': live.url,
      'api-key': agentKey,
      claim,
      'key-fingerprint': live.t.serverKey.keyId,
      'fetch-disposition': 'true',
    };
    const before = await runAction(inputs);
    expect(before.code).toBe(1);
    expect(before.stdout).toContain('has no disposition yet');
    expect(before.outputs).toMatchObject({ verdict: 'ESCALATED', disposition: '' });
    await dispose(before.outputs['receipt-id']!, 'approve');
    const after = await runAction(inputs);
    expect(after.errors).toEqual([]);
    expect(after.code).toBe(0);
    expect(after.outputs).toMatchObject({
      'receipt-id': before.outputs['receipt-id'],
      disposition: 'approve',
    });
  });

  it('refuses disposition inputs that do not fit', async () => {
    const both = await runAction({
      mode: 'verify',
      'receipt-file': 'r.json',
      'disposition-file': 'd.json',
      'fetch-disposition': 'true',
      'api-url': live.url,
    });
    expect(both.code).toBe(1);
    expect(both.errors[0]).toBe('give input disposition-file or fetch-disposition, not both');
    const bad = await runAction({
      mode: 'verify',
      'receipt-file': 'r.json',
      'fetch-disposition': 'yes',
      'api-url': live.url,
    });
    expect(bad.errors[0]).toMatch(/^input fetch-disposition must be one of true, false/);
  });
});
