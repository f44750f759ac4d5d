import type { Database, Statement } from 'better-sqlite3';
import { SvcError } from '../../core/errors.js';
import { extendsHead, type ChainHead } from '../../core/receipt.js';
import type {
  AppendRequest,
  AppendResult,
  LedgerEntry,
  LedgerStats,
  LedgerStore,
  VerificationHashes,
} from '../../ports/ledger-store.js';
import { storedReceiptFields } from '../mappers.js';
import { ENTRY_COLUMNS, sqliteEntryReader, type ReceiptRow } from './receipt-rows.js';
import { SqliteAggregates } from './sqlite-aggregates.js';
import { SqliteLogTree } from './sqlite-log-tree.js';
import { SqliteSigningKeys } from './sqlite-signing-keys.js';
import type { SqliteLedgerQueries } from './sqlite-ledger-queries.js';
import { SqliteWebhookFanOut } from './sqlite-webhooks.js';
import { SqliteSessions } from './sqlite-sessions.js';
import { policyConfigsOf, type SqlitePolicyConfigs } from './policy-configs.js';
import { DEFAULT_APPROVAL_TTL_MS } from '../../core/approval.js';

type Outcome = { result: AppendResult } | { error: unknown };

interface Pending {
  request: AppendRequest;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

// Bounds one transaction's length, so a burst cannot hold the write lock for long.
export const MAX_BATCH = 256;

export class SqliteLedger implements LedgerStore {
  private readonly byClaim: Statement<[string, string], ReceiptRow>;
  private readonly byReceipt: Statement<[string], ReceiptRow>;
  private readonly dispositionOf: Statement<[string], ReceiptRow>;
  private readonly insertDisposition: Statement;
  private readonly scopeOfReceipt: Statement<[string], { scope: string }>;
  private readonly countDecisions: Statement<[string], { n: number }>;
  private readonly countScopeDecisions: Statement<[string, string], { n: number }>;
  private readonly hashByReceipt: Statement<[string], { receipt_hash: string }>;
  private readonly hashBySequence: Statement<[number], { receipt_hash: string }>;
  private readonly hashesForVerify: Statement<
    [number | null, string | null],
    { receipt_hash: string | null; sequence: number | null; previous_hash: string | null }
  >;
  private readonly headRow: Statement<[], { sequence: number; receipt_hash: string }>;
  private readonly listRows: Statement<[number, number], ReceiptRow>;
  private readonly agentNames: Statement<[], { v: string }>;
  private readonly repositoryNames: Statement<[], { v: string }>;
  private readonly scopeAgentNames: Statement<[string], { v: string }>;
  private readonly scopeRepositoryNames: Statement<[string], { v: string }>;
  private readonly countKeyRows: Statement<[string], { n: number }>;
  private readonly insert: Statement;
  private readonly commitBatch: (requests: AppendRequest[]) => Outcome[];
  private readonly aggregates: SqliteAggregates;
  readonly tree: SqliteLogTree;
  readonly signingKeys: SqliteSigningKeys;
  readonly sessions: SqliteSessions;
  private readonly webhooks: SqliteWebhookFanOut;
  private queue: Pending[] = [];
  private flushScheduled = false;
  private readonly toEntry: (row: ReceiptRow) => LedgerEntry;
  private readonly configs: SqlitePolicyConfigs;

