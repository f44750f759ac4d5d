import type { Db } from 'mongodb';
import { COLLECTIONS, ENTRY_PROJECTION, toEntry, type ReceiptDocument } from './documents.js';
import { deploymentEnvironmentOf } from './receipt-query.js';

/** The marker of the backfill of deployment_environment on receipts stored before it. */
export const DEPLOYMENT_ENVIRONMENTS_MARKER = 'deployment_environments';

/**
 * Sets `deployment_environment` (the field the deployment pages' indexes read) on the
 * deployment receipts stored before appends wrote it, once per database, as the scoped
 * aggregates are backfilled: the first instance to start records the head it read, and every
 * receipt after that head is written with the field by its own append. Only that index copy
 * is set: the receipt's stored JSON, what was signed and chained, is not touched.
 */
export async function backfillDeploymentEnvironments(db: Db, batch = 1000): Promise<void> {
  const markers = db.collection<{ _id: string; through: number; done: boolean }>(
    COLLECTIONS.migrations,
  );
  if (await markers.findOne({ _id: DEPLOYMENT_ENVIRONMENTS_MARKER })) return;
  const receipts = db.collection<ReceiptDocument>(COLLECTIONS.receipts);
  const head = await receipts.findOne(
    {},
    { sort: { sequence: -1 }, projection: { _id: 0, sequence: 1 } },
  );
  const through = head?.sequence ?? 0;
  try {
    await markers.insertOne({ _id: DEPLOYMENT_ENVIRONMENTS_MARKER, through, done: false });
  } catch (error) {
    // Another instance is setting them (or did).
    if ((error as { code?: unknown }).code === 11000) return;
    throw error;
  }
  for (let after = 0; after < through;) {
    const docs = await receipts
      .find(
        { sequence: { $gt: after, $lte: through } },
        { projection: { ...ENTRY_PROJECTION, sequence: 1 } },
      )
      .sort({ sequence: 1 })
      .limit(batch)
      .toArray();
    if (docs.length === 0) break;
    for (const doc of docs) {
      // Unescaped, the text appears only as the receipt's own member: it skips parsing the
      // others; the parsed receipt decides.
      if (!doc.receipt_json.includes('"action_type":"deployment"')) continue;
      const environment = deploymentEnvironmentOf(toEntry(doc));
      if (environment === undefined) continue;
      await receipts.updateOne(
        { sequence: doc.sequence },
        { $set: { deployment_environment: environment } },
      );
    }
    after = docs[docs.length - 1]!.sequence;
  }
  await markers.updateOne({ _id: DEPLOYMENT_ENVIRONMENTS_MARKER }, { $set: { done: true } });
}
