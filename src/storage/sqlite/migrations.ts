import type { Database } from 'better-sqlite3';

// Ordered, append-only list: migration i brings PRAGMA user_version from i to i + 1.
const MIGRATIONS: string[] = [
  `
  CREATE TABLE receipts (
    sequence        INTEGER PRIMARY KEY,
    receipt_id      TEXT NOT NULL UNIQUE,
    claim_id        TEXT NOT NULL UNIQUE,
    inputs_hash     TEXT NOT NULL,
    receipt_hash    TEXT NOT NULL,
    issued_at       TEXT NOT NULL,
    verdict         TEXT NOT NULL,
    admissibility   TEXT NOT NULL,
    entity          TEXT NOT NULL,
    agent           TEXT,
    repository      TEXT,
    pull_request    TEXT,
    api_key_id      TEXT,
    receipt_json    TEXT NOT NULL,
    claim_json      TEXT NOT NULL,
    evaluation_json TEXT NOT NULL
  ) STRICT;
  CREATE INDEX receipts_verdict ON receipts (verdict);
  CREATE INDEX receipts_admissibility ON receipts (admissibility);
  CREATE INDEX receipts_agent ON receipts (agent) WHERE agent IS NOT NULL;
  CREATE INDEX receipts_repository ON receipts (repository) WHERE repository IS NOT NULL;
  CREATE INDEX receipts_api_key ON receipts (api_key_id) WHERE api_key_id IS NOT NULL;

  -- The ledger is append-only below the application too.
  CREATE TRIGGER receipts_no_update BEFORE UPDATE ON receipts
    BEGIN SELECT RAISE(ABORT, 'receipts are append-only'); END;
  CREATE TRIGGER receipts_no_delete BEFORE DELETE ON receipts
    BEGIN SELECT RAISE(ABORT, 'receipts are append-only'); END;

  CREATE TABLE outbox (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    topic         TEXT NOT NULL,
    receipt_id    TEXT NOT NULL REFERENCES receipts (receipt_id),
    payload_json  TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    dispatched_at TEXT
  ) STRICT;
  CREATE INDEX outbox_pending ON outbox (id) WHERE dispatched_at IS NULL;

  CREATE TABLE api_keys (
    id             TEXT PRIMARY KEY,
    email          TEXT NOT NULL UNIQUE,
    key_digest     TEXT NOT NULL UNIQUE,
    key_ciphertext TEXT NOT NULL,
    tier           TEXT NOT NULL CHECK (tier IN ('free', 'pilot', 'enterprise')),
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
  ) STRICT;
  `,
];

export function migrate(db: Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(
      `ledger schema version ${current} is newer than this build understands (${MIGRATIONS.length})`,
    );
  }
  for (let version = current; version < MIGRATIONS.length; version++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[version]!);
      db.pragma(`user_version = ${version + 1}`);
    }).immediate();
  }
}
