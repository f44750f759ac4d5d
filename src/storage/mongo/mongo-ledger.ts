import { randomUUID } from 'node:crypto';
import type { ClientSession, Db, MongoClient, TransactionOptions } from 'mongodb';
import { SvcError } from '../../core/errors.js';
import { extendsHead, type ChainHead } from '../../core/receipt.js';
import type {
  AppendRequest,
  AppendResult,
  LedgerEntry,
  LedgerStats,
  LedgerStore,
  VerificationHashes,
} from '../../ports/ledger-store.js';
import { DELIVERY_JOB } from '../../ports/webhook-store.js';
import {
  COLLECTIONS,
  ENTRY_PROJECTION,
  isDuplicateOn,
  toEntry,
  type DeliveryDocument,
  type DispositionDocument,
  type ReceiptDocument,
  type ReceiverDocument,
} from './documents.js';
import { storedReceiptFields } from '../mappers.js';
import { aggregateUpdates, type AggregateDocument } from './aggregates.js';
import { newJobDocument, type JobDocument } from './job-documents.js';
import type { MongoLedgerQueries } from './mongo-ledger-queries.js';
import type { MongoSigningKeys } from './mongo-signing-keys.js';
import type { MongoLogTree } from './mongo-log-tree.js';
import type { MongoSessions } from './mongo-sessions.js';
import {
  deploymentEnvironmentOf,
  indexedFields,
  receiptPhrases,
  receiptWords,
} from './receipt-query.js';

/**
 * Snapshot reads and majority writes: the head read in the transaction is the head the
 * transaction commits on top of, or the commit fails.
 */
export const TRANSACTION_OPTIONS: TransactionOptions = {
  readConcern: { level: 'snapshot' },
  writeConcern: { w: 'majority' },
  readPreference: 'primary',
};

/** Appends lost to another instance this many times in a row give up (never seen in practice). */
const MAX_SEQUENCE_RETRIES = 100;

class ClaimTaken extends Error {}

/**
 * The ledger on MongoDB.
 *
 * Concurrency: each append is ONE multi-document transaction (so MongoDB must run as a replica
 * set, a single node is enough) that reads the head, calls `build(head)` — which signs the
 * receipt at that position — and writes the receipt together with everything that must never
 * exist without it: the read-model aggregates and one webhook delivery
 * plus its job per active receiver. A transaction is needed for that atomicity anyway; the gap-
 * free chain comes from the unique index on `sequence`: two instances that read the same head
 * both try to insert the same sequence, and the loser fails — with a write conflict while the
 * winner is uncommitted (the driver's withTransaction retries the callback), or with a
 * duplicate key once it committed (retried here). Either way the loser re-reads the new head
 * and calls `build` again, which re-signs the receipt at its new position; only the last
 * result is written. Within one process appends are queued, so only instances race.
 */
