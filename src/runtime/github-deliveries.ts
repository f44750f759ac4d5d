import type { Logger } from 'pino';
import type { ProbotOctokit } from 'probot';
import type { Clock } from '../ports/clock.js';
import {
  GITHUB_DELIVERY_JOB,
  GITHUB_DEPLOYMENT_ANSWER_JOB,
  type JobQueue,
} from '../ports/job-queue.js';
import type { LedgerEntry } from '../ports/ledger-store.js';
import type { LedgerQueries } from '../ports/ledger-queries.js';
import type { SessionStore } from '../ports/session-store.js';
import type { ClaimService } from '../services/claims.js';
import type { DispositionService } from '../services/dispositions.js';
import type { Metrics } from '../services/metrics.js';
import type { RuntimeConfig } from './runtime-config.js';

/**
 * Registers the GitHub App's delivery handler when an App is configured (an id and a private
 * key), and says whether it did. Probot and Octokit (tens of MB) are loaded only then; the
 * handler is registered at once and every delivery waits for them to load.
 */
export function registerGithubDeliveries(deps: {
  config: RuntimeConfig;
  jobs: JobQueue;
  claims: ClaimService;
  dispositions: DispositionService;
  queries: LedgerQueries;
  sessions: Pick<SessionStore, 'commitReports' | 'get'>;
  clock: Clock;
  logger: Logger;
  Octokit: typeof ProbotOctokit | undefined;
  metrics: Metrics;
}): boolean {
  const { config, metrics } = deps;
  const github = config.github;
  if (github?.appId === undefined || github.privateKey === undefined) return false;
  const { appId, privateKey } = github;
  const handler = import('../github/github-app.js').then(({ githubDeliveryHandler }) =>
    githubDeliveryHandler({
      config: { ...github, appId, privateKey, webhookSecret: config.webhookSecret },
      claims: deps.claims,
      dispositions: deps.dispositions,
      queries: deps.queries,
      sessions: deps.sessions,
      clock: deps.clock,
      baseUrl: config.baseUrl ?? 'http://localhost:3000',
      log: deps.logger,
      Octokit: deps.Octokit,
      onReceipt: (response, replayed) => {
        if (!replayed)
          metrics.receiptsIssued.inc({
            verdict: response.receipt.policy.verdict,
            admissibility: response.receipt.admissibility.status,
          });
      },
    }),
  );
  handler.catch((error: unknown) => deps.logger.error({ err: error }, 'GitHub App failed to load'));
  deps.jobs.handle(GITHUB_DELIVERY_JOB, async (job) => (await handler)(job));
  deps.jobs.handle(GITHUB_DEPLOYMENT_ANSWER_JOB, async (job) =>
    (await handler).deploymentAnswers(job),
  );
  return true;
}

/**
 * The disposition hook of the ledger runtime: a decision on a deployment the App judged is
 * answered on GitHub by a job (at least once, retried, in whichever process runs jobs). A
 * failure to enqueue is logged: the disposition is written already, and a redelivery of the
 * deployment's event still answers it.
 */
export function deploymentDispositions(deps: {
  config: RuntimeConfig;
  jobs: JobQueue;
  logger: Logger;
}): (parent: LedgerEntry) => Promise<void> {
  return async (parent) => {
    const github = deps.config.github;
    if (github?.appId === undefined || github.privateKey === undefined) return;
    const by = parent.receipt.submitter;
    if (parent.claim.action?.action_type !== 'deployment' || by?.kind !== 'github_app') return;
    const id = parent.receipt.receipt_id;
    try {
      await deps.jobs.enqueue(
        GITHUB_DEPLOYMENT_ANSWER_JOB,
        { parent_receipt_id: id },
        { dedupeKey: `deployment-answer:${id}` },
      );
    } catch (error) {
      deps.logger.error({ err: error, receipt_id: id }, 'deployment answer not enqueued');
    }
  };
}
