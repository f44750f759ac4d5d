import type { Logger } from 'pino';
import type { ProbotOctokit } from 'probot';
import { nativeHashBytes, nativeSha256Hex } from '@svc/verify/node';
import { DEFAULT_WEBHOOK_RETRY_DELAYS } from '../config/config.js';
import { DELIVERY_TIMEOUT_MS, webhookDeliveryHandler } from '../jobs/webhook-delivery.js';
import { newWebhookSecret } from '../jobs/webhook-signing.js';
import type { Clock } from '../ports/clock.js';
import type { JobQueue } from '../ports/job-queue.js';
import type { RateLimiter } from '../ports/rate-limiter.js';
import type { ReceiptSealer } from '../ports/receipt-sealer.js';
import type { SecretBox } from '../ports/secret-box.js';
import type { ServerKey } from '../ports/signer.js';
import type { Store } from '../ports/store.js';
import { DELIVERY_JOB } from '../ports/webhook-store.js';
import { AgentApprovals } from '../services/agent-approvals.js';
import { AgentHookService } from '../services/agent-hooks.js';
import { ApiKeyService } from '../services/api-keys.js';
import { AuthzenService } from '../services/authzen.js';
import { ClaimService, type EvaluateResponse } from '../services/claims.js';
import { DispositionService } from '../services/dispositions.js';
import { HealthService } from '../services/health.js';
import { LedgerReadService } from '../services/ledger-reads.js';
import { logOriginFor } from '../services/log-origin.js';
import { Metrics } from '../services/metrics.js';
import { OutcomeService } from '../services/outcomes.js';
import { PolicyService } from '../services/policies.js';
import { SessionService } from '../services/sessions.js';
import { sealerOf } from '../services/receipt-sealer.js';
import { SlidingWindowLimiter } from '../services/rate-limiter.js';
import { SigningKeyService } from '../services/signing-keys.js';
import { TransparencyLog } from '../services/transparency-log.js';
import { systemResolver, type ResolveHost } from '../services/webhook-url-guard.js';
import { WebhookService } from '../services/webhooks.js';
import { deploymentDispositions, registerGithubDeliveries } from './github-deliveries.js';
import type { RuntimeConfig } from './runtime-config.js';
import { startWriterDuties } from './writer-duties.js';

export interface LedgerRuntimeDeps {
  config: RuntimeConfig;
  /** Octokit defaults for the GitHub App (tests turn retries and throttling off). */
  githubOctokit?: typeof ProbotOctokit;
  store: Store;
  serverKey: ServerKey;
  box: SecretBox;
  clock: Clock;
  logger: Logger;
  /**
   * The queue that runs background jobs (webhook and GitHub deliveries); the runtime registers
   * their handlers, `start` starts it and `close` stops it. Default: a queue of the store.
   */
  jobs?: JobQueue;
  /**
   * Request budgets. Default: this process's memory; several worker processes pass one on a
   * shared file, so that a key's window is one window.
   */
  limiter?: RateLimiter & { close?(): void };
  /** Overrides for tests: DNS answers, the per-attempt timeout, the jitter. */
  webhookDelivery?: { resolve?: ResolveHost; timeoutMs?: number; random?: () => number };
  /**
   * The origin kept with the ledger (establishLogOrigin). Default: the one a new ledger would
   * take from the configuration.
   */
  logOrigin?: string;
  /**
   * Who signs and appends receipts. Default: this process; a worker of several passes the one
   * writing process's (src/cluster).
   */
  sealer?: ReceiptSealer;
}

/**
 * The ledger and everything built once over it: the services every transport uses (HTTP,
 * the GitHub App, a hook endpoint, a gateway), the job handlers, and the writer's duties.
 * Its lifecycle, in the manner of an appender's: build, `start`, `close`.
 */
export interface LedgerRuntime {
  readonly config: RuntimeConfig;
  readonly store: Store;
  readonly serverKey: ServerKey;
  readonly box: SecretBox;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly logOrigin: string;
  /** The service's public URL, for the links its answers carry (SVC_BASE_URL). */
  readonly baseUrl: string;
  readonly jobs: JobQueue;
  readonly limiter: RateLimiter;
  /** node:crypto on the server's hot path; the core defaults to @noble/hashes elsewhere. */
  readonly sha256Hex: (text: string) => string;
  readonly hashBytes: typeof nativeHashBytes;
  /** Signs and appends this process's receipts: its own, or the one writer's (src/cluster). */
  readonly sealer: ReceiptSealer;
  readonly metrics: Metrics;
  readonly apiKeys: ApiKeyService;
  readonly policies: PolicyService;
  readonly claims: ClaimService;
  readonly dispositions: DispositionService;
  /** Agent harnesses' hook events: tool calls decided, outcomes recorded (contract §12). */
  readonly agentHooks: AgentHookService;
  /** svc as an AuthZEN Policy Decision Point, over the claims (contract §13). */
  readonly authzen: AuthzenService;
  readonly signingKeys: SigningKeyService;
  readonly transparencyLog: TransparencyLog;
  readonly reads: LedgerReadService;
  /** Agent sessions: their decisions and outcomes, and whether they are covered (§12). */
  readonly sessions: SessionService;
  readonly webhooks: WebhookService;
  readonly health: HealthService;
  /** Whether GitHub App deliveries are processed (an App id and private key are set). */
  readonly githubReady: boolean;
  /**
   * Starts the background jobs and, in the process that writes the ledger, its duties
   * (checkpoints and witness cosignatures every `checkpointIntervalMs`).
   */
  start(options: { writer: boolean }): void;
  /** Stops the duties and the jobs (those running finish), then closes the limiter and store. */
  close(): Promise<void>;
}

