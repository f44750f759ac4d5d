import type { Db, MongoClient } from 'mongodb';
import { aggregate, find, updateMany, updateOne } from 'mingo';

type Doc = Record<string, unknown> & { _id: unknown };
type Filter = Record<string, unknown>;
type Update = Parameters<typeof updateOne>[2];

const collectionsOf = new WeakMap<Db, Map<string, Doc[]>>();

/**
 * A stand-in for the collection methods of the MongoDB driver that the rate limiter, the API
 * keys and the webhook receivers use, with MongoDB's query, update and update-pipeline
 * semantics evaluated by mingo. It checks the expressions the code sends (what the server
 * would compute from them), not the server's atomicity, isolation or unique indexes (but
 * `_id`'s) or the driver: the MongoDB contract suite covers those wherever MongoDB runs.
 */
export function mingoDb(): Db {
  const collections = new Map<string, Doc[]>();
  const docsOf = (name: string) => {
    let docs = collections.get(name);
    if (!docs) collections.set(name, (docs = []));
    return docs;
  };
  const copy = (doc: Doc | undefined) => (doc === undefined ? null : structuredClone(doc));
  const db = {
    collection(name: string) {
      // Looked up at each call: a transaction's rollback replaces the array.
      const docs = () => docsOf(name);
      const matching = (filter: Filter, sort?: Record<string, 1 | -1>) => {
        const cursor = find(docs(), filter);
        return (sort ? cursor.sort(sort) : cursor).all() as Doc[];
      };
      const first = (filter: Filter, sort?: Record<string, 1 | -1>) => matching(filter, sort)[0];
      const project = (doc: Doc | undefined, projection?: Filter) =>
        doc === undefined || projection === undefined
          ? copy(doc)
          : copy(find([doc], {}, projection).all()[0] as Doc);
      const upsertTarget = (filter: Filter, upsert: boolean | undefined) => {
        if (first(filter)) return true;
        if (!upsert) return false;
        docs().push({ _id: filter._id });
        return true;
      };
      return {
        async findOne(
          filter: Filter,
          options?: { projection?: Filter; sort?: Record<string, 1 | -1> },
        ) {
          return project(first(filter, options?.sort), options?.projection);
        },
        find(
          filter: Filter,
          options?: { projection?: Filter; sort?: Record<string, 1 | -1>; limit?: number },
        ) {
          let order = options?.sort;
          let most = options?.limit;
          const cursor = {
            sort(spec: Record<string, 1 | -1>) {
              order = spec;
              return cursor;
            },
            limit(n: number) {
              most = n;
              return cursor;
            },
            async toArray() {
              const found = matching(filter, order);
              return (most ? found.slice(0, most) : found).map((doc) =>
                project(doc, options?.projection)!,
              );
            },
          };
          return cursor;
        },
        aggregate(pipeline: Filter[]) {
          return { toArray: async () => structuredClone(aggregate(docs(), pipeline)) };
        },
        async countDocuments(filter: Filter) {
          return matching(filter).length;
        },
        async insertOne(doc: Doc) {
          if (first({ _id: doc._id }))
            throw Object.assign(new Error(`E11000 duplicate key error: _id ${String(doc._id)}`), {
              code: 11000,
              keyPattern: { _id: 1 },
            });
          docs().push(structuredClone(doc));
          return { acknowledged: true, insertedId: doc._id };
        },
        async updateOne(filter: Filter, update: Update, options?: { upsert?: boolean }) {
          if (!upsertTarget(filter, options?.upsert)) return { matchedCount: 0, modifiedCount: 0 };
          return updateOne(docs(), filter, update);
        },
        async updateMany(filter: Filter, update: Update) {
          return updateMany(docs(), filter, update);
        },
        async findOneAndUpdate(
          filter: Filter,
          update: Update,
          options: {
            upsert?: boolean;
            returnDocument?: 'before' | 'after';
            projection?: Filter;
          },
        ) {
          if (options.returnDocument !== 'after') throw new Error('only returnDocument: after');
          if (!upsertTarget(filter, options.upsert)) return null;
          const target = first(filter)!;
          updateOne(docs(), { _id: target._id }, update);
          return project(first({ _id: target._id }), options.projection);
        },
      };
    },
  } as unknown as Db;
  collectionsOf.set(db, collections);
  return db;
}

/**
 * A client for `mingoDb` whose sessions run a transaction's callback once and, when it throws,
 * put every collection back as it was: the all-or-nothing a transaction gives a code path, not
 * MongoDB's isolation between concurrent transactions.
 */
export function mingoClient(db: Db): MongoClient {
  const collections = collectionsOf.get(db);
  if (!collections) throw new TypeError('not a mingoDb');
  return {
    startSession() {
      return {
        async withTransaction<T>(fn: (session: unknown) => Promise<T>) {
          const before = new Map(
            [...collections].map(([name, docs]) => [name, structuredClone(docs)]),
          );
          try {
            return await fn(this);
          } catch (error) {
            collections.clear();
            for (const [name, docs] of before) collections.set(name, docs);
            throw error;
          }
        },
        async endSession() {},
      };
    },
  } as unknown as MongoClient;
}
