import { describe, expect, it } from '@jest/globals';
import { buildClaim, type WorkflowContext } from '../../../action/src/claim.js';
import { renderSummary } from '../../../action/src/summary.js';
import { claimInputSchema } from '../../../src/core/claim-schema.js';

const push: WorkflowContext = {
  repository: 'acme/web',
  eventName: 'push',
  sha: 'c0ffee0000000000000000000000000000000000',
  ref: 'refs/heads/release/1.2',
  actor: 'deploy-bot',
  workflow: 'release',
  job: 'ship',
  action: 'gate',
  runId: 99,
  runAttempt: 3,
  serverUrl: 'https://github.example',
  pullRequest: null,
};

describe('buildClaim', () => {
  it('builds a valid claim for a push: branch from the ref, the run as a ci source', () => {
    const claim = buildClaim(push);
    expect(claimInputSchema.safeParse(claim).success).toBe(true);
    expect(claim).toMatchObject({
      claim_id: 'gh:acme/web:run-99-3:ship:gate',
      entity: 'acme/web',
      action: {
        action_type: 'code_change',
        repository: 'acme/web',
        commit: push.sha,
        branch: 'release/1.2',
        agent: 'deploy-bot',
      },
      sources: [
        {
          id: 'run-99-3',
          type: 'ci',
          uri: 'https://github.example/acme/web/actions/runs/99/attempts/3',
        },
      ],
    });
    expect(claim.action).not.toHaveProperty('pull_request');
  });

  it('names the pull request and its head for a pull_request event', () => {
    const claim = buildClaim({
      ...push,
      eventName: 'pull_request',
      pullRequest: { number: 7, headSha: 'abc', headRef: 'feature', title: 'Add | pipes' },
    });
    expect(claimInputSchema.safeParse(claim).success).toBe(true);
    expect(claim.action).toMatchObject({
      action_type: 'merge',
      pull_request: 7,
      commit: 'abc',
      branch: 'feature',
    });
    expect(claim.claim).toContain('pull request #7 (Add | pipes)');
  });
});

describe('renderSummary', () => {
  it('escapes what comes from the receipt so it cannot break the table or add markup', () => {
    const text = renderSummary({
      mode: 'verify',
      trusted: true,
      verdict: 'BLOCKED',
      admissibility: 'REJECTED',
      receiptId: 'dr-<b>x</b>',
      receiptPath: null,
      rules: [{ rule: 'min_sources', passed: false, reason: 'a | b\n<script>alert(1)</script>' }],
      verification: null,
      key: null,
      problems: ['bad & worse'],
      warning: 'passes | <i>anyway</i>',
    });
    expect(text).not.toContain('<script>');
    expect(text).not.toContain('<b>');
    expect(text).toContain(
      '| <code>min_sources</code> | **fail** | a &#124; b &lt;script&gt;alert(1)&lt;/script&gt; |',
    );
    expect(text).toContain('> **Failed:** bad &amp; worse');
    expect(text).toContain('> **Warning:** passes &#124; &lt;i&gt;anyway&lt;/i&gt;');
  });

  it('shows no verdict for a receipt that is not trusted, and says no key verified it', () => {
    const text = renderSummary({
      mode: 'evaluate',
      trusted: false,
      verdict: null,
      admissibility: null,
      receiptId: 'dr-01JH8Z6Q3V9W2X4Y5Z6A7B8C9D',
      receiptPath: null,
      rules: [],
      verification: null,
      key: null,
      problems: ['pinned key mismatch'],
      warning: null,
    });
    expect(text.split('\n')[0]).toBe('## svc evaluate: receipt not trusted');
    expect(text).not.toContain('receipt page');
    expect(text).toContain('| Verified offline | **no**: no trusted key to verify with |');
  });

  it('links the receipt to its page in the ledger explorer, escaped', () => {
    const text = renderSummary({
      mode: 'evaluate',
      trusted: true,
      verdict: 'ALLOWED',
      admissibility: 'ACCEPTED',
      receiptId: 'dr-01JH8Z6Q3V9W2X4Y5Z6A7B8C9D',
      receiptUrl: 'https://svc.example.com/explorer/receipts/dr-01JH8Z6Q3V9W2X4Y5Z6A7B8C9D?"a"|b',
      receiptPath: null,
      rules: [],
      verification: null,
      key: null,
      problems: [],
      warning: null,
    });
    expect(text).toContain(
      '| Receipt | <code>dr-01JH8Z6Q3V9W2X4Y5Z6A7B8C9D</code> · <a href="https://svc.example.com/explorer/receipts/dr-01JH8Z6Q3V9W2X4Y5Z6A7B8C9D?&quot;a&quot;&#124;b">receipt page</a> |',
    );
  });
});
