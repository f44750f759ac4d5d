import { describe, expect, it } from '@jest/globals';
import { find } from 'mingo';
import type { LedgerEntry } from '../../../src/ports/ledger-store.js';
import { deploymentEnvironmentOf, searchQuery } from '../../../src/storage/mongo/receipt-query.js';

const desc = { limit: 10, order: 'desc' as const };

/** A receipt's document as MongoLedger's append inserts it: the copy only on deployments. */
const stored = (sequence: number, subject: Record<string, unknown>) => {
  const environment = deploymentEnvironmentOf({ receipt: { subject } } as unknown as LedgerEntry);
  return {
    sequence,
    repository: subject.repository ?? null,
    ...(environment === undefined ? {} : { deployment_environment: environment }),
  };
};

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

  it('finds deployment receipts, and one environment of a repository, and nothing else', () => {
    const docs = [
      stored(1, { action_type: 'deployment', repository: 'acme/web', environment: 'production' }),
      stored(2, { action_type: 'merge', repository: 'acme/web', environment: 'production' }),
      stored(3, { action_type: 'deployment', repository: 'acme/web', environment: 'staging' }),
      stored(4, { action_type: 'deployment', repository: 'acme/api', environment: 'production' }),
      stored(5, { action_type: 'deployment', repository: 'acme/web' }),
    ];
    const sequences = (filter: Parameters<typeof searchQuery>[0]) =>
      find(docs, searchQuery(filter, desc)!.filter)
        .all()
        .map((doc) => (doc as { sequence: number }).sequence)
        .sort();
    expect(docs.map((doc) => doc.deployment_environment)).toEqual([
      'production',
      undefined,
      'staging',
      'production',
      '',
    ]);
    expect(sequences({ action_type: 'deployment' })).toEqual([1, 3, 4, 5]);
    expect(
      sequences({ repository: 'acme/web', action_type: 'deployment', environment: 'production' }),
    ).toEqual([1]);
  });
});
