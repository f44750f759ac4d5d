import type { Database } from 'better-sqlite3';
import { hashesCompletedBy, leafHash, receiptHashText, toHex, utf8Bytes } from '@svc/verify';
import { nativeHashBytes } from '@svc/verify/node';
import { newKeyId } from '../../core/ids.js';
import type { Receipt } from '../../core/receipt.js';

type Migration = string | ((db: Database) => void);

// Receipts, their indexes and their append-only triggers, as of migration 2.
const RECEIPTS_V2 = `
  CREATE TABLE receipts (
    sequence        INTEGER PRIMARY KEY,
    receipt_id      TEXT NOT NULL UNIQUE,
    claim_id        TEXT NOT NULL,
    -- The submitter's idempotency scope: claim_id is unique per submitter (contract §7).
    scope           TEXT NOT NULL,
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
    evaluation_json TEXT NOT NULL,
    UNIQUE (scope, claim_id)
  ) STRICT;
`;
const RECEIPT_INDEXES = `
  CREATE INDEX receipts_verdict ON receipts (verdict, sequence);
  CREATE INDEX receipts_admissibility ON receipts (admissibility, sequence);
  CREATE INDEX receipts_agent ON receipts (agent, sequence) WHERE agent IS NOT NULL;
  CREATE INDEX receipts_repository ON receipts (repository, sequence) WHERE repository IS NOT NULL;
  CREATE INDEX receipts_pull_request ON receipts (repository, pull_request, sequence)
    WHERE pull_request IS NOT NULL;
  CREATE INDEX receipts_issued_at ON receipts (issued_at, verdict);
  CREATE INDEX receipts_api_key ON receipts (api_key_id) WHERE api_key_id IS NOT NULL;
  CREATE TRIGGER receipts_no_update BEFORE UPDATE ON receipts
    BEGIN SELECT RAISE(ABORT, 'receipts are append-only'); END;
  CREATE TRIGGER receipts_no_delete BEFORE DELETE ON receipts
    BEGIN SELECT RAISE(ABORT, 'receipts are append-only'); END;
  CREATE TRIGGER receipts_no_replace BEFORE INSERT ON receipts
    WHEN EXISTS (SELECT 1 FROM receipts WHERE sequence = NEW.sequence)
      OR EXISTS (SELECT 1 FROM receipts WHERE receipt_id = NEW.receipt_id)
      OR EXISTS (SELECT 1 FROM receipts WHERE scope = NEW.scope AND claim_id = NEW.claim_id)
    BEGIN SELECT RAISE(ABORT, 'receipts are append-only'); END;
`;

/**
 * Trust model: claim_id unique per submitter; API keys kept as digests only (the reversible
 * copies are dropped, and secure_delete overwrites their pages), each with a public key_id and
 * an account shared across rotations; custom policies owned by an account or shared.
 */
function trustModel(db: Database): void {
  db.exec(`
    ${RECEIPTS_V2.replace('CREATE TABLE receipts', 'CREATE TABLE receipts_next')}
    INSERT INTO receipts_next (sequence, receipt_id, claim_id, scope, inputs_hash, receipt_hash,
      issued_at, verdict, admissibility, entity, agent, repository, pull_request, api_key_id,
      receipt_json, claim_json, evaluation_json)
    SELECT sequence, receipt_id, claim_id, COALESCE('key:' || api_key_id, ''), inputs_hash,
      receipt_hash, issued_at, verdict, admissibility, entity, agent, repository, pull_request,
      api_key_id, receipt_json, claim_json, evaluation_json
    FROM receipts ORDER BY sequence;
    DROP TABLE receipts;
    ALTER TABLE receipts_next RENAME TO receipts;
    ${RECEIPT_INDEXES}

    CREATE TABLE api_keys_next (
      key_id        TEXT PRIMARY KEY,
      account_id    TEXT NOT NULL,
      email         TEXT NOT NULL,
      key_digest    TEXT NOT NULL UNIQUE,
      tier          TEXT NOT NULL CHECK (tier IN ('free', 'pilot', 'enterprise')),
      locked_policy TEXT,
      created_at    TEXT NOT NULL,
      updated_at    TEXT NOT NULL,
      revoked_at    TEXT
    ) STRICT;
  `);
  const copy = db.prepare(`
    INSERT INTO api_keys_next (key_id, account_id, email, key_digest, tier, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?)`);
  const old = db
    .prepare('SELECT id, email, key_digest, tier, created_at, updated_at FROM api_keys')
    .all() as {
    id: string;
    email: string;
    key_digest: string;
    tier: string;
    created_at: string;
    updated_at: string;
  }[];
  for (const row of old) {
    copy.run(
      newKeyId(),
      row.id,
      row.email,
      row.key_digest,
      row.tier,
      row.created_at,
      row.updated_at,
    );
  }
  db.exec(`
    DROP TABLE api_keys;
    ALTER TABLE api_keys_next RENAME TO api_keys;
    -- One active key per email; revoked keys stay for the record.
    CREATE UNIQUE INDEX api_keys_active_email ON api_keys (email) WHERE revoked_at IS NULL;
    CREATE INDEX api_keys_account ON api_keys (account_id);

    CREATE TABLE policies_next (
      owner       TEXT NOT NULL, -- '' for shared (operator) policies, else the account id
      name        TEXT NOT NULL,
      description TEXT,
      config_json TEXT NOT NULL,
      overrides   TEXT NOT NULL CHECK (overrides IN ('any', 'tighten', 'none')),
      created_at  TEXT NOT NULL,
      PRIMARY KEY (owner, name)
    ) STRICT;
    -- Existing policies keep their owner and become tighten-only, the new default.
    INSERT INTO policies_next (owner, name, description, config_json, overrides, created_at)
    SELECT COALESCE(api_key_id, ''), name, description, config_json, 'tighten', created_at
    FROM policies;
    DROP TABLE policies;
    ALTER TABLE policies_next RENAME TO policies;
    CREATE TRIGGER policies_no_update BEFORE UPDATE ON policies
      BEGIN SELECT RAISE(ABORT, 'policies are immutable'); END;

    -- One row, the time of the last deep health check, committed by the check: proves the
    -- store takes writes without touching the ledger.
    CREATE TABLE health_probe (id INTEGER PRIMARY KEY, at TEXT NOT NULL) STRICT;
  `);
}