  constructor(
    private readonly db: Database,
    private readonly queries: SqliteLedgerQueries,
    fanOut: 'all' | 'owner' = 'all',
    private readonly onGroupCommit?: (appends: number) => void,
    approvalTtlMs = DEFAULT_APPROVAL_TTL_MS,
  ) {
    this.toEntry = sqliteEntryReader(db);
    this.configs = policyConfigsOf(db);
    this.byClaim = db.prepare(
      `SELECT ${ENTRY_COLUMNS} FROM receipts WHERE scope = ? AND claim_id = ?`,
    );
    this.byReceipt = db.prepare(`SELECT ${ENTRY_COLUMNS} FROM receipts WHERE receipt_id = ?`);
    this.dispositionOf = db.prepare(
      `SELECT ${ENTRY_COLUMNS} FROM dispositions d JOIN receipts r ON r.sequence = d.sequence
        WHERE d.parent_receipt_id = ?`,
    );
    this.insertDisposition = db.prepare(
      'INSERT INTO dispositions (parent_receipt_id, sequence, parent_scope, decision) VALUES (?, ?, ?, ?)',
    );
    this.scopeOfReceipt = db.prepare('SELECT scope FROM receipts WHERE receipt_id = ?');
    this.countDecisions = db.prepare('SELECT COUNT(*) AS n FROM dispositions WHERE decision = ?');
    this.countScopeDecisions = db.prepare(
      'SELECT COUNT(*) AS n FROM dispositions WHERE parent_scope = ? AND decision = ?',
    );
    this.hashByReceipt = db.prepare('SELECT receipt_hash FROM receipts WHERE receipt_id = ?');
    this.hashBySequence = db.prepare('SELECT receipt_hash FROM receipts WHERE sequence = ?');
    // One row whatever matches: the receipt by its unique id, the previous one by sequence.
    this.hashesForVerify = db.prepare(
      `SELECT r.receipt_hash, r.sequence,
         (SELECT receipt_hash FROM receipts WHERE sequence = ?) AS previous_hash
       FROM (SELECT ? AS id) AS q LEFT JOIN receipts r ON r.receipt_id = q.id`,
    );
    this.headRow = db.prepare(
      'SELECT sequence, receipt_hash FROM receipts ORDER BY sequence DESC LIMIT 1',
    );
    this.listRows = db.prepare(
      `SELECT ${ENTRY_COLUMNS} FROM receipts WHERE sequence > ? ORDER BY sequence LIMIT ?`,
    );
    this.agentNames = db.prepare('SELECT agent AS v FROM agent_stats ORDER BY agent');
    this.repositoryNames = db.prepare(
      'SELECT repository AS v FROM repository_stats ORDER BY repository',
    );
    this.scopeAgentNames = db.prepare(
      'SELECT agent AS v FROM scope_agent_stats WHERE scope = ? ORDER BY agent',
    );
    this.scopeRepositoryNames = db.prepare(
      'SELECT repository AS v FROM scope_repository_stats WHERE scope = ? ORDER BY repository',
    );
    this.countKeyRows = db.prepare('SELECT COUNT(*) AS n FROM receipts WHERE api_key_id = ?');
    this.insert = db.prepare(`
      INSERT INTO receipts (sequence, receipt_id, claim_id, scope, inputs_hash, receipt_hash,
        issued_at, verdict, admissibility, entity, agent, repository, pull_request, api_key_id,
        receipt_json, claim_json, evaluation_json)
      VALUES (@sequence, @receipt_id, @claim_id, @scope, @inputs_hash, @receipt_hash, @issued_at,
        @verdict, @admissibility, @entity, @agent, @repository, @pull_request, @api_key_id,
        @receipt_json, @claim_json, @evaluation_json)`);
    this.aggregates = new SqliteAggregates(db);
    this.tree = new SqliteLogTree(db);
    this.signingKeys = new SqliteSigningKeys(db);
    this.sessions = new SqliteSessions(db, approvalTtlMs);
    this.webhooks = new SqliteWebhookFanOut(db, fanOut);
    // Inside the batch transaction each append is its own savepoint: one failing request
    // rolls back alone, and the others still commit.
    const one = db.transaction((request: AppendRequest) => this.appendLocked(request));
    const batch = db.transaction((requests: AppendRequest[]) => {
      const outcomes = requests.map((request): Outcome => {
        try {
          const result = one(request);
          // Counted once its savepoint is released: a rolled-back append is not.
          if (result.status === 'appended') this.aggregates.count(result.entry, request.scope);
          return { result };
        } catch (error) {
          return { error };
        }
      });
      this.aggregates.flush();
      return outcomes;
    });
    // IMMEDIATE takes the write lock before reading the head, so no other connection or
    // process can append between the read and the insert: sequences stay gap-free.
    this.commitBatch = (requests) => batch.immediate(requests);
  }

  /**
   * Group commit: appends arriving while the event loop is busy are written in one
   * transaction, so they share one WAL sync. Each promise settles only after that commit
   * returned, so no receipt is acknowledged before it is durable.
   */
  append(request: AppendRequest): Promise<AppendResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    const batch = this.queue.splice(0, MAX_BATCH);
    if (this.queue.length > 0) setImmediate(() => this.flush());
    else this.flushScheduled = false;
    let outcomes: Outcome[];
    try {
      outcomes = this.commitBatch(batch.map((p) => p.request));
    } catch (error) {
      // The commit itself failed: nothing of the batch is in the ledger.
      for (const pending of batch) pending.reject(error);
      return;
    }
    this.onGroupCommit?.(batch.length);
    outcomes.forEach((outcome, i) => {
      if ('error' in outcome) batch[i]!.reject(outcome.error);
      else batch[i]!.resolve(outcome.result);
    });
  }

