import type { Database, Statement } from 'better-sqlite3';
import type { ApiKeyRecord, ApiKeyStore, Tier } from '../../ports/api-key-store.js';

interface KeyRow {
  id: string;
  email: string;
  key_digest: string;
  key_ciphertext: string;
  tier: Tier;
  created_at: string;
  updated_at: string;
}

const toRecord = (row: KeyRow): ApiKeyRecord => ({
  id: row.id,
  email: row.email,
  keyDigest: row.key_digest,
  keyCiphertext: row.key_ciphertext,
  tier: row.tier,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export class SqliteApiKeys implements ApiKeyStore {
  private readonly byDigest: Statement<[string], KeyRow>;
  private readonly byEmail: Statement<[string], KeyRow>;
  private readonly insert: Statement;
  private readonly updateTier: Statement<[Tier, string, string]>;

  constructor(db: Database) {
    this.byDigest = db.prepare('SELECT * FROM api_keys WHERE key_digest = ?');
    this.byEmail = db.prepare('SELECT * FROM api_keys WHERE email = ?');
    this.insert = db.prepare(`
      INSERT INTO api_keys (id, email, key_digest, key_ciphertext, tier, created_at, updated_at)
      VALUES (@id, @email, @keyDigest, @keyCiphertext, @tier, @createdAt, @updatedAt)
      ON CONFLICT (email) DO NOTHING`);
    this.updateTier = db.prepare('UPDATE api_keys SET tier = ?, updated_at = ? WHERE email = ?');
  }

  async findByDigest(keyDigest: string): Promise<ApiKeyRecord | null> {
    const row = this.byDigest.get(keyDigest);
    return row ? toRecord(row) : null;
  }

  async findByEmail(email: string): Promise<ApiKeyRecord | null> {
    const row = this.byEmail.get(email);
    return row ? toRecord(row) : null;
  }

  async insertIfAbsent(record: ApiKeyRecord): Promise<ApiKeyRecord> {
    this.insert.run(record);
    return toRecord(this.byEmail.get(record.email)!);
  }

  async setTier(email: string, tier: Tier, updatedAt: string): Promise<ApiKeyRecord | null> {
    const { changes } = this.updateTier.run(tier, updatedAt, email);
    return changes ? this.findByEmail(email) : null;
  }
}