/**
 * The word index with prefix indexes for prefixes of 1 to 16 characters. Every search word is
 * a prefix query, which without an index of its length FTS5 answers by merging the doclists
 * of every term it begins into one list of all matching rows, before the first row is read:
 * the cost grew with the ledger however few rows were asked for. A prefix of an indexed
 * length is read like a term, lazily in rowid order, so a page stops the scan. Longer words
 * are still answered, the old way.
 */
const RECEIPTS_FTS = `
  CREATE VIRTUAL TABLE receipts_fts USING fts5 (
    claim, entity, repository, agent, content = '', tokenize = 'unicode61 remove_diacritics 2',
    prefix = '${Array.from({ length: 16 }, (_, i) => i + 1).join(' ')}'
  );
`;

/**
 * Rebuilds the word index (contentless, so from the receipts) with prefix indexes. Receipts
 * are read, never written; each is indexed with the values the append indexes it with.
 */
function prefixIndexes(db: Database): void {
  db.exec(`DROP TABLE receipts_fts; ${RECEIPTS_FTS}`);
  const rows = db.prepare<[number, number], WordsRow>(`
    SELECT sequence, claim_json, entity, repository, agent FROM receipts
    WHERE sequence > ? ORDER BY sequence LIMIT ?`);
  const insert = db.prepare(
    'INSERT INTO receipts_fts (rowid, claim, entity, repository, agent) VALUES (?, ?, ?, ?, ?)',
  );
  for (let after = 0; ;) {
    const batch = rows.all(after, 1000);
    if (batch.length === 0) break;
    for (const row of batch) {
      const { claim } = JSON.parse(row.claim_json) as { claim: string };
      insert.run(row.sequence, claim, row.entity, row.repository, row.agent);
    }
    after = batch[batch.length - 1]!.sequence;
  }
}

interface WordsRow {
  sequence: number;
  claim_json: string;
  entity: string;
  repository: string | null;
  agent: string | null;
}

const COUNTER_COLUMNS = `
    total             INTEGER NOT NULL,
    allowed           INTEGER NOT NULL,
    blocked           INTEGER NOT NULL,
    escalated         INTEGER NOT NULL,
    accepted          INTEGER NOT NULL,
    non_deterministic INTEGER NOT NULL,
    rejected          INTEGER NOT NULL,`;
const COUNTER_SUMS = `COUNT(*), SUM(verdict = 'ALLOWED'), SUM(verdict = 'BLOCKED'),
    SUM(verdict = 'ESCALATED'), SUM(admissibility = 'ACCEPTED'),
    SUM(admissibility = 'NON_DETERMINISTIC'), SUM(admissibility = 'REJECTED')`;

/**
 * Private reads (SVC_PUBLIC_READS=false): what each key may read, and the read model's
 * aggregates once more per submitter scope, so that a key's own summaries cost what the
 * ledger-wide ones cost. The scoped aggregates are filled from the receipts (read, never
 * written) with the values an append records.
 */