  private appendLocked(request: AppendRequest): AppendResult {
    const existing = this.byClaim.get(request.scope, request.claimId);
    if (existing) return { status: 'exists', entry: this.toEntry(existing) };
    // Under the write lock: a parent's disposition appended by any scope or process is seen.
    const disposed =
      request.parentReceiptId === undefined
        ? undefined
        : this.dispositionOf.get(request.parentReceiptId);
    if (disposed) return { status: 'exists', entry: this.toEntry(disposed) };
    const head = this.readHead();
    const { entry, receiptHashText } = request.build(head);
    const { receipt } = entry;
    if (!extendsHead(receipt, head, request.claimId)) {
      throw new Error('append: built entry does not extend the ledger head');
    }
    // Under the write lock with the rotation's boundary: a process still holding a key the
    // history retired signs no receipt past that key's last sequence.
    const signerProblem = this.signingKeys.signerProblem(receipt.attestations[0]?.key_id);
    if (signerProblem) throw new SvcError('unavailable', signerProblem);
    this.insert.run(
      storedReceiptFields(entry, request.scope, this.configs.store(entry.evaluation.config)),
    );
    if (receipt.disposition) {
      if (receipt.disposition.parent_receipt_id !== request.parentReceiptId)
        throw new Error('append: a disposition names a parent the request does not');
      const parent = this.scopeOfReceipt.get(receipt.disposition.parent_receipt_id);
      if (!parent) throw new Error('append: a disposition of a receipt the ledger does not hold');
      this.insertDisposition.run(
        receipt.disposition.parent_receipt_id,
        receipt.chain.sequence,
        parent.scope,
        receipt.disposition.decision,
      );
    }
    this.aggregates.index(entry);
    // In this transaction: a tool call's session row, and the one use of the approval it cites.
    this.sessions.record(entry, request.scope);
    // In this transaction, so every acknowledged receipt is a leaf of the log's tree.
    this.tree.record(receipt, receiptHashText);
    // In this transaction, so a receipt never exists without its webhook deliveries.
    this.webhooks.receiptCreated(receipt.receipt_id, receipt.issued_at, entry.apiKeyId);
    return { status: 'appended', entry };
  }

  private readHead(): ChainHead {
    const row = this.headRow.get();
    return row
      ? { sequence: row.sequence, receipt_hash: row.receipt_hash }
      : { sequence: 0, receipt_hash: null };
  }

  async head(): Promise<ChainHead> {
    return this.readHead();
  }

  async getByReceiptId(receiptId: string): Promise<LedgerEntry | null> {
    const row = this.byReceipt.get(receiptId);
    return row ? this.toEntry(row) : null;
  }

  async getByClaimId(scope: string, claimId: string): Promise<LedgerEntry | null> {
    const row = this.byClaim.get(scope, claimId);
    return row ? this.toEntry(row) : null;
  }

  async dispositionsOf(parentReceiptIds: string[]): Promise<LedgerEntry[]> {
    if (parentReceiptIds.length === 0) return [];
    const ids = [...new Set(parentReceiptIds)];
    return this.db
      .prepare<string[], ReceiptRow>(
        `SELECT ${ENTRY_COLUMNS} FROM dispositions d JOIN receipts r ON r.sequence = d.sequence
          WHERE d.parent_receipt_id IN (${ids.map(() => '?').join(', ')}) ORDER BY d.sequence`,
      )
      .all(...ids)
      .map(this.toEntry);
  }

  async dispositionCounts(scope?: string): Promise<{ approve: number; reject: number }> {
    // One index range per decision: no scan, whatever the ledger's size.
    const count = (decision: 'approve' | 'reject') =>
      (scope === undefined
        ? this.countDecisions.get(decision)
        : this.countScopeDecisions.get(scope, decision)
      )?.n ?? 0;
    return { approve: count('approve'), reject: count('reject') };
  }

  async receiptHashOf(receiptId: string): Promise<string | null> {
    return this.hashByReceipt.get(receiptId)?.receipt_hash ?? null;
  }

  async receiptHashAt(sequence: number): Promise<string | null> {
    return this.hashBySequence.get(sequence)?.receipt_hash ?? null;
  }

  async verificationHashes(
    receiptId: string | null,
    previousSequence: number | null,
  ): Promise<VerificationHashes> {
    const row = this.hashesForVerify.get(previousSequence, receiptId)!;
    return {
      receiptHash: row.receipt_hash,
      sequence: row.sequence,
      previousHash: row.previous_hash,
    };
  }

  async list(after: number, limit: number): Promise<LedgerEntry[]> {
    return this.listRows.all(after, limit).map(this.toEntry);
  }

  async stats(scope?: string): Promise<LedgerStats> {
    const totals = await this.queries.totals(scope);
    const names = (rows: { v: string }[]) => rows.map((row) => row.v);
    return {
      total: totals.total,
      by_verdict: totals.by_verdict,
      by_admissibility: totals.by_admissibility,
      agents: names(scope === undefined ? this.agentNames.all() : this.scopeAgentNames.all(scope)),
      repositories: names(
        scope === undefined ? this.repositoryNames.all() : this.scopeRepositoryNames.all(scope),
      ),
    };
  }

  async countByApiKey(apiKeyId: string): Promise<number> {
    return this.countKeyRows.get(apiKeyId)?.n ?? 0;
  }
}
