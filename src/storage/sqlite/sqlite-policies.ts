import type { Database, Statement } from 'better-sqlite3';
import type { PolicyRecord, PolicyStore } from '../../ports/policy-store.js';

interface PolicyRow {
  name: string;
  description: string | null;
  config_json: string;
  api_key_id: string | null;
  created_at: string;
}

const toRecord = (row: PolicyRow): PolicyRecord => ({
  name: row.name,
  description: row.description,
  config: JSON.parse(row.config_json),
  apiKeyId: row.api_key_id,
  createdAt: row.created_at,
});

export class SqlitePolicies implements PolicyStore {
  private readonly insertRow: Statement;
  private readonly byName: Statement<[string], PolicyRow>;
  private readonly all: Statement<[], PolicyRow>;

  constructor(db: Database) {
    this.insertRow = db.prepare(`
      INSERT INTO policies (name, description, config_json, api_key_id, created_at)
      VALUES (?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`);
    this.byName = db.prepare('SELECT * FROM policies WHERE name = ?');
    this.all = db.prepare('SELECT * FROM policies ORDER BY name');
  }

  async insert(record: PolicyRecord): Promise<'created' | 'exists'> {
    const { changes } = this.insertRow.run(
      record.name,
      record.description,
      JSON.stringify(record.config),
      record.apiKeyId,
      record.createdAt,
    );
    return changes === 1 ? 'created' : 'exists';
  }

  async get(name: string): Promise<PolicyRecord | null> {
    const row = this.byName.get(name);
    return row ? toRecord(row) : null;
  }

  async list(): Promise<PolicyRecord[]> {
    return this.all.all().map(toRecord);
  }
}