function scopedReads(db: Database): void {
  db.exec(`
    ALTER TABLE api_keys ADD COLUMN reader TEXT NOT NULL DEFAULT 'own'
      CHECK (reader IN ('own', 'all'));
    -- An address's newest key, revoked or not: a revoked account's address cannot sign up.
    CREATE INDEX api_keys_email ON api_keys (email, created_at);

    CREATE INDEX receipts_scope ON receipts (scope, sequence);
    CREATE INDEX receipts_scope_issued_at ON receipts (scope, issued_at, verdict);

    CREATE TABLE scope_totals (
      scope         TEXT NOT NULL,
      verdict       TEXT NOT NULL,
      admissibility TEXT NOT NULL,
      n             INTEGER NOT NULL,
      PRIMARY KEY (scope, verdict, admissibility)
    ) STRICT, WITHOUT ROWID;
    CREATE TABLE scope_repository_stats (
      scope           TEXT NOT NULL,
      repository      TEXT NOT NULL,${COUNTER_COLUMNS}
      last_sequence   INTEGER NOT NULL,
      last_receipt_id TEXT NOT NULL,
      last_issued_at  TEXT NOT NULL,
      PRIMARY KEY (scope, repository)
    ) STRICT, WITHOUT ROWID;
    CREATE TABLE scope_agent_stats (
      scope      TEXT NOT NULL,
      agent      TEXT NOT NULL,${COUNTER_COLUMNS}
      first_seen TEXT NOT NULL,
      last_seen  TEXT NOT NULL,
      PRIMARY KEY (scope, agent)
    ) STRICT, WITHOUT ROWID;
    CREATE TABLE scope_agent_models (
      scope TEXT NOT NULL,
      agent TEXT NOT NULL,
      model TEXT NOT NULL,
      PRIMARY KEY (scope, agent, model)
    ) STRICT, WITHOUT ROWID;
    CREATE TABLE scope_daily_counts (
      scope      TEXT NOT NULL,
      day        TEXT NOT NULL,
      repository TEXT NOT NULL, -- '' for receipts without one
      verdict    TEXT NOT NULL,
      n          INTEGER NOT NULL,
      PRIMARY KEY (scope, day, repository, verdict)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX scope_daily_counts_repository ON scope_daily_counts (scope, repository, day);

    INSERT INTO scope_totals (scope, verdict, admissibility, n)
    SELECT scope, verdict, admissibility, COUNT(*) FROM receipts
    GROUP BY scope, verdict, admissibility;

    INSERT INTO scope_repository_stats
    SELECT scope, repository, ${COUNTER_SUMS},
      MAX(sequence), receipt_id, issued_at -- SQLite takes bare columns from the MAX row
    FROM receipts WHERE repository IS NOT NULL GROUP BY scope, repository;

    INSERT INTO scope_agent_stats
    SELECT r.scope, r.agent, ${COUNTER_SUMS},
      (SELECT f.issued_at FROM receipts f WHERE f.scope = r.scope AND f.agent = r.agent
        ORDER BY f.sequence LIMIT 1),
      (SELECT l.issued_at FROM receipts l WHERE l.scope = r.scope AND l.agent = r.agent
        ORDER BY l.sequence DESC LIMIT 1)
    FROM receipts r WHERE r.agent IS NOT NULL GROUP BY r.scope, r.agent;

    INSERT INTO scope_agent_models (scope, agent, model)
    SELECT DISTINCT scope, agent, json_extract(claim_json, '$.action.agent_model') AS model
    FROM receipts WHERE agent IS NOT NULL AND model IS NOT NULL AND model <> '';

    INSERT INTO scope_daily_counts (scope, day, repository, verdict, n)
    SELECT scope, substr(issued_at, 1, 10), COALESCE(repository, ''), verdict, COUNT(*)
    FROM receipts GROUP BY scope, substr(issued_at, 1, 10), COALESCE(repository, ''), verdict;
  `);
}

const LOG_TREE_SCHEMA = `
  -- The ledger's Merkle tree (contract §9): the hash of every complete subtree of 2^level
  -- leaves starting at leaf idx × 2^level, written with the receipt that completes it.
  CREATE TABLE tlog_hashes (
    level INTEGER NOT NULL,
    idx   INTEGER NOT NULL,
    hash  BLOB NOT NULL,
    PRIMARY KEY (level, idx)
  ) STRICT, WITHOUT ROWID;
  CREATE TRIGGER tlog_hashes_no_update BEFORE UPDATE ON tlog_hashes
    BEGIN SELECT RAISE(ABORT, 'the log tree is append-only'); END;
  CREATE TRIGGER tlog_hashes_no_delete BEFORE DELETE ON tlog_hashes
    BEGIN SELECT RAISE(ABORT, 'the log tree is append-only'); END;

  -- The log's origin (contract §9), fixed when first stored.
  CREATE TABLE ledger_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) STRICT;
  CREATE TRIGGER ledger_meta_no_update BEFORE UPDATE ON ledger_meta
    BEGIN SELECT RAISE(ABORT, 'the ledger origin is fixed'); END;
  CREATE TRIGGER ledger_meta_no_delete BEFORE DELETE ON ledger_meta
    BEGIN SELECT RAISE(ABORT, 'the ledger origin is fixed'); END;

  -- Signed checkpoints, one per tree size.
  CREATE TABLE checkpoints (
    size       INTEGER PRIMARY KEY,
    note       TEXT NOT NULL,
    created_at TEXT NOT NULL
  ) STRICT;
  CREATE TRIGGER checkpoints_no_update BEFORE UPDATE ON checkpoints
    BEGIN SELECT RAISE(ABORT, 'checkpoints are append-only'); END;
  CREATE TRIGGER checkpoints_no_delete BEFORE DELETE ON checkpoints
    BEGIN SELECT RAISE(ABORT, 'checkpoints are append-only'); END;

  -- An existing ledger keeps the origin its receipts carry.
  INSERT INTO ledger_meta (key, value)
    SELECT 'origin', json_extract(receipt_json, '$.position.log') FROM receipts
    WHERE json_extract(receipt_json, '$.signed_fields.contract') = 'receipt-core-v2'
    ORDER BY sequence LIMIT 1;
`;

/**
 * The ledger's Merkle tree, built from the receipts already there in sequence order, the same
 * way each append extends it (the hashes of the subtrees each leaf completes, RFC 6962 as
 * contract §9 fixes it). Each leaf's text must hash to the receipt's stored `receipt_hash`: a
 * receipt that does not is refused here rather than put in the tree. Its statements are its
 * own, not the live tree store's, so that a later change to that store leaves it as released.
 */
