import type { ClientSession, Db, MongoClient } from 'mongodb';
import type {
  DeliveryAttempt,
  DeliveryStatus,
  DeliveryWork,
  WebhookDelivery,
  WebhookReceiver,
  WebhookStore,
} from '../../ports/webhook-store.js';
import {
  COLLECTIONS,
  type AttemptDocument,
  type DeliveryDocument,
  type ReceiptDocument,
  type ReceiverDocument,
} from './documents.js';
import {
  toDeliveryAttempt,
  toDeliveryWork,
  toWebhookDelivery,
  toWebhookReceiver,
} from '../mappers.js';
import { TRANSACTION_OPTIONS } from './mongo-ledger.js';

const toReceiver = (doc: ReceiverDocument): WebhookReceiver => toWebhookReceiver(doc._id, doc);
const toDelivery = (doc: DeliveryDocument): WebhookDelivery => toWebhookDelivery(doc._id, doc);
const toAttempt = toDeliveryAttempt;

/**
 * Disables an owner's active receivers. Shared with the API keys, whose account revocation
 * runs it in the revocation's transaction (`session`).
 */
export const disableOwnedReceivers = (
  db: Db,
  owner: string,
  reason: string,
  at: string,
  session?: ClientSession,
) =>
  db
    .collection<ReceiverDocument>(COLLECTIONS.receivers)
    .updateMany(
      { owner, status: 'active' },
      { $set: { status: 'disabled', disabled_at: at, disabled_reason: reason } },
      session ? { session } : {},
    );

class LimitReached extends Error {}
class NoReceiver extends Error {}

/**
 * Receivers and deliveries on MongoDB. Delivery documents are written by the ledger in the
 * append transaction (MongoLedger.fanOut), never here.
 */
