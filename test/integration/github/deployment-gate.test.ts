import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { components } from '@octokit/openapi-types';
import examples from '@octokit/webhooks-examples' with { type: 'json' };
import request from 'supertest';
import { signupReviewer } from '../../support/api.js';
import { githubOpenApi } from '../../support/github-openapi.js';
import {
  API,
  appWithGithub,
  BASE_URL,
  closedNetwork,
  deliver,
  fakeGitHub,
  INSTALLATION,
  newRepoState,
  OWNER,
  pullRequestEvent,
  REPO,
  type AppUnderTest,
  type PullRequestState,
  type RepoState,
} from './fake-github.js';

type Json = Record<string, unknown>;
type Deployment = Json & { id: number; sha: string; ref: string; creator: { login: string } };
type Delivery = Json & { deployment: Deployment; deployment_callback_url: string };

const RUN_ID = 9146381577;
const HEAD = 'feedface'.repeat(5);
const WEBHOOK = 'deployment-protection-rule-requested';

// No published example of a deployment_protection_rule delivery exists: none in @octokit/openapi
// 23.0.2 (its webhooks carry examples for check_run, ping and one secret scanning event only),
// @octokit/openapi-webhooks 12.1.0, @octokit/webhooks-examples (7.6.1, its newest release, nor
// 7.3.2), @octokit/webhooks-definitions 3.68.1, or GitHub's documentation of the event. So the
// delivery is built on the example of the `deployment` event in @octokit/webhooks-examples
// 7.6.1 (api.github.com/index.json, the entry named `deployment`: its `created` delivery with
// an installation), whose deployment, repository, sender and installation are the objects
// this event carries too. The members only deployment_protection_rule has are written below as
// @octokit/openapi describes them, and every delivery is checked against its schema of the
// webhook (deploy()).
const deploymentCreated = (examples as unknown as { name: string; examples: Json[] }[])
  .find((e) => e.name === 'deployment')!
  .examples.find(
    (e) => e.installation && (e.deployment as Deployment).environment === 'production',
  )!;
const EXAMPLE: Delivery = (() => {
  const payload = structuredClone(deploymentCreated) as Delivery;
  const deployment = payload.deployment;
  // Overrides: the fake GitHub's repository (where its .github/svc.yml lives on `main`) and
  // installation, in place of the example's Codertocat/Hello-World and installation 1.
  const repository = payload.repository as Json & { owner: Json };
  repository.name = REPO;
  repository.full_name = `${OWNER}/${REPO}`;
  repository.owner.login = OWNER;
  repository.default_branch = 'main';
  (payload.installation as Json).id = INSTALLATION;
  // The members of deployment_protection_rule alone.
  return {
    ...payload,
    action: 'requested',
    environment: deployment.environment,
    event: 'push',
    deployment_callback_url: `${API}/repos/${OWNER}/${REPO}/actions/runs/${RUN_ID}/deployment_protection_rule`,
    pull_requests: [],
  };
})();
const DEPLOYED = EXAMPLE.deployment.sha;

// GitHub's request body of POST /repos/{owner}/{repo}/actions/runs/{run_id}/
// deployment_protection_rule with a state; every body sent is checked against GitHub's schema
// (github-openapi.ts) before a test reads it as this type.
type StateRequired = components['schemas']['review-custom-gates-state-required'];

const merged: PullRequestState = {
  number: 41,
  author: 'copilot-swe-agent[bot]',
  authorType: 'Bot',
  headSha: HEAD,
  mergeCommitSha: DEPLOYED,
};

const CONFIG = `
policy: default
environments:
  production:
    rules:
      - name: merged-through-svc
        require: { source_types: [policy_check] }
      - name: build-green
        require: { checks: [build] }
      - name: person-approved
        require: { source_types: [human_approval] }
        on_fail: escalate
  "staging-*":
    rules:
      - name: ci-green
        require: { source_types: [ci] }
`;

const event = (overrides: { environment?: string; runId?: number; deploymentId?: number } = {}) => {
  const runId = overrides.runId ?? RUN_ID;
  const environment = overrides.environment ?? 'production';
  return {
    ...EXAMPLE,
    environment,
    deployment_callback_url: EXAMPLE.deployment_callback_url.replace(String(RUN_ID), String(runId)),
    deployment: {
      ...EXAMPLE.deployment,
      environment,
      id: overrides.deploymentId ?? EXAMPLE.deployment.id,
    },
  };
};

