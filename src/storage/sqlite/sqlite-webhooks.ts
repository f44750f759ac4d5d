import { randomUUID } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';
import type { JobPayload } from '../../ports/job-queue.js';
import {
  DELIVERY_JOB,
  type DeliveryAttempt,
  type DeliveryStatus,
  type DeliveryWork,
  type WebhookDelivery,
  type WebhookReceiver,
  type WebhookStore,
} from '../../ports/webhook-store.js';
import {
  toDeliveryAttempt,
  toDeliveryWork,
  toWebhookDelivery,
  toWebhookReceiver,
  type AttemptFields,
  type DeliveryFields,
  type ReceiverFields,
} from '../mappers.js';
import { prepareJobInsert, type NewJobRow } from './job-rows.js';

interface ReceiverRow extends ReceiverFields {
  id: string;
}

interface DeliveryRow extends DeliveryFields {
  id: string;
}

type AttemptRow = AttemptFields;

const toReceiver = (row: ReceiverRow): WebhookReceiver => toWebhookReceiver(row.id, row);
const toDelivery = (row: DeliveryRow): WebhookDelivery => toWebhookDelivery(row.id, row);
const toAttempt = toDeliveryAttempt;

/**
 * Called by the ledger inside its append transaction: one delivery and one job per receiver
 * active at that moment. Registrations take the same write lock, so "registered before the
 * receipt was written" is exactly the commit order.
 */
export class SqliteWebhookFanOut {
  private readonly active: Statement<[], { id: string; event: string }>;
  private readonly activeOwned: Statement<[string], { id: string; event: string }>;
  private readonly insertDelivery: Statement;
  private readonly insertJob: Statement<[NewJobRow]>;

  /**
   * `scope` 'all': every receiver gets every receipt (the ledger is public to read anyway);
   * 'owner': a receiver gets only its own account's receipts, for ledgers whose reads need a
   * key (SVC_PUBLIC_READS=false), where a free key must not learn other tenants' receipts.
   */
  constructor(
    db: Database,
    private readonly scope: 'all' | 'owner' = 'all',
  ) {
    this.active = db.prepare(
      "SELECT id, event FROM webhook_receivers WHERE status = 'active' AND event = 'receipt.created' ORDER BY created_at, id",
    );
    this.activeOwned = db.prepare(
      "SELECT id, event FROM webhook_receivers WHERE status = 'active' AND event = 'receipt.created' AND owner = ? ORDER BY created_at, id",
    );
    this.insertDelivery = db.prepare(`
      INSERT INTO webhook_deliveries (id, receiver_id, receipt_id, event, status, created_at)
      VALUES (?, ?, ?, ?, 'pending', ?)`);
    this.insertJob = prepareJobInsert(db);
  }

  receiptCreated(receiptId: string, issuedAt: string, account: string | null): void {
    const receivers =
      this.scope === 'all' ? this.active.all() : account ? this.activeOwned.all(account) : [];
    if (receivers.length === 0) return;
    // Due at once; the receipt's time comes from the app's clock, as the queue's does.
    const now = Date.parse(issuedAt);
    for (const receiver of receivers) {
      const id = randomUUID();
      this.insertDelivery.run(id, receiver.id, receiptId, receiver.event, issuedAt);
      this.insertJob.run({
        name: DELIVERY_JOB,
        payload_json: JSON.stringify({ delivery_id: id } satisfies JobPayload<typeof DELIVERY_JOB>),
        dedupe_key: `delivery:${id}`,
        run_at: now,
        created_at: now,
      });
    }
  }
}

/**
 * Disables an owner's active receivers: (at, reason, owner). Shared with the API keys, whose
 * account revocation runs it in the revocation's transaction.
 */
export const prepareDisableOwned = (db: Database): Statement<[string, string, string]> =>
  db.prepare(
    "UPDATE webhook_receivers SET status = 'disabled', disabled_at = ?, disabled_reason = ? WHERE owner = ? AND status = 'active'",
  );

export class SqliteWebhooks implements WebhookStore {
  private readonly countOwned: Statement<[string], { n: number }>;
  private readonly insert: Statement;
  private readonly listOwned: Statement<[string], ReceiverRow>;
  private readonly getOwned: Statement<[string, string], ReceiverRow>;
  private readonly markDeleted: Statement<[string, string, string]>;
  private readonly markDisabled: Statement<[string, string, string]>;
  private readonly markOwnedDisabled: Statement<[string, string, string]>;
  private readonly closePending: Statement<[string, string]>;
  private readonly deliveryById: Statement<[string], DeliveryRow>;
  private readonly receiverById: Statement<[string], ReceiverRow>;
  private readonly receiptJson: Statement<[string], { receipt_json: string }>;
  private readonly insertAttempt: Statement;
  private readonly updateDelivery: Statement;
  private readonly finish: Statement<[string, string | null, string]>;
  private readonly deliveriesOf: Statement<[string, number], DeliveryRow>;
  private readonly attemptsOf: Statement<[string], AttemptRow>;
  private readonly insertChecked: (receiver: WebhookReceiver, max: number) => 'created' | 'limit';
  private readonly recordTx: (attempt: DeliveryAttempt, status: DeliveryStatus) => void;
  private readonly deleteTx: (owner: string, id: string, at: string) => boolean;

