import type { ProbotOctokit } from 'probot';
import { Probot } from 'probot';
import type { Logger } from 'pino';
import type {
  GITHUB_DELIVERY_JOB,
  GITHUB_DEPLOYMENT_ANSWER_JOB,
  Job,
  JobHandler,
  JobResult,
} from '../ports/job-queue.js';
import type { Clock } from '../ports/clock.js';
import type { LedgerQueries } from '../ports/ledger-queries.js';
import type { ClaimService, EvaluateResponse } from '../services/claims.js';
import type { DispositionService } from '../services/dispositions.js';
import { EscalationPress } from './escalation-press.js';
import { acknowledgingIncomplete, gateEvents, IncompletePayload } from './events.js';
import type { SessionLookup } from './agent-sessions.js';
import { isTransient, type GateDeps } from './gate.js';
import { runIdOfClaim } from './deployment-claim.js';
import { DeploymentFlow } from './deployment-flow.js';
import { MergeGroupFlow } from './merge-group-flow.js';
import { PullRequestFlow } from './pull-request-flow.js';
import { boundedErr, boundedEvent, deliveryFields, errorFields } from './log-fields.js';

export interface GithubAppConfig {
  appId?: number;
  privateKey?: string;
  privateKeyPath?: string;
  webhookSecret?: string;
  apiBaseUrl: string;
  host: string;
}

/** How many runs a delivery gets before its check is ended with the reason. */
export const DELIVERY_ATTEMPTS = 5;

const errorsOf = (error: unknown): unknown[] =>
  error instanceof AggregateError ? error.errors.flatMap(errorsOf) : [error];

/** Seconds GitHub asked us to wait (secondary rate limits), when it said. */
function retryAfterSeconds(error: unknown): number | null {
  for (const e of errorsOf(error)) {
    const headers = (e as { response?: { headers?: Record<string, unknown> } }).response?.headers;
    const value = headers?.['retry-after'];
    if (value !== undefined && /^\d+$/.test(String(value))) return Number(value);
  }
  return null;
}

/**
 * The GitHub App inside the service process: Probot with the gate's handlers. Answers the
 * handler of the `github.delivery` jobs of the durable queue (webhook-route.ts records each
 * delivery there first); app.ts registers it.
 */
