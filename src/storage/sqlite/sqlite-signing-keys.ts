import type { Database } from 'better-sqlite3';
import type { SigningKeyRecord, SigningKeyStatus } from '@svc/verify';
import { extendKeyRuns, type KeyRun } from '../../core/key-history.js';
import type {
  SigningKeyChange,
  SigningKeyState,
  SigningKeyStore,
} from '../../ports/signing-key-store.js';

interface Row {
  key_id: string;
  public_key_pem: string | null;
  verifier_key: string | null;
  status: string;
  first_sequence: number;
  last_sequence: number | null;
  activated_at: string;
  retired_at: string | null;
  revoked_from_sequence: number | null;
  revoked_at: string | null;
  transition_json: string | null;
  /** Absent on a ledger from before signed revocations until its migration runs. */
  revocation_json?: string | null;
}

const toRecord = (row: Row): SigningKeyRecord => ({
  key_id: row.key_id,
  public_key_pem: row.public_key_pem,
  verifier_key: row.verifier_key,
  status: row.status as SigningKeyStatus,
  first_sequence: row.first_sequence,
  last_sequence: row.last_sequence,
  activated_at: row.activated_at,
  retired_at: row.retired_at,
  revoked_from_sequence: row.revoked_from_sequence,
  revoked_at: row.revoked_at,
  transition: row.transition_json === null ? null : JSON.parse(row.transition_json),
  revocation: row.revocation_json ? JSON.parse(row.revocation_json) : null,
});

/** The history in the ledger's file; every change runs under BEGIN IMMEDIATE with the head. */
function prepare(db: Database) {
  return {
    all: db.prepare<[], Row>('SELECT * FROM signing_keys ORDER BY first_sequence, rowid'),
    head: db.prepare<[], { n: number | null }>('SELECT MAX(sequence) AS n FROM receipts'),
    runs: db.prepare<[], { sequence: number; key_id: string | null; issued_at: string }>(
      "SELECT sequence, json_extract(receipt_json, '$.attestations[0].key_id') AS key_id, issued_at FROM receipts ORDER BY sequence",
    ),
    insert: db.prepare(`
      INSERT INTO signing_keys (key_id, public_key_pem, verifier_key, status, first_sequence,
        last_sequence, activated_at, retired_at, revoked_from_sequence, revoked_at, transition_json)
      VALUES (@key_id, @public_key_pem, @verifier_key, @status, @first_sequence, @last_sequence,
        @activated_at, @retired_at, @revoked_from_sequence, @revoked_at, @transition_json)`),
    retire: db.prepare(`
      UPDATE signing_keys SET last_sequence = @last_sequence, retired_at = @retired_at,
        status = CASE status WHEN 'current' THEN 'retired' ELSE status END
      WHERE key_id = @key_id`),
    revoke: db.prepare(`
      UPDATE signing_keys SET status = 'revoked', revoked_from_sequence = @revoked_from_sequence,
        revoked_at = @revoked_at, revocation_json = @revocation_json WHERE key_id = @key_id`),
    current: db.prepare<[], { key_id: string }>(
      "SELECT key_id FROM signing_keys WHERE status = 'current'",
    ),
    any: db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM signing_keys'),
  };
}

/** The history in the ledger's file; every change runs under BEGIN IMMEDIATE with the head. */
export class SqliteSigningKeys implements SigningKeyStore {
  // Prepared on first use: a file opened read-only may predate the table.
  private statements?: ReturnType<typeof prepare>;

  constructor(private readonly db: Database) {}

  private get q() {
    return (this.statements ??= prepare(this.db));
  }

  listNow(): SigningKeyRecord[] {
    return this.q.all.all().map(toRecord);
  }

  async list(): Promise<SigningKeyRecord[]> {
    return this.listNow();
  }

  /**
   * Why an append signed by `keyId` must be refused, or null. Runs inside the append's
   * transaction: after a rotation, a process still holding the old key signs nothing more.
   */
  signerProblem(keyId: string | undefined): string | null {
    if (this.q.any.get()!.n === 0) return null;
    const current = this.q.current.get()?.key_id;
    if (current === keyId) return null;
    return current === undefined
      ? 'the ledger has no current signing key (it was revoked): rotate it (svc signing-key rotate) and restart the service'
      : `the signing key was rotated: this process signs with ${keyId ?? 'no key'}, the ledger's current key is ${current}; restart the service to sign with it`;
  }

  async change(decide: (state: SigningKeyState) => SigningKeyChange): Promise<SigningKeyRecord[]> {
    const run = this.db.transaction(() => {
      const state: SigningKeyState = {
        history: this.listNow(),
        head: this.q.head.get()?.n ?? 0,
        receiptKeyRuns: () => {
          const runs: KeyRun[] = [];
          for (const row of this.q.runs.iterate()) {
            extendKeyRuns(runs, { ...row, key_id: row.key_id ?? '' });
          }
          return runs;
        },
      };
      const change = decide(state);
      // The triggers refuse a disallowed transition of a key; one naming no key is refused
      // here, as the MongoDB store refuses an update that matches nothing.
      if (change.retire && this.q.retire.run(change.retire).changes !== 1)
        throw new Error(
          `signing keys: retiring ${change.retire.key_id} is not an allowed transition`,
        );
      if (
        change.revoke &&
        this.q.revoke.run({
          key_id: change.revoke.key_id,
          revoked_from_sequence: change.revoke.revoked_from_sequence,
          revoked_at: change.revoke.revoked_at,
          revocation_json: JSON.stringify(change.revoke.revocation),
        }).changes !== 1
      )
        throw new Error(
          `signing keys: revoking ${change.revoke.key_id} is not an allowed transition`,
        );
      for (const record of change.insert ?? []) {
        // A key is inserted unrevoked: its revocation, if any, comes later through `revoke`.
        const { revocation, ...columns } = record;
        if (revocation) throw new Error('signing keys: a key is inserted without a revocation');
        this.q.insert.run({
          ...columns,
          transition_json: record.transition === null ? null : JSON.stringify(record.transition),
        });
      }
      return this.listNow();
    });
    return run.immediate();
  }
}
