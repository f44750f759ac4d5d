import type { Database, Statement } from 'better-sqlite3';
import type {
  AccountRevocation,
  ApiKeyRecord,
  ApiKeyStore,
  Reader,
  Tier,
} from '../../ports/api-key-store.js';
import { apiKeyFields, toApiKeyRecord, type ApiKeyFields } from '../mappers.js';
import { prepareDisableOwned } from './sqlite-webhooks.js';

/** SQLite has no boolean: the reviewer capability is stored as 0 or 1. */
interface KeyRow extends Omit<Required<ApiKeyFields>, 'reviewer'> {
  key_id: string;
  reviewer: 0 | 1;
}

const toRecord = (row: KeyRow): ApiKeyRecord =>
  toApiKeyRecord(row.key_id, { ...row, reviewer: row.reviewer === 1 });

const toRow = (record: ApiKeyRecord): KeyRow => ({
  key_id: record.keyId,
  ...apiKeyFields(record),
  reviewer: record.reviewer ? 1 : 0,
});

export class SqliteApiKeys implements ApiKeyStore {
  private readonly byDigest: Statement<[string], KeyRow>;
  private readonly byKeyId: Statement<[string], KeyRow>;
  private readonly activeByEmail: Statement<[string], KeyRow>;
  private readonly latestByEmail: Statement<[string], KeyRow>;
  private readonly updateReader: Statement<[Reader, string, string]>;
  private readonly updateReviewer: Statement<[0 | 1, string, string]>;
  private readonly unlockRow: Statement<[string, string]>;
  private readonly insert: Statement<[KeyRow]>;
  private readonly revokeRow: Statement<[string, string, string]>;
  private readonly updateTier: Statement<[Tier, string, string]>;
  private readonly all: Statement<[], KeyRow>;
  private readonly rotateTx: (keyId: string, next: ApiKeyRecord, at: string) => boolean;
  private readonly revokeAccountTx: (
    keyId: string,
    reason: string,
    at: string,
  ) => AccountRevocation | null;

  constructor(db: Database) {
    this.byDigest = db.prepare('SELECT * FROM api_keys WHERE key_digest = ?');
    this.byKeyId = db.prepare('SELECT * FROM api_keys WHERE key_id = ?');
    this.activeByEmail = db.prepare(
      'SELECT * FROM api_keys WHERE email = ? AND revoked_at IS NULL',
    );
    this.latestByEmail = db.prepare(
      'SELECT * FROM api_keys WHERE email = ? ORDER BY created_at DESC, key_id DESC LIMIT 1',
    );
    this.updateReader = db.prepare(
      'UPDATE api_keys SET reader = ?, updated_at = ? WHERE email = ? AND revoked_at IS NULL',
    );
    this.updateReviewer = db.prepare(
      'UPDATE api_keys SET reviewer = ?, updated_at = ? WHERE email = ? AND revoked_at IS NULL',
    );
    this.unlockRow = db.prepare(
      'UPDATE api_keys SET locked_policy = NULL, updated_at = ? WHERE email = ? AND revoked_at IS NULL',
    );
    this.insert = db.prepare(`
      INSERT INTO api_keys (key_id, account_id, email, key_digest, tier, locked_policy, reader,
        reviewer, created_at, updated_at, revoked_at)
      VALUES (@key_id, @account_id, @email, @key_digest, @tier, @locked_policy, @reader,
        @reviewer, @created_at, @updated_at, @revoked_at)
      ON CONFLICT (email) WHERE revoked_at IS NULL DO NOTHING`);
    this.revokeRow = db.prepare(
      'UPDATE api_keys SET revoked_at = ?, updated_at = ? WHERE key_id = ? AND revoked_at IS NULL',
    );
    this.updateTier = db.prepare(
      'UPDATE api_keys SET tier = ?, updated_at = ? WHERE email = ? AND revoked_at IS NULL',
    );
    this.all = db.prepare('SELECT * FROM api_keys ORDER BY created_at, key_id');
    this.rotateTx = db.transaction((keyId: string, next: ApiKeyRecord, at: string) => {
      if (this.revokeRow.run(at, at, keyId).changes !== 1) return false;
      this.insert.run(toRow(next));
      return true;
    });
    const disableOwned = prepareDisableOwned(db);
    // One transaction: the key and its account's receivers change together or not at all.
    this.revokeAccountTx = db.transaction((keyId: string, reason: string, at: string) => {
      if (this.revokeRow.run(at, at, keyId).changes !== 1) return null;
      const account = this.byKeyId.get(keyId)!.account_id;
      return { receiversDisabled: disableOwned.run(at, reason, account).changes };
    });
  }

  async findByDigest(keyDigest: string): Promise<ApiKeyRecord | null> {
    const row = this.byDigest.get(keyDigest);
    return row ? toRecord(row) : null;
  }

  async findByKeyId(keyId: string): Promise<ApiKeyRecord | null> {
    const row = this.byKeyId.get(keyId);
    return row ? toRecord(row) : null;
  }

  async findActiveByEmail(email: string): Promise<ApiKeyRecord | null> {
    const row = this.activeByEmail.get(email);
    return row ? toRecord(row) : null;
  }

  async findLatestByEmail(email: string): Promise<ApiKeyRecord | null> {
    const row = this.latestByEmail.get(email);
    return row ? toRecord(row) : null;
  }

  async insertIfAbsent(record: ApiKeyRecord): Promise<ApiKeyRecord> {
    this.insert.run(toRow(record));
    return toRecord(this.activeByEmail.get(record.email)!);
  }

  async rotate(keyId: string, next: ApiKeyRecord, at: string): Promise<ApiKeyRecord | null> {
    // The UPDATE takes the write lock first, so a concurrent rotation of the same key loses.
    return this.rotateTx(keyId, next, at) ? next : null;
  }

  async revoke(keyId: string, at: string): Promise<boolean> {
    return this.revokeRow.run(at, at, keyId).changes === 1;
  }

  async revokeAccount(
    keyId: string,
    reason: string,
    at: string,
  ): Promise<AccountRevocation | null> {
    return this.revokeAccountTx(keyId, reason, at);
  }

  async setTier(email: string, tier: Tier, updatedAt: string): Promise<ApiKeyRecord | null> {
    const { changes } = this.updateTier.run(tier, updatedAt, email);
    return changes ? this.findActiveByEmail(email) : null;
  }

  async setReader(email: string, reader: Reader, updatedAt: string): Promise<ApiKeyRecord | null> {
    const { changes } = this.updateReader.run(reader, updatedAt, email);
    return changes ? this.findActiveByEmail(email) : null;
  }

  async setReviewer(
    email: string,
    reviewer: boolean,
    updatedAt: string,
  ): Promise<ApiKeyRecord | null> {
    const { changes } = this.updateReviewer.run(reviewer ? 1 : 0, updatedAt, email);
    return changes ? this.findActiveByEmail(email) : null;
  }

  async unlock(email: string, updatedAt: string): Promise<ApiKeyRecord | null> {
    const { changes } = this.unlockRow.run(updatedAt, email);
    return changes ? this.findActiveByEmail(email) : null;
  }

  async list(): Promise<ApiKeyRecord[]> {
    return this.all.all().map(toRecord);
  }
}
