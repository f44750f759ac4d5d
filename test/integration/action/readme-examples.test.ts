import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { validClaim } from '../../support/claims.js';
import { startLiveService, type LiveService } from '../../support/live-service.js';
import { runAction } from './run-action.js';

type Json = Record<string, unknown>;

const README = readFileSync(new URL('../../../action/README.md', import.meta.url), 'utf8');
const DOCUMENTED_URL = 'https://svc.example.com';

interface DocumentedStep {
  example: string;
  with: Record<string, string>;
  /** The `run:` scripts of the steps before it in its job, which prepare its files. */
  before: string[];
}

/** Every step of a ```yaml block of action/README.md that uses this Action, with its inputs. */
function documentedSteps(): DocumentedStep[] {
  const steps: DocumentedStep[] = [];
  const heading = (at: number) =>
    [...README.slice(0, at).matchAll(/^## (.+)$/gm)].at(-1)?.[1] ?? '(top)';
  for (const block of README.matchAll(/```yaml\n([\s\S]*?)```/g)) {
    const visit = (node: unknown, siblings: unknown[] = []) => {
      if (Array.isArray(node)) node.forEach((n) => visit(n, node as unknown[]));
      else if (node !== null && typeof node === 'object') {
        const step = node as Json;
        if (typeof step.uses === 'string' && /\/svc\/action@/.test(step.uses))
          steps.push({
            example: heading(block.index),
            with: Object.fromEntries(
              Object.entries((step.with ?? {}) as Json).map(([k, v]) => [k, String(v)]),
            ),
            before: siblings
              .slice(0, siblings.indexOf(node))
              .map((s) => (s as Json).run)
              .filter((run): run is string => typeof run === 'string'),
          });
        else Object.values(step).forEach((n) => visit(n));
      }
    };
    for (const doc of parseAllDocuments(block[1]!)) {
      expect(doc.errors).toEqual([]);
      visit(doc.toJS());
    }
  }
  return steps;
}

// The documented workflows, run as written against a live service: only the ${{ }} expressions
// a runner would fill in, and the example host name, are replaced.
describe('the examples of action/README.md', () => {
  let live: LiveService;
  let context: Record<string, string>;
  const steps = documentedSteps();

  beforeAll(async () => {
    live = await startLiveService();
    const { apiKey } = await live.signup();
    context = {
      'secrets.SVC_API_KEY': apiKey,
      'secrets.SVC_DEPLOY_KEY': apiKey,
      'vars.SVC_KEY_FINGERPRINT': live.t.serverKey.keyId,
      'vars.SVC_PUBLIC_KEY_PEM': live.t.serverKey.publicKeyPem,
      'github.run_id': '7001',
      'github.run_attempt': '1',
      'github.repository': 'acme/web',
      'github.sha': '0123456789abcdef0123456789abcdef01234567',
      'github.server_url': 'https://github.com',
    };
  });
  afterAll(() => live.close());

  const fill = (value: string) =>
    value
      .replace(/\$\{\{\s*([\w.]+)\s*\}\}/g, (_, name: string) => {
        if (!(name in context)) throw new Error(`the test has no value for \${{ ${name} }}`);
        return context[name]!;
      })
      .replaceAll(DOCUMENTED_URL, live.url);

  /** A receipt the stored-receipt example can check: issued under the policy it expects. */
  async function storedReceipt(policy: string): Promise<string> {
    const { apiKey } = await live.signup();
    const provenance = {
      captured_at: '2026-01-15T09:59:00Z',
      collector: 'ci-bot',
      chain_of_custody: ['runner-7'],
    };
    const response = await live.evaluate(
      apiKey,
      validClaim({
        policy,
        sources: [
          {
            id: 'ci-1',
            type: 'ci',
            uri: 'https://ci.example/run/1',
            confidence: 0.9,
            content: 'tests pass',
            provenance,
          },
          {
            id: 'ok-1',
            type: 'human_approval',
            uri: 'https://scm.example/pr/42#r1',
            confidence: 1,
            content: 'approved',
            provenance,
          },
        ],
      }),
    );
    expect((response.receipt as Json).policy).toMatchObject({ name: policy, verdict: 'ALLOWED' });
    return JSON.stringify(response);
  }

  it('are found: one step per documented workflow', () => {
    expect(steps.map((s) => s.example)).toEqual([
      'Gate a pull request',
      'Gate a deployment job',
      'Verify a stored receipt',
      'An escalation decided by a human',
      'Witness the log',
    ]);
  });

  /** The files the `run:` steps before the Action step write, run by bash as a runner would. */
  function preparedFiles(step: DocumentedStep): Record<string, string> {
    if (step.before.length === 0) return {};
    const dir = mkdtempSync(join(tmpdir(), 'svc-action-prepare-'));
    try {
      for (const script of step.before)
        execFileSync('bash', ['-eo', 'pipefail', '-c', fill(script)], { cwd: dir });
      return Object.fromEntries(
        readdirSync(dir).map((name) => [name, readFileSync(join(dir, name), 'utf8')]),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  const ESCALATION = 'An escalation decided by a human';

  it.each(steps.filter((s) => s.example !== ESCALATION).map((s, i) => [s.example, s, i] as const))(
    '%s passes as written',
    async (_, step, i) => {
      const inputs = Object.fromEntries(Object.entries(step.with).map(([k, v]) => [k, fill(v)]));
      const files = preparedFiles(step);
      if (inputs['receipt-file'])
        files[inputs['receipt-file']] = await storedReceipt(inputs['expected-policy'] ?? 'default');
      // Each example is its own workflow: two context-built claims must not share a claim_id.
      const run = await runAction(inputs, { files, env: { GITHUB_ACTION: `__svc_${i}` } });
      expect({ errors: run.errors, warnings: run.warnings, code: run.code }).toEqual({
        errors: [],
        warnings: [],
        code: 0,
      });
      expect(run.outputs).toMatchObject({
        verdict: 'ALLOWED',
        admissibility: 'ACCEPTED',
        valid: 'true',
      });
      // The witness example starts from an empty cache: its checkpoint is trusted on first use
      // and kept where the cache step saves it from.
      if (inputs['witness-state']) {
        expect(run.outputs['log-witness']).toBe('first');
        expect(run.stdout).toContain(`kept in ${join(run.workspace, inputs['witness-state'])}`);
      }
    },
  );

  // The escalation example, as its text tells it: the first run fails on the escalation with no
  // decision yet; a reviewer approves; the re-run (a new attempt of the same run) passes.
  it('An escalation decided by a human escalates, then passes once approved', async () => {
    const step = steps.find((s) => s.example === ESCALATION)!;
    const inputs = Object.fromEntries(Object.entries(step.with).map(([k, v]) => [k, fill(v)]));
    const first = await runAction(inputs, { env: { GITHUB_ACTION: '__svc_escalation' } });
    expect(first.code).toBe(1);
    expect(first.outputs).toMatchObject({ verdict: 'ESCALATED', valid: 'true', disposition: '' });
    expect(first.errors.join('\n')).toMatch(/verdict ESCALATED.*not ALLOWED and ACCEPTED/);
    const escalated = JSON.parse(first.receiptText!) as Json;
    expect(escalated.policy).toMatchObject({ name: 'default', verdict: 'ESCALATED' });

    // A reviewer records the approval: a key of another account than the one that escalated
    // (the reviewer key the README's disposition step has the operator issue).
    const reviewer = await live.signupReviewer();
    const res = await fetch(`${live.url}/v1/receipts/${String(escalated.receipt_id)}/disposition`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': reviewer.apiKey },
      body: JSON.stringify({
        decision: 'approve',
        reviewer: { id: 'sam@acme.example' },
        reason: 'release signed off',
      }),
    });
    expect(res.status).toBe(201);

    const again = await runAction(inputs, {
      env: { GITHUB_ACTION: '__svc_escalation', GITHUB_RUN_ATTEMPT: '2' },
    });
    expect({ errors: again.errors, code: again.code }).toEqual({ errors: [], code: 0 });
    expect(again.outputs).toMatchObject({
      verdict: 'ESCALATED',
      valid: 'true',
      'receipt-id': String(escalated.receipt_id),
      disposition: 'approve',
    });
  });
});