export function githubDeliveryHandler(deps: {
  config: GithubAppConfig & { appId: number; privateKey: string };
  claims: ClaimService;
  /** Records decisions taken with an escalated check run's buttons. */
  dispositions?: DispositionService;
  queries: LedgerQueries;
  /** Agent sessions, for pull requests judged by the sessions that made them. */
  sessions?: SessionLookup;
  clock: Clock;
  baseUrl: string;
  log: Logger;
  onReceipt?: (response: EvaluateResponse, replayed: boolean) => void;
  /** Octokit defaults, e.g. retries and throttling off in tests. */
  Octokit?: typeof ProbotOctokit;
}): JobHandler<typeof GITHUB_DELIVERY_JOB> & {
  /** The handler of `github.deployment-answer` jobs: a disposition answered on GitHub. */
  deploymentAnswers: JobHandler<typeof GITHUB_DEPLOYMENT_ANSWER_JOB>;
} {
  // Probot logs every delivery (at debug) and every handler error itself, each with the whole
  // delivery attached: its logger, and ours, serialize both to bounded fields only.
  const log = deps.log.child(
    { component: 'github-app' },
    { serializers: { err: boundedErr, event: boundedEvent } },
  );
  const probot = new Probot({
    appId: deps.config.appId,
    privateKey: deps.config.privateKey,
    // Deliveries were verified by the route already; Probot only needs a value here.
    secret: deps.config.webhookSecret ?? 'verified-by-the-route',
    baseUrl: deps.config.apiBaseUrl,
    log,
    ...(deps.Octokit ? { Octokit: deps.Octokit } : {}),
  });
  const gateDeps: GateDeps = {
    claims: deps.claims,
    queries: deps.queries,
    appId: deps.config.appId,
    baseUrl: deps.baseUrl,
    host: deps.config.host,
    log,
    clock: deps.clock,
    onReceipt: deps.onReceipt,
    dispositions: deps.dispositions,
    sessions: deps.sessions,
  };
  const flows = {
    pullRequests: new PullRequestFlow(gateDeps),
    mergeGroups: new MergeGroupFlow(gateDeps),
    deployments: new DeploymentFlow(gateDeps),
  };
  // Deliveries on their last run: a transient failure then ends the check with its reason.
  const finalRuns = new Set<string>();

  // Handlers are registered once Probot initialized: every delivery waits for that.
  const loaded: Promise<void> = probot.load(
    acknowledgingIncomplete(
      gateEvents(flows, {
        appId: deps.config.appId,
        log,
        isFinalAttempt: (id) => finalRuns.has(id),
        escalations: deps.dispositions
          ? new EscalationPress({
              dispositions: deps.dispositions,
              queries: deps.queries,
              appId: deps.config.appId,
              baseUrl: deps.baseUrl,
              log,
              onReceipt: deps.onReceipt,
            })
          : undefined,
      }),
      log,
    ),
  );
  // A delivery run while Probot cannot start fails, and is retried on the job's schedule.
  loaded.catch((error: unknown) => log.error({ err: error }, 'GitHub App failed to start'));
  /** Another run later: logged with the attempt, when it runs next and why. */
  const retry = (
    job: Job<typeof GITHUB_DELIVERY_JOB>,
    fields: Record<string, unknown>,
    error: unknown,
  ): JobResult => {
    const { error: reason } = errorFields(error);
    const wait = retryAfterSeconds(error);
    const backoff = Math.min(30 * 2 ** (job.attempt - 1), 1800);
    const delaySeconds = Math.max(wait ?? 0, backoff) * (1 + Math.random() * 0.2);
    const at = Math.ceil(deps.clock.now() + delaySeconds * 1000);
    log.warn(
      {
        ...fields,
        ...errorFields(error),
        attempt: job.attempt,
        max_attempts: DELIVERY_ATTEMPTS,
        next_run_at: new Date(at).toISOString(),
      },
      'delivery will be retried',
    );
    return { outcome: 'retry', at, error: reason };
  };

  /**
   * A disposition of a deployment receipt this App wrote: the waiting run is answered with it
   * (deployment-flow.ts decides whether the repository trusts its recorder). The parent is
   * read from the ledger, never from the job, so the job names nothing it could forge.
   */
  const deploymentAnswers = async (
    job: Job<typeof GITHUB_DEPLOYMENT_ANSWER_JOB>,
  ): Promise<JobResult | void> => {
    await loaded;
    const [parent] = await deps.queries.getMany([job.payload.parent_receipt_id]);
    const by = parent?.receipt.submitter;
    const action = parent?.claim.action;
    const runId = parent ? runIdOfClaim(parent.claim.claim_id) : null;
    const [owner, repo] = (action?.repository ?? '').split('/');
    if (
      !parent ||
      by?.kind !== 'github_app' ||
      by.app_id !== deps.config.appId ||
      action?.action_type !== 'deployment' ||
      !action.environment ||
      runId === null ||
      !owner ||
      !repo
    )
      return { outcome: 'done' };
    const octokit = (await probot.auth(by.installation_id)) as never;
    try {
      const result = await flows.deployments.answerDisposition(
        { octokit, id: by.installation_id },
        { owner, repo },
        { receiptId: parent.receipt.receipt_id, runId, environment: action.environment },
      );
      log.info(
        { receipt_id: parent.receipt.receipt_id, run_id: runId, result },
        'deployment disposition handled',
      );
    } catch (error) {
      if (!errorsOf(error).some(isTransient) || job.attempt >= DELIVERY_ATTEMPTS) {
        log.warn(
          { receipt_id: parent.receipt.receipt_id, ...errorFields(error), attempt: job.attempt },
          'deployment disposition not answered on GitHub',
        );
        return { outcome: 'done' };
      }
      return retry(job as never, { receipt_id: parent.receipt.receipt_id }, error);
    }
  };

  const deliveries = async (job: Job<typeof GITHUB_DELIVERY_JOB>): Promise<JobResult | void> => {
    const delivery = job.payload;
    const fields = deliveryFields(delivery);
    try {
      await loaded;
    } catch (error) {
      // Logged once as it failed; each delivery waits for a later run.
      return retry(job, fields, error);
    }
    if (job.attempt >= DELIVERY_ATTEMPTS) finalRuns.add(delivery.id);
    try {
      await probot.receive({
        id: delivery.id,
        name: delivery.name,
        payload: delivery.payload,
      } as never);
    } catch (error) {
      const incomplete = errorsOf(error).find((e) => e instanceof IncompletePayload);
      if (incomplete) {
        log.warn(
          { ...fields, reason: (incomplete as Error).message },
          'delivery acknowledged, not processed',
        );
        return { outcome: 'done' };
      }
      if (!errorsOf(error).some(isTransient)) {
        // A deleted branch or repository, a revoked installation: another run cannot help.
        log.warn(
          { ...fields, ...errorFields(error), attempt: job.attempt },
          'delivery ended: GitHub refused it for good',
        );
        return { outcome: 'done' };
      }
      if (job.attempt >= DELIVERY_ATTEMPTS) {
        const failure = errorFields(error);
        log.error({ ...fields, ...failure, attempt: job.attempt }, 'delivery failed for good');
        return { outcome: 'failed', error: failure.error };
      }
      return retry(job, fields, error);
    } finally {
      finalRuns.delete(delivery.id);
    }
  };
  return Object.assign(deliveries, { deploymentAnswers });
}
