import type { ClientSession, Db, MongoClient } from 'mongodb';
import type { SigningKeyRecord } from '@svc/verify';
import { SvcError } from '../../core/errors.js';
import { extendKeyRuns, type KeyRun } from '../../core/key-history.js';
import type {
  SigningKeyChange,
  SigningKeyState,
  SigningKeyStore,
} from '../../ports/signing-key-store.js';
import { COLLECTIONS, type ReceiptDocument } from './documents.js';

/**
 * One key of the history; `_id` is its key_id. `signed_through` is written by every append
 * signed by the current key, so that an append and a rotation touch one document and cannot
 * both commit on a stale read (a write conflict retries one of them): the rotation's boundary
 * is exact. It is not part of the served record.
 */
export interface SigningKeyDocument extends Omit<SigningKeyRecord, 'key_id'> {
  _id: string;
  signed_through?: number;
  /**
   * The insertion order. A key retired before it signed anything shares its first_sequence
   * with its successor, and two such keys can share activated_at too: the order they were
   * added in (SQLite's rowid) is what tells them apart. Absent on keys written before it.
   */
  ordinal?: number;
}

const TRANSACTION_OPTIONS = {
  readConcern: { level: 'snapshot' },
  writeConcern: { w: 'majority' },
} as const;

const toRecord = ({
  _id,
  signed_through: _through,
  ordinal: _ordinal,
  ...rest
}: SigningKeyDocument): SigningKeyRecord => ({
  key_id: _id,
  ...rest,
  // Keys written before revocations were signed have no field.
  revocation: rest.revocation ?? null,
});

/**
 * The history on MongoDB. Without triggers, the store itself holds the rules: rows are only
 * inserted, and each update is conditional on the state it leaves (current → retired,
 * current or retired → revoked, a last_sequence set once), so a racing change matches nothing.
 */
export class MongoSigningKeys implements SigningKeyStore {
  constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
  ) {}

  private get keys() {
    return this.db.collection<SigningKeyDocument>(COLLECTIONS.signingKeys);
  }

  private async read(session?: ClientSession): Promise<SigningKeyRecord[]> {
    const docs = await this.keys
      .find({}, { session, sort: { first_sequence: 1, ordinal: 1, activated_at: 1 } })
      .toArray();
    return docs.map(toRecord);
  }

  list(): Promise<SigningKeyRecord[]> {
    return this.read();
  }

  /** Inside an append's transaction: refuses a receipt signed by a key that is not current. */
  async checkSigner(keyId: string | undefined, sequence: number, session: ClientSession) {
    const marked = await this.keys.updateOne(
      { _id: keyId ?? '', status: 'current' },
      { $max: { signed_through: sequence } },
      { session },
    );
    if (marked.matchedCount === 1) return;
    if ((await this.keys.countDocuments({}, { session, limit: 1 })) === 0) return;
    const current = await this.keys.findOne({ status: 'current' }, { session });
    throw new SvcError(
      'unavailable',
      current
        ? `the signing key was rotated: this process signs with ${keyId ?? 'no key'}, the ledger's current key is ${current._id}; restart the service to sign with it`
        : 'the ledger has no current signing key (it was revoked): rotate it (svc signing-key rotate) and restart the service',
    );
  }

  async change(decide: (state: SigningKeyState) => SigningKeyChange): Promise<SigningKeyRecord[]> {
    const session = this.client.startSession();
    try {
      await session.withTransaction(async (s) => {
        const history = await this.read(s);
        const headDoc = await this.db
          .collection<ReceiptDocument>(COLLECTIONS.receipts)
          .find({}, { session: s, sort: { sequence: -1 }, limit: 1, projection: { sequence: 1 } })
          .next();
        // The runs are read before decide (which is synchronous) only when it may need them.
        const runs = history.length === 0 ? await this.receiptKeyRuns(s) : [];
        const change = decide({
          history,
          head: headDoc?.sequence ?? 0,
          receiptKeyRuns: () => runs,
        });
        await this.write(change, s, history.length);
      }, TRANSACTION_OPTIONS);
    } finally {
      await session.endSession();
    }
    return this.read();
  }

  private async write(
    change: SigningKeyChange,
    session: ClientSession,
    count: number,
  ): Promise<void> {
    const refused = (what: string) => {
      throw new Error(`signing keys: ${what} is not an allowed transition`);
    };
    if (change.retire) {
      const { key_id, last_sequence, retired_at } = change.retire;
      const done = await this.keys.updateOne(
        { _id: key_id, status: { $in: ['current', 'revoked'] }, last_sequence: null },
        [
          {
            $set: {
              last_sequence,
              retired_at,
              status: { $cond: [{ $eq: ['$status', 'current'] }, 'retired', '$status'] },
            },
          },
        ],
        { session },
      );
      if (done.modifiedCount !== 1) refused(`retiring ${key_id}`);
    }
    if (change.revoke) {
      const { key_id, revoked_from_sequence, revoked_at, revocation } = change.revoke;
      const done = await this.keys.updateOne(
        { _id: key_id, status: { $in: ['current', 'retired'] }, revoked_from_sequence: null },
        { $set: { status: 'revoked', revoked_from_sequence, revoked_at, revocation } },
        { session },
      );
      if (done.modifiedCount !== 1) refused(`revoking ${key_id}`);
    }
    if (change.insert?.length) {
      await this.keys.insertMany(
        change.insert.map(({ key_id, ...rest }, i) => ({
          _id: key_id,
          ...rest,
          ordinal: count + i,
        })),
        { session },
      );
    }
  }

  private async receiptKeyRuns(session: ClientSession) {
    const runs: KeyRun[] = [];
    const cursor = this.db.collection<ReceiptDocument>(COLLECTIONS.receipts).find(
      {},
      {
        session,
        sort: { sequence: 1 },
        projection: { sequence: 1, receipt_json: 1, issued_at: 1 },
      },
    );
    for await (const doc of cursor) {
      const receipt = JSON.parse(doc.receipt_json) as { attestations?: { key_id?: string }[] };
      extendKeyRuns(runs, {
        key_id: receipt.attestations?.[0]?.key_id ?? '',
        sequence: doc.sequence,
        issued_at: doc.issued_at,
      });
    }
    return runs;
  }
}