describe('GitHub App: deployment protection rules', () => {
  let t: AppUnderTest;
  let state: RepoState;
  let github: ReturnType<typeof fakeGitHub>;

  closedNetwork();
  beforeEach(() => {
    state = newRepoState();
    github = fakeGitHub(state);
    t = appWithGithub();
    state.config.set('main', CONFIG);
    state.checkRuns.set(DEPLOYED, [
      { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
    ]);
  });
  afterEach(() => t.close());
  // Every request body svc sent GitHub in the test, whatever its route (the deployment
  // callback, the pull-request gate's check runs, the installation token), as GitHub's REST
  // API description takes it.
  afterEach(() => {
    const problems = github.sent.flatMap((r) =>
      githubOpenApi()
        .requestBodyProblems(r.method, r.path, r.body)
        .map((p) => `${r.method} ${r.path}: ${p}`),
    );
    expect(problems).toEqual([]);
  });

  const deploy = async (payload: object = event()) => {
    expect(githubOpenApi().webhookProblems(WEBHOOK, payload)).toEqual([]);
    expect((await deliver(t, 'deployment_protection_rule', payload)).status).toBe(202);
    expect(await t.jobs.runDue()).toBe(1);
  };

  /** Every request svc sent to a deployment callback, each checked against GitHub's schema. */
  const reviews = () =>
    github.deploymentReviews.map((r) => {
      const path = `/repos/${OWNER}/${REPO}/actions/runs/${r.runId}/deployment_protection_rule`;
      expect(githubOpenApi().requestBodyProblems('POST', path, r.body)).toEqual([]);
      // svc always answers with a state: the branch of GitHub's anyOf that requires one.
      expect(githubOpenApi().schemaProblems('review-custom-gates-state-required', r.body)).toEqual(
        [],
      );
      return { ...r, body: r.body as StateRequired };
    });

  /** The newest receipt, from the public API. */
  const latestReceipt = async () => {
    const head = await t.store.ledger.head();
    const [entry] = await t.store.queries.search({}, { limit: 1, order: 'desc' });
    expect(entry).toBeDefined();
    expect(head.sequence).toBeGreaterThan(0);
    const res = await request(t.app).get(`/v1/receipts/${entry!.receipt_id}`);
    expect(res.status).toBe(200);
    return res.body as Json & { receipt: Json; claim: Json; policy: { rules: Json[] } };
  };

  /** The merged pull request's own receipt, from the pull-request gate. */
  const gatePullRequest = async (pr: PullRequestState, approvedBy?: string) => {
    state.pulls.set(pr.number, { ...pr, mergeCommitSha: undefined });
    state.checkRuns.set(pr.headSha, [
      { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
    ]);
    if (approvedBy) {
      state.permissions.set(approvedBy, 'write');
      state.reviews.set(pr.number, [
        {
          user: approvedBy,
          state: 'APPROVED',
          commit_id: pr.headSha,
          submitted_at: '2026-01-15T09:30:00Z',
        },
      ]);
    }
    expect((await deliver(t, 'pull_request', pullRequestEvent('opened', pr))).status).toBe(202);
    expect(await t.jobs.runDue()).toBe(1);
    state.pulls.set(pr.number, pr);
    return (await latestReceipt()).receipt;
  };

  it('approves production when the deployed SHA was merged ALLOWED, CI is green and a person approved', async () => {
    state.config.set('main', 'gate_humans: true\n' + CONFIG);
    const prReceipt = await gatePullRequest(merged, 'alice');
    expect(prReceipt.policy).toMatchObject({ verdict: 'ALLOWED' });
    await deploy();
    const [answer] = reviews();
    expect(reviews()).toHaveLength(1);
    expect(answer!.runId).toBe(RUN_ID);
    expect(answer!.body).toMatchObject({ environment_name: 'production', state: 'approved' });
    const deployment = await latestReceipt();
    expect(answer!.body.comment).toContain(
      `${BASE_URL}/explorer/receipts/${deployment.receipt.receipt_id as string}`,
    );
    expect(answer!.body.comment).toMatch(/^svc: ALLOWED · ACCEPTED\. Every rule passed\./);
    expect(deployment.claim).toMatchObject({
      action: {
        action_type: 'deployment',
        environment: 'production',
        commit: DEPLOYED,
        branch: EXAMPLE.deployment.ref,
        human_operator: EXAMPLE.deployment.creator.login,
      },
    });
    const sources = deployment.claim.sources as Json[];
    expect(sources).toContainEqual(
      expect.objectContaining({
        id: 'merge-receipt:pr-41',
        type: 'policy_check',
        uri: `${BASE_URL}/v1/receipts/${prReceipt.receipt_id as string}`,
        admissibility: expect.objectContaining({ state: 'ADMISSIBLE' }),
      }),
    );
    expect(deployment.claim.claim_id).toMatch(
      new RegExp(`^gh:acme/web:deployment-${EXAMPLE.deployment.id}@run-${RUN_ID}:`),
    );
  });

  it('rejects production when the merge receipt of the deployed SHA is missing, naming the rule', async () => {
    state.pulls.set(merged.number, merged); // merged, but svc never judged it
    await deploy();
    const [answer] = reviews();
    expect(answer!.body.state).toBe('rejected');
    expect(answer!.body.comment).toMatch(/^svc: BLOCKED · /);
    expect(answer!.body.comment).toContain('rule:merged-through-svc');
    const deployment = await latestReceipt();
    expect(deployment.receipt.policy).toMatchObject({ verdict: 'BLOCKED' });
    expect(deployment.claim.sources as Json[]).toContainEqual(
      expect.objectContaining({
        id: 'merge-receipt:pr-41',
        admissibility: expect.objectContaining({ state: 'INADMISSIBLE' }),
      }),
    );
  });

  it('keeps a BLOCKED merge receipt of the deployed SHA as evidence, and rejects production on it', async () => {
    state.config.set('main', 'gate_humans: true\n' + CONFIG);
    const pr = { ...merged, headSha: 'badc0de0'.repeat(5) };
    state.pulls.set(pr.number, { ...pr, mergeCommitSha: undefined });
    state.checkRuns.set(pr.headSha, [
      { name: 'build', status: 'completed', conclusion: 'failure', app_id: 1 },
    ]);
    expect((await deliver(t, 'pull_request', pullRequestEvent('opened', pr))).status).toBe(202);
    expect(await t.jobs.runDue()).toBe(1);
    const prReceipt = (await latestReceipt()).receipt;
    expect(prReceipt.policy).toMatchObject({ verdict: 'BLOCKED' });
    state.pulls.set(pr.number, pr);
    await deploy();
    const deployment = await latestReceipt();
    expect(deployment.claim.sources as Json[]).toContainEqual(
      expect.objectContaining({
        id: 'merge-receipt:pr-41',
        uri: `${BASE_URL}/v1/receipts/${prReceipt.receipt_id as string}`,
        admissibility: expect.objectContaining({ state: 'INADMISSIBLE' }),
      }),
    );
    expect(reviews().map((r) => r.body.state)).toEqual(['rejected']);
    expect(reviews()[0]!.body.comment).toContain('rule:merged-through-svc');
  });

  it('judges a re-run (a new deployment of the same run) afresh, with a receipt of its own', async () => {
    await deploy();
    const first = (await latestReceipt()).receipt.receipt_id;
    await deploy(event({ deploymentId: EXAMPLE.deployment.id + 1 }));
    const second = (await latestReceipt()).receipt.receipt_id;
    expect(second).not.toBe(first);
    expect(reviews().map((r) => [r.runId, r.body.state])).toEqual([
      [RUN_ID, 'rejected'],
      [RUN_ID, 'rejected'],
    ]);
  });

  it('rejects staging-* (a glob) when its CI failed, and approves it when green', async () => {
    state.checkRuns.set(DEPLOYED, [
      { name: 'build', status: 'completed', conclusion: 'failure', app_id: 1 },
    ]);
    await deploy(event({ environment: 'staging-eu', runId: 1001, deploymentId: 1 }));
    state.checkRuns.set(DEPLOYED, [
      { name: 'build', status: 'completed', conclusion: 'success', app_id: 1 },
    ]);
    await deploy(event({ environment: 'Staging-US', runId: 1002, deploymentId: 2 }));
    expect(reviews().map((r) => [r.runId, r.body.environment_name, r.body.state])).toEqual([
      [1001, 'staging-eu', 'rejected'],
      [1002, 'Staging-US', 'approved'],
    ]);
    expect(reviews()[0]!.body.comment).toContain('rule:ci-green');
  });

  const ESCALATING = `
environments:
  production:
    rules:
      - name: build-green
        require: { checks: [build] }
      - name: person-approved
        require: { source_types: [human_approval] }
        on_fail: escalate
`;

  /** A production deployment nobody approved yet: ESCALATED, and GitHub left waiting. */
  const escalate = async () => {
    state.config.set('main', ESCALATING);
    await deploy();
    expect(reviews()).toEqual([]);
    const escalated = await latestReceipt();
    expect(escalated.receipt.policy).toMatchObject({ verdict: 'ESCALATED' });
    return escalated.receipt.receipt_id as string;
  };

  const dispose = async (receiptId: string, apiKey: string, decision: 'approve' | 'reject') => {
    const res = await request(t.app)
      .post(`/v1/receipts/${receiptId}/disposition`)
      .set('X-API-Key', apiKey)
      .send({ decision, reviewer: { id: 'alice' }, reason: 'release decided' });
    expect(res.status).toBe(201);
    return res.body as { receipt: { receipt_id: string } };
  };

  it('leaves an escalated deployment waiting, redelivered or not, until a person decides', async () => {
    const receiptId = await escalate();
    const before = (await t.store.ledger.head()).sequence;
    await deploy(); // a redelivery: the same receipt, still no answer
    expect(reviews()).toEqual([]);
    expect((await t.store.ledger.head()).sequence).toBe(before);

    // A reviewer the repository names approves through the API: GitHub is answered.
    const reviewer = await signupReviewer(t);
    state.config.set('main', `reviewers: ['${reviewer.keyId}']\n` + ESCALATING);
    const decided = await dispose(receiptId, reviewer.apiKey, 'approve');
    expect(await t.jobs.runDue()).toBe(1);
    expect(reviews()).toHaveLength(1);
    expect(reviews()[0]).toMatchObject({
      runId: RUN_ID,
      body: { environment_name: 'production', state: 'approved' },
    });
    expect(reviews()[0]!.body.comment).toBe(
      `svc: ESCALATED, then approved by alice (receipt ${decided.receipt.receipt_id}). Receipt: ${BASE_URL}/explorer/receipts/${receiptId}`,
    );
  });

  it('answers a rejection the same way, and never a decision by a key the repository does not name', async () => {
    const receiptId = await escalate();
    const stranger = await signupReviewer(t);
    await dispose(receiptId, stranger.apiKey, 'reject');
    expect(await t.jobs.runDue()).toBe(1);
    expect(reviews()).toEqual([]);
    // A redelivery does not answer it either.
    await deploy();
    expect(reviews()).toEqual([]);

    // Once the config names the key, the next delivery answers with the recorded decision.
    state.config.set('main', `reviewers: ['${stranger.keyId}']\n` + ESCALATING);
    await deploy();
    expect(reviews().map((r) => r.body.state)).toEqual(['rejected']);
  });

  it('answers a redelivery once GitHub decided: the 422 is recorded, nothing retried or written', async () => {
    await deploy();
    const sequence = (await t.store.ledger.head()).sequence;
    state.deploymentReviewStatus = 422;
    await deploy();
    expect(reviews().map((r) => r.status)).toEqual([204, 422]);
    expect((await t.store.ledger.head()).sequence).toBe(sequence);
    expect(await t.jobs.runDue()).toBe(0);
  });

  it('judges an environment no svc.yml key names by the file policy alone, and answers it', async () => {
    await deploy(event({ environment: 'qa', runId: 3003, deploymentId: 3 }));
    const [answer] = reviews();
    expect(answer!.body).toMatchObject({ environment_name: 'qa', state: 'approved' });
    const receipt = await latestReceipt();
    expect(receipt.policy.rules.map((r) => r.rule)).not.toContain('rule:merged-through-svc');
  });

  it('rejects a deployment when svc.yml on the default branch does not parse, writing no receipt', async () => {
    state.config.set('main', 'environments:\n  production:\n    rules: [{ name: x }]\n');
    const sequence = (await t.store.ledger.head()).sequence;
    await deploy();
    expect(reviews().map((r) => r.body.state)).toEqual(['rejected']);
    expect(reviews()[0]!.body.comment).toMatch(
      /^svc could not judge this deployment: \.github\/svc\.yml on main: environments\.production\.rules\[0\]/,
    );
    expect((await t.store.ledger.head()).sequence).toBe(sequence);
  });

  it('rejects a deployment whose environment names a policy that does not exist', async () => {
    state.config.set('main', 'environments:\n  production:\n    policy: no-such-policy\n');
    const sequence = (await t.store.ledger.head()).sequence;
    await deploy();
    expect(reviews().map((r) => r.body.state)).toEqual(['rejected']);
    expect(reviews()[0]!.body.comment).toMatch(
      /^svc could not judge this deployment: .*no-such-policy/,
    );
    expect((await t.store.ledger.head()).sequence).toBe(sequence);
  });

  it('refuses a delivery with a bad signature: nothing evaluated, nothing answered', async () => {
    const sequence = (await t.store.ledger.head()).sequence;
    const res = await deliver(t, 'deployment_protection_rule', event(), {
      signature: 'sha256=' + '0'.repeat(64),
    });
    expect(res.status).toBe(401);
    expect(await t.jobs.runDue()).toBe(0);
    expect(github.deploymentReviews).toEqual([]);
    expect((await t.store.ledger.head()).sequence).toBe(sequence);
  });

  it('sends the deliveries and answers GitHub’s schemas take, and those schemas refuse others', async () => {
    state.config.set('main', 'gate_humans: true\n' + CONFIG);
    await gatePullRequest(merged, 'alice');
    await deploy();
    const repo = `/repos/${OWNER}/${REPO}`;
    // The afterEach check saw the requests of both flows.
    expect(github.sent.map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining([
        `POST ${repo}/check-runs`,
        `PATCH ${repo}/check-runs/1000`,
        `POST ${repo}/actions/runs/${RUN_ID}/deployment_protection_rule`,
      ]),
    );

    const openapi = githubOpenApi();
    const callback = `${repo}/actions/runs/${RUN_ID}/deployment_protection_rule`;
    const answer = { environment_name: 'production', state: 'approved', comment: 'ok' };
    expect(openapi.requestBodyProblems('POST', callback, answer)).toEqual([]);
    // With a comment, GitHub's anyOf takes any state (review-custom-gates-comment-required);
    // the answers svc sends are held to the branch that requires one (reviews() above).
    expect(
      openapi.requestBodyProblems('POST', callback, {
        environment_name: 'production',
        state: 'approve',
      }),
    ).not.toEqual([]);
    expect(
      openapi.schemaProblems('review-custom-gates-state-required', { ...answer, state: 'approve' }),
    ).not.toEqual([]);
    expect(openapi.requestBodyProblems('POST', callback, { state: 'approved' })).not.toEqual([]);
    expect(
      openapi.requestBodyProblems('POST', `${repo}/check-runs`, { head_sha: HEAD }),
    ).not.toEqual([]);
    expect(
      openapi.requestBodyProblems('PATCH', `${repo}/check-runs/1000`, { conclusion: 'passed' }),
    ).not.toEqual([]);
    expect(() => openapi.requestBodyProblems('POST', `${repo}/deployment-answers`, {})).toThrow(
      TypeError,
    );

    // The deployment event's own example, and a callback that is not a URL, are refused.
    expect(openapi.webhookProblems(WEBHOOK, deploymentCreated)).not.toEqual([]);
    expect(
      openapi.webhookProblems(WEBHOOK, { ...EXAMPLE, deployment_callback_url: 'runs/1' }),
    ).not.toEqual([]);
    expect(
      openapi.webhookProblems(WEBHOOK, {
        ...EXAMPLE,
        deployment: { ...EXAMPLE.deployment, id: '1' },
      }),
    ).not.toEqual([]);
  });
});
