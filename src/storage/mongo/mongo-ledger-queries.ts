import type { Db, Filter } from 'mongodb';
import { foldTotals, foldVerdicts } from '../counters.js';
import { toAgentSummary, toRepositorySummary } from '../mappers.js';
import type { Verdict } from '../../core/policy.js';
import type { Receipt } from '../../core/receipt.js';
import type {
  AgentSummary,
  LedgerQueries,
  LedgerTotals,
  NamePage,
  ReadScope,
  ReceiptFilter,
  RepositorySummary,
  SequencePage,
  StoredReceiptJson,
  TimelineRow,
  VerdictCounts,
} from '../../ports/ledger-queries.js';
import type { LedgerEntry } from '../../ports/ledger-store.js';
import {
  COLLECTIONS,
  ENTRY_PROJECTION,
  toEntry,
  type AgentStatsDocument,
  type DailyCountDocument,
  type ReceiptDocument,
  type RepositoryStatsDocument,
  type Scoped,
  type TotalsDocument,
} from './documents.js';
import { searchQuery } from './receipt-query.js';

/** SQLite orders text by its UTF-8 bytes; so does MongoDB's default (binary) comparison. */
const byUtf8 = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * The read model on MongoDB: listings from the receipts' indexes, summaries from the aggregate
 * documents the ledger updates in each append's transaction. Answers as the SQLite store does.
 */
export class MongoLedgerQueries implements LedgerQueries {
  constructor(private readonly db: Db) {}

  private get receipts() {
    return this.db.collection<ReceiptDocument>(COLLECTIONS.receipts);
  }

  async search(filter: ReceiptFilter, page: SequencePage): Promise<Receipt[]> {
    return (await this.searchJson(filter, page)).map(
      (row) => JSON.parse(row.json.toString('utf8')) as Receipt,
    );
  }

  async searchJson(filter: ReceiptFilter, page: SequencePage): Promise<StoredReceiptJson[]> {
    const query = searchQuery(filter, page);
    if (!query || page.limit <= 0) return [];
    // Only the receipt's text: a listing never needs the stored claim or evaluation.
    const docs = await this.receipts
      .find(query.filter, { projection: { _id: 0, sequence: 1, receipt_id: 1, receipt_json: 1 } })
      .sort(query.sort)
      .limit(page.limit)
      .toArray();
    return docs.map((doc) => ({
      sequence: doc.sequence,
      receiptId: doc.receipt_id,
      json: Buffer.from(doc.receipt_json, 'utf8'),
    }));
  }

  async getMany(receiptIds: string[], scope?: ReadScope): Promise<LedgerEntry[]> {
    if (receiptIds.length === 0) return [];
    return this.entries(
      { receipt_id: { $in: receiptIds }, ...(scope === undefined ? {} : { scope }) },
      1,
    );
  }

  async pullRequestHistory(
    repository: string,
    pullRequest: string,
    limit: number,
    scope?: ReadScope,
  ): Promise<LedgerEntry[]> {
    if (limit <= 0) return [];
    return this.entries(
      { repository, pull_request: pullRequest, ...(scope === undefined ? {} : { scope }) },
      1,
      limit,
    );
  }

  async pullRequestReceiptsOf(
    scope: string,
    repository: string,
    pullRequest: string,
    limit: number,
  ): Promise<LedgerEntry[]> {
    if (limit <= 0) return [];
    return this.entries({ repository, pull_request: pullRequest, scope }, -1, limit);
  }

  async timeline(options: {
    repository?: string;
    since: string;
    until: string;
    scope?: ReadScope;
  }): Promise<TimelineRow[]> {
    const match: Record<string, unknown> = { day: { $gte: options.since, $lt: options.until } };
    if (options.repository !== undefined) match.repository = options.repository;
    if (options.scope !== undefined) match.scope = options.scope;
    const rows = await this.db
      .collection<DailyCountDocument>(
        options.scope === undefined ? COLLECTIONS.daily : COLLECTIONS.scopeDaily,
      )
      .aggregate<{ _id: { day: string; verdict: Verdict }; count: number }>([
        { $match: match },
        { $group: { _id: { day: '$day', verdict: '$verdict' }, count: { $sum: '$n' } } },
        { $sort: { '_id.day': 1, '_id.verdict': 1 } },
      ])
      .toArray();
    return rows.map((row) => ({ day: row._id.day, verdict: row._id.verdict, count: row.count }));
  }