function logTree(db: Database): void {
  db.exec(LOG_TREE_SCHEMA);
  const insert = db.prepare<[number, number, Uint8Array]>(
    'INSERT INTO tlog_hashes (level, idx, hash) VALUES (?, ?, ?)',
  );
  const read = db.prepare<[number, number], { hash: Buffer }>(
    'SELECT hash FROM tlog_hashes WHERE level = ? AND idx = ?',
  );
  const stored = (level: number, index: number): Uint8Array => {
    const row = read.get(level, index);
    if (!row) throw new Error(`log tree: no stored hash at ${level}/${index}`);
    return row.hash;
  };
  const rows = db.prepare<
    [number, number],
    { sequence: number; receipt_hash: string; receipt_json: string }
  >(
    'SELECT sequence, receipt_hash, receipt_json FROM receipts WHERE sequence > ? ORDER BY sequence LIMIT ?',
  );
  for (let after = 0; ;) {
    const page = rows.all(after, 1000);
    if (page.length === 0) return;
    for (const row of page) {
      const text = receiptHashText(JSON.parse(row.receipt_json) as Receipt);
      if (`sha256:${toHex(nativeHashBytes(utf8Bytes(text)))}` !== row.receipt_hash) {
        throw new Error(`receipt ${row.sequence} does not hash to its stored receipt_hash`);
      }
      const leaf = leafHash(utf8Bytes(text), nativeHashBytes);
      for (const s of hashesCompletedBy(row.sequence - 1, leaf, stored, nativeHashBytes)) {
        insert.run(s.level, s.index, s.hash);
      }
    }
    after = page[page.length - 1]!.sequence;
  }
}

const SIGNING_KEYS_SCHEMA = `
  -- The signing-key history (contract §9). Rows are never deleted; a key's identity, start
  -- and transition statement never change; status moves only current → retired, and current
  -- or retired → revoked, each setting its own columns once.
  CREATE TABLE signing_keys (
    key_id                TEXT PRIMARY KEY,
    public_key_pem        TEXT,
    verifier_key          TEXT,
    status                TEXT NOT NULL CHECK (status IN ('current', 'retired', 'revoked')),
    first_sequence        INTEGER NOT NULL,
    last_sequence         INTEGER,
    activated_at          TEXT NOT NULL,
    retired_at            TEXT,
    revoked_from_sequence INTEGER,
    revoked_at            TEXT,
    transition_json       TEXT
  ) STRICT;
  -- A key retired before it signed anything has last_sequence = first_sequence - 1, and
  -- shares its first_sequence with its successor: rowid (insertion) order breaks the tie.
  CREATE UNIQUE INDEX signing_keys_one_current ON signing_keys (status) WHERE status = 'current';
  CREATE TRIGGER signing_keys_no_delete BEFORE DELETE ON signing_keys
    BEGIN SELECT RAISE(ABORT, 'the signing-key history is append-only'); END;
  CREATE TRIGGER signing_keys_fixed BEFORE UPDATE ON signing_keys
    WHEN NEW.key_id IS NOT OLD.key_id
      OR NEW.public_key_pem IS NOT OLD.public_key_pem
      OR NEW.verifier_key IS NOT OLD.verifier_key
      OR NEW.first_sequence IS NOT OLD.first_sequence
      OR NEW.activated_at IS NOT OLD.activated_at
      OR NEW.transition_json IS NOT OLD.transition_json
    BEGIN SELECT RAISE(ABORT, 'a signing key''s identity, start and transition never change'); END;
  CREATE TRIGGER signing_keys_transitions BEFORE UPDATE ON signing_keys
    WHEN NOT (
      -- retire: the end of its sequences is set once, with the time
      (OLD.status IN ('current', 'revoked') AND NEW.status = CASE OLD.status WHEN 'current' THEN 'retired' ELSE 'revoked' END
        AND OLD.last_sequence IS NULL AND NEW.last_sequence IS NOT NULL
        AND OLD.retired_at IS NULL AND NEW.retired_at IS NOT NULL
        AND NEW.revoked_from_sequence IS OLD.revoked_from_sequence
        AND NEW.revoked_at IS OLD.revoked_at)
      OR
      -- revoke: from a sequence, once
      (OLD.status IN ('current', 'retired') AND NEW.status = 'revoked'
        AND OLD.revoked_from_sequence IS NULL AND NEW.revoked_from_sequence IS NOT NULL
        AND NEW.revoked_at IS NOT NULL
        AND NEW.last_sequence IS OLD.last_sequence AND NEW.retired_at IS OLD.retired_at)
    )
    BEGIN SELECT RAISE(ABORT, 'not an allowed signing-key transition'); END;
`;

const COSIGNATURES_SCHEMA = `
  -- Witnesses' cosignatures of stored checkpoints (C2SP tlog-cosignature), each verified
  -- against the witness's configured key before it is stored; one per witness and size.
  CREATE TABLE cosignatures (
    size       INTEGER NOT NULL REFERENCES checkpoints (size),
    witness    TEXT NOT NULL,
    line       TEXT NOT NULL,
    timestamp  INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (size, witness)
  ) STRICT;
  -- What a witness cosigned last: the old size of the next add-checkpoint call.
  CREATE INDEX cosignatures_witness ON cosignatures (witness, size);
  CREATE TRIGGER cosignatures_no_update BEFORE UPDATE ON cosignatures
    BEGIN SELECT RAISE(ABORT, 'cosignatures are append-only'); END;
  CREATE TRIGGER cosignatures_no_delete BEFORE DELETE ON cosignatures
    BEGIN SELECT RAISE(ABORT, 'cosignatures are append-only'); END;
`;

