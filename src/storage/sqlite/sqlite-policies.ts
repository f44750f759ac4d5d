import type { Database, Statement } from 'better-sqlite3';
import type { PolicyRecord, PolicyStore } from '../../ports/policy-store.js';
import { toPolicyRecord, type PolicyFields } from '../mappers.js';

interface PolicyRow extends PolicyFields {
  owner: string;
}

// The shared namespace is stored as '' so that (owner, name) can be the primary key.
const SHARED = '';
const ownerKey = (owner: string | null) => owner ?? SHARED;

const toRecord = (row: PolicyRow): PolicyRecord =>
  toPolicyRecord(row.owner === SHARED ? null : row.owner, row);

export class SqlitePolicies implements PolicyStore {
  private readonly insertRow: Statement;
  private readonly byName: Statement<[string, string], PolicyRow>;
  private readonly visible: Statement<[string, string], PolicyRow>;
  private readonly all: Statement<[], PolicyRow>;
  private readonly deleteRow: Statement<[string, string]>;

  constructor(db: Database) {
    this.insertRow = db.prepare(`
      INSERT INTO policies (owner, name, description, config_json, overrides, created_at)
      VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (owner, name) DO NOTHING`);
    this.byName = db.prepare('SELECT * FROM policies WHERE owner = ? AND name = ?');
    this.visible = db.prepare('SELECT * FROM policies WHERE owner IN (?, ?) ORDER BY name, owner');
    this.all = db.prepare('SELECT * FROM policies ORDER BY name, owner');
    this.deleteRow = db.prepare('DELETE FROM policies WHERE owner = ? AND name = ?');
  }

  async insert(record: PolicyRecord): Promise<'created' | 'exists'> {
    const { changes } = this.insertRow.run(
      ownerKey(record.owner),
      record.name,
      record.description,
      JSON.stringify(record.config),
      record.overrides,
      record.createdAt,
    );
    return changes === 1 ? 'created' : 'exists';
  }

  async get(owner: string | null, name: string): Promise<PolicyRecord | null> {
    const row = this.byName.get(ownerKey(owner), name);
    return row ? toRecord(row) : null;
  }

  async listVisible(owner: string | null): Promise<PolicyRecord[]> {
    return this.visible.all(SHARED, ownerKey(owner)).map(toRecord);
  }

  async listAll(): Promise<PolicyRecord[]> {
    return this.all.all().map(toRecord);
  }

  async delete(owner: string | null, name: string): Promise<boolean> {
    return this.deleteRow.run(ownerKey(owner), name).changes === 1;
  }
}