export class MongoWebhooks implements WebhookStore {
  constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
  ) {}

  private get receivers() {
    return this.db.collection<ReceiverDocument>(COLLECTIONS.receivers);
  }
  private get deliveries() {
    return this.db.collection<DeliveryDocument>(COLLECTIONS.deliveries);
  }
  private get attempts() {
    return this.db.collection<AttemptDocument>(COLLECTIONS.attempts);
  }

  private async inTransaction<T>(fn: (session: ClientSession) => Promise<T>) {
    const session = this.client.startSession();
    try {
      return await session.withTransaction(fn, TRANSACTION_OPTIONS);
    } finally {
      await session.endSession();
    }
  }

  async insertReceiver(receiver: WebhookReceiver, maxPerOwner: number) {
    try {
      await this.inTransaction(async (session) => {
        // Snapshot isolation alone would let two registrations each count 19 and both insert:
        // writing the owner's document first makes concurrent registrations of one owner
        // conflict, and the one that retries counts again.
        await this.db
          .collection<{ _id: string; registrations: number }>(COLLECTIONS.receiverOwners)
          .updateOne(
            { _id: receiver.owner },
            { $inc: { registrations: 1 } },
            { upsert: true, session },
          );
        const count = await this.receivers.countDocuments(
          { owner: receiver.owner, status: { $ne: 'deleted' } },
          { session },
        );
        if (count >= maxPerOwner) throw new LimitReached();
        await this.receivers.insertOne(
          {
            _id: receiver.id,
            owner: receiver.owner,
            url: receiver.url,
            event: receiver.event,
            secret_sealed: receiver.secretSealed,
            status: 'active',
            created_at: receiver.createdAt,
            disabled_at: null,
            disabled_reason: null,
          },
          { session },
        );
      });
      return 'created' as const;
    } catch (error) {
      if (error instanceof LimitReached) return 'limit' as const;
      throw error;
    }
  }

  async listReceivers(owner: string): Promise<WebhookReceiver[]> {
    const docs = await this.receivers
      .find({ owner, status: { $ne: 'deleted' } })
      .sort({ created_at: 1, _id: 1 })
      .toArray();
    return docs.map(toReceiver);
  }

  async getReceiver(owner: string, id: string): Promise<WebhookReceiver | null> {
    const doc = await this.receivers.findOne({ _id: id, owner, status: { $ne: 'deleted' } });
    return doc ? toReceiver(doc) : null;
  }

  async deleteReceiver(owner: string, id: string, at: string): Promise<boolean> {
    try {
      await this.inTransaction(async (session) => {
        const marked = await this.receivers.updateOne(
          { _id: id, owner, status: { $ne: 'deleted' } },
          { $set: { status: 'deleted', disabled_at: at } },
          { session },
        );
        if (marked.modifiedCount === 0) throw new NoReceiver();
        await this.deliveries.updateMany(
          { receiver_id: id, status: 'pending' },
          { $set: { status: 'failed', finished_at: at } },
          { session },
        );
      });
      return true;
    } catch (error) {
      if (error instanceof NoReceiver) return false;
      throw error;
    }
  }

  async disableReceiver(id: string, reason: string, at: string): Promise<void> {
    await this.receivers.updateOne(
      { _id: id, status: 'active' },
      { $set: { status: 'disabled', disabled_at: at, disabled_reason: reason } },
    );
  }

  async disableOwned(owner: string, reason: string, at: string): Promise<number> {
    const { modifiedCount } = await disableOwnedReceivers(this.db, owner, reason, at);
    return modifiedCount;
  }

  async deliveryWork(deliveryId: string): Promise<DeliveryWork | null> {
    const delivery = await this.deliveries.findOne({ _id: deliveryId });
    if (!delivery) return null;
    const receiver = await this.receivers.findOne({ _id: delivery.receiver_id });
    const receipt = await this.db
      .collection<ReceiptDocument>(COLLECTIONS.receipts)
      .findOne({ receipt_id: delivery.receipt_id }, { projection: { _id: 0, receipt_json: 1 } });
    if (!receipt) return null;
    return toDeliveryWork(
      { id: delivery._id, ...delivery },
      receiver && { id: receiver._id, ...receiver },
      receipt.receipt_json,
    );
  }

  async recordAttempt(attempt: DeliveryAttempt, status: DeliveryStatus): Promise<void> {
    await this.inTransaction(async (session) => {
      await this.attempts.insertOne(
        {
          delivery_id: attempt.deliveryId,
          attempt: attempt.attempt,
          at: attempt.at,
          status_code: attempt.statusCode,
          error: attempt.error,
          duration_ms: attempt.durationMs,
          next_attempt_at: attempt.nextAttemptAt,
        },
        { session },
      );
      await this.deliveries.updateOne(
        { _id: attempt.deliveryId },
        {
          $set: { status, finished_at: status === 'pending' ? null : attempt.at },
          $max: { attempts: attempt.attempt },
        },
        { session },
      );
    });
  }

  async finishDelivery(deliveryId: string, status: DeliveryStatus, at: string): Promise<void> {
    await this.deliveries.updateOne(
      { _id: deliveryId, status: 'pending' },
      { $set: { status, finished_at: status === 'pending' ? null : at } },
    );
  }

  async listDeliveries(receiverId: string, limit: number) {
    if (limit <= 0) return [];
    const deliveries = await this.deliveries
      .find({ receiver_id: receiverId })
      .sort({ created_at: -1, sequence: -1 })
      .limit(limit)
      .toArray();
    const attempts = await this.attempts
      .find({ delivery_id: { $in: deliveries.map((d) => d._id) } })
      .sort({ delivery_id: 1, attempt: 1 })
      .toArray();
    const byDelivery = new Map<string, DeliveryAttempt[]>();
    for (const doc of attempts) {
      byDelivery.set(doc.delivery_id, [...(byDelivery.get(doc.delivery_id) ?? []), toAttempt(doc)]);
    }
    return deliveries.map((doc) => ({
      delivery: toDelivery(doc),
      attempts: byDelivery.get(doc._id) ?? [],
    }));
  }
}
