import type { AnyBulkWriteOperation, Db, Document } from 'mongodb';
import type { LedgerEntry } from '../../ports/ledger-store.js';
import { COLLECTIONS, toEntry, ENTRY_PROJECTION, type ReceiptDocument } from './documents.js';

/** Any aggregate document: keyed by a string. */
export type AggregateDocument = { _id: string } & Document;

/** One upsert of an aggregate document. */
export interface AggregateUpdate {
  collection: string;
  filter: { _id: string };
  update: Document;
}

/**
 * The aggregate documents an appended entry changes: the ledger-wide ones (`scope` null) or
 * those of one submitter scope, which private reads answer from. Pure, so the append and the
 * backfill of existing receipts record exactly the same thing.
 */
export function aggregateUpdates(entry: LedgerEntry, scope: string | null): AggregateUpdate[] {
  const { receipt, claim } = entry;
  const verdict = receipt.policy.verdict;
  const status = receipt.admissibility.status;
  const { agent, repository } = receipt.subject;
  const counters = {
    total: 1,
    allowed: Number(verdict === 'ALLOWED'),
    blocked: Number(verdict === 'BLOCKED'),
    escalated: Number(verdict === 'ESCALATED'),
    accepted: Number(status === 'ACCEPTED'),
    non_deterministic: Number(status === 'NON_DETERMINISTIC'),
    rejected: Number(status === 'REJECTED'),
  };
  // Scoped documents carry their scope and name as fields, for the (scope, name) indexes.
  const id = (parts: string[]) => (scope === null ? parts : [scope, ...parts]);
  const named = (fields: Document) => (scope === null ? {} : { scope, ...fields });
  const updates: AggregateUpdate[] = [];
  updates.push({
    collection: scope === null ? COLLECTIONS.totals : COLLECTIONS.scopeTotals,
    filter: {
      _id: scope === null ? `${verdict}|${status}` : JSON.stringify(id([verdict, status])),
    },
    update: { $inc: { n: 1 }, $setOnInsert: { verdict, admissibility: status, ...named({}) } },
  });
  if (repository !== undefined) {
    updates.push({
      collection: scope === null ? COLLECTIONS.repositories : COLLECTIONS.scopeRepositories,
      filter: { _id: scope === null ? repository : JSON.stringify(id([repository])) },
      update: {
        $inc: counters,
        $set: {
          last_sequence: receipt.chain.sequence,
          last_receipt_id: receipt.receipt_id,
          last_issued_at: receipt.issued_at,
        },
        ...(scope === null ? {} : { $setOnInsert: named({ repository }) }),
      },
    });
  }
  if (agent !== undefined) {
    const model = claim.action?.agent_model;
    updates.push({
      collection: scope === null ? COLLECTIONS.agents : COLLECTIONS.scopeAgents,
      filter: { _id: scope === null ? agent : JSON.stringify(id([agent])) },
      update: {
        $inc: counters,
        $set: { last_seen: receipt.issued_at },
        $setOnInsert: { first_seen: receipt.issued_at, ...named({ agent }) },
        ...(model ? { $addToSet: { models: model } } : {}),
      },
    });
  }
  const day = receipt.issued_at.slice(0, 10);
  const dailyRepository = repository ?? '';
  updates.push({
    collection: scope === null ? COLLECTIONS.daily : COLLECTIONS.scopeDaily,
    filter: { _id: JSON.stringify(id([day, dailyRepository, verdict])) },
    update: {
      $inc: { n: 1 },
      $setOnInsert: { day, repository: dailyRepository, verdict, ...named({}) },
    },
  });
  return updates;
}

/** The marker of the backfill of scoped aggregates from the receipts stored before them. */
export const SCOPED_AGGREGATES_MARKER = 'scope_aggregates';

/**
 * Fills the per-scope aggregates from the receipts stored before they existed, once per
 * database. The first instance to start inserts a marker naming the head it read first; every
 * receipt after that head is recorded by its own append (this build writes both), every
 * receipt up to it here. Instances of an earlier build must be stopped before the first one of
 * this build starts (docs/OPERATIONS.md), or their receipts would be missing from the scoped
 * summaries. Receipts are read, never written.
 */
export async function backfillScopedAggregates(db: Db, batch = 1000): Promise<void> {
  const markers = db.collection<{ _id: string; through: number; done: boolean }>(
    COLLECTIONS.migrations,
  );
  if (await markers.findOne({ _id: SCOPED_AGGREGATES_MARKER })) return;
  const receipts = db.collection<ReceiptDocument>(COLLECTIONS.receipts);
  const head = await receipts.findOne(
    {},
    { sort: { sequence: -1 }, projection: { _id: 0, sequence: 1 } },
  );
  const through = head?.sequence ?? 0;
  try {
    await markers.insertOne({ _id: SCOPED_AGGREGATES_MARKER, through, done: false });
  } catch (error) {
    // Another instance is filling them (or did).
    if ((error as { code?: unknown }).code === 11000) return;
    throw error;
  }
  for (let after = 0; after < through;) {
    const docs = await receipts
      .find(
        { sequence: { $gt: after, $lte: through } },
        { projection: { ...ENTRY_PROJECTION, sequence: 1, scope: 1 } },
      )
      .sort({ sequence: 1 })
      .limit(batch)
      .toArray();
    if (docs.length === 0) break;
    const operations: { collection: string; op: AnyBulkWriteOperation<AggregateDocument> }[] = [];
    for (const doc of docs) {
      for (const u of aggregateUpdates(toEntry(doc), doc.scope)) {
        operations.push({
          collection: u.collection,
          op: { updateOne: { filter: u.filter, update: u.update, upsert: true } },
        });
      }
    }
    const byCollection = new Map<string, AnyBulkWriteOperation<AggregateDocument>[]>();
    for (const { collection, op } of operations)
      byCollection.set(collection, [...(byCollection.get(collection) ?? []), op]);
    for (const [collection, ops] of byCollection)
      await db.collection<AggregateDocument>(collection).bulkWrite(ops, { ordered: true });
    after = docs[docs.length - 1]!.sequence;
  }
  await markers.updateOne({ _id: SCOPED_AGGREGATES_MARKER }, { $set: { done: true } });
}
