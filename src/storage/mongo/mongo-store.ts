import { MongoClient, type Db, type IndexDescription } from 'mongodb';
import { AgendaJobQueue } from './agenda-job-queue.js';
import type { Store } from '../../ports/store.js';
import { backfillScopedAggregates } from './aggregates.js';
import { MissingLedgerError } from '../missing-ledger.js';
import { COLLECTIONS } from './documents.js';
import { MongoApiKeys } from './mongo-api-keys.js';
import { MongoLedger } from './mongo-ledger.js';
import { MongoLedgerQueries } from './mongo-ledger-queries.js';
import { MongoLogTree } from './mongo-log-tree.js';
import { MongoPolicies } from './mongo-policies.js';
import { MongoSigningKeys } from './mongo-signing-keys.js';
import { MongoWindowLimiter } from './mongo-rate-limiter.js';
import { MongoWebhooks } from './mongo-webhooks.js';
import { MongoSessions, SESSION_INDEXES } from './mongo-sessions.js';
import { DEFAULT_APPROVAL_TTL_MS } from '../../core/approval.js';

export interface MongoStoreOptions {
  /** Database name; default: the one in the URI, else `svc`. */
  database?: string;
  /** How long to wait for a reachable server before failing (default 10 s). */
  serverSelectionTimeoutMS?: number;
  /**
   * 'all' (default): every receiver gets every receipt, the ledger being public to read;
   * 'owner': a receiver gets only its own account's receipts (SVC_PUBLIC_READS=false).
   */
  webhookScope?: 'all' | 'owner';
  /** Reports errors of the background job queue (agenda). */
  onJobQueueError?: (error: unknown) => void;
  /** Refuse (MissingLedgerError) a database without a ledger, instead of setting one up. */
  mustExist?: boolean;
  /** How long an approval of a tool call lasts (SVC_AGENT_APPROVAL_TTL); default 1 h. */
  approvalTtlMs?: number;
}

/**
 * Every index the store relies on, per collection. Created at start with createIndexes, which
 * does nothing for an index that exists with the same definition, so every instance may run it.
 */