/**
 * The link of each disposition to its parent (contract §11), written in the disposition's
 * append transaction. The primary key is the guard that a parent has at most one disposition,
 * whichever process or connection appends it.
 */
const DISPOSITIONS_SCHEMA = `
  CREATE TABLE dispositions (
    parent_receipt_id TEXT PRIMARY KEY REFERENCES receipts (receipt_id),
    sequence          INTEGER NOT NULL UNIQUE REFERENCES receipts (sequence),
    -- The submitter scope of the parent: decisions are counted for the scope that escalated.
    parent_scope      TEXT NOT NULL,
    decision          TEXT NOT NULL CHECK (decision IN ('approve', 'reject'))
  ) STRICT;
  CREATE INDEX dispositions_decision ON dispositions (decision);
  CREATE INDEX dispositions_parent_scope ON dispositions (parent_scope, decision);
  CREATE TRIGGER dispositions_no_update BEFORE UPDATE ON dispositions
    BEGIN SELECT RAISE(ABORT, 'dispositions are append-only'); END;
  CREATE TRIGGER dispositions_no_delete BEFORE DELETE ON dispositions
    BEGIN SELECT RAISE(ABORT, 'dispositions are append-only'); END;
`;

/**
 * The outbox of migration 1 (records written in a receipt's append, for a dispatcher) never
 * had a reader or a writer: webhook deliveries are written in the append with their jobs
 * instead. Nothing was ever put in it, so dropping it loses nothing.
 */
const DROP_OUTBOX = `
  DROP TABLE outbox;
`;

/**
 * Revocations are signed statements (contract §9): the statement is kept with the key, set
 * by the revocation and never changed after.
 */
const SIGNED_REVOCATIONS_SCHEMA = `
  ALTER TABLE signing_keys ADD COLUMN revocation_json TEXT;
  CREATE TRIGGER signing_keys_revocation_fixed BEFORE UPDATE ON signing_keys
    WHEN OLD.revocation_json IS NOT NULL AND NEW.revocation_json IS NOT OLD.revocation_json
    BEGIN SELECT RAISE(ABORT, 'a signing key''s revocation statement never changes'); END;
`;

/**
 * The reviewer capability: recording a disposition is granted by the operator, never by
 * signup. Existing keys are not reviewers; the operator grants the ones that decide.
 */
const REVIEWER_KEYS = `
  ALTER TABLE api_keys ADD COLUMN reviewer INTEGER NOT NULL DEFAULT 0
    CHECK (reviewer IN (0, 1));
`;

/**
 * Agent sessions (contract §12): one row per tool-call receipt (a decision, a disposition of
 * one, or an outcome), and per session its counts, both written in the receipt's append
 * transaction. The unique approval column is the guard that an approval is used once; the
 * unique partial index, that a decision has at most one outcome. No build before this one
 * accepted tool-call claims, so no existing receipt belongs in these tables.
 */
const AGENT_SESSIONS_SCHEMA = `
  CREATE TABLE session_records (
    sequence            INTEGER PRIMARY KEY REFERENCES receipts (sequence),
    receipt_id          TEXT NOT NULL UNIQUE REFERENCES receipts (receipt_id),
    scope               TEXT NOT NULL,
    session_id          TEXT NOT NULL,
    harness             TEXT NOT NULL,
    kind                TEXT NOT NULL CHECK (kind IN ('decision', 'disposition', 'outcome')),
    tool_name           TEXT NOT NULL,
    input_digest        TEXT NOT NULL,
    tool_use_id         TEXT,
    verdict             TEXT NOT NULL CHECK (verdict IN ('ALLOWED', 'BLOCKED', 'ESCALATED')),
    parent_receipt_id   TEXT,
    ran_without_allow   INTEGER NOT NULL CHECK (ran_without_allow IN (0, 1)),
    approval_receipt_id TEXT UNIQUE,
    issued_at           TEXT NOT NULL,
    agent               TEXT,
    repository          TEXT
  ) STRICT;
  CREATE INDEX session_records_session ON session_records (scope, session_id, sequence);
  CREATE INDEX session_records_call
    ON session_records (scope, session_id, tool_name, input_digest, sequence);
  CREATE INDEX session_records_tool_use
    ON session_records (scope, session_id, tool_name, tool_use_id, sequence)
    WHERE tool_use_id IS NOT NULL;
  CREATE INDEX session_records_parent ON session_records (parent_receipt_id)
    WHERE parent_receipt_id IS NOT NULL;
  CREATE UNIQUE INDEX session_records_one_outcome ON session_records (parent_receipt_id)
    WHERE kind = 'outcome' AND parent_receipt_id IS NOT NULL;
  CREATE TRIGGER session_records_no_update BEFORE UPDATE ON session_records
    BEGIN SELECT RAISE(ABORT, 'session records are append-only'); END;
  CREATE TRIGGER session_records_no_delete BEFORE DELETE ON session_records
    BEGIN SELECT RAISE(ABORT, 'session records are append-only'); END;

  -- Derived counts, kept in the append transaction like the other aggregates.
  CREATE TABLE agent_sessions (
    scope             TEXT NOT NULL,
    session_id        TEXT NOT NULL,
    harness           TEXT NOT NULL,
    agent             TEXT,
    repository        TEXT,
    first_sequence    INTEGER NOT NULL UNIQUE,
    last_sequence     INTEGER NOT NULL,
    first_seen        TEXT NOT NULL,
    last_seen         TEXT NOT NULL,
    allowed           INTEGER NOT NULL,
    blocked           INTEGER NOT NULL,
    escalated         INTEGER NOT NULL,
    dispositions      INTEGER NOT NULL,
    outcomes          INTEGER NOT NULL,
    ran_without_allow INTEGER NOT NULL,
    unanswered        INTEGER NOT NULL,
    PRIMARY KEY (scope, session_id)
  ) STRICT;
  CREATE INDEX agent_sessions_recent ON agent_sessions (first_sequence);
  CREATE INDEX agent_sessions_session ON agent_sessions (session_id, first_sequence);
  CREATE INDEX agent_sessions_scope ON agent_sessions (scope, first_sequence);
`;

