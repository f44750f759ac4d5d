import { describe, expect, it } from '@jest/globals';
import { find } from 'mingo';
import type { Db } from 'mongodb';
import {
  backfillDeploymentEnvironments,
  DEPLOYMENT_ENVIRONMENTS_MARKER,
} from '../../../src/storage/mongo/deployment-backfill.js';
import { COLLECTIONS } from '../../../src/storage/mongo/documents.js';
import { searchQuery } from '../../../src/storage/mongo/receipt-query.js';
import { mingoDb } from '../../support/mingo-collections.js';

const desc = { limit: 10, order: 'desc' as const };

/** A receipt document as an append before deployment_environment wrote it. */
const stored = (sequence: number, subject: Record<string, unknown>, entity = 'acme/web') => ({
  _id: `r${sequence}`,
  sequence,
  receipt_id: `dr-${sequence}`,
  repository: subject.repository ?? null,
  scope: 'test',
  receipt_json: JSON.stringify({ receipt_id: `dr-${sequence}`, subject: { entity, ...subject } }),
  claim_json: '{}',
  evaluation_json: '{}',
  api_key_id: null,
});

describe('deployment receipts on MongoDB', () => {
  it('translates the deployment filters to the field only deployment receipts carry', () => {
    expect(searchQuery({ action_type: 'deployment' }, desc)!.filter).toEqual({
      deployment_environment: { $exists: true },
    });
    expect(
      searchQuery(
        { repository: 'acme/web', action_type: 'deployment', environment: 'production' },
        desc,
      )!.filter,
    ).toEqual({ $and: [{ repository: 'acme/web' }, { deployment_environment: 'production' }] });
  });

  it('sets the field on the deployment receipts stored before it, once, and the filters then find them', async () => {
    const db = mingoDb();
    const receipts = db.collection(COLLECTIONS.receipts);
    const docs = [
      stored(1, { repository: 'acme/web', action_type: 'deployment', environment: 'production' }),
      // A claim's text naming the member is escaped in the receipt's JSON: not a deployment.
      stored(2, { repository: 'acme/web', action_type: 'merge' }, '"action_type":"deployment"'),
      stored(3, { repository: 'acme/web', action_type: 'deployment' }),
      stored(4, { repository: 'acme/api', action_type: 'deployment', environment: 'production' }),
    ];
    for (const doc of docs) await receipts.insertOne(doc as never);

    await backfillDeploymentEnvironments(db as Db, 2);

    const all = (await receipts.find({}).sort({ sequence: 1 }).toArray()) as unknown as {
      sequence: number;
      deployment_environment?: string;
    }[];
    expect(all.map((d) => d.deployment_environment)).toEqual([
      'production',
      undefined,
      '',
      'production',
    ]);
    const matching = (filter: Parameters<typeof searchQuery>[0]) =>
      (find(all, searchQuery(filter, desc)!.filter).sort({ sequence: -1 }).all() as typeof all).map(
        (d) => d.sequence,
      );
    expect(matching({ action_type: 'deployment' })).toEqual([4, 3, 1]);
    expect(matching({ repository: 'acme/web', environment: 'production' })).toEqual([1]);

    // Done once: a later start leaves documents as they are.
    expect(
      await db
        .collection<{ _id: string }>(COLLECTIONS.migrations)
        .findOne({ _id: DEPLOYMENT_ENVIRONMENTS_MARKER }),
    ).toMatchObject({ through: 4, done: true });
    await receipts.insertOne(
      stored(5, { repository: 'acme/web', action_type: 'deployment', environment: 'qa' }) as never,
    );
    await backfillDeploymentEnvironments(db as Db);
    expect(await receipts.findOne({ sequence: 5 })).not.toHaveProperty('deployment_environment');
  });
});