export const INDEXES: Record<string, IndexDescription[]> = {
  [COLLECTIONS.receipts]: [
    // The chain's guard: two instances can never both store one position.
    { key: { sequence: 1 }, name: 'sequence_unique', unique: true },
    { key: { receipt_id: 1 }, name: 'receipt_id_unique', unique: true },
    // claim_id is unique per submitter scope (contract §7), not globally.
    { key: { scope: 1, claim_id: 1 }, name: 'scope_claim_id_unique', unique: true },
    { key: { verdict: 1, sequence: 1 }, name: 'verdict_sequence' },
    { key: { admissibility: 1, sequence: 1 }, name: 'admissibility_sequence' },
    { key: { agent: 1, sequence: 1 }, name: 'agent_sequence' },
    { key: { repository: 1, sequence: 1 }, name: 'repository_sequence' },
    { key: { repository: 1, pull_request: 1, sequence: 1 }, name: 'pull_request_sequence' },
    {
      key: { repository: 1, pull_request: 1, scope: 1, sequence: -1 },
      name: 'pull_request_scope_sequence',
    },
    { key: { issued_at: 1 }, name: 'issued_at' },
    // Private reads: one submitter scope's receipts, by sequence or by time.
    { key: { scope: 1, sequence: 1 }, name: 'scope_sequence' },
    { key: { scope: 1, issued_at: 1 }, name: 'scope_issued_at' },
    { key: { api_key_id: 1 }, name: 'api_key_id' },
    // The word index behind `q` (see receipt-query.ts for why not a $text index).
    { key: { words: 1, sequence: 1 }, name: 'words_sequence' },
    // The explorer's deployment pages: deployment receipts, and one environment's.
    {
      key: { sequence: -1 },
      name: 'deployments_sequence',
      partialFilterExpression: { deployment_environment: { $exists: true } },
    },
    {
      key: { repository: 1, deployment_environment: 1, sequence: 1 },
      name: 'repository_deployment_environment_sequence',
      partialFilterExpression: { deployment_environment: { $exists: true } },
    },
  ],
  // A parent has at most one disposition (contract §11), whichever instance appends it.
  [COLLECTIONS.dispositions]: [
    { key: { parent_receipt_id: 1 }, name: 'parent_receipt_id_unique', unique: true },
    { key: { decision: 1 }, name: 'decision' },
    { key: { parent_scope: 1, decision: 1 }, name: 'parent_scope_decision' },
  ],
  [COLLECTIONS.daily]: [{ key: { day: 1, repository: 1 }, name: 'day_repository' }],
  [COLLECTIONS.scopeTotals]: [{ key: { scope: 1 }, name: 'scope' }],
  [COLLECTIONS.scopeRepositories]: [{ key: { scope: 1, repository: 1 }, name: 'scope_repository' }],
  [COLLECTIONS.scopeAgents]: [{ key: { scope: 1, agent: 1 }, name: 'scope_agent' }],
  [COLLECTIONS.scopeDaily]: [
    { key: { scope: 1, day: 1, repository: 1 }, name: 'scope_day_repository' },
  ],
  [COLLECTIONS.apiKeys]: [
    { key: { key_digest: 1 }, name: 'key_digest_unique', unique: true },
    // One active key per email; revoked keys keep their email and do not count.
    {
      key: { email: 1 },
      name: 'email_active_unique',
      unique: true,
      partialFilterExpression: { active: true },
    },
    { key: { email: 1, created_at: 1 }, name: 'email' },
    { key: { created_at: 1, _id: 1 }, name: 'created_at' },
  ],
  [COLLECTIONS.policies]: [
    // owner null is the shared namespace.
    { key: { owner: 1, name: 1 }, name: 'owner_name_unique', unique: true },
    { key: { name: 1, owner: 1 }, name: 'name_owner' },
  ],
  [COLLECTIONS.receivers]: [
    { key: { owner: 1, status: 1, created_at: 1 }, name: 'owner_status' },
    { key: { status: 1, event: 1, created_at: 1 }, name: 'active' },
    { key: { owner: 1, event: 1, status: 1, created_at: 1 }, name: 'active_owned' },
  ],
  [COLLECTIONS.deliveries]: [
    { key: { receiver_id: 1, created_at: -1, sequence: -1 }, name: 'receiver_newest' },
    { key: { receiver_id: 1, status: 1 }, name: 'receiver_status' },
  ],
  [COLLECTIONS.attempts]: [
    { key: { delivery_id: 1, attempt: 1 }, name: 'delivery_attempt_unique', unique: true },
  ],
  [COLLECTIONS.jobs]: [
    // agenda's own lookup index (created here, so agenda's connect has nothing to create).
    {
      key: { name: 1, nextRunAt: 1, priority: -1, lockedAt: 1, disabled: 1 },
      name: 'findAndLockNextJobIndex',
    },
    {
      key: { 'svc.dedupeKey': 1 },
      name: 'dedupe_key_unique',
      unique: true,
      partialFilterExpression: { 'svc.dedupeKey': { $type: 'string' } },
    },
    { key: { 'svc.state': 1, name: 1, 'svc.createdAt': 1 }, name: 'state_name_created' },
    // The purge of finished jobs: state in (done, failed) and finishedAt before the cutoff.
    { key: { 'svc.state': 1, 'svc.finishedAt': 1 }, name: 'state_finished' },
  ],
  // The newest leaf, where a backfill of the log's tree resumes.
  [COLLECTIONS.treeHashes]: [{ key: { level: 1, index: 1 }, name: 'level_index' }],
  // What a witness cosigned last: the old size of its next add-checkpoint call.
  [COLLECTIONS.cosignatures]: [{ key: { witness: 1, size: -1 }, name: 'witness_size' }],
  // One current key at most; the history is read by first_sequence.
  [COLLECTIONS.signingKeys]: [
    { key: { first_sequence: 1, activated_at: 1 }, name: 'first_sequence' },
    {
      key: { status: 1 },
      name: 'one_current',
      unique: true,
      partialFilterExpression: { status: 'current' },
    },
  ],
  // Agent sessions (contract §12): their records and counts, and the guards of approvals.
  ...SESSION_INDEXES,
  // Idle clients' windows leave once their newest request has left the window.
  [COLLECTIONS.rateWindows]: [
    { key: { expires_at: 1 }, name: 'expires_at_ttl', expireAfterSeconds: 0 },
  ],
};

/**
 * Creates every collection and index (idempotent). Collections are created here, outside any
 * transaction, because a transaction may create one only under restrictions (read concern
 * "local"), and the ledger's transactions read at "snapshot".
 */