/**
 * The HEAD of the session's repository that an outcome reported (its claim's action.git_head),
 * indexed to find the sessions that made a pull request's commits. No earlier build recorded
 * one, so existing rows keep NULL.
 */
const SESSION_GIT_HEADS = `
  ALTER TABLE session_records ADD COLUMN git_head TEXT;
  CREATE INDEX session_records_git_head ON session_records (git_head, sequence)
    WHERE git_head IS NOT NULL;
`;

// Ordered, append-only list: migration i brings PRAGMA user_version from i to i + 1. A
// migration's text is frozen once released (existing ledgers ran it as it was), so a later
// one repeats the statements it needs rather than share them with an earlier one: sharing
// would let an edit for a new migration change an old one. For the same reason a migration
// holds its own statements rather than use the live stores' (sqlite-*.ts).
/**
 * An open approval is looked up on every tool call (services/agent-approvals.ts): among a
 * call's records only its dispositions, so a command repeated through a long session does not
 * lengthen the lookup.
 */
const SESSION_DISPOSITIONS_INDEX = `
  CREATE INDEX session_records_dispositions
    ON session_records (scope, session_id, tool_name, input_digest, sequence)
    WHERE kind = 'disposition';
`;

/**
 * The explorer's deployment pages list one environment's deployment receipts, and the
 * environments deployed to, newest first: each from a partial index on the receipt's own
 * subject (no column to fill, so existing receipts are indexed as they are, and the
 * append-only triggers are untouched). A query must spell the expressions as written here.
 */
const DEPLOYMENT_INDEXES = `
  CREATE INDEX receipts_deployments ON receipts (sequence)
    WHERE json_extract(receipt_json, '$.subject.action_type') = 'deployment';
  CREATE INDEX receipts_deployment_environment
    ON receipts (repository, json_extract(receipt_json, '$.subject.environment'), sequence)
    WHERE json_extract(receipt_json, '$.subject.action_type') = 'deployment';
`;

/**
 * Each policy config receipts were evaluated under, stored once (storage/sqlite/policy-configs.ts):
 * an appended receipt's evaluation names its config by `config_ref`. Receipts appended before
 * keep theirs inline and are read as they are. Append-only, as the receipts naming them. A
 * rowid table, so that its key has an index of its own: every append looks its config's ref
 * up, and in a WITHOUT ROWID table each key compared is read with its whole kilobytes of text.
 */
const POLICY_CONFIGS = `
  CREATE TABLE policy_configs (
    config_ref  TEXT PRIMARY KEY,
    config_json TEXT NOT NULL
  ) STRICT;
  CREATE TRIGGER policy_configs_no_update BEFORE UPDATE ON policy_configs
    BEGIN SELECT RAISE(ABORT, 'policy configs are append-only'); END;
  CREATE TRIGGER policy_configs_no_delete BEFORE DELETE ON policy_configs
    BEGIN SELECT RAISE(ABORT, 'policy configs are append-only'); END;
`;

// A harness's session start and end events (contract §12 leaves them open): when a session
// began and ended, as the harness said. Not receipts: nothing signs them, and they change no
// session's records or coverage. Append-only all the same.
const SESSION_EVENTS = `
  CREATE TABLE session_events (
    id          INTEGER PRIMARY KEY,
    scope       TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    harness     TEXT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('start', 'end')),
    at          TEXT NOT NULL,
    reason      TEXT
  ) STRICT;
  CREATE INDEX session_events_session ON session_events (scope, session_id, id);
  CREATE TRIGGER session_events_no_update BEFORE UPDATE ON session_events
    BEGIN SELECT RAISE(ABORT, 'session events are append-only'); END;
  CREATE TRIGGER session_events_no_delete BEFORE DELETE ON session_events
    BEGIN SELECT RAISE(ABORT, 'session events are append-only'); END;
`;

// A session start's working directory: the session's project directory, against which its
// tool calls are judged when a harness reports each call's own directory (Codex's `cwd`).
const SESSION_EVENT_CWD = `
  ALTER TABLE session_events ADD COLUMN cwd TEXT;
`;