export type { RuntimeConfig };

export function createLedgerRuntime(deps: LedgerRuntimeDeps): LedgerRuntime {
  const { store, serverKey, clock, config, logger } = deps;
  const jobs = deps.jobs ?? store.openJobQueue({ clock });
  const metrics = new Metrics({ ledger: store.ledger, queries: store.queries, jobs });
  const allowPrivate = config.allowPrivateWebhookUrls ?? false;
  const resolve = deps.webhookDelivery?.resolve ?? systemResolver;
  jobs.handle(
    DELIVERY_JOB,
    webhookDeliveryHandler({
      webhooks: store.webhooks,
      box: deps.box,
      clock,
      logger,
      retryDelaysMs: (config.webhookRetryDelays ?? DEFAULT_WEBHOOK_RETRY_DELAYS).map(
        (s) => s * 1000,
      ),
      timeoutMs: deps.webhookDelivery?.timeoutMs ?? DELIVERY_TIMEOUT_MS,
      allowPrivate,
      resolve,
      random: deps.webhookDelivery?.random,
      onOutcome: (outcome) => metrics.webhookDeliveries.inc({ outcome }),
    }),
  );
  // The origin kept with the ledger (the process opens it before the runtime is built).
  const logOrigin = deps.logOrigin ?? logOriginFor(config.logOrigin, serverKey.keyId);
  const sha256Hex = nativeSha256Hex;
  // One sealer for every receipt this process issues (and, in the writer of several
  // processes, for the workers' drafts too).
  const sealer = sealerOf({
    sealer: deps.sealer,
    ledger: store.ledger,
    serverKey,
    logOrigin,
    sha256Hex,
  });
  const policies = new PolicyService({ policies: store.policies, clock });
  const claims = new ClaimService({
    ledger: store.ledger,
    policies,
    serverKey,
    clock,
    logOrigin,
    sha256Hex,
    sealer,
  });
  const dispositions = new DispositionService({
    ledger: store.ledger,
    queries: store.queries,
    serverKey,
    clock,
    logOrigin,
    sha256Hex,
    sealer,
    onDisposed: deploymentDispositions({ config, jobs, logger }),
  });
  const signingKeys = new SigningKeyService({
    store: store.signingKeys,
    clock,
    origin: logOrigin,
    // Verify reads the history on every request; another process's change (a service
    // started with a new key) shows within seconds, as a revoked API key's does.
    cacheMs: 5_000,
  });
  const transparencyLog = new TransparencyLog({
    tree: store.tree,
    ledger: store.ledger,
    // node:crypto, as the store's appends hash the tree: proofs hash the leaf and nodes.
    hash: nativeHashBytes,
    serverKey,
    clock,
    origin: logOrigin,
    signingKeys,
    witnesses: (config.witnesses ?? []).map((w) => w.name),
  });
  const countReceipt = (response: EvaluateResponse) =>
    metrics.receiptsIssued.inc({
      verdict: response.receipt.policy.verdict,
      admissibility: response.receipt.admissibility.status,
    });
  const baseUrl = config.baseUrl ?? 'http://localhost:3000';
  const agentHooks = new AgentHookService({
    claims,
    outcomes: new OutcomeService({
      ledger: store.ledger,
      sessions: store.sessions,
      serverKey,
      clock,
      logOrigin,
      sha256Hex,
      sealer,
    }),
    approvals: new AgentApprovals({
      sessions: store.sessions,
      clock,
      ttlMs: config.agentApprovalTtlMs ?? 3_600_000,
    }),
    sessions: store.sessions,
    ledger: store.ledger,
    clock,
    baseUrl,
    storeInputs: config.agentStoreInputs ?? false,
    sha256Hex,
    onReceipt: countReceipt,
  });
  const githubReady = registerGithubDeliveries({
    config,
    jobs,
    claims,
    dispositions,
    queries: store.queries,
    sessions: store.sessions,
    clock,
    logger,
    Octokit: deps.githubOctokit,
    metrics,
  });
  const limiter = deps.limiter ?? new SlidingWindowLimiter(clock);
  let stopDuties = () => {};
  return {
    config,
    store,
    serverKey,
    box: deps.box,
    clock,
    logger,
    logOrigin,
    baseUrl,
    jobs,
    limiter,
    sha256Hex,
    hashBytes: nativeHashBytes,
    sealer,
    metrics,
    apiKeys: new ApiKeyService({ keys: store.apiKeys, clock }),
    policies,
    claims,
    dispositions,
    agentHooks,
    authzen: new AuthzenService({ claims, sha256Hex, baseUrl, onReceipt: countReceipt }),
    signingKeys,
    transparencyLog,
    reads: new LedgerReadService({ ledger: store.ledger, queries: store.queries, clock }),
    sessions: new SessionService({ sessions: store.sessions }),
    webhooks: new WebhookService({
      webhooks: store.webhooks,
      box: deps.box,
      clock,
      allowPrivate,
      resolve,
      newSecret: newWebhookSecret,
    }),
    health: new HealthService({ store, serverKey, clock, jobs, signingKeys }),
    githubReady,
    start({ writer }) {
      if (writer) {
        stopDuties = startWriterDuties({
          log: transparencyLog,
          tree: store.tree,
          witnesses: config.witnesses ?? [],
          intervalMs: config.checkpointIntervalMs ?? 1_000,
          witnessMinIntervalMs: config.witnessMinIntervalMs ?? 60_000,
          clock,
          logger,
        });
      }
      // Deliveries left pending by an earlier run (or another process) are picked up here.
      jobs.start();
    },
    async close() {
      stopDuties();
      await jobs.stop();
      await store.close();
      deps.limiter?.close?.();
    },
  };
}