  constructor(db: Database) {
    this.countOwned = db.prepare(
      "SELECT COUNT(*) AS n FROM webhook_receivers WHERE owner = ? AND status <> 'deleted'",
    );
    this.insert = db.prepare(`
      INSERT INTO webhook_receivers (id, owner, url, event, secret_sealed, status, created_at)
      VALUES (@id, @owner, @url, @event, @secretSealed, 'active', @createdAt)`);
    this.listOwned = db.prepare(
      "SELECT * FROM webhook_receivers WHERE owner = ? AND status <> 'deleted' ORDER BY created_at, id",
    );
    this.getOwned = db.prepare(
      "SELECT * FROM webhook_receivers WHERE owner = ? AND id = ? AND status <> 'deleted'",
    );
    this.markDeleted = db.prepare(
      "UPDATE webhook_receivers SET status = 'deleted', disabled_at = ? WHERE owner = ? AND id = ? AND status <> 'deleted'",
    );
    this.markOwnedDisabled = prepareDisableOwned(db);
    this.markDisabled = db.prepare(
      "UPDATE webhook_receivers SET status = 'disabled', disabled_at = ?, disabled_reason = ? WHERE id = ? AND status = 'active'",
    );
    this.closePending = db.prepare(
      "UPDATE webhook_deliveries SET status = 'failed', finished_at = ? WHERE receiver_id = ? AND status = 'pending'",
    );
    this.deliveryById = db.prepare('SELECT * FROM webhook_deliveries WHERE id = ?');
    this.receiverById = db.prepare('SELECT * FROM webhook_receivers WHERE id = ?');
    this.receiptJson = db.prepare('SELECT receipt_json FROM receipts WHERE receipt_id = ?');
    this.insertAttempt = db.prepare(`
      INSERT INTO webhook_attempts (delivery_id, attempt, at, status_code, error, duration_ms,
        next_attempt_at)
      VALUES (@deliveryId, @attempt, @at, @statusCode, @error, @durationMs, @nextAttemptAt)`);
    this.updateDelivery = db.prepare(`
      UPDATE webhook_deliveries SET status = @status, attempts = MAX(attempts, @attempt),
        finished_at = CASE WHEN @status = 'pending' THEN NULL ELSE @at END
      WHERE id = @deliveryId`);
    this.finish = db.prepare(
      "UPDATE webhook_deliveries SET status = ?, finished_at = ? WHERE id = ? AND status = 'pending'",
    );
    this.deliveriesOf = db.prepare(
      'SELECT * FROM webhook_deliveries WHERE receiver_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?',
    );
    this.attemptsOf = db.prepare(
      'SELECT * FROM webhook_attempts WHERE delivery_id = ? ORDER BY attempt',
    );

    // IMMEDIATE: two registrations of one owner at once must not both pass the count.
    const insertChecked = db.transaction((receiver: WebhookReceiver, max: number) => {
      if (this.countOwned.get(receiver.owner)!.n >= max) return 'limit' as const;
      this.insert.run(receiver);
      return 'created' as const;
    });
    this.insertChecked = (receiver, max) => insertChecked.immediate(receiver, max);
    this.recordTx = db.transaction((attempt: DeliveryAttempt, status: DeliveryStatus) => {
      this.insertAttempt.run(attempt);
      this.updateDelivery.run({
        status,
        attempt: attempt.attempt,
        at: attempt.at,
        deliveryId: attempt.deliveryId,
      });
    });
    this.deleteTx = db.transaction((owner: string, id: string, at: string) => {
      if (this.markDeleted.run(at, owner, id).changes === 0) return false;
      this.closePending.run(at, id);
      return true;
    });
  }

  async insertReceiver(receiver: WebhookReceiver, maxPerOwner: number) {
    return this.insertChecked(receiver, maxPerOwner);
  }

  async listReceivers(owner: string): Promise<WebhookReceiver[]> {
    return this.listOwned.all(owner).map(toReceiver);
  }

  async getReceiver(owner: string, id: string): Promise<WebhookReceiver | null> {
    const row = this.getOwned.get(owner, id);
    return row ? toReceiver(row) : null;
  }

  async deleteReceiver(owner: string, id: string, at: string): Promise<boolean> {
    return this.deleteTx(owner, id, at);
  }

  async disableReceiver(id: string, reason: string, at: string): Promise<void> {
    this.markDisabled.run(at, reason, id);
  }

  async disableOwned(owner: string, reason: string, at: string): Promise<number> {
    return this.markOwnedDisabled.run(at, reason, owner).changes;
  }

  async deliveryWork(deliveryId: string): Promise<DeliveryWork | null> {
    const delivery = this.deliveryById.get(deliveryId);
    if (!delivery) return null;
    const receiver = this.receiverById.get(delivery.receiver_id);
    const receipt = this.receiptJson.get(delivery.receipt_id);
    return receipt ? toDeliveryWork(delivery, receiver, receipt.receipt_json) : null;
  }

  async recordAttempt(attempt: DeliveryAttempt, status: DeliveryStatus): Promise<void> {
    this.recordTx(attempt, status);
  }

  async finishDelivery(deliveryId: string, status: DeliveryStatus, at: string): Promise<void> {
    this.finish.run(status, status === 'pending' ? null : at, deliveryId);
  }

  async listDeliveries(receiverId: string, limit: number) {
    return this.deliveriesOf.all(receiverId, limit).map((row) => ({
      delivery: toDelivery(row),
      attempts: this.attemptsOf.all(row.id).map(toAttempt),
    }));
  }
}
