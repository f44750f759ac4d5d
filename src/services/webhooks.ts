import { randomUUID } from 'node:crypto';
import { SvcError } from '../core/errors.js';
import type { Clock } from '../ports/clock.js';
import type { SecretBox } from '../ports/secret-box.js';
import type {
  DeliveryAttempt,
  WebhookDelivery,
  WebhookEvent,
  WebhookReceiver,
  WebhookStore,
} from '../ports/webhook-store.js';
import { checkWebhookUrl, type ResolveHost } from './webhook-url-guard.js';

export const MAX_RECEIVERS_PER_KEY = 20;

/** The SecretBox context of a receiver's secret: a sealed secret opens only for its receiver. */
export const receiverSecretContext = (id: string) => `webhook:${id}`;

export interface WebhookServiceDeps {
  webhooks: WebhookStore;
  box: SecretBox;
  clock: Clock;
  allowPrivate: boolean;
  resolve: ResolveHost;
  newSecret: () => string;
}

const receiverView = (r: WebhookReceiver) => ({
  id: r.id,
  url: r.url,
  event: r.event,
  status: r.status,
  created_at: r.createdAt,
  disabled_at: r.disabledAt,
  disabled_reason: r.disabledReason,
});

const attemptView = (a: DeliveryAttempt) => ({
  attempt: a.attempt,
  at: a.at,
  status_code: a.statusCode,
  error: a.error,
  duration_ms: a.durationMs,
  next_attempt_at: a.nextAttemptAt,
});

const deliveryView = (d: WebhookDelivery, attempts: DeliveryAttempt[]) => ({
  id: d.id,
  receipt_id: d.receiptId,
  event: d.event,
  status: d.status,
  created_at: d.createdAt,
  finished_at: d.finishedAt,
  attempts: attempts.map(attemptView),
});

/** Registration and inspection of outbound webhook receivers, scoped to their owner. */
export class WebhookService {
  constructor(private readonly deps: WebhookServiceDeps) {}

  async register(owner: string, input: { url: string; event: WebhookEvent }) {
    const check = await checkWebhookUrl(input.url, {
      allowPrivate: this.deps.allowPrivate,
      resolve: this.deps.resolve,
    });
    if (!check.ok) throw new SvcError('validation_failed', check.reason);
    const id = `wh_${randomUUID()}`;
    const secret = this.deps.newSecret();
    const createdAt = new Date(this.deps.clock.now()).toISOString();
    const receiver: WebhookReceiver = {
      id,
      owner,
      url: check.url.href,
      event: input.event,
      // Sealed, not digested: every delivery needs the secret itself to sign.
      secretSealed: this.deps.box.seal(secret, receiverSecretContext(id)),
      status: 'active',
      createdAt,
      disabledAt: null,
      disabledReason: null,
    };
    const inserted = await this.deps.webhooks.insertReceiver(receiver, MAX_RECEIVERS_PER_KEY);
    if (inserted === 'limit') {
      throw new SvcError(
        'receiver_limit',
        `An API key may register at most ${MAX_RECEIVERS_PER_KEY} webhook receivers; delete one first`,
      );
    }
    return { id, url: receiver.url, event: receiver.event, secret, created_at: createdAt };
  }

  async list(owner: string) {
    return { receivers: (await this.deps.webhooks.listReceivers(owner)).map(receiverView) };
  }

  async remove(owner: string, id: string): Promise<void> {
    const at = new Date(this.deps.clock.now()).toISOString();
    if (!(await this.deps.webhooks.deleteReceiver(owner, id, at))) throw notFound(id);
  }

  async deliveries(owner: string, id: string, limit: number) {
    // Another key's receiver answers exactly like a missing one.
    const receiver = await this.deps.webhooks.getReceiver(owner, id);
    if (!receiver) throw notFound(id);
    const rows = await this.deps.webhooks.listDeliveries(receiver.id, limit);
    return {
      receiver: receiverView(receiver),
      deliveries: rows.map((r) => deliveryView(r.delivery, r.attempts)),
    };
  }
}

const notFound = (id: string) =>
  new SvcError('not_found', `No webhook receiver ${JSON.stringify(id)}`);