export class MongoLedger implements LedgerStore {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
    private readonly queries: MongoLedgerQueries,
    private readonly tree: MongoLogTree,
    private readonly signingKeys: MongoSigningKeys,
    /** Which receivers get a receipt: see MongoStoreOptions.webhookScope. */
    private readonly webhookScope: 'all' | 'owner' = 'all',
    /** Agent sessions, written in each append's transaction. */
    private readonly sessions?: MongoSessions,
  ) {}

  private get receipts() {
    return this.db.collection<ReceiptDocument>(COLLECTIONS.receipts);
  }

  private get dispositions() {
    return this.db.collection<DispositionDocument>(COLLECTIONS.dispositions);
  }

  append(request: AppendRequest): Promise<AppendResult> {
    const run = this.tail.then(() => this.appendWithRetry(request));
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async appendWithRetry(request: AppendRequest): Promise<AppendResult> {
    for (let attempt = 0; ; attempt++) {
      const existing = await this.getByClaimId(request.scope, request.claimId);
      if (existing) return { status: 'exists', entry: existing };
      if (request.parentReceiptId !== undefined) {
        const [disposed] = await this.dispositionsOf([request.parentReceiptId]);
        if (disposed) return { status: 'exists', entry: disposed };
      }
      const session = this.client.startSession();
      try {
        const entry = await session.withTransaction(
          (s) => this.appendInTransaction(request, s),
          TRANSACTION_OPTIONS,
        );
        return { status: 'appended', entry };
      } catch (error) {
        if (error instanceof ClaimTaken) continue;
        // Another instance appended the same claim first: answer its receipt.
        if (isDuplicateOn(error, 'claim_id')) continue;
        // Another instance disposed of the same parent first: answer its disposition.
        if (isDuplicateOn(error, 'parent_receipt_id')) continue;
        // Another instance used the same approval first: it is used.
        if (isDuplicateOn(error, 'approval_receipt_id'))
          throw new SvcError('approval_refused', 'the approval was used already', {
            cause: error,
          });
        // Another instance took this sequence: read the new head and build again.
        if (isDuplicateOn(error, 'sequence') && attempt < MAX_SEQUENCE_RETRIES) continue;
        throw error;
      } finally {
        await session.endSession();
      }
    }
  }

  private async appendInTransaction(
    request: AppendRequest,
    session: ClientSession,
  ): Promise<LedgerEntry> {
    const taken = await this.receipts.findOne(
      { scope: request.scope, claim_id: request.claimId },
      { session, projection: { _id: 1 } },
    );
    if (taken) throw new ClaimTaken();
    if (
      request.parentReceiptId !== undefined &&
      (await this.dispositions.findOne(
        { parent_receipt_id: request.parentReceiptId },
        { session, projection: { _id: 1 } },
      ))
    )
      throw new ClaimTaken();
    const head = await this.readHead(session);
    const { entry } = request.build(head);
    const { receipt } = entry;
    if (!extendsHead(receipt, head, request.claimId)) {
      throw new Error('append: built entry does not extend the ledger head');
    }
    // In this transaction, on the document a rotation retires: after a rotation, a process
    // still holding the old key signs nothing more.
    await this.signingKeys.checkSigner(
      receipt.attestations[0]?.key_id,
      receipt.chain.sequence,
      session,
    );
    const sequence = receipt.chain.sequence;
    const indexed = indexedFields(entry);
    const environment = deploymentEnvironmentOf(entry);
    await this.receipts.insertOne(
      {
        ...storedReceiptFields(entry, request.scope),
        words: receiptWords(indexed),
        phrases: receiptPhrases(indexed),
        ...(environment === undefined ? {} : { deployment_environment: environment }),
      },
      { session },
    );
    if (receipt.disposition) {
      if (receipt.disposition.parent_receipt_id !== request.parentReceiptId)
        throw new Error('append: a disposition names a parent the request does not');
      const parent = await this.receipts.findOne(
        { receipt_id: request.parentReceiptId },
        { session, projection: { _id: 0, scope: 1 } },
      );
      if (!parent) throw new Error('append: a disposition of a receipt the ledger does not hold');
      await this.dispositions.insertOne(
        {
          _id: sequence,
          parent_receipt_id: receipt.disposition.parent_receipt_id,
          parent_scope: parent.scope,
          receipt_id: receipt.receipt_id,
          decision: receipt.disposition.decision,
        },
        { session },
      );
    }
    await this.recordAggregates(entry, request.scope, session);
    // In this transaction: a tool call's session record, and the one use of its approval.
    await this.sessions?.record(entry, request.scope, session);
    // In this transaction, so every acknowledged receipt is a leaf of the log's tree.
    await this.tree.record(receipt, session);
    // In this transaction, so a receipt never exists without its webhook deliveries.
    await this.fanOut(sequence, receipt.receipt_id, receipt.issued_at, entry.apiKeyId, session);
    return entry;
  }

  /**
   * Keeps the read model's summaries current, in the append transaction: the ledger-wide
   * ones and those of the submitter scope (private reads).
   */
  private async recordAggregates(
    entry: LedgerEntry,
    scope: string,
    session: ClientSession,
  ): Promise<void> {
    for (const u of [...aggregateUpdates(entry, null), ...aggregateUpdates(entry, scope)]) {
      await this.db
        .collection<AggregateDocument>(u.collection)
        .updateOne(u.filter, u.update, { upsert: true, session });
    }
  }

  /**
   * One delivery and one due job per receiver active in the transaction's snapshot (a
   * registration that commits later is not sent this receipt) — with the 'owner' scope, per
   * active receiver of the account that asked for the receipt only.
   */
  private async fanOut(
    sequence: number,
    receiptId: string,
    issuedAt: string,
    account: string | null,
    session: ClientSession,
  ): Promise<void> {
    if (this.webhookScope === 'owner' && account === null) return;
    const receivers = await this.db
      .collection<ReceiverDocument>(COLLECTIONS.receivers)
      .find(
        {
          status: 'active',
          event: 'receipt.created',
          ...(this.webhookScope === 'owner' ? { owner: account! } : {}),
        },
        { session, projection: { _id: 1, event: 1 }, sort: { created_at: 1, _id: 1 } },
      )
      .toArray();
    if (receivers.length === 0) return;
    // Due at once; the receipt's time comes from the app's clock, as the queue's does.
    const now = Date.parse(issuedAt);
    const deliveries: DeliveryDocument[] = [];
    const jobs: JobDocument[] = [];
    for (const receiver of receivers) {
      const id = randomUUID();
      deliveries.push({
        _id: id,
        receiver_id: receiver._id,
        receipt_id: receiptId,
        event: receiver.event,
        status: 'pending',
        attempts: 0,
        created_at: issuedAt,
        finished_at: null,
        sequence,
      });
      jobs.push(
        newJobDocument(
          DELIVERY_JOB,
          { delivery_id: id },
          {
            dedupeKey: `delivery:${id}`,
            runAt: now,
            createdAt: now,
          },
        ),
      );
    }
    await this.db
      .collection<DeliveryDocument>(COLLECTIONS.deliveries)
      .insertMany(deliveries, { session });
    await this.db.collection<JobDocument>(COLLECTIONS.jobs).insertMany(jobs, { session });
  }

  private async readHead(session?: ClientSession): Promise<ChainHead> {
    const doc = await this.receipts.findOne(
      {},
      { session, sort: { sequence: -1 }, projection: { _id: 0, sequence: 1, receipt_hash: 1 } },
    );
    return doc
      ? { sequence: doc.sequence, receipt_hash: doc.receipt_hash }
      : { sequence: 0, receipt_hash: null };
  }

  head(): Promise<ChainHead> {
    return this.readHead();
  }

  async getByReceiptId(receiptId: string): Promise<LedgerEntry | null> {
    const doc = await this.receipts.findOne(
      { receipt_id: receiptId },
      { projection: ENTRY_PROJECTION },
    );
    return doc ? toEntry(doc) : null;
  }

  async getByClaimId(scope: string, claimId: string): Promise<LedgerEntry | null> {
    const doc = await this.receipts.findOne(
      { scope, claim_id: claimId },
      { projection: ENTRY_PROJECTION },
    );
    return doc ? toEntry(doc) : null;
  }

  async dispositionsOf(parentReceiptIds: string[]): Promise<LedgerEntry[]> {
    if (parentReceiptIds.length === 0) return [];
    const links = await this.dispositions
      .find(
        { parent_receipt_id: { $in: [...new Set(parentReceiptIds)] } },
        { projection: { _id: 1 } },
      )
      .toArray();
    if (links.length === 0) return [];
    const docs = await this.receipts
      .find({ sequence: { $in: links.map((l) => l._id) } }, { projection: ENTRY_PROJECTION })
      .sort({ sequence: 1 })
      .toArray();
    return docs.map(toEntry);
  }

  async dispositionCounts(scope?: string): Promise<{ approve: number; reject: number }> {
    const filter = scope === undefined ? {} : { parent_scope: scope };
    const [approve, reject] = await Promise.all(
      (['approve', 'reject'] as const).map((decision) =>
        this.dispositions.countDocuments({ ...filter, decision }),
      ),
    );
    return { approve: approve!, reject: reject! };
  }

  async receiptHashOf(receiptId: string): Promise<string | null> {
    const doc = await this.receipts.findOne(
      { receipt_id: receiptId },
      { projection: { _id: 0, receipt_hash: 1 } },
    );
    return doc?.receipt_hash ?? null;
  }

  async receiptHashAt(sequence: number): Promise<string | null> {
    const doc = await this.receipts.findOne(
      { sequence },
      { projection: { _id: 0, receipt_hash: 1 } },
    );
    return doc?.receipt_hash ?? null;
  }

  async verificationHashes(
    receiptId: string | null,
    previousSequence: number | null,
  ): Promise<VerificationHashes> {
    const [own, previous] = await Promise.all([
      receiptId === null
        ? null
        : this.receipts.findOne(
            { receipt_id: receiptId },
            { projection: { _id: 0, receipt_hash: 1, sequence: 1 } },
          ),
      previousSequence === null ? null : this.receiptHashAt(previousSequence),
    ]);
    return {
      receiptHash: own?.receipt_hash ?? null,
      sequence: own?.sequence ?? null,
      previousHash: previous,
    };
  }

  async list(after: number, limit: number): Promise<LedgerEntry[]> {
    if (limit <= 0) return [];
    const docs = await this.receipts
      .find({ sequence: { $gt: after } }, { projection: ENTRY_PROJECTION })
      .sort({ sequence: 1 })
      .limit(limit)
      .toArray();
    return docs.map(toEntry);
  }

  async stats(scope?: string): Promise<LedgerStats> {
    const totals = await this.queries.totals(scope);
    const names = (collection: string) =>
      this.db
        .collection<{ _id: string }>(collection)
        .find({}, { projection: { _id: 1 } })
        .sort({ _id: 1 })
        .toArray()
        .then((docs) => docs.map((doc) => doc._id));
    const scopedNames = (collection: string, field: 'agent' | 'repository') =>
      this.db
        .collection<Record<string, string>>(collection)
        .find({ scope: scope! }, { projection: { _id: 0, [field]: 1 } })
        .sort({ [field]: 1 })
        .toArray()
        .then((docs) => docs.map((doc) => doc[field]!));
    return {
      total: totals.total,
      by_verdict: totals.by_verdict,
      by_admissibility: totals.by_admissibility,
      agents:
        scope === undefined
          ? await names(COLLECTIONS.agents)
          : await scopedNames(COLLECTIONS.scopeAgents, 'agent'),
      repositories:
        scope === undefined
          ? await names(COLLECTIONS.repositories)
          : await scopedNames(COLLECTIONS.scopeRepositories, 'repository'),
    };
  }

  countByApiKey(apiKeyId: string): Promise<number> {
    return this.receipts.countDocuments({ api_key_id: apiKeyId });
  }
}
