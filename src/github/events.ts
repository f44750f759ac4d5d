import type { ApplicationFunction, Context } from 'probot';
import type { Logger } from 'pino';
import { REEVALUATE } from './check-run.js';
import { deliveryFields } from './log-fields.js';
import { runIdOfCallback } from './deployment-claim.js';
import type { DeploymentFlow } from './deployment-flow.js';
import { decisionOf, type EscalationPress } from './escalation-press.js';
import { openPullRequestsFor, type RepoRef } from './github-evidence.js';
import type { Installation } from './gate.js';
import type { MergeGroupFlow } from './merge-group-flow.js';
import { mergeQueueBase, mergeQueueBranchOf, mergeQueuePullRequests } from './merge-queue.js';
import type { PullRequestFlow } from './pull-request-flow.js';

/** A payload without a member a handler needs: logged and acknowledged, never retried. */
export class IncompletePayload extends Error {
  override name = 'IncompletePayload';
}

interface Common {
  repository?: { name?: string; owner?: { login?: string } };
  installation?: { id?: number };
  sender?: { login?: string; type?: string };
}

function targetOf(
  context: Context,
  finalAttempt: boolean,
): { ref: RepoRef; installation: Installation } {
  const payload = context.payload as Common;
  const owner = payload.repository?.owner?.login;
  const repo = payload.repository?.name;
  const id = payload.installation?.id;
  if (!owner || !repo || typeof id !== 'number')
    throw new IncompletePayload(`${context.name}: repository or installation missing`);
  return { ref: { owner, repo }, installation: { octokit: context.octokit, id, finalAttempt } };
}

const need = <T>(value: T | null | undefined, what: string): T => {
  if (value === null || value === undefined) throw new IncompletePayload(`${what} missing`);
  return value;
};

/** The gate's flows, one module each. */
export interface GateFlows {
  pullRequests: PullRequestFlow;
  mergeGroups: MergeGroupFlow;
  /** Deployments waiting on an environment whose protection rules name the App. */
  deployments?: DeploymentFlow;
}

/**
 * The Probot application: which deliveries evaluate what. Every verdict follows its evidence:
 * pushes, reviews and other apps' CI re-evaluate the open pull requests of the commit.
 */
