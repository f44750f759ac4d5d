import type { Database, Statement } from 'better-sqlite3';

export interface NewJobRow {
  name: string;
  payload_json: string;
  dedupe_key: string | null;
  run_at: number;
  created_at: number;
}

/**
 * The one way a row enters the jobs table: used by the job queue and by the ledger, which
 * enqueues webhook deliveries inside its append transaction. A taken dedupe key inserts
 * nothing (changes = 0).
 */
export function prepareJobInsert(db: Database): Statement<[NewJobRow]> {
  return db.prepare(`
    INSERT INTO jobs (name, payload_json, dedupe_key, state, run_at, created_at)
    VALUES (@name, @payload_json, @dedupe_key, 'pending', @run_at, @created_at)
    ON CONFLICT (dedupe_key) DO NOTHING`);
}
