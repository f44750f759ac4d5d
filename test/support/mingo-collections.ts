import type { Db } from 'mongodb';
import { find, updateOne } from 'mingo';

type Doc = Record<string, unknown> & { _id: unknown };

/**
 * A stand-in for the few collection methods of the MongoDB driver that the rate limiter
 * uses, with MongoDB's query and update-pipeline semantics evaluated by mingo. It checks the
 * expressions the code sends (what the server would compute from them), not the server's
 * atomicity or the driver: the MongoDB contract suite covers those wherever MongoDB runs.
 */
export function mingoDb(): Db {
  const collections = new Map<string, Doc[]>();
  const docsOf = (name: string) => {
    let docs = collections.get(name);
    if (!docs) collections.set(name, (docs = []));
    return docs;
  };
  const copy = (doc: Doc | undefined) => (doc === undefined ? null : structuredClone(doc));
  return {
    collection(name: string) {
      const docs = docsOf(name);
      const first = (filter: Record<string, unknown>, projection?: Record<string, unknown>) =>
        find(docs, filter, projection).all()[0] as Doc | undefined;
      return {
        async findOne(filter: Record<string, unknown>, options?: { projection?: Doc }) {
          return copy(first(filter, options?.projection));
        },
        async findOneAndUpdate(
          filter: { _id: unknown },
          pipeline: object[],
          options: {
            upsert?: boolean;
            returnDocument?: 'before' | 'after';
            projection?: Record<string, unknown>;
          },
        ) {
          if (options.returnDocument !== 'after') throw new Error('only returnDocument: after');
          if (!first(filter)) {
            if (!options.upsert) return null;
            docs.push({ _id: filter._id });
          }
          updateOne(docs, filter, pipeline as Parameters<typeof updateOne>[2]);
          return copy(first(filter, options.projection));
        },
      };
    },
  } as unknown as Db;
}
