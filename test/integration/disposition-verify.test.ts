import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  parentEvidenceOf,
  parsePublicKeyPem,
  verifyOffline,
  type PublicKey,
  type VerifyResult,
} from '@svc/verify';
import { escalatedClaim } from '../support/claims.js';
import { startLiveService, type LiveService } from '../support/live-service.js';
import { runNode } from '../fixtures/run-node.js';
import { transpileTree, type TranspiledTree } from '../fixtures/transpile-tree.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const statuses = (result: { checks: { name: string; status: string }[] }) =>
  Object.fromEntries(result.checks.map((c) => [c.name, c.status]));
const detailOf = (result: VerifyResult, name: string) =>
  result.checks.find((c) => c.name === name)?.detail ?? '';

// The link of a disposition to its parent (contract §11), checked by every verifier: the
// portable one (@noble/ed25519, no ledger), POST /v1/verify (the ledger) and svc-verify.
describe('parent_link', () => {
  let live: LiveService;
  let key: PublicKey;
  let parent: Json;
  let other: Json;
  let disposition: Json;
  /** The key_id of the reviewer key that recorded `disposition`. */
  let recorder: string;

  const post = async (path: string, body: unknown, apiKey?: string) => {
    const res = await fetch(live.url + path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(apiKey ? { 'X-API-Key': apiKey } : {}) },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };

  beforeAll(async () => {
    live = await startLiveService();
    key = parsePublicKeyPem(live.t.serverKey.publicKeyPem);
    const agent = await live.signup();
    const reviewer = await live.signupReviewer();
    recorder = reviewer.keyId;
    parent = (await live.evaluate(agent.apiKey, escalatedClaim())).receipt as Json;
    other = (await live.evaluate(agent.apiKey, escalatedClaim())).receipt as Json;
    expect(parent.policy.verdict).toBe('ESCALATED');
    const res = await post(
      `/v1/receipts/${parent.receipt_id}/disposition`,
      { decision: 'approve', reviewer: { id: 'lead' }, reason: 'checked' },
      reviewer.apiKey,
    );
    expect(res.status).toBe(201);
    disposition = res.body.receipt as Json;
  });
  afterAll(() => live.close());

  describe('offline, with the portable verifier', () => {
    const withParent = (p: Json) => parentEvidenceOf(p, verifyOffline(p, key));

    it('is UNVERIFIED without the parent, and the disposition is still valid', () => {
      const result = verifyOffline(disposition, key);
      expect(result.valid).toBe(true);
      expect(statuses(result)).toMatchObject({
        signature_valid: 'PASS',
        no_unsigned_members: 'PASS',
        parent_link: 'UNVERIFIED',
      });
      expect(detailOf(result, 'parent_link')).toContain(parent.receipt_id);
    });

    it('PASSes with the parent receipt', () => {
      const result = verifyOffline(disposition, key, {}, undefined, undefined, withParent(parent));
      expect(result.valid).toBe(true);
      expect(statuses(result).parent_link).toBe('PASS');
      // The check order of POST /v1/verify: after the ledger layer's inclusion.
      expect(result.checks.map((c) => c.name).slice(-3)).toEqual([
        'inclusion',
        'parent_link',
        'policy_binding',
      ]);
    });

    it('FAILs with another receipt as the parent', () => {
      const result = verifyOffline(disposition, key, {}, undefined, undefined, withParent(other));
      expect(result.valid).toBe(false);
      expect(statuses(result).parent_link).toBe('FAIL');
      expect(detailOf(result, 'parent_link')).toContain(other.receipt_id);
    });

    it('FAILs with a tampered parent, whatever its chain.receipt_hash claims', () => {
      const tampered = structuredClone(parent);
      tampered.subject.repository = 'acme/other';
      const result = verifyOffline(
        disposition,
        key,
        {},
        undefined,
        undefined,
        withParent(tampered),
      );
      expect(statuses(result).parent_link).toBe('FAIL');
      expect(detailOf(result, 'parent_link')).toContain('does not verify');
      // A parent re-hashed after tampering differs from the signed parent_receipt_hash.
      const forged = structuredClone(parent);
      forged.attestations = [];
      const evidence = parentEvidenceOf(forged, { ...verifyOffline(parent, key), valid: true });
      const again = verifyOffline(disposition, key, {}, undefined, undefined, evidence);
      expect(statuses(again).parent_link).toBe('FAIL');
    });

    it('a tampered link fails the signature: the parent id and hash are signed', () => {
      for (const change of [
        (d: Json) => (d.disposition.parent_receipt_hash = other.chain.receipt_hash),
        (d: Json) => (d.disposition.parent_receipt_id = other.receipt_id),
        (d: Json) => (d.disposition.decision = 'reject'),
      ]) {
        const tampered = structuredClone(disposition);
        change(tampered);
        const result = verifyOffline(tampered, key, {}, undefined, undefined, withParent(parent));
        expect(result.valid).toBe(false);
        expect(statuses(result).signature_valid).toBe('FAIL');
      }
      // Dropping "disposition" from the declaration leaves an unknown field list.
      const undeclared = structuredClone(disposition);
      undeclared.signed_fields.fields = undeclared.signed_fields.fields.slice(0, -1);
      const result = verifyOffline(undeclared, key);
      expect(result.valid).toBe(false);
      expect(statuses(result)).toMatchObject({
        no_unsigned_members: 'FAIL',
        signature_valid: 'FAIL',
      });
    });

    it('binds who recorded the decision and whom it names when expected', () => {
      const bound = verifyOffline(disposition, key, { submitter: recorder, reviewer: 'lead' });
      expect(bound.valid).toBe(true);
      expect(statuses(bound).policy_binding).toBe('PASS');
      const otherKey = 'kid_01JHGZ3Q4W5E6R7T8Y9V0W1X2Z';
      const byOther = verifyOffline(disposition, key, { submitter: otherKey });
      expect(byOther.valid).toBe(false);
      expect(detailOf(byOther, 'policy_binding')).toContain(`"${recorder}" is not the expected`);
      const named = verifyOffline(disposition, key, { reviewer: 'maintainer' });
      expect(named.valid).toBe(false);
      expect(detailOf(named, 'policy_binding')).toContain('reviewer "lead" is not the expected');
      // A receipt that is not a disposition signs no reviewer.
      const parentResult = verifyOffline(parent, key, { reviewer: 'lead' });
      expect(parentResult.valid).toBe(false);
      expect(detailOf(parentResult, 'policy_binding')).toContain('not a disposition');
    });

    it('receipts that are not dispositions have no parent_link check', () => {
      expect(statuses(verifyOffline(parent, key)).parent_link).toBeUndefined();
    });
  });

  describe('POST /v1/verify', () => {
    it('looks the parent up in the ledger', async () => {
      const res = await post('/v1/verify', disposition);
      expect(res.status).toBe(200);
      expect(res.body.valid).toBe(true);
      expect(statuses(res.body as VerifyResult)).toMatchObject({
        hash_integrity: 'PASS',
        chain_linkage: 'PASS',
        parent_link: 'PASS',
      });
    });

    it('FAILs a disposition whose parent the ledger does not hold', async () => {
      // A second ledger under the same key: the disposition's parent is not in it.
      const elsewhere = await startLiveService({ serverKey: live.t.serverKey });
      try {
        const res = await fetch(`${elsewhere.url}/v1/verify`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(disposition),
        });
        const body = (await res.json()) as VerifyResult;
        expect(body.valid).toBe(false);
        expect(statuses(body).parent_link).toBe('FAIL');
        expect(detailOf(body, 'parent_link')).toContain(parent.receipt_id);
      } finally {
        await elsewhere.close();
      }
    });
  });

  describe('svc-verify --parent', () => {
    let tree: TranspiledTree;
    let dir: string;
    let script: string;
    const file = (name: string, content: unknown) => {
      const path = join(dir, name);
      writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
      return path;
    };

    beforeAll(() => {
      tree = transpileTree(['packages/verify/src/cli/svc-verify.ts']);
      script = fileURLToPath(tree.url('packages/verify/src/cli/svc-verify.ts'));
      dir = mkdtempSync(join(tmpdir(), 'svc-verify-parent-'));
    });
    afterAll(() => {
      tree.cleanup();
      rmSync(dir, { recursive: true, force: true });
    });

    it('checks the link with the parent file, and says what the disposition signs', async () => {
      const keyPath = file('server.pem', live.t.serverKey.publicKeyPem);
      const receipt = file('disposition.json', disposition);
      const without = await runNode(script, [receipt, '--key', keyPath]);
      expect(without.code).toBe(0);
      expect(without.stdout).toMatch(/^UNVERIFIED\s+parent_link\b/m);
      expect(without.stdout).toContain(
        `disposition   approve of ${parent.receipt_id} by user "lead", recorded by ${recorder}`,
      );

      const ok = await runNode(script, [
        receipt,
        '--key',
        keyPath,
        '--parent',
        file('parent.json', { receipt: parent }),
        '--require-proceed',
      ]);
      expect(ok.stderr).toBe('');
      expect(ok.code).toBe(0);
      expect(ok.stdout).toMatch(/^PASS\s+parent_link$/m);

      const wrong = await runNode(script, [
        receipt,
        '--key',
        keyPath,
        '--parent',
        file('other.json', other),
        '--json',
      ]);
      expect(wrong.code).toBe(1);
      expect(statuses(JSON.parse(wrong.stdout) as VerifyResult).parent_link).toBe('FAIL');

      const unusable = await runNode(script, [
        receipt,
        '--key',
        keyPath,
        '--parent',
        file('bad.json', '{"a":1,"a":2}'),
      ]);
      expect(unusable.code).toBe(2);
      expect(unusable.stderr).toContain('--parent');
    });

    it('--expect-submitter and --expect-reviewer require who recorded the decision and whom it names', async () => {
      const keyPath = file('server.pem', live.t.serverKey.publicKeyPem);
      const receipt = file('disposition.json', disposition);
      const args = [receipt, '--key', keyPath, '--parent', file('parent.json', parent)];
      const pinned = await runNode(script, [
        ...args,
        '--expect-submitter',
        recorder,
        '--expect-reviewer',
        'lead',
        '--require-proceed',
      ]);
      expect(pinned.code).toBe(0);
      expect(pinned.stdout).toMatch(/^PASS\s+policy_binding$/m);
      expect(pinned.stdout).toContain(`recorded by ${recorder}`);

      const byAnother = await runNode(script, [
        ...args,
        '--expect-submitter',
        'github_app:4242:777',
        '--require-proceed',
      ]);
      expect(byAnother.code).toBe(1);
      expect(byAnother.stdout).toMatch(
        /^FAIL\s+policy_binding\s+submitter .* is not the expected/m,
      );

      const another = await runNode(script, [...args, '--expect-reviewer', 'maintainer']);
      expect(another.code).toBe(1);
      expect(another.stdout).toMatch(/^FAIL\s+policy_binding\s+reviewer "lead" is not/m);
    });
  });
});
