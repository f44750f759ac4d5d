import { randomInt } from 'node:crypto';
import type { Logger } from 'pino';
import { SERVICE_VERSION } from '../core/version.js';
import type { Clock } from '../ports/clock.js';
import type { JobHandler, JobResult } from '../ports/job-queue.js';
import type { SecretBox } from '../ports/secret-box.js';
import type { DELIVERY_JOB, WebhookReceiver, WebhookStore } from '../ports/webhook-store.js';
import { receiverSecretContext } from '../services/webhooks.js';
import { checkWebhookUrl, type ResolveHost } from '../services/webhook-url-guard.js';
import { postPinned, type PostOutcome } from './webhook-post.js';
import { signatureHeaders } from './webhook-signing.js';

export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed' | 'disabled' | 'dropped';

export interface WebhookDeliveryDeps {
  webhooks: WebhookStore;
  box: SecretBox;
  clock: Clock;
  logger: Logger;
  /** Delays before the 2nd, 3rd, ... attempt; after the last one fails the delivery fails. */
  retryDelaysMs: number[];
  timeoutMs: number;
  allowPrivate: boolean;
  resolve: ResolveHost;
  /** A number in [0, 1), for the jitter; injectable so tests can pin it. */
  random?: () => number;
  onOutcome?(outcome: DeliveryOutcome): void;
}

export const DELIVERY_TIMEOUT_MS = 10_000;

// ±20 %: spreads the retries of many deliveries that failed together (a receiver outage)
// so they do not all arrive at the same instant when it comes back.
const JITTER = 0.2;

const defaultRandom = () => randomInt(0, 1_000_000) / 1_000_000;

/** The job handler that sends one delivery and decides its next attempt. */
export function webhookDeliveryHandler(deps: WebhookDeliveryDeps): JobHandler<typeof DELIVERY_JOB> {
  const random = deps.random ?? defaultRandom;
  const iso = (ms: number) => new Date(ms).toISOString();

  return async (job): Promise<JobResult> => {
    // Typed by the job name, and still checked: the row was read back from storage.
    const deliveryId: unknown = job.payload?.delivery_id;
    if (typeof deliveryId !== 'string') {
      return { outcome: 'failed', error: 'job payload has no delivery_id' };
    }
    const work = await deps.webhooks.deliveryWork(deliveryId);
    if (!work) return { outcome: 'failed', error: `unknown delivery ${deliveryId}` };
    const { delivery, receiver, receiptJson } = work;
    // A run repeated after a crash finds the delivery already settled: nothing to send.
    if (delivery.status !== 'pending') return { outcome: 'done' };
    if (!receiver || receiver.status !== 'active') {
      await deps.webhooks.finishDelivery(deliveryId, 'failed', iso(deps.clock.now()));
      deps.onOutcome?.('dropped');
      return { outcome: 'done' };
    }

    const attempt = delivery.attempts + 1;
    const startedAt = deps.clock.now();
    const started = performance.now();
    const sent = await send(receiver, deliveryId, receiptJson);
    const durationMs = Math.round(performance.now() - started);
    const base = {
      deliveryId,
      attempt,
      at: iso(startedAt),
      statusCode: sent.statusCode,
      durationMs,
    };

    if (sent.statusCode !== null && sent.statusCode >= 200 && sent.statusCode < 300) {
      await deps.webhooks.recordAttempt({ ...base, error: null, nextAttemptAt: null }, 'delivered');
      deps.onOutcome?.('delivered');
      return { outcome: 'done' };
    }

    const error = describeFailure(sent);
    const log = {
      delivery_id: deliveryId,
      receiver_id: receiver.id,
      receipt_id: delivery.receiptId,
      attempt,
      status_code: sent.statusCode,
      error,
      duration_ms: durationMs,
    };
    if (sent.statusCode === 410) {
      // 410 Gone: the receiver asked to be removed; it stays listed, disabled, for its owner.
      const now = iso(deps.clock.now());
      await deps.webhooks.recordAttempt({ ...base, error, nextAttemptAt: null }, 'failed');
      await deps.webhooks.disableReceiver(receiver.id, 'receiver answered 410 Gone', now);
      deps.logger.warn({ ...log, next_attempt_at: null }, 'webhook receiver gone; disabled');
      deps.onOutcome?.('disabled');
      return { outcome: 'done' };
    }

    const delay = deps.retryDelaysMs[attempt - 1];
    if (delay === undefined) {
      await deps.webhooks.recordAttempt({ ...base, error, nextAttemptAt: null }, 'failed');
      deps.logger.warn({ ...log, next_attempt_at: null }, 'webhook delivery failed; giving up');
      deps.onOutcome?.('failed');
      return { outcome: 'failed', error };
    }
    const next = deps.clock.now() + Math.round(delay * (1 - JITTER + 2 * JITTER * random()));
    await deps.webhooks.recordAttempt({ ...base, error, nextAttemptAt: iso(next) }, 'pending');
    deps.logger.warn({ ...log, next_attempt_at: iso(next) }, 'webhook delivery attempt failed');
    deps.onOutcome?.('retrying');
    return { outcome: 'retry', at: next, error };
  };

  async function send(
    receiver: WebhookReceiver,
    deliveryId: string,
    body: string,
  ): Promise<PostOutcome> {
    // Checked again at every attempt: the host may resolve elsewhere since registration.
    // The resolver shares the attempt's time budget: a hanging DNS answer must not hold
    // the job past its lease.
    const target = await withTimeout(
      checkWebhookUrl(receiver.url, { allowPrivate: deps.allowPrivate, resolve: deps.resolve }),
      deps.timeoutMs,
      { ok: false, reason: `url: resolving the host timed out after ${deps.timeoutMs} ms` },
    );
    if (!target.ok) return { statusCode: null, error: `refused: ${target.reason}` };
    let secret: string;
    try {
      secret = deps.box.open(receiver.secretSealed, receiverSecretContext(receiver.id));
    } catch {
      // A changed SVC_KEY_ENCRYPTION_SECRET: recorded as a failed attempt like any other, so
      // the delivery still ends (failed) instead of staying pending for ever.
      return { statusCode: null, error: 'the receiver secret cannot be opened' };
    }
    const headers = {
      'Content-Type': 'application/json',
      'User-Agent': `svc-webhooks/${SERVICE_VERSION}`,
      'X-Svc-Event': receiver.event,
      'X-Svc-Delivery': deliveryId,
      ...signatureHeaders(secret, deliveryId, Math.floor(deps.clock.now() / 1000), body),
    };
    return postPinned(target.url, target.address, body, headers, deps.timeoutMs);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), ms))),
  ]).finally(() => clearTimeout(timer));
}

function describeFailure(sent: PostOutcome): string {
  if (sent.statusCode === null) return sent.error ?? 'no response';
  if (sent.statusCode >= 300 && sent.statusCode < 400) {
    return `redirect not followed (HTTP ${sent.statusCode})`;
  }
  return `HTTP ${sent.statusCode}`;
}
