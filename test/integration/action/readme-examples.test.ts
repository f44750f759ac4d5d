import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { validClaim } from '../../support/claims.js';
import { startLiveService, type LiveService } from '../../support/live-service.js';
import { runAction } from './run-action.js';

type Json = Record<string, unknown>;

const README = readFileSync(new URL('../../../action/README.md', import.meta.url), 'utf8');
const DOCUMENTED_URL = 'https://svc.example.com';

/** Every step of a ```yaml block of action/README.md that uses this Action, with its inputs. */
function documentedSteps(): { example: string; with: Record<string, string> }[] {
  const steps: { example: string; with: Record<string, string> }[] = [];
  const heading = (at: number) =>
    [...README.slice(0, at).matchAll(/^## (.+)$/gm)].at(-1)?.[1] ?? '(top)';
  for (const block of README.matchAll(/```yaml\n([\s\S]*?)```/g)) {
    const visit = (node: unknown) => {
      if (Array.isArray(node)) node.forEach(visit);
      else if (node !== null && typeof node === 'object') {
        const step = node as Json;
        if (typeof step.uses === 'string' && /\/svc\/action@/.test(step.uses))
          steps.push({
            example: heading(block.index),
            with: Object.fromEntries(
              Object.entries((step.with ?? {}) as Json).map(([k, v]) => [k, String(v)]),
            ),
          });
        else Object.values(step).forEach(visit);
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

  it.each(steps.map((s, i) => [s.example, s, i] as const))(
    '%s passes as written',
    async (_, step, i) => {
      const inputs = Object.fromEntries(Object.entries(step.with).map(([k, v]) => [k, fill(v)]));
      const files: Record<string, string> = {};
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
});