/** Whether the service has set the database up: its receipts collection exists. */
async function holdsLedger(db: Db): Promise<boolean> {
  const found = await db
    .listCollections({ name: COLLECTIONS.receipts }, { nameOnly: true })
    .toArray();
  return found.length > 0;
}

export async function ensureIndexes(db: Db): Promise<void> {
  const existing = new Set(
    (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name),
  );
  for (const collection of Object.values(COLLECTIONS)) {
    if (existing.has(collection)) continue;
    try {
      await db.createCollection(collection);
    } catch (error) {
      // Another instance created it first (NamespaceExists).
      if ((error as { code?: unknown }).code !== 48) throw error;
    }
  }
  for (const [collection, indexes] of Object.entries(INDEXES)) {
    await db.collection(collection).createIndexes(indexes);
  }
}

// The database named in the URI's path, if any: mongodb://host/name?options.
function databaseInUri(uri: string): string | undefined {
  const name = /^mongodb(?:\+srv)?:\/\/[^/?]*\/([^?]*)/.exec(uri)?.[1];
  return name ? decodeURIComponent(name) : undefined;
}

// Bounds how long a probe write waits for a majority, so an unreachable majority ends it.
const PROBE_WRITE_TIMEOUT_MS = 5000;

/**
 * Opens the store on a MongoDB deployment. It must be a replica set (a single node is
 * enough): appends, key rotations and webhook registrations are multi-document transactions.
 * Connects first (failing within serverSelectionTimeoutMS when no server answers), then
 * creates the indexes.
 */
export async function openMongoStore(uri: string, options: MongoStoreOptions = {}): Promise<Store> {
  const client = new MongoClient(uri, {
    serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 10_000,
    appName: 'svc',
  });
  await client.connect();
  try {
    const db = client.db(options.database ?? databaseInUri(uri) ?? 'svc');
    // Refused at start, not at the first append: a standalone server runs no transactions.
    const hello = await db.command({ hello: 1 });
    if (hello.setName === undefined && hello.msg !== 'isdbgrid') {
      throw new Error(
        'MongoDB is a standalone server; svc needs a replica set (one node is enough): start mongod with --replSet rs0, run rs.initiate() once, and add replicaSet=rs0 to MONGODB_URI',
      );
    }
    if (options.mustExist && !(await holdsLedger(db))) {
      throw new MissingLedgerError(
        `no ledger in the MongoDB database "${db.databaseName}" (it has no ${COLLECTIONS.receipts} collection): the service creates it when it first starts; set MONGODB_URI (and MONGODB_DATABASE) to the database the service uses`,
      );
    }
    await ensureIndexes(db);
    await backfillScopedAggregates(db);
    const queries = new MongoLedgerQueries(db);
    const tree = new MongoLogTree(db);
    // Receipts appended before the tree existed become its first leaves before any append.
    await tree.backfill();
    const signingKeys = new MongoSigningKeys(client, db);
    const sessions = new MongoSessions(db, options.approvalTtlMs ?? DEFAULT_APPROVAL_TTL_MS);
    let closed = false;
    return {
      kind: 'mongodb',
      ledger: new MongoLedger(
        client,
        db,
        queries,
        tree,
        signingKeys,
        options.webhookScope,
        sessions,
      ),
      sessions,
      tree,
      signingKeys,
      queries,
      apiKeys: new MongoApiKeys(client, db),
      policies: new MongoPolicies(db),
      webhooks: new MongoWebhooks(client, db),
      openJobQueue: (queueOptions) => new AgendaJobQueue(db, queueOptions, options.onJobQueueError),
      openSharedRateLimiter: (clock) => new MongoWindowLimiter(db, clock),
      async ping() {
        await db.command({ ping: 1 });
      },
      async probeWrite(at) {
        // A real upsert of one record outside the ledger (the time of the last deep health
        // check), acknowledged by a majority as the ledger's appends are: a write made and
        // aborted in a transaction never reaches the journal, so it could not fail there.
        await db
          .collection<{ _id: string; at: string }>(COLLECTIONS.healthProbe)
          .updateOne(
            { _id: 'probe' },
            { $set: { at } },
            { upsert: true, writeConcern: { w: 'majority', wtimeoutMS: PROBE_WRITE_TIMEOUT_MS } },
          );
      },
      async close() {
        if (closed) return;
        closed = true;
        await client.close();
      },
    };
  } catch (error) {
    await client.close();
    throw error;
  }
}
