import type { Db } from 'mongodb';
import type { PolicyRecord, PolicyStore } from '../../ports/policy-store.js';
import { toPolicyRecord } from '../mappers.js';
import { COLLECTIONS, isDuplicateOn, type PolicyDocument } from './documents.js';

const toRecord = (doc: PolicyDocument): PolicyRecord => toPolicyRecord(doc.owner, doc);

const PROJECTION = { _id: 0 } as const;

/**
 * Custom policies: one namespace per owner and the shared one (owner null), kept apart by the
 * unique index on `{owner, name}` — null is a value of its own there, so a shared name and an
 * owner's same name coexist.
 */
export class MongoPolicies implements PolicyStore {
  constructor(private readonly db: Db) {}

  private get policies() {
    return this.db.collection<PolicyDocument>(COLLECTIONS.policies);
  }

  async insert(record: PolicyRecord): Promise<'created' | 'exists'> {
    try {
      await this.policies.insertOne({
        owner: record.owner,
        name: record.name,
        description: record.description,
        config_json: JSON.stringify(record.config),
        overrides: record.overrides,
        created_at: record.createdAt,
      });
      return 'created';
    } catch (error) {
      if (isDuplicateOn(error, 'name')) return 'exists';
      throw error;
    }
  }

  async get(owner: string | null, name: string): Promise<PolicyRecord | null> {
    const doc = await this.policies.findOne({ owner, name }, { projection: PROJECTION });
    return doc ? toRecord(doc) : null;
  }

  async listVisible(owner: string | null): Promise<PolicyRecord[]> {
    const owners = owner === null ? [null] : [null, owner];
    const docs = await this.policies
      .find({ owner: { $in: owners } }, { projection: PROJECTION })
      // null sorts before any string, as the shared namespace ('') does in the SQLite store.
      .sort({ name: 1, owner: 1 })
      .toArray();
    return docs.map(toRecord);
  }

  async listAll(): Promise<PolicyRecord[]> {
    const docs = await this.policies
      .find({}, { projection: PROJECTION })
      .sort({ name: 1, owner: 1 })
      .toArray();
    return docs.map(toRecord);
  }

  async delete(owner: string | null, name: string): Promise<boolean> {
    const { deletedCount } = await this.policies.deleteOne({ owner, name });
    return deletedCount === 1;
  }
}