export function gateEvents(
  flows: GateFlows,
  options: {
    appId: number;
    log: Logger;
    isFinalAttempt: (deliveryId: string) => boolean;
    /** The Approve and Reject buttons of escalated check runs; absent, they do nothing. */
    escalations?: EscalationPress;
  },
): ApplicationFunction {
  return (app) => {
    const target = (context: Context) => targetOf(context, options.isFinalAttempt(context.id));

    // A commit's open pull requests, or the merge group this installation evaluated on it.
    // A queue-like branch name only hints: the group must be one recorded from a signed
    // merge_group delivery, since anyone can name a branch gh-readonly-queue/...
    const evaluateCommit = async (
      context: Context,
      sha: string,
      branch: string | null,
      known: number[],
    ) => {
      const { ref, installation } = target(context);
      if (branch && mergeQueueBase(branch)) {
        if (await flows.mergeGroups.reevaluate(installation, ref, sha)) return;
      }
      const numbers = known.length
        ? known
        : await openPullRequestsFor(installation.octokit, ref, sha);
      for (const number of numbers) await flows.pullRequests.evaluate(installation, ref, number);
    };

    const evaluatePullRequest = async (
      context: Context<'pull_request' | 'pull_request_review'>,
    ) => {
      const { ref, installation } = target(context);
      const number = need(context.payload.pull_request?.number, 'pull_request.number');
      await flows.pullRequests.evaluate(installation, ref, number);
    };

    app.on(
      [
        'pull_request.opened',
        'pull_request.reopened',
        'pull_request.synchronize',
        'pull_request.ready_for_review',
      ],
      evaluatePullRequest,
    );

    // Labels are claim facts that conditional rules read, and assignees decide whose
    // approvals count (separation of duties): a change to either is new evidence, so the
    // verdict on the check run must not wait for the next push or review.
    app.on(
      [
        'pull_request.labeled',
        'pull_request.unlabeled',
        'pull_request.assigned',
        'pull_request.unassigned',
      ],
      evaluatePullRequest,
    );

    // A new base branch means another config, and maybe another gate: evaluate again, so a
    // verdict obtained against a looser base does not stay on the commit.
    app.on('pull_request.edited', async (context) => {
      if (context.payload.changes?.base) await evaluatePullRequest(context);
    });

    app.on(['pull_request_review.submitted', 'pull_request_review.dismissed'], evaluatePullRequest);

    app.on('check_suite.completed', async (context) => {
      const suite = need(context.payload.check_suite, 'check_suite');
      if (suite.app?.id === options.appId) return;
      await evaluateCommit(
        context,
        need(suite.head_sha, 'check_suite.head_sha'),
        suite.head_branch ?? null,
        (suite.pull_requests ?? []).map((pr) => pr.number),
      );
    });

    app.on('check_run.completed', async (context) => {
      const run = need(context.payload.check_run, 'check_run');
      if (run.app?.id === options.appId) return;
      await evaluateCommit(
        context,
        need(run.head_sha, 'check_run.head_sha'),
        run.check_suite?.head_branch ?? null,
        (run.pull_requests ?? []).map((pr) => pr.number),
      );
    });

    app.on('status', async (context) => {
      const sha = need(context.payload.sha, 'sha');
      const branch = mergeQueueBranchOf((context.payload.branches ?? []).map((b) => b.name));
      await evaluateCommit(context, sha, branch, []);
    });

    // A person decided an escalation with our check run's Approve or Reject button.
    app.on('check_run.requested_action', async (context) => {
      const run = need(context.payload.check_run, 'check_run');
      const decision = decisionOf(context.payload.requested_action?.identifier);
      if (run.app?.id !== options.appId || !decision || !options.escalations) return;
      const { ref, installation } = target(context);
      const sender = need(context.payload.sender, 'sender');
      await options.escalations.press(
        installation,
        ref,
        {
          id: run.id,
          headSha: run.head_sha,
          externalId: run.external_id ?? null,
          conclusion: run.conclusion ?? null,
        },
        decision,
        { login: sender.login, type: sender.type },
      );
    });

    // Someone asked for a fresh verdict: the "Re-run" of our check, or its button.
    app.on(['check_run.rerequested', 'check_run.requested_action'], async (context) => {
      const run = need(context.payload.check_run, 'check_run');
      if (run.app?.id !== options.appId) return;
      if (
        context.payload.action === 'requested_action' &&
        context.payload.requested_action?.identifier !== REEVALUATE.identifier
      )
        return;
      await evaluateCommit(
        context,
        run.head_sha,
        run.check_suite?.head_branch ?? null,
        (run.pull_requests ?? []).map((pr) => pr.number),
      );
    });

    app.on('check_suite.rerequested', async (context) => {
      const suite = need(context.payload.check_suite, 'check_suite');
      await evaluateCommit(
        context,
        suite.head_sha,
        suite.head_branch ?? null,
        (suite.pull_requests ?? []).map((pr) => pr.number),
      );
    });

    app.on('merge_group.checks_requested', async (context) => {
      const { ref, installation } = target(context);
      const group = need(context.payload.merge_group, 'merge_group');
      // A signed merge_group delivery: GitHub named the branch, so its members are real.
      await flows.mergeGroups.evaluate(installation, ref, {
        headSha: need(group.head_sha, 'merge_group.head_sha'),
        numbers: mergeQueuePullRequests(need(group.head_ref, 'merge_group.head_ref')),
        baseRef: need(group.base_ref, 'merge_group.base_ref'),
      });
    });

    // A job waits on an environment whose custom protection rule is the App: judge the
    // deployment and answer through the run's callback (deployment-flow.ts).
    app.on('deployment_protection_rule.requested', async (context) => {
      if (!flows.deployments) return;
      const { ref, installation } = target(context);
      const { payload } = context;
      const deployment = need(payload.deployment, 'deployment');
      const callback = need(payload.deployment_callback_url, 'deployment_callback_url');
      const runId = runIdOfCallback(callback);
      if (runId === null) throw new IncompletePayload('deployment_callback_url names no run');
      await flows.deployments.evaluate(installation, ref, {
        environment: need(payload.environment, 'environment'),
        deploymentId: deployment.id,
        runId,
        sha: deployment.sha,
        ref: deployment.ref,
        event: payload.event ?? null,
        actor: deployment.creator?.login ?? payload.sender?.login ?? null,
        defaultBranch: need(payload.repository?.default_branch, 'repository.default_branch'),
      });
    });
  };
}

/**
 * The gate's handlers, with a delivery that lacks what a handler needs (no installation, as
 * GitHub sends for events about the App itself, or a member missing) acknowledged at info:
 * an expected condition, so it must not reach Probot's error handler, which would log it as
 * an error with its stack, once per delivery.
 */
export function acknowledgingIncomplete(
  gate: ApplicationFunction,
  log: Logger,
): ApplicationFunction {
  return (app, options) => {
    const on = (event: never, handler: (context: Context) => Promise<void>) =>
      app.on(event, async (context: Context) => {
        try {
          await handler(context);
        } catch (error) {
          if (!(error instanceof IncompletePayload)) throw error;
          log.info(
            {
              ...deliveryFields({ id: context.id, name: context.name, payload: context.payload }),
              reason: error.message,
            },
            'delivery acknowledged, not processed',
          );
        }
      });
    return gate(Object.assign(Object.create(app) as typeof app, { on }), options);
  };
}