const MIGRATIONS: Migration[] = [
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
  -- Each filter of the read API walks its own index in sequence order (docs/ARCHITECTURE.md).
  CREATE INDEX receipts_verdict ON receipts (verdict, sequence);
  CREATE INDEX receipts_admissibility ON receipts (admissibility, sequence);
  CREATE INDEX receipts_agent ON receipts (agent, sequence) WHERE agent IS NOT NULL;
  CREATE INDEX receipts_repository ON receipts (repository, sequence) WHERE repository IS NOT NULL;
  CREATE INDEX receipts_pull_request ON receipts (repository, pull_request, sequence)
    WHERE pull_request IS NOT NULL;
  CREATE INDEX receipts_issued_at ON receipts (issued_at, verdict);
  CREATE INDEX receipts_api_key ON receipts (api_key_id) WHERE api_key_id IS NOT NULL;

  -- Word search over claim text, entity, repository and agent; rowid = sequence.
  CREATE VIRTUAL TABLE receipts_fts USING fts5 (
    claim, entity, repository, agent, content = '', tokenize = 'unicode61 remove_diacritics 2'
  );

  -- Aggregates kept in the append transaction, so summaries never scan the ledger. They are
  -- derived data: every row can be recomputed from receipts.
  CREATE TABLE ledger_totals (
    verdict       TEXT NOT NULL,
    admissibility TEXT NOT NULL,
    n             INTEGER NOT NULL,
    PRIMARY KEY (verdict, admissibility)
  ) STRICT, WITHOUT ROWID;
  CREATE TABLE repository_stats (
    repository      TEXT PRIMARY KEY,
    total           INTEGER NOT NULL,
    allowed         INTEGER NOT NULL,
    blocked         INTEGER NOT NULL,
    escalated       INTEGER NOT NULL,
    accepted        INTEGER NOT NULL,
    non_deterministic INTEGER NOT NULL,
    rejected        INTEGER NOT NULL,
    last_sequence   INTEGER NOT NULL,
    last_receipt_id TEXT NOT NULL,
    last_issued_at  TEXT NOT NULL
  ) STRICT, WITHOUT ROWID;
  CREATE TABLE agent_stats (
    agent           TEXT PRIMARY KEY,
    total           INTEGER NOT NULL,
    allowed         INTEGER NOT NULL,
    blocked         INTEGER NOT NULL,
    escalated       INTEGER NOT NULL,
    accepted        INTEGER NOT NULL,
    non_deterministic INTEGER NOT NULL,
    rejected        INTEGER NOT NULL,
    first_seen      TEXT NOT NULL,
    last_seen       TEXT NOT NULL
  ) STRICT, WITHOUT ROWID;
  CREATE TABLE agent_models (
    agent TEXT NOT NULL,
    model TEXT NOT NULL,
    PRIMARY KEY (agent, model)
  ) STRICT, WITHOUT ROWID;
  CREATE TABLE daily_counts (
    day        TEXT NOT NULL,
    repository TEXT NOT NULL, -- '' for receipts without one
    verdict    TEXT NOT NULL,
    n          INTEGER NOT NULL,
    PRIMARY KEY (day, repository, verdict)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX daily_counts_repository ON daily_counts (repository, day);

  CREATE TABLE policies (
    name        TEXT PRIMARY KEY,
    description TEXT,
    config_json TEXT NOT NULL,
    api_key_id  TEXT,
    created_at  TEXT NOT NULL
  ) STRICT;
  CREATE TRIGGER policies_no_update BEFORE UPDATE ON policies
    BEGIN SELECT RAISE(ABORT, 'policies are immutable'); END;

  -- The ledger is append-only below the application too.
  CREATE TRIGGER receipts_no_update BEFORE UPDATE ON receipts
    BEGIN SELECT RAISE(ABORT, 'receipts are append-only'); END;
  CREATE TRIGGER receipts_no_delete BEFORE DELETE ON receipts
    BEGIN SELECT RAISE(ABORT, 'receipts are append-only'); END;
  -- INSERT OR REPLACE deletes the row it collides with without firing DELETE triggers (unless
  -- recursive_triggers is on), which would overwrite a receipt: refuse any colliding insert.
  CREATE TRIGGER receipts_no_replace BEFORE INSERT ON receipts
    WHEN EXISTS (SELECT 1 FROM receipts WHERE sequence = NEW.sequence)
      OR EXISTS (SELECT 1 FROM receipts WHERE receipt_id = NEW.receipt_id)
      OR EXISTS (SELECT 1 FROM receipts WHERE claim_id = NEW.claim_id)
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
  trustModel,
  `
  -- Durable jobs (src/storage/sqlite/sqlite-job-queue.ts). A job is claimed under BEGIN IMMEDIATE by
  -- setting a lease; a lease that ran out (its process died) may be taken over.
  CREATE TABLE jobs (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    name         TEXT NOT NULL,
    payload_json TEXT NOT NULL,
    dedupe_key   TEXT UNIQUE,
    state        TEXT NOT NULL CHECK (state IN ('pending', 'done', 'failed')),
    run_at       INTEGER NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    lease_owner  TEXT,
    lease_until  INTEGER,
    last_error   TEXT,
    created_at   INTEGER NOT NULL,
    finished_at  INTEGER
  ) STRICT;
  CREATE INDEX jobs_due ON jobs (run_at, id) WHERE state = 'pending';
  CREATE INDEX jobs_pending_age ON jobs (name, created_at) WHERE state = 'pending';

  CREATE TABLE webhook_receivers (
    id              TEXT PRIMARY KEY,
    owner           TEXT NOT NULL,
    url             TEXT NOT NULL,
    event           TEXT NOT NULL,
    secret_sealed   TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('active', 'disabled', 'deleted')),
    created_at      TEXT NOT NULL,
    disabled_at     TEXT,
    disabled_reason TEXT
  ) STRICT;
  CREATE INDEX webhook_receivers_owner ON webhook_receivers (owner, created_at)
    WHERE status <> 'deleted';
  CREATE INDEX webhook_receivers_active ON webhook_receivers (event) WHERE status = 'active';

  -- Written in the receipt's append transaction: this table is the webhook outbox.
  CREATE TABLE webhook_deliveries (
    id          TEXT PRIMARY KEY,
    receiver_id TEXT NOT NULL REFERENCES webhook_receivers (id),
    receipt_id  TEXT NOT NULL REFERENCES receipts (receipt_id),
    event       TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts    INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL,
    finished_at TEXT
  ) STRICT;
  CREATE INDEX webhook_deliveries_receiver ON webhook_deliveries (receiver_id, created_at);

  CREATE TABLE webhook_attempts (
    delivery_id     TEXT NOT NULL REFERENCES webhook_deliveries (id),
    attempt         INTEGER NOT NULL,
    at              TEXT NOT NULL,
    status_code     INTEGER,
    error           TEXT,
    duration_ms     INTEGER NOT NULL,
    next_attempt_at TEXT,
    PRIMARY KEY (delivery_id, attempt)
  ) STRICT;
  `,
  `
  -- Finished jobs are deleted by age (JobQueueOptions.retentionMs); pending ones have no
  -- finished_at and stay out of the index.
  CREATE INDEX jobs_finished ON jobs (finished_at) WHERE finished_at IS NOT NULL;
  `,
  prefixIndexes,
  logTree,
  scopedReads,
  // The signing-key history starts empty: the server adopts the keys of existing receipts at
  // its next start (services/signing-keys.ts), where it knows its own public key.
  SIGNING_KEYS_SCHEMA,
  COSIGNATURES_SCHEMA,
  DISPOSITIONS_SCHEMA,
  DROP_OUTBOX,
  SIGNED_REVOCATIONS_SCHEMA,
  REVIEWER_KEYS,
  AGENT_SESSIONS_SCHEMA,
  SESSION_DISPOSITIONS_INDEX,
  SESSION_GIT_HEADS,
  DEPLOYMENT_INDEXES,
  POLICY_CONFIGS,
  SESSION_EVENTS,
  SESSION_EVENT_CWD,
];

/** The schema version this build writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** The schema version a named migration brings a ledger to (upgrade tests). */
export const VERSION_AFTER = {
  prefixIndexes: MIGRATIONS.indexOf(prefixIndexes) + 1,
  logTree: MIGRATIONS.indexOf(logTree) + 1,
  scopedReads: MIGRATIONS.indexOf(scopedReads) + 1,
  signingKeys: MIGRATIONS.indexOf(SIGNING_KEYS_SCHEMA) + 1,
  cosignatures: MIGRATIONS.indexOf(COSIGNATURES_SCHEMA) + 1,
  dispositions: MIGRATIONS.indexOf(DISPOSITIONS_SCHEMA) + 1,
  dropOutbox: MIGRATIONS.indexOf(DROP_OUTBOX) + 1,
  signedRevocations: MIGRATIONS.indexOf(SIGNED_REVOCATIONS_SCHEMA) + 1,
  reviewerKeys: MIGRATIONS.indexOf(REVIEWER_KEYS) + 1,
  agentSessions: MIGRATIONS.indexOf(AGENT_SESSIONS_SCHEMA) + 1,
  sessionGitHeads: MIGRATIONS.indexOf(SESSION_GIT_HEADS) + 1,
  deploymentIndexes: MIGRATIONS.indexOf(DEPLOYMENT_INDEXES) + 1,
  policyConfigs: MIGRATIONS.indexOf(POLICY_CONFIGS) + 1,
  sessionEvents: MIGRATIONS.indexOf(SESSION_EVENTS) + 1,
  sessionEventCwd: MIGRATIONS.indexOf(SESSION_EVENT_CWD) + 1,
} as const;

/**
 * Brings the schema to `target` (default: this build's version). A lower target leaves the
 * ledger as an earlier build would have, to test the upgrade from it.
 */
export function migrate(db: Database, target = SCHEMA_VERSION): void {
  const version = () => db.pragma('user_version', { simple: true }) as number;
  const current = version();
  if (current > MIGRATIONS.length) {
    throw new Error(
      `ledger schema version ${current} is newer than this build understands (${MIGRATIONS.length})`,
    );
  }
  if (current >= target) return;
  // Rebuilding a table that others reference needs foreign keys off (a no-op inside a
  // transaction), with the references checked before each commit instead.
  const foreignKeys = db.pragma('foreign_keys', { simple: true }) as number;
  db.pragma('foreign_keys = OFF');
  db.pragma('secure_delete = ON');
  try {
    for (let next = current; next < target; next++) {
      db.transaction(() => {
        // Read again under the write lock: another process opening the same file may have
        // applied this migration since the read above, and running it twice would fail.
        if (version() > next) return;
        const migration = MIGRATIONS[next]!;
        if (typeof migration === 'string') db.exec(migration);
        else migration(db);
        const broken = db.pragma('foreign_key_check') as unknown[];
        if (broken.length > 0) throw new Error(`migration ${next + 1} broke foreign keys`);
        db.pragma(`user_version = ${next + 1}`);
      }).immediate();
    }
  } finally {
    db.pragma(`foreign_keys = ${foreignKeys ? 'ON' : 'OFF'}`);
  }
}
