import type { MongoClient, Db } from 'mongodb';
import type {
  AccountRevocation,
  ApiKeyRecord,
  ApiKeyStore,
  Reader,
  Tier,
} from '../../ports/api-key-store.js';
import { COLLECTIONS, isDuplicateOn, type ApiKeyDocument } from './documents.js';
import { TRANSACTION_OPTIONS } from './mongo-ledger.js';
import { disableOwnedReceivers } from './mongo-webhooks.js';
import { apiKeyFields, toApiKeyRecord } from '../mappers.js';

const toRecord = (doc: ApiKeyDocument): ApiKeyRecord => toApiKeyRecord(doc._id, doc);

const toDocument = (record: ApiKeyRecord): ApiKeyDocument => ({
  _id: record.keyId,
  ...apiKeyFields(record),
  ...(record.revokedAt === null ? { active: true as const } : {}),
});

class NotActive extends Error {}

/**
 * API keys on MongoDB. "One active key per email" is the partial unique index on
 * `{email}` over documents with `active: true`, so two signups racing on two instances
 * cannot both win.
 */
export class MongoApiKeys implements ApiKeyStore {
  constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
  ) {}

  private get keys() {
    return this.db.collection<ApiKeyDocument>(COLLECTIONS.apiKeys);
  }

  async findByDigest(keyDigest: string): Promise<ApiKeyRecord | null> {
    const doc = await this.keys.findOne({ key_digest: keyDigest });
    return doc ? toRecord(doc) : null;
  }

  async findByKeyId(keyId: string): Promise<ApiKeyRecord | null> {
    const doc = await this.keys.findOne({ _id: keyId });
    return doc ? toRecord(doc) : null;
  }

  async findActiveByEmail(email: string): Promise<ApiKeyRecord | null> {
    const doc = await this.keys.findOne({ email, active: true });
    return doc ? toRecord(doc) : null;
  }

  async findLatestByEmail(email: string): Promise<ApiKeyRecord | null> {
    const doc = await this.keys.findOne({ email }, { sort: { created_at: -1, _id: -1 } });
    return doc ? toRecord(doc) : null;
  }

  async insertIfAbsent(record: ApiKeyRecord): Promise<ApiKeyRecord> {
    try {
      await this.keys.insertOne(toDocument(record));
      return record;
    } catch (error) {
      // Only a taken email means "already has a key"; a taken digest or key id is a bug.
      if (!isDuplicateOn(error, 'email')) throw error;
      const existing = await this.findActiveByEmail(record.email);
      if (!existing) throw error;
      return existing;
    }
  }

  async rotate(keyId: string, next: ApiKeyRecord, at: string): Promise<ApiKeyRecord | null> {
    const session = this.client.startSession();
    try {
      // A transaction: the old key revoked and the new one inserted, or neither. Two
      // rotations of one key conflict on its document; the one that retries finds it revoked.
      await session.withTransaction(async (s) => {
        const revoked = await this.keys.updateOne(
          { _id: keyId, active: true },
          { $set: { revoked_at: at, updated_at: at }, $unset: { active: '' } },
          { session: s },
        );
        if (revoked.modifiedCount !== 1) throw new NotActive();
        await this.keys.insertOne(toDocument(next), { session: s });
      }, TRANSACTION_OPTIONS);
      return next;
    } catch (error) {
      if (error instanceof NotActive) return null;
      throw error;
    } finally {
      await session.endSession();
    }
  }

  async revoke(keyId: string, at: string): Promise<boolean> {
    const { modifiedCount } = await this.keys.updateOne(
      { _id: keyId, active: true },
      { $set: { revoked_at: at, updated_at: at }, $unset: { active: '' } },
    );
    return modifiedCount === 1;
  }

  async revokeAccount(
    keyId: string,
    reason: string,
    at: string,
  ): Promise<AccountRevocation | null> {
    const session = this.client.startSession();
    try {
      // A transaction over two collections: the key revoked and its account's receivers
      // disabled, or neither. A concurrent revocation conflicts on the key's document; the
      // one that retries finds it revoked and writes nothing.
      return await session.withTransaction(async (s) => {
        const revoked = await this.keys.findOneAndUpdate(
          { _id: keyId, active: true },
          { $set: { revoked_at: at, updated_at: at }, $unset: { active: '' } },
          { session: s, returnDocument: 'after' },
        );
        if (!revoked) return null;
        const disabled = await disableOwnedReceivers(this.db, revoked.account_id, reason, at, s);
        return { receiversDisabled: disabled.modifiedCount };
      }, TRANSACTION_OPTIONS);
    } finally {
      await session.endSession();
    }
  }

  async setTier(email: string, tier: Tier, updatedAt: string): Promise<ApiKeyRecord | null> {
    const doc = await this.keys.findOneAndUpdate(
      { email, active: true },
      { $set: { tier, updated_at: updatedAt } },
      { returnDocument: 'after' },
    );
    return doc ? toRecord(doc) : null;
  }

  async setReader(email: string, reader: Reader, updatedAt: string): Promise<ApiKeyRecord | null> {
    const doc = await this.keys.findOneAndUpdate(
      { email, active: true },
      { $set: { reader, updated_at: updatedAt } },
      { returnDocument: 'after' },
    );
    return doc ? toRecord(doc) : null;
  }

  async setReviewer(
    email: string,
    reviewer: boolean,
    updatedAt: string,
  ): Promise<ApiKeyRecord | null> {
    const doc = await this.keys.findOneAndUpdate(
      { email, active: true },
      { $set: { reviewer, updated_at: updatedAt } },
      { returnDocument: 'after' },
    );
    return doc ? toRecord(doc) : null;
  }

  async unlock(email: string, updatedAt: string): Promise<ApiKeyRecord | null> {
    const doc = await this.keys.findOneAndUpdate(
      { email, active: true },
      { $set: { locked_policy: null, updated_at: updatedAt } },
      { returnDocument: 'after' },
    );
    return doc ? toRecord(doc) : null;
  }

  async list(): Promise<ApiKeyRecord[]> {
    const docs = await this.keys.find({}).sort({ created_at: 1, _id: 1 }).toArray();
    return docs.map(toRecord);
  }
}