  async repositories(page: NamePage, scope?: ReadScope): Promise<RepositorySummary[]> {
    if (page.limit <= 0) return [];
    const docs =
      scope === undefined
        ? await this.db
            .collection<RepositoryStatsDocument>(COLLECTIONS.repositories)
            .find({ _id: { $gt: page.after ?? '' } })
            .sort({ _id: 1 })
            .limit(page.limit)
            .toArray()
        : await this.db
            .collection<RepositoryStatsDocument & Scoped & { repository: string }>(
              COLLECTIONS.scopeRepositories,
            )
            .find({ scope, repository: { $gt: page.after ?? '' } })
            .sort({ repository: 1 })
            .limit(page.limit)
            .toArray();
    return docs.map((r) =>
      toRepositorySummary('repository' in r ? (r.repository as string) : r._id, r),
    );
  }

  async agents(page: NamePage, scope?: ReadScope): Promise<AgentSummary[]> {
    if (page.limit <= 0) return [];
    const docs =
      scope === undefined
        ? await this.db
            .collection<AgentStatsDocument>(COLLECTIONS.agents)
            .find({ _id: { $gt: page.after ?? '' } })
            .sort({ _id: 1 })
            .limit(page.limit)
            .toArray()
        : await this.db
            .collection<AgentStatsDocument & Scoped & { agent: string }>(COLLECTIONS.scopeAgents)
            .find({ scope, agent: { $gt: page.after ?? '' } })
            .sort({ agent: 1 })
            .limit(page.limit)
            .toArray();
    return docs.map((r) =>
      toAgentSummary(
        'agent' in r ? (r.agent as string) : r._id,
        r,
        [...(r.models ?? [])].sort(byUtf8),
      ),
    );
  }

  async totals(scope?: ReadScope): Promise<LedgerTotals> {
    if (scope !== undefined) {
      const rows = await this.db
        .collection<TotalsDocument & Scoped>(COLLECTIONS.scopeTotals)
        .find({ scope })
        .toArray();
      return {
        ...foldTotals(rows),
        agents: await this.db.collection(COLLECTIONS.scopeAgents).countDocuments({ scope }),
        repositories: await this.db
          .collection(COLLECTIONS.scopeRepositories)
          .countDocuments({ scope }),
      };
    }
    const rows = await this.db.collection<TotalsDocument>(COLLECTIONS.totals).find({}).toArray();
    return {
      ...foldTotals(rows),
      agents: await this.db.collection(COLLECTIONS.agents).countDocuments(),
      repositories: await this.db.collection(COLLECTIONS.repositories).countDocuments(),
    };
  }

  async countSince(since: string, scope?: ReadScope): Promise<VerdictCounts & { total: number }> {
    const rows = await this.receipts
      .aggregate<{ _id: Verdict; n: number }>([
        { $match: { issued_at: { $gte: since }, ...(scope === undefined ? {} : { scope }) } },
        { $group: { _id: '$verdict', n: { $sum: 1 } } },
      ])
      .toArray();
    return foldVerdicts(rows.map((row) => ({ verdict: row._id, n: row.n })));
  }

  /** Entries matching `filter`, by sequence in `order`, at most `limit`. */
  private async entries(
    filter: Filter<ReceiptDocument>,
    order: 1 | -1,
    limit = 0,
  ): Promise<LedgerEntry[]> {
    const docs = await this.receipts
      .find(filter, { projection: ENTRY_PROJECTION })
      .sort({ sequence: order })
      .limit(limit)
      .toArray();
    return docs.map(toEntry);
  }
}
