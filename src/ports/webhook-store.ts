import type { JobName } from './job-queue.js';

export const WEBHOOK_EVENTS = ['receipt.created'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** The job name of one delivery attempt chain. */
export const DELIVERY_JOB = 'webhook.deliver' satisfies JobName;

export interface WebhookReceiver {
  id: string;
  /** Id of the API key that registered it: only that key sees or removes it. */
  owner: string;
  url: string;
  event: WebhookEvent;
  /** The signing secret, sealed with the app's SecretBox under the context `webhook:<id>`. */
  secretSealed: string;
  status: 'active' | 'disabled';
  createdAt: string;
  disabledAt: string | null;
  disabledReason: string | null;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookDelivery {
  /** A UUID: X-Svc-Delivery and webhook-id, the same on every retry. */
  id: string;
  receiverId: string;
  receiptId: string;
  event: WebhookEvent;
  status: DeliveryStatus;
  attempts: number;
  createdAt: string;
  finishedAt: string | null;
}

export interface DeliveryAttempt {
  deliveryId: string;
  attempt: number;
  at: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** When the next attempt is due; null when this one was the last. */
  nextAttemptAt: string | null;
}

/** Everything a worker needs to send one delivery. */
export interface DeliveryWork {
  delivery: WebhookDelivery;
  receiver: WebhookReceiver | null;
  /** The receipt exactly as stored, which is exactly what evaluate answered. */
  receiptJson: string;
}

/**
 * Receivers and their deliveries. Delivery rows are written by the ledger in the append
 * transaction (one per active receiver), never through this port.
 */
export interface WebhookStore {
  /** Inserts unless the owner already has `maxPerOwner` receivers (checked atomically). */
  insertReceiver(receiver: WebhookReceiver, maxPerOwner: number): Promise<'created' | 'limit'>;
  listReceivers(owner: string): Promise<WebhookReceiver[]>;
  getReceiver(owner: string, id: string): Promise<WebhookReceiver | null>;
  /** Removes the owner's receiver; its pending deliveries are not sent. False when none. */
  deleteReceiver(owner: string, id: string, at: string): Promise<boolean>;
  disableReceiver(id: string, reason: string, at: string): Promise<void>;
  /** Disables every active receiver of an owner (its account was revoked); answers how many. */
  disableOwned(owner: string, reason: string, at: string): Promise<number>;
  deliveryWork(deliveryId: string): Promise<DeliveryWork | null>;
  /** Records one attempt and the delivery's resulting status, atomically. */
  recordAttempt(attempt: DeliveryAttempt, status: DeliveryStatus): Promise<void>;
  /** Closes a delivery without an attempt (its receiver was removed or disabled). */
  finishDelivery(deliveryId: string, status: DeliveryStatus, at: string): Promise<void>;
  /** The receiver's newest deliveries first, each with its attempts in order. */
  listDeliveries(
    receiverId: string,
    limit: number,
  ): Promise<{ delivery: WebhookDelivery; attempts: DeliveryAttempt[] }[]>;
}
